package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMistypedDBURL: a --db or PERFGATE_DB value with "://" that is not a
// PostgreSQL URL is a usage error naming where it came from, with a
// did-you-mean, and writes nothing into the working tree; the password is
// never printed. A missing history whose path looks like a URL says so.
func TestMistypedDBURL(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	bench := writeFile(t, t.TempDir(), "b.json", metricsJSON(100, 300))
	rulesRepo := gitRepo(t)
	commit(t, rulesRepo, "rules", map[string]string{".perfgate.yml": "db: postgre://db.internal/perf\n"})
	tests := []struct {
		name   string
		env    string
		args   []string
		source string
	}{
		{"flag", "", []string{"--db", "postgress://perf:hunter22@db.internal/perf", "ingest", "--name", "s", bench}, "--db"},
		{"env", "postgress://perf:hunter22@db.internal/perf", []string{"ingest", "--name", "s", bench}, "PERFGATE_DB"},
		{"env, reading", "mysql://db.internal/perf", []string{"runs"}, "PERFGATE_DB"},
		{"rules file", "", []string{"--repo", rulesRepo, "runs"}, "db: in the rules file"},
		{"rules file, check", "", []string{"--repo", rulesRepo, "check"}, ".perfgate.yml:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PERFGATE_DB", tt.env)
			t.Chdir(repo)
			stdout, stderr, code := runCLI(t, "", tt.args...)
			if code != exitBad || !strings.Contains(stderr, tt.source) || !strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "postgres://") {
				t.Errorf("exit %d, want %d naming %s with a did-you-mean\n%s%s", code, exitBad, tt.source, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "hunter22") {
				t.Errorf("the password was printed:\n%s%s", stdout, stderr)
			}
			for _, r := range []string{repo, rulesRepo} {
				if st := git(t, r, "status", "--porcelain", "--ignored"); strings.TrimSpace(st) != "" {
					t.Errorf("the working tree was written to:\n%s", st)
				}
			}
		})
	}
	t.Run("missing, URL-like", func(t *testing.T) {
		t.Chdir(repo)
		_, stderr, _ := runCLI(t, "", "--db", "postgres:/db.internal/perf", "runs")
		if !strings.Contains(stderr, "does not exist") || !strings.Contains(stderr, "looks like a URL") {
			t.Errorf("no URL hint:\n%s", stderr)
		}
		if _, err := os.Stat(filepath.Join(repo, "postgres:")); err == nil {
			t.Error("a directory postgres: was created")
		}
	})
}
