package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ciEnv makes the detected testbed a GitHub-hosted runner's.
func ciEnv(t *testing.T) string {
	t.Helper()
	for k, v := range map[string]string{"GITHUB_ACTIONS": "true", "RUNNER_NAME": "GitHub Actions 3", "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "ImageOS": "ubuntu24"} {
		t.Setenv(k, v)
	}
	t.Setenv("PERFGATE_TESTBED", "")
	// No accelerator tools: the name must not depend on this machine's.
	t.Setenv("PATH", filepath.Dir(gitPath(t)))
	return "ci:github-actions "
}

func gitPath(t *testing.T) string {
	t.Helper()
	p, err := execLookPath("git")
	if err != nil {
		t.Skip("git CLI not installed")
	}
	return p
}

// TestTestbedsNeverMix: a laptop (100 ms) and a CI runner (150 ms) both
// measure main into one history (as perfgate sync makes it); check,
// compare and history keep their series apart, and a head whose only
// baseline is the other testbed is not compared.
func TestTestbedsNeverMix(t *testing.T) {
	ci := ciEnv(t)
	repo := gitRepo(t)
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7, -1.0, 0.5}
	var shas []string
	for i := 0; i < 10; i++ {
		shas = append(shas, commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)}))
		w := 1 + wobble[i]/100
		ingestAt(t, repo, metricsJSON(100*w, 300), "--testbed", "laptop")
		ingestAt(t, repo, metricsJSON(150*w, 200)) // the detected CI testbed
	}
	stdout, _, _ := runCLI(t, "", "--repo", repo, "export")
	if !strings.Contains(stdout, `"testbed":"laptop"`) || !strings.Contains(stdout, `"testbed":"`+ci) || !strings.Contains(stdout, `"runner_name":"GitHub Actions 3"`) {
		t.Fatalf("export lacks the testbeds or the environment:\n%s", stdout)
	}

	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	tests := []struct {
		name    string
		ttft    float64
		extra   []string
		code    int
		base    float64
		verdict string
	}{
		{"CI head at the CI level", 150, nil, 0, 150, "pass"},
		{"CI head 10% slower", 165, nil, 1, 150, "fail"},
		{"laptop head at the laptop level", 100, []string{"--testbed", "laptop"}, 0, 100, "pass"},
		{"laptop head at the CI level", 150, []string{"--testbed", "laptop"}, 1, 100, "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			git(t, repo, "commit", "-q", "--allow-empty", "-m", tt.name)
			ingestAt(t, repo, metricsJSON(tt.ttft, 300), tt.extra...)
			cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
			if code != tt.code || cj.verdictOf("mean_ttft_ms") != tt.verdict {
				t.Fatalf("exit %d, verdict %s; want %d, %s\n%s", code, cj.verdictOf("mean_ttft_ms"), tt.code, tt.verdict, stderr)
			}
			for _, c := range cj.Checks {
				if c.Metric == "mean_ttft_ms" && (c.Baseline == nil || *c.Baseline < tt.base*0.98 || *c.Baseline > tt.base*1.02 || c.Samples.Baseline < 8) {
					t.Errorf("baseline %v over %d results, want about %v: testbeds mixed", *c.Baseline, c.Samples.Baseline, tt.base)
				}
			}
		})
	}

	t.Run("only another testbed", func(t *testing.T) {
		git(t, repo, "commit", "-q", "--allow-empty", "-m", "new machine")
		ingestAt(t, repo, metricsJSON(100, 300), "--testbed", "new-laptop")
		stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:5%")
		if strings.Contains(stdout, "perfgate sync --pull-only") || !strings.Contains(strings.SplitN(stdout, "\n", 6)[4], "not compared: head was measured on testbed") {
			t.Errorf("the testbed mismatch is not the first warning, or the no-baseline advice contradicts it:\n%s", stdout)
		}
		if code != 0 || !strings.Contains(stdout, `head was measured on testbed "new-laptop"`) || !strings.Contains(stdout, "--testbed NAME") ||
			!strings.Contains(stdout, "on testbed new-laptop") {
			t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		// Nothing compared is the report's first line, not a note.
		if !strings.HasPrefix(stdout, "INCONCLUSIVE  nothing compared: 1 of 1 check not comparable with the base branch's results (measured on ") {
			t.Errorf("compared across testbeds:\n%s", stdout)
		}
	})

	t.Run("compare and history", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, "", "--repo", repo, "compare", shas[0], shas[9], "-o", "json")
		var cmp struct {
			Rows []struct {
				Metric string
				Labels map[string]string
				A, B   float64
			}
		}
		if code != 0 || json.Unmarshal([]byte(stdout), &cmp) != nil {
			t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
		}
		n := 0
		for _, r := range cmp.Rows {
			if r.Metric == "mean_ttft_ms" {
				n++
				if r.B/r.A > 1.02 || r.B/r.A < 0.98 {
					t.Errorf("compare row %v: %v vs %v, testbeds mixed", r.Labels, r.A, r.B)
				}
			}
		}
		if n != 2 {
			t.Errorf("compare: %d mean_ttft_ms rows, want one per testbed", n)
		}
		stdout, stderr, code = runCLI(t, "", "--repo", repo, "history", "--branch", "main", "--name", "serving", "--metric", "mean_ttft_ms", "--label", "testbed=laptop", "-o", "csv")
		if code != 0 || strings.Contains(stdout, ",15") || !strings.Contains(stdout, ",100") {
			t.Errorf("history of the laptop: exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
}

// TestWorkingTreeExactly: a 10% slowdown measured on a dirty tree, then
// fixed down to 1% (other working-tree content, and a new untracked
// file): check uses only the runs of the tree as it is now and passes,
// also on another branch at the same commit.
func TestWorkingTreeExactly(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	mainHistory(t, repo, 10)
	git(t, repo, "checkout", "-q", "-b", "work")
	measure := func(ttft float64) {
		t.Helper()
		for i := 0; i < 5; i++ {
			ingestAt(t, repo, metricsJSON(ttft*(1+0.002*float64(i-2)), 300))
		}
	}
	os.WriteFile(filepath.Join(repo, "main.txt"), []byte("slow version"), 0o644)
	measure(110)
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
	if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" {
		t.Fatalf("10%% slower tree: exit %d, %s\n%s", code, cj.verdictOf("mean_ttft_ms"), stderr)
	}

	// The fix: other content, and an untracked helper file.
	os.WriteFile(filepath.Join(repo, "main.txt"), []byte("fixed version"), 0o644)
	os.WriteFile(filepath.Join(repo, "helper.py"), []byte("print(1)\n"), 0o644)
	_, stderr, code = checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
	if !strings.Contains(stderr, "no results of the working tree as it is now") || !strings.Contains(stderr, "5 working-tree run(s)") {
		t.Errorf("the unmeasured fix: exit %d\n%s", code, stderr)
	}
	measure(101)
	for _, branch := range []string{"work", "other-branch"} {
		if branch != "work" {
			git(t, repo, "checkout", "-q", "-b", branch) // same commit, same changes
		}
		cj, stderr, code = checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
		if code != 0 || cj.verdictOf("mean_ttft_ms") != "pass" {
			t.Errorf("%s: fixed tree: exit %d, %s\n%s", branch, code, cj.verdictOf("mean_ttft_ms"), stderr)
		}
		for _, c := range cj.Checks {
			if c.Metric == "mean_ttft_ms" && (c.Samples.Current != 5 || *c.Current > 102) {
				t.Errorf("%s: head used %d runs at %v; want the 5 runs of this tree", branch, c.Samples.Current, *c.Current)
			}
		}
		if !strings.Contains(stderr, "checking 5 run(s) of the working tree as it is now") || !strings.Contains(stderr, "5 run(s) of earlier states of the tree are not used") {
			t.Errorf("%s: stderr %s", branch, stderr)
		}
	}

	// An untracked file counts as a change: a new one is a new tree.
	os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("todo\n"), 0o644)
	if _, stderr, _ := checkOut(t, repo, "--rule", "mean_ttft_ms:5%"); !strings.Contains(stderr, "no results of the working tree as it is now") {
		t.Errorf("untracked file not counted: %s", stderr)
	}
	// An ignored one does not.
	os.Remove(filepath.Join(repo, "notes.txt"))
	os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte("*.log\n.perfgate/\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "bench.log"), []byte("output\n"), 0o644)
	if cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%"); code != 0 || cj.verdictOf("mean_ttft_ms") != "pass" {
		t.Errorf("ignored file counted: exit %d\n%s", code, stderr)
	}
}

// TestIngestedFileIsNotAChange: result files perfgate ingested from inside
// the repository are outputs: repeated ingests of new result files on a
// clean tree store clean runs.
func TestIngestedFileIsNotAChange(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	for i, v := range []float64{100, 101} {
		f := filepath.Join(repo, "results", fmt.Sprintf("r%d.json", i))
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte(metricsJSON(v, 300)), 0o644)
		if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", f); code != 0 || strings.Contains(stderr, "uncommitted") {
			t.Fatalf("ingest %d: exit %d: %s", i, code, stderr)
		}
	}
	stdout, _, _ := runCLI(t, "", "--repo", repo, "export")
	if strings.Contains(stdout, `"dirty"`) {
		t.Errorf("ingested result files made the runs dirty:\n%s", stdout)
	}
}

func TestTestbedFlagAndRulesFile(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{".perfgate.yml": "testbed: lab-a100\n"})
	ingestAt(t, repo, metricsJSON(100, 300))
	ingestAt(t, repo, metricsJSON(101, 300), "--testbed", "explicit")
	stdout, _, _ := runCLI(t, "", "--repo", repo, "export")
	if !strings.Contains(stdout, `"testbed":"lab-a100"`) || !strings.Contains(stdout, `"testbed":"explicit"`) {
		t.Errorf("export:\n%s", stdout)
	}
	_, stderr, code := runCLI(t, metricsJSON(1, 1), "--repo", repo, "ingest", "--name", "s", "--testbed", "", "-")
	if code != 2 || !strings.Contains(stderr, "--testbed") {
		t.Errorf("empty --testbed: exit %d %s", code, stderr)
	}
	commit(t, repo, "bad rules", map[string]string{".perfgate.yml": "testbed: [a]\n"})
	_, stderr, code = runCLI(t, metricsJSON(1, 1), "--repo", repo, "ingest", "--name", "s", "-")
	if code != 2 || !strings.Contains(stderr, ".perfgate.yml:1: testbed must be") {
		t.Errorf("bad testbed: in the rules file: exit %d %s", code, stderr)
	}
}

var execLookPath = exec.LookPath

// TestBisectStoredTestbeds: bisect --stored does not mix two testbeds'
// runs of one benchmark; --label testbed=NAME picks one.
func TestBisectStoredTestbeds(t *testing.T) {
	repo, shas := bisectRepo(t)
	db := filepath.Join(t.TempDir(), "h.db")
	for _, tb := range []string{"laptop", "ci"} {
		for _, i := range []int{0, 0, 20, 28, 29, 36, 48, 48} {
			ttft := 500.0
			if i >= stepCommit {
				ttft = 560
			}
			if tb == "ci" {
				ttft *= 1.5
			}
			ttft *= 1 + 0.001*float64(i%7)
			if _, stderr, code := runCLI(t, servingBlock(ttft, 300, 500, 0), "--repo", repo, "--db", db, "ingest", "--name", "serving", "--testbed", tb, "--commit", shas[i], "-"); code != 0 {
				t.Fatalf("ingest: %s", stderr)
			}
		}
	}
	args := []string{"--repo", repo, "--db", db, "bisect", "--good", shas[0], "--metric", "Mean TTFT", "--name", "serving", "--stored"}
	_, stderr, code := runCLI(t, "", args...)
	if code != exitBad || !strings.Contains(stderr, `2 different setups ((no labels) on testbed "ci"; (no labels) on testbed "laptop")`) {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	bj, _ := bisectOut(t, append(args, "--label", "testbed=laptop")...)
	if bj.Culprit == nil || *bj.Culprit != shas[stepCommit] {
		t.Errorf("--label testbed=laptop: culprit %v (%s)", bj.Culprit, bj.Reason)
	}
}

// TestRunNamesTheChanges: run on a dirty tree names the changed files, and
// a benchmark that writes into the repository is told it hides its runs
// from check.
func TestRunNamesTheChanges(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"main.txt": "1"})
	os.WriteFile(filepath.Join(repo, "main.txt"), []byte("edited"), 0o644)
	bench := filepath.Join(t.TempDir(), "bench.sh")
	os.WriteFile(bench, []byte("#!/bin/sh\necho '"+metricsJSON(100, 300)+"'\necho x > "+filepath.Join(repo, "out.json")+"\n"), 0o755)
	_, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--testbed", "box", "--", bench)
	if code != 0 || !strings.Contains(stderr, "uncommitted changes (main.txt)") || !strings.Contains(stderr, "changed the working tree (now main.txt, out.json)") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	stdout, _, _ := runCLI(t, "", "--repo", repo, "export")
	if !strings.Contains(stdout, `"dirty":true,"testbed":"box"`) || !strings.Contains(stdout, `"tree":"`) {
		t.Errorf("export:\n%s", stdout)
	}
}
