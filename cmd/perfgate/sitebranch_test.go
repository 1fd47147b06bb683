package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSiteBaseBranchFallback: on a repository whose base branch is master,
// site walks master and says so, as check, watch and run do; a --branch or
// baseline.branch that is not there is still an error that names it.
func TestSiteBaseBranchFallback(t *testing.T) {
	repo := t.TempDir()
	git(t, repo, "-c", "init.defaultBranch=master", "init", "-q")
	commit(t, repo, "one", map[string]string{"f.txt": "1"})
	ingestAt(t, repo, metricsJSON(100, 300))
	tests := []struct {
		name   string
		rules  string
		args   []string
		code   int
		stderr []string
		ref    string // in data/commits.js
	}{
		{name: "default main falls back to master", stderr: []string{`no branch "main"; using master as the base branch`, "pass --branch to choose"}, ref: `"ref":"master"`},
		{name: "--branch master", args: []string{"--branch", "master"}, ref: `"ref":"master"`},
		{name: "--branch main is not there", args: []string{"--branch", "main"}, code: 2, stderr: []string{`--branch: revision "main"`}},
		{name: "baseline.branch is not there", rules: "baseline:\n  branch: trunk\n", code: 3, stderr: []string{`baseline.branch of the rules file: revision "trunk"`}},
	}
	// Neither main nor master: the clone lacks the base branch (a
	// shallow CI checkout), the environment's state (3), and fetching it
	// is the next step.
	bare := t.TempDir()
	git(t, bare, "-c", "init.defaultBranch=trunk", "init", "-q")
	commit(t, bare, "one", map[string]string{"f.txt": "1"})
	if _, stderr, code := runCLI(t, "", "--repo", bare, "site", "--out", filepath.Join(t.TempDir(), "site")); code != 3 ||
		!strings.Contains(stderr, `the default branch main: revision "main"`) || !strings.Contains(stderr, "fetch-depth: 0") {
		t.Errorf("no main, no master: exit %d, want 3: %s", code, stderr)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(filepath.Join(repo, ".perfgate.yml"))
			if tt.rules != "" {
				writeFile(t, repo, ".perfgate.yml", tt.rules)
			}
			out := filepath.Join(t.TempDir(), "site")
			_, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "site", "--out", out}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, stderr)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q: %s", w, stderr)
				}
			}
			if tt.code == 0 && strings.Contains(stderr, "fetch-depth") {
				t.Errorf("a fetch-depth hint where the branch is not missing from the clone: %s", stderr)
			}
			if tt.ref != "" {
				data, err := os.ReadFile(filepath.Join(out, "data", "commits.js"))
				if err != nil || !strings.Contains(string(data), tt.ref) {
					t.Errorf("data/commits.js lacks %s (%v)", tt.ref, err)
				}
			}
		})
	}
}
