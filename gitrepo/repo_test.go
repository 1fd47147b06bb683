package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	s := newSample(t)
	wt := filepath.Join(filepath.Dir(s.dir), "wt")
	s.git("worktree", "add", "-q", wt, "feature")
	bare := filepath.Join(filepath.Dir(s.dir), "bare.git")
	s.gitIn(filepath.Dir(s.dir), "clone", "-q", "--bare", s.dir, bare)
	gitDir := filepath.Join(s.dir, ".git")

	tests := []struct {
		name                    string
		path                    string
		root, gitDir, commonDir string
		head                    string
		branch                  string
	}{
		{"top", s.dir, s.dir, gitDir, gitDir, s.c["c8"], "main"},
		{"subdirectory", filepath.Join(s.dir, "src"), s.dir, gitDir, gitDir, s.c["c8"], "main"},
		{"file inside", filepath.Join(s.dir, "src", "a.go"), s.dir, gitDir, gitDir, s.c["c8"], "main"},
		{"git dir itself", gitDir, s.dir, gitDir, gitDir, s.c["c8"], "main"},
		{"linked worktree", wt, wt, filepath.Join(gitDir, "worktrees", "wt"), gitDir, s.c["f2"], "feature"},
		{"bare", bare, "", bare, bare, s.c["c8"], "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Root() != tt.root || r.GitDir() != tt.gitDir || r.CommonDir() != tt.commonDir {
				t.Errorf("Root, GitDir, CommonDir = %q, %q, %q; want %q, %q, %q",
					r.Root(), r.GitDir(), r.CommonDir(), tt.root, tt.gitDir, tt.commonDir)
			}
			head, err := r.Head()
			if err != nil || head != tt.head {
				t.Errorf("Head() = %q, %v; want %q", head, err, tt.head)
			}
			branch, err := r.Branch()
			if err != nil || branch != tt.branch {
				t.Errorf("Branch() = %q, %v; want %q", branch, err, tt.branch)
			}
		})
	}
}

func TestOpenRelativeAndCurrentDir(t *testing.T) {
	s := newSample(t)
	t.Chdir(filepath.Join(s.dir, "src"))
	for _, p := range []string{"", ".", ".."} {
		r, err := Open(p)
		if err != nil {
			t.Fatalf("Open(%q): %v", p, err)
		}
		if r.Root() != s.dir {
			t.Errorf("Open(%q).Root() = %q, want %q", p, r.Root(), s.dir)
		}
		r.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	_, err := Open(dir)
	if !errors.Is(err, ErrNotRepository) {
		t.Fatalf("Open(non-repo) error = %v, want ErrNotRepository", err)
	}
	for _, want := range []string{`"` + dir + `"`, "--repo"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
	_, err = Open(filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Open(missing) error = %v, want a does-not-exist error", err)
	}

	// A .git file that points nowhere: a removed worktree.
	broken := filepath.Join(dir, "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, ".git"), []byte("gitdir: /nonexistent/worktrees/x\n"), 0o644)
	if _, err := Open(broken); err == nil || !strings.Contains(err.Error(), "git worktree prune") {
		t.Errorf("Open(broken worktree) error = %v, want advice to prune", err)
	}
}

func TestOpenUnsupportedExtension(t *testing.T) {
	r := newTestRepo(t)
	r.commit("one", map[string]string{"a": "1"})
	r.git("config", "core.repositoryformatversion", "1")
	cfg := filepath.Join(r.dir, ".git", "config")
	orig, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfg, append(append([]byte{}, orig...), "[extensions]\n\tfrobnicate = true\n"...), 0o644)
	if _, err := Open(r.dir); err == nil || !strings.Contains(err.Error(), `"frobnicate"`) {
		t.Errorf("Open with unknown extension: error = %v, want it named", err)
	}
	os.WriteFile(cfg, append(append([]byte{}, orig...), "[extensions]\n\tworktreeConfig = true\n"...), 0o644)
	repo, err := Open(r.dir)
	if err != nil {
		t.Fatalf("Open with extensions.worktreeConfig: %v", err)
	}
	repo.Close()
}

func TestHeadUnbornAndDetached(t *testing.T) {
	r := newTestRepo(t)
	repo := r.open()
	if _, err := repo.Head(); err == nil || !strings.Contains(err.Error(), `"main"`) || !strings.Contains(err.Error(), "no commits") {
		t.Errorf("Head() on an empty repository: %v, want an unborn-branch error naming main", err)
	}
	first := r.commit("one", map[string]string{"a": "1"})
	r.commit("two", map[string]string{"a": "2"})
	r.git("checkout", "-q", "--detach", first)
	repo = r.open()
	head, err := repo.Head()
	if err != nil || head != first {
		t.Errorf("Head() detached = %q, %v; want %q", head, err, first)
	}
	if b, err := repo.Branch(); err != nil || b != "" {
		t.Errorf("Branch() detached = %q, %v; want empty", b, err)
	}
}

func TestCommitInfo(t *testing.T) {
	s := newSample(t)
	r := s.open()
	for _, name := range []string{"c1", "c3", "m1", "c8"} {
		c, err := r.Commit(s.c[name])
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Split(s.git("log", "-1", "--format=%H|%h|%s|%an|%ae|%at|%ct|%P", s.c[name]), "|")
		got := []string{c.SHA, c.Short, c.Subject, c.Author, c.AuthorEmail,
			strconv.FormatInt(c.AuthorTime.Unix(), 10), strconv.FormatInt(c.CommitTime.Unix(), 10), strings.Join(c.Parents, " ")}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("Commit(%s) = %q\nwant (git log) %q", name, got, want)
		}
	}
	if short := r.Short(s.c["c1"]); short != s.git("rev-parse", "--short", s.c["c1"]) {
		t.Errorf("Short = %q, want git's %q", short, s.git("rev-parse", "--short", s.c["c1"]))
	}
	if got := r.Short("not-a-sha"); got != "not-a-sha" {
		t.Errorf("Short(non-SHA) = %q, want it unchanged", got)
	}
}

func TestSubject(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"one line", "one line"},
		{"one line\n", "one line"},
		{"\n\nleading blank\n\nbody", "leading blank"},
		{"wrapped\nsubject  \nline\n\nbody", "wrapped subject line"},
		{"crlf\r\n\r\nbody", "crlf"},
		{"  indented", "  indented"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := subject(tt.msg); got != tt.want {
			t.Errorf("subject(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
}
