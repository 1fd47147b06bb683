package bisect

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gitrepo"
)

// testRepo makes a repository with two commits and returns it opened,
// with the SHAs of both commits.
func testRepo(t *testing.T) (*gitrepo.Repo, string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
			"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("-c", "init.defaultBranch=main", "init", "-q")
	var shas []string
	for i, level := range []string{"500", "560"} {
		if err := os.WriteFile(filepath.Join(dir, "level.txt"), []byte(level+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", "commit "+strconv.Itoa(i))
		shas = append(shas, git("rev-parse", "HEAD"))
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir, shas
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("%s is not empty after the run: %v", dir, entries)
	}
}

func TestWorktreeRun(t *testing.T) {
	repo, _, shas := testRepo(t)
	work := t.TempDir()
	wt := &Worktree{Repo: repo, Dir: work}
	tests := []struct {
		name, rev, cmd string
		code           int
		out            string
	}{
		{"reads the commit's files", shas[0], "cat level.txt", 0, "500\n"},
		{"the other commit", shas[1], "cat level.txt", 0, "560\n"},
		{"knows its commit", shas[0], `echo "$PERFGATE_BISECT_COMMIT"; git rev-parse HEAD`, 0, shas[0] + "\n" + shas[0] + "\n"},
		{"a clean git status", shas[1], "git status --porcelain", 0, ""},
		{"exit code", shas[0], "echo skip >&2; exit 125", 125, "skip\n"},
		{"read-only leftovers", shas[0], "mkdir -p cache/x && touch cache/x/f && chmod -R a-w cache", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var live strings.Builder
			res, err := wt.Run(context.Background(), tt.rev, tt.cmd, &live)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.code || string(res.Output) != tt.out || live.String() != tt.out {
				t.Errorf("exit %d output %q (live %q), want %d %q", res.ExitCode, res.Output, live.String(), tt.code, tt.out)
			}
			if _, err := os.Stat(res.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("checkout %s left behind (%v)", res.Dir, err)
			}
			emptyDir(t, work)
		})
	}
}

func TestWorktreeBadRevision(t *testing.T) {
	repo, _, _ := testRepo(t)
	work := t.TempDir()
	wt := &Worktree{Repo: repo, Dir: work}
	if _, err := wt.Run(context.Background(), "no-such-branch", "true", nil); !errors.Is(err, gitrepo.ErrUnknownRevision) {
		t.Errorf("Run on a bad revision = %v, want ErrUnknownRevision", err)
	}
	emptyDir(t, work)
}
