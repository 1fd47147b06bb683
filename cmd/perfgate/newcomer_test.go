package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/testbed"
)

// TestMeasuredThenCommitted: runs of a dirty tree committed as it is
// count for the commit (check, history, compare), and say so; a commit of
// other content does not take them.
func TestMeasuredThenCommitted(t *testing.T) {
	parallel(t)
	tests := []struct {
		name   string
		commit func(repo string)
		found  bool
	}{
		{"commit -am of the measured tree", func(repo string) { git(t, repo, "commit", "-qam", "fast") }, true},
		{"edited before the commit", func(repo string) {
			os.WriteFile(filepath.Join(repo, "main.txt"), []byte("edited after measuring"), 0o644)
			git(t, repo, "commit", "-qam", "fast")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			mainHistory(t, repo, 6)
			parent := git(t, repo, "rev-parse", "HEAD")
			git(t, repo, "checkout", "-q", "-b", "work")
			os.WriteFile(filepath.Join(repo, "main.txt"), []byte("fast version"), 0o644)
			for i := 0; i < 3; i++ {
				ingestAt(t, repo, metricsJSON(95+0.1*float64(i), 300))
			}
			tt.commit(repo)
			stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:5%")
			if !tt.found {
				if code != exitEnv || !strings.Contains(stderr, "has no stored results") {
					t.Errorf("runs of another tree counted: exit %d\n%s%s", code, stdout, stderr)
				}
				return
			}
			want := "(measured on the working tree before it was committed, at " + parent[:7] + ")"
			if code != 0 || !strings.Contains(strings.SplitN(stdout, "\n", 3)[1], want) {
				t.Errorf("exit %d, want the head line to say %q\n%s%s", code, want, stdout, stderr)
			}
			cj, _, _ := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
			if cj.verdictOf("mean_ttft_ms") != "improved" || cj.Checks[0].Samples.Current != 3 {
				t.Errorf("check -o json: %+v", cj)
			}
			stdout, stderr, code = runCLI(t, "", "--repo", repo, "history", "--metric", "mean_ttft_ms", "-o", "csv")
			if code != 0 || !strings.Contains(stdout, git(t, repo, "rev-parse", "HEAD")) {
				t.Errorf("history misses the commit: exit %d\n%s%s", code, stdout, stderr)
			}
			if _, stderr, code = runCLI(t, "", "--repo", repo, "compare", "main", "HEAD"); code != 0 {
				t.Errorf("compare: exit %d\n%s", code, stderr)
			}
			// runs --commit HEAD lists the runs check counts, marked.
			head := git(t, repo, "rev-parse", "HEAD")
			rj := listRuns(t, repo, "--commit", "HEAD")
			if len(rj.Runs) != 3 {
				t.Fatalf("runs --commit HEAD: %d runs, want the 3 measured before the commit: %+v", len(rj.Runs), rj.Runs)
			}
			for _, r := range rj.Runs {
				if r.Commit != parent || r.ForCommit != head || strings.Join(r.Flags, ",") != "dirty,before-commit" {
					t.Errorf("runs --commit HEAD: %+v, want commit %s for %s flagged dirty,before-commit", r, parent, head)
				}
			}
			if stdout, _, _ := runCLI(t, "", "--repo", repo, "runs", "--commit", "HEAD"); !strings.Contains(stdout, "dirty,before-commit (of "+head[:12]+")") {
				t.Errorf("runs --commit HEAD text:\n%s", stdout)
			}
		})
	}
}

// TestEditedAfterMeasuring: a tree edited after its runs is not what the
// committed results say: the first line says so, with the command that
// measures the tree, and the verdict is inconclusive, whether the
// committed results pass or fail (the first line says how they fared).
func TestEditedAfterMeasuring(t *testing.T) {
	parallel(t)
	for _, tt := range []struct {
		name      string
		committed float64
		fared     string
	}{{"pass", 100, "none failed"}, {"fail", 130, "1 of 3 checks failed"}} {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			mainHistory(t, repo, 6)
			git(t, repo, "checkout", "-q", "-b", "work")
			commit(t, repo, "work", map[string]string{"main.txt": "work"})
			ingestAt(t, repo, metricsJSON(tt.committed, 300))
			os.WriteFile(filepath.Join(repo, "main.txt"), []byte("measured"), 0o644)
			bench := filepath.Join(t.TempDir(), "bench.sh")
			os.WriteFile(bench, []byte("#!/bin/sh\necho '"+metricsJSON(100, 300)+"'\n"), 0o755)
			if _, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--", bench); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, stderr)
			}
			os.WriteFile(filepath.Join(repo, "main.txt"), []byte("edited since"), 0o644)
			for _, format := range []string{"text", "markdown"} {
				stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "-o", format)
				first := strings.SplitN(stdout, "\n", 2)[0]
				for _, want := range []string{"NCONCLUSIVE", "not a verdict on the working tree", "main.txt", "perfgate run --name serving -- " + bench, tt.fared} {
					if !strings.Contains(strings.ToUpper(first), strings.ToUpper(want)) {
						t.Errorf("%s: first line lacks %q: exit %d\n%s%s", format, want, code, stdout, stderr)
					}
				}
				if code != 0 {
					t.Errorf("%s: exit %d", format, code)
				}
			}
		})
	}
}

// TestCompareUnmeasuredTip: compare main BRANCH with main's tip not yet
// measured uses main's nearest measured first-parent ancestor, with a
// note; an unmeasured B is "no stored results", exit 3, as in check.
func TestCompareUnmeasuredTip(t *testing.T) {
	repo := gitRepo(t)
	shas := mainHistory(t, repo, 3)
	git(t, repo, "checkout", "-q", "-b", "work")
	commit(t, repo, "work", map[string]string{"w.txt": "1"})
	ingestAt(t, repo, metricsJSON(101, 300))
	git(t, repo, "checkout", "-q", "main")
	commit(t, repo, "unmeasured tip", map[string]string{"main.txt": "tip"})
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"text", []string{"compare", "main", "work"}, 0, []string{"A  " + shas[2][:7] + " (nearest measured first-parent ancestor of", "1 commit(s) before it"}},
		{"json", []string{"compare", "main", "work", "-o", "json"}, 0, []string{`"a": "` + shas[2], `"a_requested": "`}},
		{"unmeasured B", []string{"compare", "work", "main"}, exitEnv, []string{"has no stored results"}},
		{"history of a benchmark not stored", []string{"history", "--metric", "mean_ttft_ms", "--name", "nope"}, exitBad, []string{"serving"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q\n%s%s", w, stdout, stderr)
				}
			}
		})
	}
}

// TestRecordsRoundTrip: export then import, and recover then import,
// keep the records: an invalidated run stays invalid, an acceptance stays.
func TestRecordsRoundTrip(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 3)
	stdout, _, _ := runCLI(t, "", "--repo", repo, "runs", "-o", "json")
	var listed struct{ Runs []struct{ ID string } }
	if err := json.Unmarshal([]byte(stdout), &listed); err != nil || len(listed.Runs) != 3 {
		t.Fatalf("runs -o json: %v\n%s", err, stdout)
	}
	bad := listed.Runs[1].ID
	for _, args := range [][]string{
		{"invalidate", bad, "--reason", "runner was throttled"},
		{"accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--commit", "HEAD", "--reason", "intended"},
	} {
		if _, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, args...)...); code != 0 {
			t.Fatalf("%s: exit %d\n%s", args[0], code, stderr)
		}
	}
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.jsonl")
	db := filepath.Join(repo, ".perfgate", "history.db")
	tests := []struct {
		name string
		make []string
	}{
		{"export", []string{"--repo", repo, "export", "--out", dump}},
		{"recover", []string{"--db", db, "recover", "--out", dump}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.make...)
			if code != 0 || !strings.Contains(stderr, "and 2 records") {
				t.Fatalf("exit %d, want the records counted\n%s", code, stderr)
			}
			fresh := filepath.Join(t.TempDir(), "h.db")
			stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", fresh, "import", dump)
			if code != 0 || !strings.Contains(stdout, "imported 3 runs (0 already stored) and 2 records (0 already stored)") {
				t.Fatalf("import: exit %d\n%s%s", code, stdout, stderr)
			}
			stdout, _, _ = runCLI(t, "", "--repo", repo, "--db", fresh, "runs", "-o", "json")
			var got struct {
				Runs []struct {
					ID      string
					Invalid string
				}
			}
			json.Unmarshal([]byte(stdout), &got)
			for _, r := range got.Runs {
				if (r.ID == bad) != (r.Invalid != "") {
					t.Errorf("run %s invalid %q after the round trip; want only %s invalid", r.ID, r.Invalid, bad)
				}
			}
			stdout, _, _ = runCLI(t, "", "--repo", repo, "--db", fresh, "export")
			if !strings.Contains(stdout, `"kind":"accept"`) || !strings.Contains(stdout, `"kind":"invalidate"`) {
				t.Errorf("the imported history lacks a record:\n%s", stdout)
			}
			// Importing again adds nothing.
			if stdout, _, _ := runCLI(t, "", "--repo", repo, "--db", fresh, "import", dump); !strings.Contains(stdout, "imported 0 runs (3 already stored) and 0 records (2 already stored)") {
				t.Errorf("second import: %s", stdout)
			}
		})
	}
}

// TestIngestFileOutsideCI: outside CI a file's machine is unknown unless
// --testbed or the file names it; stdin and CI are this machine. Results
// of an unknown testbed are never compared, not even with each other.
func TestIngestFileOutsideCI(t *testing.T) {
	for _, k := range []string{"CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD", "TEAMCITY_VERSION", "PERFGATE_TESTBED"} {
		t.Setenv(k, "")
	}
	if testbed.Unknown != gate.UnknownTestbed {
		t.Fatalf("testbed.Unknown %q, gate.UnknownTestbed %q", testbed.Unknown, gate.UnknownTestbed)
	}
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	plain := writeFile(t, dir, "pasted.json", metricsJSON(100, 300))
	labelled := writeFile(t, dir, "labelled.json", `{"metrics": {"mean_ttft_ms": 100}, "labels": {"testbed": "ci-910b"}}`)
	tests := []struct {
		name    string
		ci      string
		args    []string
		stdin   string
		testbed string // "" : this machine's
		warn    bool
	}{
		{"file outside CI", "", []string{plain}, "", "unknown", true},
		{"file with --testbed", "", []string{"--testbed", "ci-910b", plain}, "", "ci-910b", false},
		{"file that names its testbed", "", []string{labelled}, "", "ci-910b", false},
		{"stdin outside CI", "", []string{"-"}, metricsJSON(101, 300), "", false},
		{"file in CI", "true", []string{plain}, "", "", false},
		{"CI=false is outside CI", "false", []string{plain}, "", "unknown", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			stdout, stderr, code := runCLI(t, tt.stdin, append([]string{"--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db"), "ingest", "--name", "s", "-o", "json"}, tt.args...)...)
			var got struct{ Runs []struct{ Testbed string } }
			if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || len(got.Runs) != 1 {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			tb := got.Runs[0].Testbed
			if (tt.testbed == "" && (tb == "unknown" || tb == "ci-910b")) || (tt.testbed != "" && tb != tt.testbed) {
				t.Errorf("testbed %q, want %q (\"\": this machine's)", tb, tt.testbed)
			}
			if warned := strings.Contains(stderr, "cannot tell which machine measured"); warned != tt.warn {
				t.Errorf("warned %v, want %v: %s", warned, tt.warn, stderr)
			}
		})
	}

	t.Run("unknown compares with unknown, never with a named testbed", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "h.db")
		runCLI(t, "", "--repo", repo, "--db", db, "ingest", "--name", "s", plain)
		git(t, repo, "checkout", "-q", "-b", "work")
		commit(t, repo, "two", map[string]string{"a.txt": "2"})
		slow := writeFile(t, dir, "slow.json", metricsJSON(200, 300))
		runCLI(t, "", "--repo", repo, "--db", db, "ingest", "--name", "s", slow)
		stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "check", "--rule", "mean_ttft_ms:5%")
		if code != exitFail || !strings.HasPrefix(stdout, "FAIL") || !strings.Contains(stdout, "unnamed machine") {
			t.Errorf("unknown against unknown: exit %d\n%s%s", code, stdout, stderr)
		}
		// A named head: never compared with the unknown history, and
		// never a pass.
		db2 := filepath.Join(t.TempDir(), "h.db")
		git(t, repo, "checkout", "-q", "HEAD~1")
		runCLI(t, "", "--repo", repo, "--db", db2, "ingest", "--name", "s", plain)
		git(t, repo, "checkout", "-q", "work")
		runCLI(t, "", "--repo", repo, "--db", db2, "ingest", "--name", "s", "--testbed", "laptop", slow)
		stdout, stderr, code = runCLI(t, "", "--repo", repo, "--db", db2, "check", "--rule", "mean_ttft_ms:5%")
		if code != 0 || !strings.HasPrefix(stdout, "INCONCLUSIVE  nothing compared") || !strings.Contains(stdout, `--testbed "laptop"`) {
			t.Errorf("named head against an unknown history: exit %d\n%s%s", code, stdout, stderr)
		}
	})
}

// TestSmallTrips: --db naming a directory says so (exit 2); --name and
// --benchmark are one flag everywhere; a missing --db is said once.
func TestSmallTrips(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 2)
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		code int
		want string
		once string // said exactly once on stderr
	}{
		{"db is a directory", []string{"--db", dir, "runs"}, exitBad, "is a directory, not a history file", ""},
		{"db is a directory, writing", []string{"--db", dir, "invalidate", "abcd", "--reason", "x"}, exitBad, "is a directory", ""},
		{"history --benchmark", []string{"history", "--benchmark", "serving", "--metric", "mean_ttft_ms"}, 0, "Mean TTFT", ""},
		{"export --benchmark", []string{"export", "--benchmark", "serving"}, 0, `"benchmark":"serving"`, ""},
		{"runs --name", []string{"runs", "--name", "serv*"}, 0, "serving", ""},
		{"missing db", []string{"--db", filepath.Join(dir, "none.db"), "check"}, exitEnv, "", "does not exist; reading it as empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, tt.args...)...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.want) {
				t.Errorf("exit %d, want %d and %q\n%s%s", code, tt.code, tt.want, stdout, stderr)
			}
			if tt.once != "" && strings.Count(stderr, tt.once) != 1 {
				t.Errorf("%q said %d times:\n%s", tt.once, strings.Count(stderr, tt.once), stderr)
			}
		})
	}
}

// TestRunLeavesFiles: a command that writes into a clean tree stores its
// runs as HEAD's and says that the tree is no longer clean; one that
// writes nowhere in it says nothing.
func TestRunLeavesFiles(t *testing.T) {
	tests := []struct {
		name, script string
		warn         bool
	}{
		{"writes into the tree", "echo x > out.txt\necho '" + metricsJSON(100, 300) + "'\n", true},
		{"writes nothing", "echo '" + metricsJSON(100, 300) + "'\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			commit(t, repo, "one", map[string]string{"a.txt": "1"})
			bench := writeFile(t, t.TempDir(), "bench.sh", "#!/bin/sh\n"+tt.script)
			os.Chmod(bench, 0o755)
			t.Chdir(repo)
			_, stderr, code := runCLI(t, "", "run", "--name", "s", "--", bench)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			if warned := strings.Contains(stderr, "left files in the clean working tree (out.txt)"); warned != tt.warn {
				t.Errorf("warned %v, want %v\n%s", warned, tt.warn, stderr)
			}
			if strings.Contains(stderr, "uncommitted changes") {
				t.Errorf("the runs were stored as dirty:\n%s", stderr)
			}
		})
	}
}
