package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/store"
)

// metricsJSON is a generic-format result.
func metricsJSON(ttft, tput float64) string {
	return fmt.Sprintf(`{"metrics": {"mean_ttft_ms": %g, "output_throughput": %g, "completed": 500, "failed": 0}}`, ttft, tput)
}

// ingestAt stores a generic result for the current HEAD of repo.
func ingestAt(t *testing.T, repo, body string, extra ...string) {
	t.Helper()
	args := append([]string{"--repo", repo, "ingest", "--name", "serving"}, extra...)
	args = append(args, "-")
	if _, stderr, code := runCLI(t, body, args...); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, stderr)
	}
}

// mainHistory builds main with n measured commits whose TTFT wobbles by
// about 1% around 100 ms, and returns their SHAs.
func mainHistory(t *testing.T, repo string, n int) []string {
	t.Helper()
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7, -1.0, 0.5}
	var shas []string
	for i := 0; i < n; i++ {
		shas = append(shas, commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)}))
		w := wobble[i%len(wobble)]
		ingestAt(t, repo, metricsJSON(100*(1+w/100), 300*(1-w/100)))
	}
	return shas
}

type checkJSON struct {
	Verdict  string `json:"verdict"`
	Head     string `json:"head"`
	Baseline struct {
		Commit    string `json:"commit"`
		MergeBase string `json:"merge_base"`
		Distance  int    `json:"distance"`
	} `json:"baseline"`
	Checks []struct {
		Benchmark, Metric, Rule, Verdict string
		Baseline, Current, Change        *float64
		Samples                          struct{ Baseline, Current int }
	} `json:"checks"`
	Warnings []string `json:"warnings"`
}

func checkOut(t *testing.T, repo string, args ...string) (checkJSON, string, int) {
	t.Helper()
	stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "check", "-o", "json"}, args...)...)
	var cj checkJSON
	if code <= 1 {
		if err := json.Unmarshal([]byte(stdout), &cj); err != nil {
			t.Fatalf("check -o json: %v\n%s\n%s", err, stdout, stderr)
		}
	}
	return cj, stderr, code
}

func (c checkJSON) verdictOf(metric string) string {
	for _, ch := range c.Checks {
		if ch.Metric == metric {
			return ch.Verdict
		}
	}
	return "absent"
}

func TestCheckVerdicts(t *testing.T) {
	parallel(t)
	tests := []struct {
		name     string
		ttft     float64
		rules    []string
		code     int
		verdicts map[string]string
	}{
		{"unchanged passes", 100.4, []string{"--rule", "mean_ttft_ms:3%"}, 0, map[string]string{"mean_ttft_ms": "pass"}},
		{"15% regression fails", 115, []string{"--rule", "mean_ttft_ms:3%"}, 1, map[string]string{"mean_ttft_ms": "fail"}},
		{"by label", 115, []string{"--rule", "Mean TTFT:3%"}, 1, map[string]string{"mean_ttft_ms": "fail"}},
		{"improvement", 80, []string{"--rule", "mean_ttft_ms:3%"}, 0, map[string]string{"mean_ttft_ms": "improved"}},
		{"absolute bound", 100, []string{"--rule", "mean_ttft_ms<90"}, 1, map[string]string{"mean_ttft_ms": "fail"}},
		{"defaults", 100.2, nil, 0, map[string]string{"mean_ttft_ms": "pass", "output_throughput": "pass"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			shas := mainHistory(t, repo, 8)
			git(t, repo, "checkout", "-q", "-b", "feature")
			head := commit(t, repo, "feature", map[string]string{"f.txt": "x"})
			ingestAt(t, repo, metricsJSON(tt.ttft, 300))
			cj, stderr, code := checkOut(t, repo, tt.rules...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; %s\n%+v", code, tt.code, stderr, cj)
			}
			if cj.Head != head || cj.Baseline.Commit != shas[7] || cj.Baseline.MergeBase != shas[7] || cj.Baseline.Distance != 0 {
				t.Errorf("head/baseline = %s %+v, want head %s and baseline = merge-base %s", cj.Head, cj.Baseline, head, shas[7])
			}
			for m, v := range tt.verdicts {
				if got := cj.verdictOf(m); got != v {
					t.Errorf("%s verdict %s, want %s", m, got, v)
				}
			}
		})
	}
}

func TestCheckNearestAncestorAndMissing(t *testing.T) {
	repo := gitRepo(t)
	shas := mainHistory(t, repo, 6)
	// Two unmeasured commits on main: the merge-base has no results.
	commit(t, repo, "main unmeasured 1", map[string]string{"main.txt": "u1"})
	mb := commit(t, repo, "main unmeasured 2", map[string]string{"main.txt": "u2"})
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(100.3, 300))
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:3%")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if cj.Baseline.MergeBase != mb || cj.Baseline.Commit != shas[5] || cj.Baseline.Distance != 2 {
		t.Errorf("baseline %+v, want commit %s at distance 2 from merge-base %s", cj.Baseline, shas[5], mb)
	}

	// A benchmark that vanished is missing, and missing fails.
	git(t, repo, "checkout", "-q", "main")
	c := commit(t, repo, "main with a second benchmark", map[string]string{"main.txt": "b2"})
	ingestAt(t, repo, metricsJSON(100, 300))
	if _, stderr, code := runCLI(t, metricsJSON(50, 10), "--repo", repo, "ingest", "--name", "other", "-"); code != 0 {
		t.Fatal(stderr)
	}
	git(t, repo, "checkout", "-q", "-b", "feature2")
	commit(t, repo, "feature2", map[string]string{"g.txt": "y"})
	ingestAt(t, repo, metricsJSON(100, 300))
	cj, _, code = checkOut(t, repo, "--rule", "mean_ttft_ms:3%")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (missing benchmark)", code)
	}
	found := false
	for _, ch := range cj.Checks {
		if ch.Benchmark == "other" && ch.Verdict == "missing" {
			found = true
		}
	}
	if !found || cj.Baseline.Commit != c {
		t.Errorf("no missing verdict for benchmark other, or baseline %s != %s: %+v", cj.Baseline.Commit, c, cj)
	}
}

func TestCheckLabelMismatchAndNew(t *testing.T) {
	repo := gitRepo(t)
	for i := 0; i < 3; i++ {
		commit(t, repo, fmt.Sprint("main ", i), map[string]string{"m.txt": fmt.Sprint(i)})
		ingestAt(t, repo, metricsJSON(100, 300), "--label", "hardware=910B3")
	}
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(150, 300), "--label", "hardware=910B4")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%")
	// Never silently compared: the 50% slower run on other hardware is
	// new, and the mismatch is named.
	if !strings.Contains(stdout+stderr, "hardware") {
		t.Errorf("label mismatch not reported (exit %d):\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "+50") {
		t.Errorf("runs on different hardware were compared:\n%s", stdout)
	}
	// The base branch measured the benchmark, so comparing nothing is not
	// a pass: inconclusive (exit 0 under inconclusive: warn), with the remedy.
	if code != 0 || !strings.Contains(stdout, `hardware: "910B4" (head) vs "910B3" (baseline)`) || !strings.HasPrefix(stdout, "INCONCLUSIVE  nothing compared") ||
		!strings.Contains(stdout, "measure the base branch with them") {
		t.Errorf("mismatch: exit %d (want 0: inconclusive does not fail by default), report:\n%s", code, stdout)
	}
	cj, _, _ := checkOut(t, repo, "--rule", "mean_ttft_ms:3%")
	if cj.verdictOf("mean_ttft_ms") != "inconclusive" || cj.Verdict != "inconclusive" {
		t.Errorf("mean_ttft_ms on other hardware: %s (report %s), want inconclusive", cj.verdictOf("mean_ttft_ms"), cj.Verdict)
	}
}

func TestCheckExitCodes(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 3)
	notRepo := t.TempDir()
	badRules := filepath.Join(t.TempDir(), "rules.yml")
	os.WriteFile(badRules, []byte("rules:\n  - metric: mean_tfft_ms\n    max_regression: 3%\n"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad rule shorthand", []string{"--repo", repo, "check", "--rule", "mean_ttft_ms:lots"}, 2, "mean_ttft_ms:lots"},
		{"unknown metric in rules file", []string{"--repo", repo, "check", "--rules", badRules}, 2, `rules.yml:2: unknown metric "mean_tfft_ms"; did you mean "mean_ttft_ms"?`},
		{"absent rules file", []string{"--repo", repo, "check", "--rules", "nope.yml"}, 2, `--rules "nope.yml"`},
		{"bad percentage", []string{"--repo", repo, "check", "--rule", "mean_ttft_ms:-3%"}, 2, "positive percentage"},
		{"bad -o", []string{"--repo", repo, "check", "-o", "xml"}, 2, `-o "xml"`},
		{"unknown head", []string{"--repo", repo, "check", "--head", "nope"}, 2, "nope"},
		{"unknown base", []string{"--repo", repo, "check", "--base", "nope"}, 2, "nope"},
		{"not a repository", []string{"--repo", notRepo, "check"}, 3, "git"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr, tt.want)
			}
		})
	}
	// A history held by another process: environment (3), after the timeout.
	holder, err := store.Open(filepath.Join(repo, ".perfgate", "history.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PERFGATE_LOCK_TIMEOUT", "200ms")
	_, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%")
	holder.Close()
	if code != 3 || !strings.Contains(stderr, "in use by another process") {
		t.Errorf("locked store: exit %d (want 3), %q", code, stderr)
	}

	// HEAD without results: the history's state (3), with what to do.
	commit(t, repo, "unmeasured", map[string]string{"x": "1"})
	_, stderr, code = runCLI(t, "", "--repo", repo, "check")
	if code != 3 || !strings.Contains(stderr, "measure it first") {
		t.Errorf("unmeasured head: exit %d, %q", code, stderr)
	}
}

// TestLocalPreMerge is the README's flow: on a branch, perfgate run on
// a dirty working tree, then perfgate check against main's history.
func TestLocalPreMerge(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 6)
	git(t, repo, "checkout", "-q", "-b", "work")
	bench := filepath.Join(t.TempDir(), "bench.sh")
	os.WriteFile(bench, []byte("#!/bin/sh\necho '"+metricsJSON(130, 300)+"'\n"), 0o755)
	os.WriteFile(filepath.Join(repo, "main.txt"), []byte("local edit"), 0o644)
	if _, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--", bench); code != 0 {
		t.Fatalf("run: %s", stderr)
	}
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:3%")
	if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" {
		t.Errorf("local check: exit %d, %+v, %s", code, cj, stderr)
	}
}

func TestCompareAndHistory(t *testing.T) {
	repo := gitRepo(t)
	shas := mainHistory(t, repo, 5)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "compare", shas[0], shas[4])
	if code != 0 || !strings.Contains(stdout, "Mean TTFT (ms)") {
		t.Errorf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, o := range []string{"text", "csv", "json", "markdown"} {
		stdout, stderr, code = runCLI(t, "", "--repo", repo, "history", "--name", "serving", "--metric", "Mean TTFT", "-o", o)
		if code != 0 || !strings.Contains(stdout, shas[4][:7]) {
			t.Errorf("history -o %s: exit %d\n%s\n%s", o, code, stdout, stderr)
		}
	}
	_, stderr, code = runCLI(t, "", "--repo", repo, "history", "--name", "serving", "--metric", "mean_tfft_ms")
	if code != 2 || !strings.Contains(stderr, "mean_ttft_ms") {
		t.Errorf("unknown metric: exit %d, %q", code, stderr)
	}
}

// TestCheckInconclusiveAndInvalid covers the two verdicts that need more
// than a ratio: a change beyond a tight rule but within main's noise is
// inconclusive (exit 0, with a warning), and a head that failed a fifth
// of its requests is invalid (exit 1, with the reason), even though its
// latency looks better.
func TestCheckInconclusiveAndInvalid(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	mainHistory(t, repo, 8)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(101.6, 300))
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:1%")
	if code != 0 || cj.verdictOf("mean_ttft_ms") != "inconclusive" {
		t.Errorf("within noise: exit %d, %+v; %s", code, cj, stderr)
	}
	stdout, _, _ := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:1%")
	if !strings.Contains(stdout, "warning   1 check is inconclusive") {
		t.Errorf("text report lacks the inconclusive warning:\n%s", stdout)
	}

	commit(t, repo, "feature 2", map[string]string{"f.txt": "y"})
	ingestAt(t, repo, `{"metrics": {"mean_ttft_ms": 60, "output_throughput": 500, "completed": 400, "failed": 100}}`)
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%")
	if code != 1 || !strings.Contains(stdout, "invalid result: 100 of 500 requests failed") || strings.Contains(stdout, "IMPROVED") {
		t.Errorf("invalid head: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCheckMergeBaseNotTip: main moved on (and regressed) after the
// branch point; the PR is judged against the merge-base, not main's tip.
func TestCheckMergeBaseNotTip(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	shas := mainHistory(t, repo, 8)
	git(t, repo, "checkout", "-q", "-b", "feature")
	head := commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(100.3, 300))
	git(t, repo, "checkout", "-q", "main")
	for i := 0; i < 3; i++ {
		commit(t, repo, fmt.Sprint("main after ", i), map[string]string{"main.txt": fmt.Sprint("after", i)})
		ingestAt(t, repo, metricsJSON(150, 200))
	}
	cj, stderr, code := checkOut(t, repo, "--head", "feature", "--rule", "mean_ttft_ms:3%", "--rule", "output_throughput:3%")
	if code != 0 || cj.Head != head || cj.Baseline.Commit != shas[7] || cj.Baseline.MergeBase != shas[7] {
		t.Errorf("exit %d, head %s baseline %+v, want merge-base %s; %s", code, cj.Head, cj.Baseline, shas[7], stderr)
	}
	for _, m := range []string{"mean_ttft_ms", "output_throughput"} {
		if v := cj.verdictOf(m); v != "pass" {
			t.Errorf("%s: %s, want pass (main's later regression is not the PR's)", m, v)
		}
	}
}

// TestCheckBaseBranchFallback: without --base or baseline.branch, a
// repository whose default branch is master uses master (and says so);
// a CI clone with only origin/main uses it; a named branch that does not
// exist is an error that says what to do.
func TestCheckBaseBranchFallback(t *testing.T) {
	parallel(t)
	repo := t.TempDir()
	git(t, repo, "-c", "init.defaultBranch=master", "init", "-q")
	shas := mainHistory(t, repo, 6)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(130, 300))
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:3%")
	if code != 1 || cj.Baseline.Commit != shas[5] || !strings.Contains(stderr, `no branch "main"; using master`) {
		t.Errorf("master: exit %d, baseline %+v, stderr %q", code, cj.Baseline, stderr)
	}
	_, stderr, code = checkOut(t, repo, "--base", "main", "--rule", "mean_ttft_ms:3%")
	if code != 2 || !strings.Contains(stderr, "main") || !strings.Contains(stderr, "fetch-depth") {
		t.Errorf("--base main on a master repo: exit %d, stderr %q", code, stderr)
	}

	// A CI clone: the PR branch checked out, main only as origin/main.
	src := gitRepo(t)
	shas = mainHistory(t, src, 6)
	db := filepath.Join(src, ".perfgate", "history.db")
	clone := filepath.Join(t.TempDir(), "clone")
	git(t, src, "clone", "-q", src, clone)
	git(t, clone, "checkout", "-q", "-b", "pr")
	git(t, clone, "branch", "-q", "-D", "main")
	commit(t, clone, "pr", map[string]string{"f.txt": "x"})
	if _, stderr, code := runCLI(t, metricsJSON(100.2, 300), "--repo", clone, "--db", db, "ingest", "--name", "serving", "-"); code != 0 {
		t.Fatal(stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--repo", clone, "--db", db, "check", "-o", "json", "--rule", "mean_ttft_ms:3%")
	var got checkJSON
	json.Unmarshal([]byte(stdout), &got)
	if code != 0 || got.Baseline.Commit != shas[5] || !strings.Contains(stdout, `"base_ref": "origin/main"`) {
		t.Errorf("origin/main only: exit %d, baseline %+v\n%s\n%s", code, got.Baseline, stdout, stderr)
	}
}

// TestCompareIgnoreLabels: compare and history read ignore_labels from the
// rules file, as check does, so a label that changes on every run (here a
// runner id) does not split one benchmark into two series.
func TestCompareIgnoreLabels(t *testing.T) {
	repo := gitRepo(t)
	a := commit(t, repo, "a", map[string]string{"a.txt": "1"})
	ingestAt(t, repo, metricsJSON(100, 300), "--label", "runner=r1")
	b := commit(t, repo, "b", map[string]string{"a.txt": "2"})
	ingestAt(t, repo, metricsJSON(110, 300), "--label", "runner=r2")

	stdout, stderr, code := runCLI(t, "", "--repo", repo, "compare", a, b)
	if code != 0 || strings.Contains(stdout, "+10.00%") {
		t.Fatalf("without ignore_labels the runners are two series: exit %d\n%s\n%s", code, stdout, stderr)
	}
	writeFile(t, repo, ".perfgate.yml", "ignore_labels: [runner]\nrules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n")
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "compare", a, b)
	if code != 0 || !strings.Contains(stdout, "+10.00%") {
		t.Errorf("compare with ignore_labels [runner]: exit %d, want one series changed +10%%\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "history", "--name", "serving", "--metric", "mean_ttft_ms", "-o", "csv")
	if code != 0 || strings.Count(stdout, "\n") != 3 || !strings.Contains(stdout, "110") {
		t.Errorf("history with ignore_labels [runner]: exit %d, want a header and two rows of one series\n%s\n%s", code, stdout, stderr)
	}
}

// TestLinkedWorktreeSharesHistory: a branch checked out with git worktree
// add reads and writes the main working tree's history, as it shares the
// repository's objects; before, it got an empty history of its own and
// found no baseline.
func TestLinkedWorktreeSharesHistory(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 6)
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, repo, "worktree", "add", "-q", "-b", "feature", wt)
	commit(t, wt, "feature", map[string]string{"feature.txt": "x"})
	ingestAt(t, wt, metricsJSON(101, 299))
	if _, err := os.Stat(filepath.Join(wt, ".perfgate")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the linked worktree got a history of its own (%v)", err)
	}
	cj, stderr, code := checkOut(t, wt, "--rule", "mean_ttft_ms:3%")
	if code != 0 || cj.Baseline.Commit == "" || cj.Verdict != "pass" {
		t.Errorf("check in the worktree: exit %d, %+v\n%s", code, cj, stderr)
	}
	if got := sharedDBPath("/r/b", "/r/main/.git/worktrees/b", "/r/main/.git"); got != "/r/main/.perfgate/history.db" {
		t.Errorf("linked worktree: %s", got)
	}
	if got := sharedDBPath("/r/main", "/r/main/.git", "/r/main/.git"); got != "/r/main/.perfgate/history.db" {
		t.Errorf("main worktree: %s", got)
	}
	if got := sharedDBPath("/w/b", "/srv/repo.git/worktrees/b", "/srv/repo.git"); got != "/srv/repo.git/perfgate/history.db" {
		t.Errorf("worktree of a bare repository: %s", got)
	}
}
