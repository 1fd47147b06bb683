package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestBisectLocalScript bisects with --run naming a script that exists in
// the user's working tree but in no commit: each checkout runs the user's
// copy, and stderr says so (it failed with exit code 127 before).
func TestBisectLocalScript(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 21)
	writeFile(t, repo, "mybench.sh", "exec sh bench.sh\n")
	db := filepath.Join(t.TempDir(), "h.db")
	bj, stderr := bisectOut(t, "--repo", repo, "--db", db, "bisect", "--good", shas[0], "--bad", "main", "--metric", "Mean TTFT",
		"--name", "serving", "--run", "sh ./mybench.sh")
	if bj.Verdict != "found" || bj.Culprit == nil || *bj.Culprit != shas[stepCommit] {
		t.Errorf("verdict %s culprit %v, want found %s\n%s", bj.Verdict, bj.Culprit, shas[stepCommit], stderr)
	}
	want := "./mybench.sh is not committed at " + shas[0][:7] + " and " + shas[rangeLen][:7] + ": each checkout runs the copy in your working tree, " + filepath.Join(repo, "mybench.sh")
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// TestBisectStepBaselineFallback runs bisect-step --baseline at a commit
// without a stored result: it measures the baseline once in a temporary
// checkout, says so, stores it and the next step reuses it. A baseline
// whose only stored run is from a dirty working tree says why it is not
// used.
func TestBisectStepBaselineFallback(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 22)
	t.Chdir(repo)
	db := filepath.Join(t.TempDir(), "h.db")
	step := func(baseline int) []string {
		return []string{"--db", db, "bisect-step", "--name", "serving", "--metric", "Mean TTFT", "--threshold", "6%", "--baseline", shas[baseline], "--run", benchCmd}
	}
	git(t, repo, "checkout", "-q", shas[10])
	_, stderr, code := runCLI(t, "", step(1)...)
	if code != 0 || !strings.Contains(stderr, "no stored serving result with mean_ttft_ms; measuring "+shas[1][:7]+" once in a temporary checkout") ||
		!strings.Contains(stderr, "stored for the next steps") || !strings.Contains(stderr, ": good") {
		t.Errorf("exit %d, want 0 after measuring the baseline; stderr:\n%s", code, stderr)
	}
	git(t, repo, "checkout", "-q", shas[35])
	if _, stderr, code := runCLI(t, "", step(1)...); code != 1 || strings.Contains(stderr, "measuring") {
		t.Errorf("second step: exit %d, want 1 with the stored baseline; stderr:\n%s", code, stderr)
	}

	// A dirty run at commit 2: n.txt is tracked and modified.
	git(t, repo, "checkout", "-q", shas[2])
	writeFile(t, repo, "n.txt", "work in progress\n")
	if _, stderr, code := runCLI(t, "", "--db", db, "bisect-step", "--name", "serving", "--metric", "Mean TTFT", "--threshold", "6%", "--reference", "500", "--run", benchCmd); code != 0 {
		t.Fatalf("dirty step: exit %d\n%s", code, stderr)
	}
	git(t, repo, "checkout", "-q", "--", "n.txt")
	git(t, repo, "checkout", "-q", shas[10])
	_, stderr, code = runCLI(t, "", step(2)...)
	if code != 0 || !strings.Contains(stderr, "its 1 stored serving result(s) were made in a dirty working tree (a tracked file was modified), and a dirty run is never a reference") {
		t.Errorf("exit %d; stderr:\n%s", code, stderr)
	}
}

// TestBisectHistoryShape stores repeated runs at commits before --good:
// bisect learns the noise's shape from them too, and says so.
func TestBisectHistoryShape(t *testing.T) {
	repo, shas := bisectRepo(t)
	noise(t, 23)
	db := filepath.Join(t.TempDir(), "h.db")
	for i, v := range []float64{498, 503, 551, 499, 502} {
		sha := shas[1+i%2]
		if _, stderr, code := runCLI(t, servingBlock(v, 300, 500, 0), "--repo", repo, "--db", db, "ingest", "--name", "serving", "--commit", sha, "-"); code != 0 {
			t.Fatalf("ingest: %s", stderr)
		}
	}
	bj, stderr := bisectOut(t, "--repo", repo, "--db", db, "bisect", "--good", shas[5], "--bad", "main", "--metric", "Mean TTFT",
		"--name", "serving", "--run", benchCmd)
	if bj.Verdict != "found" || bj.Culprit == nil || *bj.Culprit != shas[stepCommit] {
		t.Errorf("verdict %s culprit %v, want found %s\n%s", bj.Verdict, bj.Culprit, shas[stepCommit], stderr)
	}
	if want := "the noise's shape also learns from 5 stored runs at 2 commits outside the range"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
