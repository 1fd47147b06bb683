package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDirty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(r *testRepo)
		want   bool
	}{
		{"clean", func(r *testRepo) {}, false},
		{"modified", func(r *testRepo) { r.write(map[string]string{"src/a.go": "package a // edited\n"}) }, true},
		{"modified, same size", func(r *testRepo) { r.write(map[string]string{"src/a.go": "package b\n"}) }, true},
		{"rewritten with identical content", func(r *testRepo) {
			r.write(map[string]string{"src/a.go": "package a\n"})
			future := time.Now().Add(time.Hour)
			os.Chtimes(filepath.Join(r.dir, "src/a.go"), future, future)
		}, false},
		{"same size and restored mtime", func(r *testRepo) {
			p := filepath.Join(r.dir, "src/a.go")
			fi, _ := os.Stat(p)
			os.WriteFile(p, []byte("package b\n"), 0o644)
			os.Chtimes(p, fi.ModTime(), fi.ModTime())
		}, true},
		{"deleted", func(r *testRepo) { os.Remove(filepath.Join(r.dir, "README.md")) }, true},
		{"directory replaced by a file", func(r *testRepo) {
			os.RemoveAll(filepath.Join(r.dir, "src"))
			os.WriteFile(filepath.Join(r.dir, "src"), []byte("x"), 0o644)
		}, true},
		{"executable bit", func(r *testRepo) { os.Chmod(filepath.Join(r.dir, "README.md"), 0o755) }, true},
		{"untracked file", func(r *testRepo) { r.write(map[string]string{"new.txt": "new\n"}) }, false},
		{"ignored file", func(r *testRepo) { r.write(map[string]string{"build/out.bin": "x"}) }, false},
		{"staged change", func(r *testRepo) {
			r.write(map[string]string{"src/a.go": "package a // staged\n"})
			r.git("add", "src/a.go")
		}, true},
		{"staged new file", func(r *testRepo) {
			r.write(map[string]string{"new.txt": "new\n"})
			r.git("add", "new.txt")
		}, true},
		{"staged deletion", func(r *testRepo) { r.git("rm", "-q", "--cached", "README.md") }, true},
		{"intent to add", func(r *testRepo) {
			r.write(map[string]string{"new.txt": "new\n"})
			r.git("add", "-N", "new.txt")
		}, true},
		{"change staged then reverted in index and tree", func(r *testRepo) {
			r.write(map[string]string{"src/a.go": "package a // tmp\n"})
			r.git("add", "src/a.go")
			r.git("reset", "-q", "--hard")
		}, false},
		{"index without cache-tree", func(r *testRepo) {
			// git read-tree writes an index without the TREE extension.
			r.git("read-tree", "HEAD")
		}, false},
		{"split index (git CLI fallback)", func(r *testRepo) {
			r.git("update-index", "--split-index")
		}, false},
		{"split index, modified", func(r *testRepo) {
			r.git("update-index", "--split-index")
			r.write(map[string]string{"README.md": "changed\n"})
		}, true},
		{"symlink retargeted", func(r *testRepo) {
			os.Remove(filepath.Join(r.dir, "link"))
			os.Symlink("src/b.go", filepath.Join(r.dir, "link"))
		}, true},
		{"symlink replaced by same-content file", func(r *testRepo) {
			os.Remove(filepath.Join(r.dir, "link"))
			os.WriteFile(filepath.Join(r.dir, "link"), []byte("README.md"), 0o644)
		}, true},
	}
	// git compares ctime to the second only (unless built with USE_NSEC),
	// so it can miss a same-size rewrite whose mtime was put back.
	gitMisses := map[string]bool{"same size and restored mtime": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t)
			r.write(map[string]string{".gitignore": "build/\n"})
			r.commit("one", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n", "src/b.go": "package a\n"})
			if err := os.Symlink("README.md", filepath.Join(r.dir, "link")); err != nil {
				t.Skip("symlinks unsupported:", err)
			}
			r.commit("two", nil)
			// Let the index be older than the files' next changes so the
			// racy-git rule does not decide every case.
			past := time.Now().Add(-time.Minute)
			for _, f := range []string{"README.md", "src/a.go", "src/b.go", ".gitignore"} {
				os.Chtimes(filepath.Join(r.dir, f), past, past)
			}
			r.git("update-index", "--refresh", "-q")
			tt.change(r)
			repo := r.open()
			if strings.HasPrefix(tt.name, "split index") {
				if _, err := repo.st.Index(); err == nil {
					t.Fatal("go-git decoded the split index; the git CLI fallback is not exercised")
				}
			}
			got, err := repo.Dirty(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Dirty() = %v, want %v", got, tt.want)
			}
			// git agrees.
			if gitDirty := r.git("status", "--porcelain", "--untracked-files=no") != ""; gitDirty != tt.want && !gitMisses[tt.name] {
				t.Errorf("git status says dirty=%v, the test expects %v", gitDirty, tt.want)
			}
		})
	}
}

func TestDirtySpecialRepos(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newTestRepo(t)
	if d, err := r.open().Dirty(ctx); err != nil || d {
		t.Errorf("empty repository: Dirty() = %v, %v; want false", d, err)
	}
	r.write(map[string]string{"a": "1"})
	r.git("add", "a")
	if d, err := r.open().Dirty(ctx); err != nil || !d {
		t.Errorf("unborn branch with a staged file: Dirty() = %v, %v; want true", d, err)
	}
	r.commit("one", nil)

	wt := filepath.Join(filepath.Dir(r.dir), "wt")
	r.git("worktree", "add", "-q", "-b", "side", wt)
	w := r.at(wt)
	if d, err := w.open().Dirty(ctx); err != nil || d {
		t.Errorf("fresh linked worktree: Dirty() = %v, %v; want false", d, err)
	}
	w.write(map[string]string{"a": "changed"})
	if d, err := w.open().Dirty(ctx); err != nil || !d {
		t.Errorf("modified linked worktree: Dirty() = %v, %v; want true", d, err)
	}
	if d, err := r.open().Dirty(ctx); err != nil || d {
		t.Errorf("main worktree beside a modified linked one: Dirty() = %v, %v; want false", d, err)
	}

	bare := filepath.Join(filepath.Dir(r.dir), "bare.git")
	r.gitIn(filepath.Dir(r.dir), "clone", "-q", "--bare", r.dir, bare)
	if d, err := r.at(bare).open().Dirty(ctx); err != nil || d {
		t.Errorf("bare repository: Dirty() = %v, %v; want false", d, err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	r.write(map[string]string{"a": "changed"})
	if _, err := r.open().Dirty(cctx); err == nil {
		t.Error("Dirty with a cancelled context: want an error")
	}
}

func TestDirtyAutoCRLF(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.commit("one", map[string]string{"a.txt": "one\ntwo\n"})
	r.git("config", "core.autocrlf", "true")
	// What a Windows checkout writes; same content for git.
	r.write(map[string]string{"a.txt": "one\r\ntwo\r\n"})
	if d, err := r.open().Dirty(context.Background()); err != nil || d {
		t.Errorf("CRLF checkout with core.autocrlf: Dirty() = %v, %v; want false (git status: %q)", d, err, r.git("status", "--porcelain"))
	}
}
