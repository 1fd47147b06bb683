package runner

import (
	"bytes"
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
	git := func(args ...string) string { t.Helper(); return runGit(t, dir, args...) }
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

// runGit runs git in dir, without the user's and the system's
// configuration, and returns its trimmed output.
func runGit(t *testing.T, dir string, args ...string) string {
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
			if res.ExitCode != tt.code || string(res.Tail) != tt.out || res.Written != int64(len(tt.out)) || live.String() != tt.out {
				t.Errorf("exit %d output %q (%d bytes, live %q), want %d %q", res.ExitCode, res.Tail, res.Written, live.String(), tt.code, tt.out)
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

// countWriter counts what is written to it and keeps the last line.
type countWriter struct {
	n    int64
	last []byte
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.last = append(c.last, p...)
	if i := bytes.LastIndexByte(c.last[:max(0, len(c.last)-1)], '\n'); i >= 0 {
		c.last = append(c.last[:0], c.last[i+1:]...)
	}
	return len(p), nil
}

// TestWorktreeRunLargeOutput runs a command that prints megabytes: all of
// it reaches the writer, and the result keeps only the last TailSize
// bytes, not the output (which is what kept bisect's memory growing with
// it).
func TestWorktreeRunLargeOutput(t *testing.T) {
	repo, _, shas := testRepo(t)
	wt := &Worktree{Repo: repo, Dir: t.TempDir()}
	const junk = 800_000 * len("junk\n") // whole lines, 4 MB
	var out countWriter
	res, err := wt.Run(context.Background(), shas[0], "yes junk | head -c "+strconv.Itoa(junk)+"; echo the end >&2; exit 1", &out)
	if err != nil {
		t.Fatal(err)
	}
	const total = int64(junk + len("the end\n"))
	if out.n != total || string(out.last) != "the end\n" {
		t.Errorf("the writer got %d bytes ending %q, want %d ending %q", out.n, out.last, total, "the end\n")
	}
	if res.ExitCode != 1 || res.Written != total || len(res.Tail) != TailSize || !bytes.HasSuffix(res.Tail, []byte("junk\nthe end\n")) {
		t.Errorf("exit %d, %d bytes written, tail of %d bytes ending %q; want 1, %d, %d ending with the end",
			res.ExitCode, res.Written, len(res.Tail), res.Tail[max(0, len(res.Tail)-20):], total, TailSize)
	}
	if c := cap(res.Tail); c > TailSize {
		t.Errorf("the result holds %d bytes of output, want at most %d", c, TailSize)
	}
}

// TestTailBuffer writes in pieces of several sizes: the buffer always
// holds the last max bytes written, in at most 2*max bytes.
func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		pieces []int
	}{
		{"nothing", 8, nil},
		{"less than max", 8, []int{3, 2}},
		{"exactly max", 8, []int{8}},
		{"one big write", 8, []int{100}},
		{"small writes", 8, []int{3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"mixed", 8, []int{7, 1, 9, 2, 8, 5, 5, 5, 0, 6}},
		{"pipe-sized", 1024, []int{4096, 512, 700, 1000, 1023, 3, 32768, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := &tailBuffer{max: tt.max}
			var all []byte
			for i, n := range tt.pieces {
				p := make([]byte, n)
				for j := range p {
					p[j] = byte('a' + (i+j)%26)
				}
				if w, err := tb.Write(p); w != n || err != nil {
					t.Fatalf("Write = %d, %v", w, err)
				}
				all = append(all, p...)
				want := all[max(0, len(all)-tt.max):]
				if !bytes.Equal(tb.Bytes(), want) {
					t.Fatalf("after %d writes: %q, want %q", i+1, tb.Bytes(), want)
				}
				if cap(tb.buf) != 2*tt.max {
					t.Fatalf("after %d writes: a buffer of %d bytes, want %d", i+1, cap(tb.buf), 2*tt.max)
				}
			}
			if tb.written != int64(len(all)) {
				t.Errorf("written %d, want %d", tb.written, len(all))
			}
		})
	}
}
