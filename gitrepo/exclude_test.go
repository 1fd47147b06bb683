package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExcludePath(t *testing.T) {
	r := newTestRepo(t)
	r.commit("one", map[string]string{"a": "1"})
	exclude := filepath.Join(r.dir, ".git", "info", "exclude")
	tests := []struct {
		name    string
		initial *string // nil: no file (nor info/ directory)
		want    string
	}{
		{"no file", nil, ".perfgate/\n"},
		{"git's template", ptr("# git ls-files --others --exclude-from=.git/info/exclude\n*.swp\n"),
			"# git ls-files --others --exclude-from=.git/info/exclude\n*.swp\n.perfgate/\n"},
		{"no trailing newline", ptr("*.swp"), "*.swp\n.perfgate/\n"},
		{"already there", ptr("a\n.perfgate/\nb\n"), "a\n.perfgate/\nb\n"},
		{"already there, CRLF", ptr("a\r\n.perfgate/\r\n"), "a\r\n.perfgate/\r\n"},
		{"a similar pattern is not the same", ptr(".perfgate\n"), ".perfgate\n.perfgate/\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(filepath.Dir(exclude))
			if tt.initial != nil {
				os.MkdirAll(filepath.Dir(exclude), 0o755)
				os.WriteFile(exclude, []byte(*tt.initial), 0o644)
			}
			repo := r.open()
			for i := 0; i < 2; i++ { // idempotent
				if err := repo.ExcludePath(".perfgate/"); err != nil {
					t.Fatal(err)
				}
			}
			got, _ := os.ReadFile(exclude)
			if string(got) != tt.want {
				t.Errorf("info/exclude = %q, want %q", got, tt.want)
			}
		})
	}

	// git honours it.
	r.write(map[string]string{".perfgate/history.db": "x"})
	if out := r.git("status", "--porcelain"); strings.Contains(out, ".perfgate") {
		t.Errorf("git status still shows .perfgate: %q", out)
	}

	for _, bad := range []string{"", "  ", "a\nb"} {
		if err := r.open().ExcludePath(bad); err == nil {
			t.Errorf("ExcludePath(%q): want an error", bad)
		}
	}
}

func TestExcludePathLinkedWorktree(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.commit("one", map[string]string{"a": "1"})
	wt := filepath.Join(filepath.Dir(r.dir), "wt")
	r.git("worktree", "add", "-q", "-b", "side", wt)
	w := r.at(wt)
	if err := w.open().ExcludePath(".perfgate/"); err != nil {
		t.Fatal(err)
	}
	// info/exclude is shared: written in the main repository's git dir.
	b, err := os.ReadFile(filepath.Join(r.dir, ".git", "info", "exclude"))
	if err != nil || !strings.Contains(string(b), ".perfgate/\n") {
		t.Errorf("common info/exclude = %q, %v; want .perfgate/ in it", b, err)
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".git", "worktrees", "wt", "info", "exclude")); err == nil {
		t.Error("wrote a per-worktree info/exclude, which git ignores")
	}
	w.write(map[string]string{".perfgate/history.db": "x"})
	if out := w.git("status", "--porcelain"); strings.Contains(out, ".perfgate") {
		t.Errorf("git status in the worktree still shows .perfgate: %q", out)
	}
}

func ptr(s string) *string { return &s }
