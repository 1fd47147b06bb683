package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTreeState(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) *testRepo {
		r := newTestRepo(t)
		r.write(map[string]string{".gitignore": "build/\n"})
		r.commit("one", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
		return r
	}
	state := func(t *testing.T, r *testRepo, skip func(string) bool) string {
		t.Helper()
		s, err := r.open().TreeState(ctx, skip)
		if err != nil {
			t.Fatal(err)
		}
		if (s.Hash == "") != (len(s.Changed) == 0) {
			t.Errorf("hash %q with changes %q", s.Hash, s.Changed)
		}
		return s.Hash
	}
	tests := []struct {
		name   string
		change func(r *testRepo)
		dirty  bool
	}{
		{"clean", func(r *testRepo) {}, false},
		{"ignored file", func(r *testRepo) { r.write(map[string]string{"build/out.bin": "x"}) }, false},
		{"untracked file", func(r *testRepo) { r.write(map[string]string{"notes/new.txt": "new\n"}) }, true},
		{"modified", func(r *testRepo) { r.write(map[string]string{"src/a.go": "package a // 1\n"}) }, true},
		{"staged", func(r *testRepo) {
			r.write(map[string]string{"src/a.go": "package a // staged\n"})
			r.git("add", "src/a.go")
		}, true},
		{"deleted", func(r *testRepo) { os.Remove(filepath.Join(r.dir, "README.md")) }, true},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := setup(t)
			tt.change(r)
			got := state(t, r, nil)
			if (got != "") != tt.dirty {
				t.Fatalf("TreeState() = %q, want dirty=%v", got, tt.dirty)
			}
			if got != "" {
				if len(got) != 64 || strings.Trim(got, "0123456789abcdef") != "" {
					t.Errorf("TreeState() = %q, want 64 hex digits", got)
				}
				if other, ok := seen[got]; ok {
					t.Errorf("%s and %s have the same state", tt.name, other)
				}
				seen[got] = tt.name
			}
		})
	}

	t.Run("same content, staged or not, other branch", func(t *testing.T) {
		r := setup(t)
		r.write(map[string]string{"src/a.go": "package a // 1\n", "new.txt": "n\n"})
		a := state(t, r, nil)
		r.git("add", "src/a.go")
		r.git("checkout", "-q", "-b", "topic")
		if b := state(t, r, nil); b != a {
			t.Errorf("staging and switching branch changed the state: %s vs %s", a, b)
		}
		r.write(map[string]string{"new.txt": "changed\n"})
		if c := state(t, r, nil); c == a {
			t.Error("an untracked file's content is not part of the state")
		}
		r.write(map[string]string{"new.txt": "n\n", "src/a.go": "package a // 2\n"})
		if d := state(t, r, nil); d == a {
			t.Error("a tracked file's content is not part of the state")
		}
	})

	t.Run("skip", func(t *testing.T) {
		r := setup(t)
		r.write(map[string]string{"results/r1.json": "{}"})
		if wt, _ := r.open().TreeState(ctx, nil); strings.Join(wt.Changed, ",") != "results/r1.json" {
			t.Errorf("changed %q, want the untracked file", wt.Changed)
		}
		if s := state(t, r, func(p string) bool { return p == "results/r1.json" }); s != "" {
			t.Errorf("skipped untracked file still counted: %q", s)
		}
		r.write(map[string]string{"README.md": "changed\n"})
		if s := state(t, r, func(p string) bool { return true }); s == "" {
			t.Error("skip applies to untracked files only, not to tracked changes")
		}
	})

	t.Run("go-git fallback agrees", func(t *testing.T) {
		r := setup(t)
		r.write(map[string]string{"src/a.go": "package a // 1\n", "notes/new.txt": "n\n", "build/x": "ignored"})
		want := state(t, r, nil)
		repo := r.open()
		changes, err := repo.statusByGoGit()
		if err != nil {
			t.Fatal(err)
		}
		cli, err := repo.statusByCLI(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := repo.hashChanges(ctx, changes, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want == "" || got.Hash != want {
			t.Errorf("go-git's state %q, git's %q (go-git lists %v, git %v)", got, want, changes, cli)
		}
	})
}

// TestGitRunsNoRepositoryPrograms: the repository's configuration (which
// earlier pull-request code may have written) names a filesystem monitor
// that git status would run; perfgate's git runs it not, and no git it
// starts sees a token.
func TestGitRunsNoRepositoryPrograms(t *testing.T) {
	needGit(t)
	r := newTestRepo(t)
	r.commit("one", map[string]string{"README.md": "hello\n"})
	marker := filepath.Join(t.TempDir(), "fsmonitor-ran")
	hook := filepath.Join(t.TempDir(), "fsmonitor.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nenv > '"+marker+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.git("config", "core.fsmonitor", hook)
	r.write(map[string]string{"README.md": "changed\n"})
	t.Setenv("GITHUB_TOKEN", "ghs_secret")
	s, err := r.open().TreeState(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Changed) != 1 {
		t.Errorf("changed %q, want README.md", s.Changed)
	}
	if _, err := r.open().Dirty(context.Background()); err != nil {
		t.Fatal(err)
	}
	if env, err := os.ReadFile(marker); err == nil {
		t.Errorf("the repository's fsmonitor ran (token seen: %v)", strings.Contains(string(env), "ghs_secret"))
	}
}

func TestReadFile(t *testing.T) {
	needGit(t)
	r := newTestRepo(t)
	first := r.commit("one", map[string]string{".perfgate.yml": "rules: []\n", "dir/a.txt": "a\n"})
	r.commit("two", map[string]string{".perfgate.yml": "rules: [x]\n"})
	repo := r.open()
	for _, tc := range []struct {
		rev, file, want string
		ok              bool
	}{
		{first, ".perfgate.yml", "rules: []\n", true},
		{"HEAD", ".perfgate.yml", "rules: [x]\n", true},
		{"HEAD", "dir/a.txt", "a\n", true},
		{"HEAD", "dir", "", false},
		{"HEAD", "missing.yml", "", false},
	} {
		data, ok, err := repo.ReadFile(tc.rev, tc.file)
		if err != nil || ok != tc.ok || string(data) != tc.want {
			t.Errorf("ReadFile(%s, %s) = %q, %v, %v; want %q, %v", tc.rev, tc.file, data, ok, err, tc.want, tc.ok)
		}
	}
}
