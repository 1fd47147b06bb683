package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/goldenfile"
)

// runCLI runs the real command function with args (without the program
// name) and returns its stdout, stderr and exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"perfgate"}, args...), strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), []byte(got))
}

// gitRepo makes a temporary git repository with the git CLI and returns
// its path; git runs with a fixed identity and dates.
func gitRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "-c", "init.defaultBranch=main", "init", "-q")
	return dir
}

// git runs the git CLI in dir.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files and commits them, returning the new SHA.
func commit(t testing.TB, dir, msg string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "--allow-empty", "-m", msg)
	return git(t, dir, "rev-parse", "HEAD")
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown command", []string{"frobnicate"}, 2, ""},
		{"parse without files", []string{"parse"}, 2, "no FILE given"},
		{"bad output", []string{"parse", "-o", "xml", "x"}, 2, `-o "xml" is not valid`},
		{"bad format", []string{"parse", "--format", "nope", "-"}, 2, `--format "nope" is not a known format`},
		{"missing file", []string{"parse", "does-not-exist.txt"}, 2, `cannot open "does-not-exist.txt"`},
		{"unknown flag", []string{"parse", "--bogus", "x"}, 2, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.want)
			}
		})
	}
}

func TestHelpListsCommands(t *testing.T) {
	stdout, _, code := runCLI(t, "", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Every command of the contract, in the order of the data flow.
	last := -1
	for _, c := range []string{"parse", "ingest", "run", "check", "compare", "history", "bisect", "bisect-step", "export", "import", "recover", "sync", "publish"} {
		i := strings.Index(stdout, "\n   "+c+" ")
		if i < 0 {
			t.Errorf("--help does not list %s:\n%s", c, stdout)
			continue
		}
		if i < last {
			t.Errorf("--help lists %s out of the data flow's order:\n%s", c, stdout)
		}
		last = i
	}
}
