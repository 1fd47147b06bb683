package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/perfgate/perfgate/runner"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The scenario on a real repository: 48 commits after the good
// one, a 12% step in Mean TTFT at commit 29, +-1.5% noise, and commit 24
// exits 125. The stand-in benchmark (bisect/testdata/bench.sh) reads
// level.txt of the commit and prints a vLLM result block with seeded
// noise.
const (
	stepCommit      = 29
	untestableAt    = 24
	rangeLen        = 48
	benchCmd        = "sh bench.sh"
	benchScriptPath = "../../bisect/testdata/bench.sh"
)

// bisectRepo builds the scenario's repository (with one git fast-import,
// as 49 commits by hand take seconds); brokenAt commits (if any) carry a
// file "broken" that makes the script fail with exit code 1.
func bisectRepo(t testing.TB, brokenAt ...int) (string, []string) {
	t.Helper()
	for _, tool := range []string{"git", "sh", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the stand-in benchmark needs %s", tool)
		}
	}
	script, err := os.ReadFile(benchScriptPath)
	if err != nil {
		t.Fatal(err)
	}
	// The stand-in fails where a file "broken" exists.
	body := strings.Replace(string(script), "level=$(cat level.txt)", "if [ -f broken ]; then echo 'ImportError: no module named vllm' >&2; exit 1; fi\nlevel=$(cat level.txt)", 1)
	broken := map[int]bool{}
	for _, b := range brokenAt {
		broken[b] = true
	}
	var st strings.Builder
	data := func(s string) { fmt.Fprintf(&st, "data %d\n%s\n", len(s), s) }
	file := func(name, content string) {
		fmt.Fprintf(&st, "M 100644 inline %s\n", name)
		data(content)
	}
	for i := 0; i <= rangeLen; i++ {
		fmt.Fprintf(&st, "commit refs/heads/main\nmark :%d\ncommitter Test <test@example.com> %d +0000\n", i+1, 1767225600+60*i)
		if i == 0 {
			data("commit 0: baseline")
			file("bench.sh", body)
			file("level.txt", "500\n")
		} else {
			data(fmt.Sprintf("commit %d", i))
			fmt.Fprintf(&st, "from :%d\n", i)
		}
		file("n.txt", fmt.Sprint(i))
		if i == stepCommit {
			file("level.txt", "560\n")
		}
		for name, on := range map[string]bool{"untestable": i == untestableAt, "broken": broken[i]} {
			if on {
				file(name, "x")
			} else if i > 0 {
				fmt.Fprintf(&st, "D %s\n", name)
			}
		}
	}
	dir := gitRepo(t)
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(st.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
	git(t, dir, "reset", "-q", "--hard", "main")
	shas := strings.Fields(git(t, dir, "rev-list", "--reverse", "main"))
	if len(shas) != rangeLen+1 {
		t.Fatalf("%d commits, want %d", len(shas), rangeLen+1)
	}
	return dir, shas
}

// checkoutState is what bisect must leave as it found it.
type checkoutState struct {
	head, branch, status, index, modified, untracked string
	refs, worktrees, gitDir                          string
}

func snapshot(t *testing.T, dir string) checkoutState {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	st := checkoutState{index: read(".git/index"), modified: read("n.txt"), untracked: read("notes.txt")}
	st.head = git(t, dir, "rev-parse", "HEAD")
	st.branch = git(t, dir, "symbolic-ref", "HEAD")
	st.status = git(t, dir, "status", "--porcelain", "--untracked-files=all")
	st.refs = git(t, dir, "for-each-ref")
	st.worktrees = git(t, dir, "worktree", "list", "--porcelain")
	entries, err := os.ReadDir(filepath.Join(dir, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		st.gitDir += e.Name() + " "
	}
	return st
}

type bisectJSON struct {
	Verdict    string  `json:"verdict"`
	Culprit    *string `json:"culprit"`
	Confidence float64 `json:"confidence"`
	Runs       int     `json:"runs"`
	Budget     int     `json:"budget"`
	Regression *bool   `json:"regression"`
	Reason     string  `json:"reason"`
	Evaluated  []struct {
		Commit  string    `json:"commit"`
		Index   int       `json:"index"`
		Values  []float64 `json:"values"`
		Runs    int       `json:"runs"`
		Stored  int       `json:"stored"`
		Skipped string    `json:"skipped"`
	} `json:"evaluated"`
}

func bisectOut(t *testing.T, args ...string) (bisectJSON, string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, "", append(args, "-o", "json")...)
	var verdict struct{ Verdict string }
	_ = json.Unmarshal([]byte(stdout), &verdict)
	// A report exits by what it found: 0 found, 4 no step, 5 budget, 6 untestable.
	if want := map[string]int{"found": 0, "no-step": 4, "budget": 5, "untestable": 6}[verdict.Verdict]; code != want || verdict.Verdict == "" {
		t.Fatalf("bisect exit %d for verdict %q (want %d):\n%s", code, verdict.Verdict, want, stderr)
	}
	var bj bisectJSON
	if err := json.Unmarshal([]byte(stdout), &bj); err != nil {
		t.Fatalf("bisect -o json: %v\n%s", err, stdout)
	}
	return bj, stderr
}

// noise seeds the stand-in benchmark's noise for one trial.
func noise(t *testing.T, seed int) {
	t.Setenv("NOISE_DIR", t.TempDir())
	t.Setenv("NOISE_SEED", fmt.Sprint(seed))
	t.Setenv("NOISE_SD", "0.015")
}

// e2eTrials is how many seeded trials TestBisectRunEndToEnd runs through
// the whole path; each takes about 0.1 s. Of 40, at most 2 may name a
// wrong commit (>= 95%).
const e2eTrials = 40

// TestBisectRunEndToEnd runs the scenario end to end, seeded
// trial after trial: git, the temporary checkouts, the stand-in script,
// ingest and the store (bisect.TestSearchIssueTrials runs 500 more trials
// of the same search against an in-process simulation). The culprit must
// be commit 29 in at least 95% of the trials, the mean number of runs at
// most 12 (logged with -v), and every trial must leave the user's checkout
// exactly as it was and nothing in the work directory, and let --stored
// find the same commit without a run. The first trials also check the
// stored runs and that a second --run reuses them.
func TestBisectRunEndToEnd(t *testing.T) {
	var mu sync.Mutex // the tallies of the trials, run in parallel
	right, storedRight, totalRuns, maxRuns := 0, 0, 0, 0
	t.Run("trials", func(t *testing.T) {
		for seed := 1; seed <= e2eTrials; seed++ {
			t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
				parallel(t)
				// Each trial its own repository, and its noise in the
				// command's environment (t.Setenv rules out t.Parallel).
				repo, shas := bisectRepo(t)
				// The user's own state: a modified tracked file, an untracked file.
				writeFile(t, repo, "n.txt", "work in progress\n")
				writeFile(t, repo, "notes.txt", "mine\n")
				before := snapshot(t, repo)
				bench := fmt.Sprintf("NOISE_DIR='%s' NOISE_SEED=%d NOISE_SD=0.015 %s", t.TempDir(), seed, benchCmd)
				db := filepath.Join(t.TempDir(), "history.db")
				work := t.TempDir()
				base := []string{"--repo", repo, "--db", db, "bisect", "--good", shas[0], "--bad", "main", "--metric", "Mean TTFT", "--name", "serving"}
				bj, stderr := bisectOut(t, append(base, "--run", bench, "--workdir", work)...)
				found := bj.Verdict == "found" && bj.Culprit != nil && *bj.Culprit == shas[stepCommit]
				if !found {
					t.Logf("verdict %s culprit %v, want found %s after %d runs\n%s", bj.Verdict, bj.Culprit, shas[stepCommit], bj.Runs, stderr)
				}
				if bj.Confidence < 0.95 || bj.Runs < 6 || bj.Runs > bj.Budget || bj.Regression == nil || !*bj.Regression {
					t.Errorf("confidence %v runs %d of %d regression %v", bj.Confidence, bj.Runs, bj.Budget, bj.Regression)
				}
				for _, want := range []string{"perfgate: bisect: run 1 of 36", "elapsed", "the good end"} {
					if !strings.Contains(stderr, want) {
						t.Errorf("progress on stderr lacks %q:\n%s", want, stderr)
					}
				}
				if after := snapshot(t, repo); after != before {
					t.Errorf("the checkout changed:\nbefore %+v\nafter  %+v", before, after)
				}
				emptyWorkdir(t, work)

				// The stored history answers alone.
				st, _ := bisectOut(t, append(base, "--stored")...)
				if st.Runs != 0 {
					t.Errorf("--stored made %d runs", st.Runs)
				}
				agreed := st.Culprit != nil && bj.Culprit != nil && *st.Culprit == *bj.Culprit
				if !agreed {
					t.Errorf("--stored: culprit %v, --run found %v (%s)", st.Culprit, bj.Culprit, st.Reason)
				}
				mu.Lock()
				totalRuns += bj.Runs
				maxRuns = max(maxRuns, bj.Runs)
				if found {
					right++
				}
				if agreed {
					storedRight++
				}
				mu.Unlock()
				if seed > 3 {
					return
				}
				checkStoredRuns(t, db, bj, bench)
				again, _ := bisectOut(t, append(base, "--run", bench, "--workdir", work)...)
				if again.Culprit == nil || *again.Culprit != shas[stepCommit] || again.Runs != 0 {
					t.Errorf("second --run: culprit %v after %d runs, want %s after none", again.Culprit, again.Runs, shas[stepCommit])
				}
			})
		}
	})
	mean := float64(totalRuns) / e2eTrials
	t.Logf("end to end, 48 commits, 12%% step at 29, 1.5%% noise, commit 24 exits 125: culprit right in %d of %d trials (%.1f%%), mean runs %.2f (max %d), --stored agreed in %d",
		right, e2eTrials, 100*float64(right)/e2eTrials, mean, maxRuns, storedRight)
	if float64(right) < 0.95*e2eTrials {
		t.Errorf("culprit right in %d of %d trials, want at least 95%%", right, e2eTrials)
	}
	if mean > 12 {
		t.Errorf("mean runs %.2f, want at most 12", mean)
	}
}

func emptyWorkdir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("work directory %s not empty: %v", dir, entries)
	}
}

// checkStoredRuns checks that every run bisect made is stored, with its
// command (bench) and not dirty, and that the commit exiting 125 stored nothing.
func checkStoredRuns(t *testing.T, db string, bj bisectJSON, bench string) {
	t.Helper()
	stdout, stderr, code := runCLI(t, "", "--db", db, "export")
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, stderr)
	}
	want := 0
	skipped := map[string]bool{}
	for _, e := range bj.Evaluated {
		if e.Skipped != "" {
			skipped[e.Commit] = true
			continue
		}
		want += e.Runs
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != want {
		t.Errorf("%d runs stored, want %d", len(lines), want)
	}
	for _, l := range lines {
		var r struct {
			Commit  string   `json:"commit"`
			Command []string `json:"command"`
			Dirty   bool     `json:"dirty"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if strings.Join(r.Command, " ") != "sh -c "+bench || r.Dirty || skipped[r.Commit] {
			t.Errorf("stored run %s", l)
		}
	}
}

func TestBisectText(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 5)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "bisect", "--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving", "--run", benchCmd)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Mean TTFT (ms) regressed at " + shas[stepCommit][:7] + " (commit 29 of 48)",
		"(worse, lower is better)",
		"runs: ",
		"exit code 125",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	// Without --db the history lives in the repository, out of git's way.
	if st := git(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("git status after bisect: %q", st)
	}
	md, _, code := runCLI(t, "", "--repo", repo, "bisect", "--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving", "--stored", "-o", "markdown")
	if code != 0 || !strings.HasPrefix(md, "### Mean TTFT (ms) regressed at `"+shas[stepCommit][:7]+"`") || !strings.Contains(md, "<details>") {
		t.Errorf("markdown report (exit %d):\n%s", code, md)
	}
}

func TestBisectNoStep(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 6)
	// Between commit 30 and the tip the level does not move.
	bj, _ := bisectOut(t, "--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[30], "--metric", "mean_ttft_ms", "--name", "serving", "--run", benchCmd)
	if bj.Verdict != "no-step" || bj.Culprit != nil || bj.Confidence != 0 || !strings.Contains(bj.Reason, "do not differ beyond the noise") {
		t.Errorf("verdict %s culprit %v confidence %v reason %q; want no-step and no culprit", bj.Verdict, bj.Culprit, bj.Confidence, bj.Reason)
	}
	// A threshold above the change: no step either.
	bj, _ = bisectOut(t, "--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving", "--run", benchCmd, "--threshold", "25%")
	if bj.Verdict != "no-step" || !strings.Contains(bj.Reason, "threshold of 25%") {
		t.Errorf("--threshold 25%%: verdict %s reason %q", bj.Verdict, bj.Reason)
	}
}

func TestBisectFailures(t *testing.T) {
	repo, shas := bisectRepo(t, 23, 25, 35, 36)
	noise(t, 7)
	args := []string{"--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving", "--run", benchCmd}
	_, stderr, code := runCLI(t, "", args...)
	if code != exitEnv || !strings.Contains(stderr, "with exit code 1") || !strings.Contains(stderr, "ImportError") || !strings.Contains(stderr, "--skip-failures") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	bj, _ := bisectOut(t, append(args, "--skip-failures")...)
	if bj.Culprit == nil || *bj.Culprit != shas[stepCommit] {
		t.Errorf("--skip-failures: culprit %v, want %s", bj.Culprit, shas[stepCommit])
	}
}

// TestBisectInterrupt cancels the context (what Ctrl-C does) while the
// benchmark runs: the command stops, its checkout is removed and the
// user's checkout is untouched.
func TestBisectInterrupt(t *testing.T) {
	repo, shas := bisectRepo(t)
	writeFile(t, repo, "notes.txt", "mine\n")
	before := snapshot(t, repo)
	work := t.TempDir()
	mark := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for range 500 {
			if _, err := os.Stat(mark); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"perfgate", "--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[0],
		"--metric", "mean_ttft_ms", "--name", "serving", "--workdir", work, "--run", "touch " + mark + "; sleep 60"}, strings.NewReader(""), &out, &errb)
	if code != exitEnv || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
	emptyWorkdir(t, work)
	if after := snapshot(t, repo); after != before {
		t.Errorf("the checkout changed:\nbefore %+v\nafter  %+v", before, after)
	}
}

func TestBisectUsageErrors(t *testing.T) {
	repo, shas := bisectRepo(t)
	emptyDB := filepath.Join(t.TempDir(), "none.db")
	base := func(extra ...string) []string {
		return append([]string{"--repo", repo, "--db", emptyDB, "bisect"}, extra...)
	}
	full := func(extra ...string) []string {
		return base(append([]string{"--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving"}, extra...)...)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no good", base("--metric", "m", "--name", "s", "--run", "x"), "--good is required"},
		{"no metric", base("--good", shas[0], "--name", "s", "--run", "x"), "--metric is required"},
		{"no name", base("--good", shas[0], "--metric", "m", "--run", "x"), "--name is required"},
		{"neither run nor stored", full(), "exactly one of --run CMD"},
		{"both run and stored", full("--run", "x", "--stored"), "exactly one of --run CMD"},
		{"bad threshold", full("--stored", "--threshold", "lots"), `--threshold "lots" is not a percentage`},
		{"bad confidence", full("--stored", "--confidence", "1.5"), `--confidence "1.5" must be a probability`},
		{"bad output", full("--stored", "-o", "xml"), `-o "xml" is not valid for bisect`},
		{"unknown revision", base("--good", "v9.9", "--metric", "m", "--name", "s", "--stored"), `revision "v9.9"`},
		{"same commit", full("--bad", shas[0], "--stored"), "are the same commit"},
		{"good after bad", base("--good", shas[5], "--bad", shas[2], "--metric", "m", "--name", "s", "--stored"), "is not an ancestor"},
		{"stored without history", full("--stored"), "there is no history"},
		{"end runs", full("--run", "x", "--end-runs", "0"), "at least 1 run"},
		{"metric not printed", full("--run", benchCmd, "--metric", "p99_itl_ms"), `: no metric "p99_itl_ms"`},
		{"nothing printed", full("--run", "true"), "the command printed nothing"},
	}
	noise(t, 8)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != exitBad {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, exitBad, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, stderr)
			}
		})
	}
}

// TestBisectStoredEnds asks --stored about a range whose good end has no
// stored result: the error names the nearest measured commits.
func TestBisectStoredEnds(t *testing.T) {
	repo, shas := bisectRepo(t)
	db := filepath.Join(t.TempDir(), "h.db")
	for _, i := range []int{3, 10, 48} {
		if _, stderr, code := runCLI(t, servingBlock(500+float64(i), 300, 500, 0), "--repo", repo, "--db", db, "ingest", "--name", "serving", "--commit", shas[i], "-"); code != 0 {
			t.Fatalf("ingest: %s", stderr)
		}
	}
	_, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "bisect", "--good", shas[0], "--metric", "Mean TTFT", "--name", "serving", "--stored")
	if code != exitBad || !strings.Contains(stderr, "--good "+shas[0][:7]+" has no stored serving results") || !strings.Contains(stderr, shas[3][:7]+" (commit 3 of 48)") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// TestBisectStoredLabels stores the benchmark on two machines: bisect
// does not mix them, and --label picks one.
func TestBisectStoredLabels(t *testing.T) {
	repo, shas := bisectRepo(t)
	db := filepath.Join(t.TempDir(), "h.db")
	for _, hw := range []string{"910B3", "H100"} {
		for _, i := range []int{0, 0, 0, 20, 28, 29, 36, 48, 48} {
			ttft := 500.0
			if i >= stepCommit {
				ttft = 560
			}
			if hw == "H100" {
				ttft /= 2
			}
			// A little noise, so repeated results are distinct.
			ttft *= 1 + 0.001*float64(len(hw)+i%7)
			if _, stderr, code := runCLI(t, servingBlock(ttft, 300, 500, 0), "--repo", repo, "--db", db, "ingest", "--name", "serving", "--label", "hardware="+hw, "--commit", shas[i], "-"); code != 0 {
				t.Fatalf("ingest: %s", stderr)
			}
		}
	}
	args := []string{"--repo", repo, "--db", db, "bisect", "--good", shas[0], "--metric", "Mean TTFT", "--name", "serving", "--stored"}
	_, stderr, code := runCLI(t, "", args...)
	if code != exitBad || !strings.Contains(stderr, "2 different setups (hardware=910B3; hardware=H100)") || !strings.Contains(stderr, "--label") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	bj, _ := bisectOut(t, append(args, "--label", "hardware=H100")...)
	if bj.Culprit == nil || *bj.Culprit != shas[stepCommit] || bj.Runs != 0 {
		t.Errorf("--label hardware=H100: culprit %v after %d runs (%s)", bj.Culprit, bj.Runs, bj.Reason)
	}
}

func TestBisectOutFile(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 12)
	out := filepath.Join(t.TempDir(), "bisect.md")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[0], "--metric", "mean_ttft_ms",
		"--name", "serving", "--run", benchCmd, "-o", "markdown", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(md), "### Mean TTFT (ms) regressed at `"+shas[stepCommit][:7]+"`") || !strings.HasPrefix(stdout, "bisect Mean TTFT (ms) of serving") {
		t.Errorf("--out holds:\n%s\nstdout:\n%s", md, stdout)
	}
}

func TestBisectStepExitCodes(t *testing.T) {
	repo, shas := bisectRepo(t, 40)
	noise(t, 9)
	t.Chdir(repo)
	db := filepath.Join(t.TempDir(), "h.db")
	if _, stderr, code := runCLI(t, servingBlock(498, 300, 500, 0), "--db", db, "ingest", "--name", "serving", "--commit", shas[0], "-"); code != 0 {
		t.Fatalf("ingest: %s", stderr)
	}
	step := []string{"--db", db, "bisect-step", "--name", "serving", "--metric", "Mean TTFT", "--threshold", "6%", "--reference", "500", "--run", benchCmd}
	withBaseline := []string{"--db", db, "bisect-step", "--name", "serving", "--metric", "Mean TTFT", "--threshold", "6%", "--baseline", shas[0], "--run", benchCmd}
	tests := []struct {
		name   string
		commit int
		args   []string
		code   int
		want   string
	}{
		{"good", 10, step, 0, ": good"},
		{"bad", 35, step, 1, ": bad"},
		{"untestable", untestableAt, step, 125, "exited 125: skip"},
		{"failing", 40, step, 255, "exit code 1"},
		{"failing skipped", 40, append(step, "--skip-failures"), 125, "exit code 1"},
		{"no threshold", 10, []string{"bisect-step", "--name", "serving", "--metric", "mean_ttft_ms", "--reference", "500", "--run", benchCmd}, 255, "--threshold is required"},
		{"no threshold skipped", 10, []string{"bisect-step", "--name", "serving", "--metric", "mean_ttft_ms", "--reference", "500", "--run", benchCmd, "--skip-failures"}, 255, "--threshold is required"},
		{"bad flag", 10, []string{"bisect-step", "--frobnicate"}, 255, "frobnicate"},
		{"baseline good", 10, withBaseline, 0, "against 498"},
		{"baseline bad", 35, withBaseline, 1, "against 498"},
		{"baseline without results", 10, append(append([]string{}, withBaseline[:len(withBaseline)-4]...), "--baseline", shas[1], "--run", benchCmd), 0, "measuring " + shas[1][:7] + " once"},
		{"baseline without results, failing there", 10, append(append([]string{}, withBaseline[:len(withBaseline)-4]...), "--baseline", shas[40], "--run", benchCmd), 255, "measuring it failed"},
		{"unknown direction", 10, append(append([]string{}, step...), "--metric", "mystery_score"), 255, "pass --direction lower"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			git(t, repo, "checkout", "-q", shas[tt.commit])
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, tt.code, tt.want, stderr)
			}
		})
	}
}

// TestBisectStepRecords: the run bisect-step stores records the testbed
// (PERFGATE_TESTBED, bisect-step has no --testbed) and, on a working tree
// with changes, the tree's hash, so that check on that tree finds it.
func TestBisectStepRecords(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 9)
	t.Chdir(repo)
	t.Setenv("PERFGATE_TESTBED", "step-box")
	db := filepath.Join(t.TempDir(), "h.db")
	git(t, repo, "checkout", "-q", shas[10])
	writeFile(t, repo, "n.txt", "edited\n")
	_, stderr, code := runCLI(t, "", "--db", db, "bisect-step", "--name", "serving", "--metric", "Mean TTFT", "--threshold", "6%", "--reference", "500", "--run", benchCmd)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	exp, _, _ := runCLI(t, "", "--db", db, "export")
	if !strings.Contains(exp, `"testbed":"step-box"`) || !strings.Contains(exp, `"dirty":true`) || !strings.Contains(exp, `"tree":"`) || strings.Contains(exp, `"tree":""`) {
		t.Errorf("the stored run lacks the testbed or the tree's hash:\n%s", exp)
	}
}

// perfgateBinary is perfgate built once (builtPerfgate) for the tests
// that run it as a process of its own.
func perfgateBinary(t testing.TB) string {
	t.Helper()
	return filepath.Join(builtPerfgate(t), "perfgate")
}

// TestBisectSIGINT sends SIGINT, as Ctrl-C does, to a perfgate process
// (the built binary) while the benchmark runs in its temporary checkout
// with a child of its own in the background. perfgate must exit 3 saying
// it was interrupted, kill the benchmark and its child, remove the
// checkout from the temporary directory (its default place, here a TMPDIR
// of the test's), keep the runs it made before, and leave the user's
// checkout, branch, index, files, refs and worktree list as they were.
func TestBisectSIGINT(t *testing.T) {
	parallel(t) // perfgate as processes, with their own environment: beside the other such tests
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on Windows")
	}
	bin := perfgateBinary(t)
	repo, shas := bisectRepo(t)
	writeFile(t, repo, "n.txt", "work in progress\n")
	writeFile(t, repo, "notes.txt", "mine\n")
	before := snapshot(t, repo)
	tmp, marks := t.TempDir(), t.TempDir()
	db := filepath.Join(t.TempDir(), "h.db")
	// The ends run the stand-in; the first commit between them hangs.
	hang := fmt.Sprintf(`n=$(cat n.txt); if [ "$n" != 0 ] && [ "$n" != %d ]; then `+
		`sleep 300 & echo $! >%[2]s/bg; echo $$ >%[2]s/sh; pwd >%[2]s/dir; touch %[2]s/started; wait; exit 1; fi; %s`,
		rangeLen, marks, benchCmd)
	cmd := exec.Command(bin, "--repo", repo, "--db", db, "bisect", "--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving", "--run", hang)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "NOISE_DIR="+t.TempDir(), "NOISE_SEED=11", "NOISE_SD=0.015")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(marks, "started")); err == nil {
			break
		}
		select {
		case err := <-waited:
			t.Fatalf("perfgate ended before the benchmark hung: %v\n%s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the benchmark did not start in 30s:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("perfgate still running 20s after SIGINT:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitEnv || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("exit %d, want %d saying interrupted; stderr:\n%s", code, exitEnv, stderr.String())
	}
	checkout := strings.TrimSpace(readMark(t, marks, "dir"))
	if _, err := os.Stat(checkout); !os.IsNotExist(err) {
		t.Errorf("the temporary checkout %s is still there (%v)", checkout, err)
	}
	if !strings.HasPrefix(checkout, tmp) {
		t.Errorf("the checkout %s was not made in TMPDIR %s", checkout, tmp)
	}
	emptyWorkdir(t, tmp)
	for _, name := range []string{"sh", "bg"} {
		pid, err := strconv.Atoi(strings.TrimSpace(readMark(t, marks, name)))
		if err != nil {
			t.Fatal(err)
		}
		if !gone(pid) {
			t.Errorf("the benchmark's %s process %d is still running after SIGINT", name, pid)
			_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
		}
	}
	if after := snapshot(t, repo); after != before {
		t.Errorf("the checkout changed:\nbefore %+v\nafter  %+v", before, after)
	}
	// The ends' runs, made before the interrupt, are stored; nothing of
	// the interrupted one.
	stdout, _, _ := runCLI(t, "", "--db", db, "export")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 2 {
		t.Errorf("%d runs stored, want the runs of the ends (at least 2):\n%s", len(lines), stdout)
	}
	for _, l := range lines {
		if !strings.Contains(l, shas[0]) && !strings.Contains(l, shas[rangeLen]) {
			t.Errorf("stored a run that is not of an end: %s", l)
		}
	}
}

func readMark(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gone tells whether process pid has ended (a zombie has), waiting up to
// two seconds; without /proc it cannot tell and says yes.
func gone(pid int) bool {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true
	}
	for range 200 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// pid (comm) STATE ...
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// TestBisectStepWithGit drives bisect-step from git bisect run, built as
// the binary git runs.
func TestBisectStepWithGit(t *testing.T) {
	bin := perfgateBinary(t)
	repo, shas := bisectRepo(t)
	noise(t, 10)
	db := filepath.Join(t.TempDir(), "h.db")
	git(t, repo, "bisect", "start", shas[rangeLen], shas[0])
	out := git(t, repo, "bisect", "run", bin, "--db", db, "bisect-step", "--name", "serving", "--metric", "mean_ttft_ms",
		"--threshold", "6%", "--reference", "500", "--run", benchCmd)
	if !strings.Contains(out, shas[stepCommit]+" is the first bad commit") {
		t.Errorf("git bisect run did not find %s:\n%s", shas[stepCommit], out)
	}
	git(t, repo, "bisect", "reset")
	// What bisect-step measured is in the history: one run per step.
	stdout, _, _ := runCLI(t, "", "--db", db, "export")
	if n := strings.Count(stdout, "\n"); n < 5 {
		t.Errorf("bisect-step stored %d runs over git's bisection of 48 commits:\n%s", n, stdout)
	}
}

// TestBisectLargeOutput runs commands that print megabytes before their
// result or their failure: the result is still found, and a failure shows
// only the last lines (of a tail bisect keeps bounded, whatever the
// command prints).
func TestBisectLargeOutput(t *testing.T) {
	repo, shas := bisectRepo(t)
	const junk = "yes junk | head -c 2000000; "
	tests := []struct {
		name    string
		run     string
		code    int
		want    []string
		maxJunk int // most "| junk" lines the error may show
	}{
		{"junk before the result", junk + benchCmd, 0, []string{"regressed at " + shas[stepCommit][:7]}, 0},
		{"junk then a failure", junk + "echo 'ImportError: last words' >&2; exit 1", exitEnv,
			[]string{"with exit code 1", "  | ImportError: last words", "--skip-failures"}, 14},
		{"junk and no result", junk, exitBad, []string{"no result block found", "  | junk", "--skip-failures"}, 15},
		{"a line longer than the tail", "head -c 200000 /dev/zero | tr '\\0' x; exit 2", exitEnv,
			[]string{"with exit code 2", "  | xxxxxxxxxx", "…"}, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noise(t, 20+i)
			stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[0],
				"--metric", "mean_ttft_ms", "--name", "serving", "--run", tt.run)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%.4000s", code, tt.code, stderr)
			}
			for _, want := range tt.want {
				if !strings.Contains(stdout+stderr, want) {
					t.Errorf("output lacks %q; stdout:\n%s\nstderr:\n%.4000s", want, stdout, stderr)
				}
			}
			if n := strings.Count(stderr, "| junk"); n > tt.maxJunk {
				t.Errorf("stderr shows %d lines of junk, want at most %d", n, tt.maxJunk)
			}
			if len(stderr) > 8000 {
				t.Errorf("stderr has %d bytes, want the last lines only:\n%.4000s", len(stderr), stderr)
			}
		})
	}
}

// BenchmarkBisectMemory runs perfgate (the built binary) on a benchmark
// that prints 64 MB of junk before its result in the first run and
// reports perfgate's peak RSS (about 25 MB; holding the output took 400 MB
// for 100 MB). A figure that depends on the machine's load is a benchmark,
// not a test (it failed 1 run in 5 under load); runner's
// TestExecBoundedMemory asserts what the code controls, the memory Exec
// retains. Linux only, where rusage gives the peak in KiB:
//
//	go test ./cmd/perfgate -run '^$' -bench BisectMemory -benchtime 1x
func BenchmarkBisectMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("reads the peak RSS from Linux's rusage")
	}
	for i := 0; i < b.N; i++ {
		b.ReportMetric(float64(bisectPeakMB(b)), "peak-RSS-MB")
	}
}

func bisectPeakMB(t testing.TB) int64 {
	bin := perfgateBinary(t)
	repo, shas := bisectRepo(t)
	const junkMB = 64
	mark := filepath.Join(t.TempDir(), "printed")
	run := fmt.Sprintf("if [ ! -f %[1]s ]; then touch %[1]s; yes junk | head -c %[2]d; fi; %[3]s", mark, junkMB<<20, benchCmd)
	cmd := exec.Command(bin, "--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "bisect", "--good", shas[0], "--metric", "mean_ttft_ms",
		"--name", "serving", "--end-runs", "2", "--max-runs", "5", "--run", run)
	cmd.Env = append(os.Environ(), "NOISE_DIR="+t.TempDir(), "NOISE_SEED=13", "NOISE_SD=0.015")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// A report is printed whatever it found (0 found, 5 the budget of 5
	// runs ran out): only the memory matters here.
	if err := cmd.Run(); err != nil && cmd.ProcessState.ExitCode() != exitBisectBudget {
		t.Fatalf("perfgate bisect: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the junk was not printed: %v", err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage")
	}
	return ru.Maxrss >> 10
}

// TestCommandForms: the benchmark command is taken in one form everywhere,
// its words after -- (no shell), with --run 'CMD' (a shell line) as the
// alias: bisect finds the same culprit either way, and run takes both.
func TestCommandForms(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 5)
	args := func(db string) []string {
		return []string{"--repo", repo, "--db", filepath.Join(t.TempDir(), db), "bisect", "--good", shas[0], "--metric", "mean_ttft_ms", "--name", "serving"}
	}
	byLine, _ := bisectOut(t, append(args("a.db"), "--run", benchCmd)...)
	noise(t, 5)
	// bisectOut appends -o json, which after -- would be the command's.
	stdout, stderr, code := runCLI(t, "", append(args("b.db"), "-o", "json", "--", "sh", "bench.sh")...)
	var byWords bisectJSON
	if err := json.Unmarshal([]byte(stdout), &byWords); err != nil || code != 0 {
		t.Fatalf("bisect -- sh bench.sh: exit %d, %v\n%s", code, err, stderr)
	}
	if byLine.Verdict != "found" || byWords.Verdict != "found" || *byLine.Culprit != *byWords.Culprit {
		t.Errorf("--run: %s %v; after --: %s %v; want the same culprit", byLine.Verdict, byLine.Culprit, byWords.Verdict, byWords.Culprit)
	}
	if _, stderr, code := runCLI(t, "", append(args("c.db"), "--run", benchCmd, "--", "sh", "bench.sh")...); code != exitBad || !strings.Contains(stderr, "not both") {
		t.Errorf("bisect with both forms: exit %d, %s", code, stderr)
	}
	line := "cd " + runner.ShellQuote(repo) + " && sh bench.sh" // run runs in the current directory
	for _, form := range [][]string{{"--run", line}, {"--", "sh", "-c", line}} {
		db := filepath.Join(t.TempDir(), "r.db")
		_, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "--db", db, "run", "--name", "serving"}, form...)...)
		if code != 0 {
			t.Errorf("run %v: exit %d\n%s", form, code, stderr)
		}
	}
}
