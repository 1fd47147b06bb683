package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMaterialize(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	files := map[string]string{
		"README.md":            "hello\n",
		"src/a.go":             "package a\n",
		"src/deep/er/file.txt": strings.Repeat("deep line\n", 200),
		"empty":                "",
		"bin/data.bin":         "\x00\x01\x02binary\x00",
		"with space.txt":       "spaces\n",
		"ünïcode.txt":          "unicode\n",
		"scripts/run.sh":       "#!/bin/sh\necho run\n",
	}
	r.commit("v1", files)
	r.git("update-index", "--chmod=+x", "scripts/run.sh")
	if err := os.Symlink("src/a.go", filepath.Join(r.dir, "link")); err != nil {
		t.Skip("symlinks unsupported:", err)
	}
	os.Symlink("../README.md", filepath.Join(r.dir, "src", "uplink"))
	r.git("add", "-A")
	// A submodule entry (gitlink) pointing at some commit.
	r.git("update-index", "--add", "--cacheinfo", "160000,"+strings.Repeat("1", 40)+",vendor/sub")
	r.git("commit", "-q", "-m", "v2 with a symlink, an executable and a submodule")
	r.git("tag", "-a", "-m", "release", "v2.0")
	// Later commits that must not leak into the checkout of v2.0.
	r.commit("v3", map[string]string{"README.md": "hello, later\n", "later.txt": "x"})
	// Pack everything with deltas so blobs come through delta chains.
	r.git("repack", "-q", "-a", "-d", "-f", "--depth=50", "--window=50")

	repo := r.open()
	statusBefore := r.git("status", "--porcelain")
	indexBefore, _ := os.ReadFile(filepath.Join(r.dir, ".git", "index"))
	headBefore := r.git("rev-parse", "HEAD")

	dir := filepath.Join(t.TempDir(), "checkout")
	sha, err := repo.Materialize(context.Background(), "v2.0", dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := r.revParse("v2.0"); sha != want {
		t.Errorf("Materialize returned %q, want %q", sha, want)
	}

	// Every entry git lists is there with the right type, mode and content.
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimRight(r.git("ls-tree", "-r", "-z", "v2.0"), "\x00"), "\x00") {
		meta, path, _ := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		mode, id := f[0], f[2]
		seen[path] = true
		full := filepath.Join(dir, filepath.FromSlash(path))
		fi, err := os.Lstat(full)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		switch mode {
		case "160000":
			if !fi.IsDir() {
				t.Errorf("%s: submodule should be an empty directory, is %v", path, fi.Mode())
			}
			continue
		case "120000":
			target, err := os.Readlink(full)
			if err != nil || target != r.git("cat-file", "blob", id) {
				t.Errorf("%s: symlink to %q, %v; want %q", path, target, err, r.git("cat-file", "blob", id))
			}
			continue
		case "100755":
			if fi.Mode().Perm() != 0o755 {
				t.Errorf("%s: mode %v, want 0755", path, fi.Mode().Perm())
			}
		case "100644":
			if fi.Mode().Perm()&0o111 != 0 {
				t.Errorf("%s: mode %v, want no executable bit", path, fi.Mode().Perm())
			}
		}
		got, _ := os.ReadFile(full)
		want, err := r.run(r.dir, nil, "cat-file", "blob", id)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(got)) != want {
			t.Errorf("%s: content %q, want %q", path, got, want)
		}
		if path == "bin/data.bin" && !bytes.Equal(got, []byte(files[path])) {
			t.Errorf("%s: binary content %q, want %q", path, got, files[path])
		}
	}
	// Nothing else, and nothing from later commits.
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() && !seen[rel] {
			t.Errorf("unexpected file %s in the checkout", rel)
		}
		return nil
	})

	// The checkout is a usable git repository on that commit.
	c := r.at(dir)
	if got := c.git("rev-parse", "HEAD"); got != sha {
		t.Errorf("git rev-parse HEAD in the checkout = %q, want %q", got, sha)
	}
	if got := c.git("status", "--porcelain"); got != "" {
		t.Errorf("git status in the checkout = %q, want clean", got)
	}
	if got := c.git("describe", "--tags"); got != "v2.0" {
		t.Errorf("git describe --tags in the checkout = %q, want v2.0", got)
	}
	if got := c.git("log", "--format=%s", "-1", "HEAD~1"); got != "v1" {
		t.Errorf("history in the checkout: HEAD~1 is %q, want v1", got)
	}
	if d, err := c.open().Dirty(context.Background()); err != nil || d {
		t.Errorf("Dirty() in the checkout = %v, %v; want false", d, err)
	}

	// The user's checkout is untouched.
	if got := r.git("status", "--porcelain"); got != statusBefore {
		t.Errorf("user's git status changed: %q, was %q", got, statusBefore)
	}
	if got := r.git("rev-parse", "HEAD"); got != headBefore {
		t.Errorf("user's HEAD moved to %s", got)
	}
	if indexAfter, _ := os.ReadFile(filepath.Join(r.dir, ".git", "index")); !bytes.Equal(indexAfter, indexBefore) {
		t.Error("user's index file changed")
	}
	if out := r.git("worktree", "list"); strings.Count(out, "\n") != 0 {
		t.Errorf("git worktree list shows more than the main worktree: %q", out)
	}

	// Removing the checkout leaves the repository healthy.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if out, err := r.run(r.dir, nil, "fsck", "--no-progress"); err != nil {
		t.Errorf("git fsck after removing the checkout: %v %s", err, out)
	}
}

func TestMaterializeErrors(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	r.commit("one", map[string]string{"a": "1"})
	repo := r.open()
	ctx := context.Background()

	notEmpty := t.TempDir()
	os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644)
	if _, err := repo.Materialize(ctx, "HEAD", notEmpty); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("into a non-empty directory: error = %v, want not-empty", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := repo.Materialize(ctx, "HEAD", file); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("onto a file: error = %v, want is-a-file", err)
	}
	if _, err := repo.Materialize(ctx, "nope", t.TempDir()); !errors.Is(err, ErrUnknownRevision) {
		t.Errorf("unknown revision: error = %v, want ErrUnknownRevision", err)
	}
	empty := t.TempDir()
	if _, err := repo.Materialize(ctx, "HEAD", empty); err != nil {
		t.Errorf("into an existing empty directory: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := repo.Materialize(cctx, "HEAD", filepath.Join(t.TempDir(), "c")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: error = %v, want context.Canceled", err)
	}

	// Trees git's fsck would reject never reach the disk.
	blob := r.git("hash-object", "-w", "--stdin")
	for _, name := range []string{".git", ".GIT", ".."} {
		tree, err := r.run(r.dir, strings.NewReader("100644 blob "+blob+"\t"+name+"\n"), "mktree")
		if err != nil {
			t.Fatal(err)
		}
		commit := r.git("commit-tree", "-m", "evil", tree)
		dir := filepath.Join(t.TempDir(), "evil")
		_, err = r.open().Materialize(ctx, commit, dir)
		if err == nil || !strings.Contains(err.Error(), "unsafe") {
			t.Errorf("tree with %q: error = %v, want a refusal", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name, "HEAD")); err == nil {
			t.Errorf("tree with %q wrote into a git directory", name)
		}
	}
}
