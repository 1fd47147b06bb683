package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRequireBaseline: with no history for the base branch (a sync
// that failed, a lost cache), a 100,000x regression passes as new; with
// --require-baseline or require_baseline: true it fails with exit 1.
func TestCheckRequireBaseline(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "main", map[string]string{"m.txt": "0"})
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(1e7, 300))
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "--base", "main", "--rule", "mean_ttft_ms:3%"); code != 0 {
		t.Fatalf("without a baseline: exit %d, want 0 (new)\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--base", "main", "--rule", "mean_ttft_ms:3%", "--require-baseline")
	if code != 1 || !strings.Contains(stdout, "require_baseline is set") {
		t.Errorf("--require-baseline: exit %d, want 1 naming require_baseline\n%s\n%s", code, stdout, stderr)
	}
	rules := filepath.Join(repo, ".perfgate.yml")
	if err := os.WriteFile(rules, []byte("require_baseline: true\nrules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cj, stderr, code := checkOut(t, repo, "--base", "main")
	if code != 1 || cj.Verdict != "fail" || cj.verdictOf("mean_ttft_ms") != "fail" {
		t.Errorf("require_baseline: true: exit %d, verdict %s (%s)\n%s", code, cj.Verdict, cj.verdictOf("mean_ttft_ms"), stderr)
	}
}
