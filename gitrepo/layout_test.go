package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sameAnswers checks that r answers like the git CLI in dir: revisions,
// merge-bases, ancestry and first-parent walks of the sample history.
func sameAnswers(t *testing.T, state string, s *sample, dir string, r *Repo) {
	t.Helper()
	g := s.at(dir)
	for _, rev := range []string{"HEAD", "main", "main~3", "HEAD^^2", "main~3^2", "v1.0", "light", "feature", "pr~1", s.c["c2"][:7]} {
		want := g.revParse(rev)
		if got, err := r.Resolve(rev); err != nil || got != want {
			t.Errorf("%s: Resolve(%q) = %q, %v; git says %q", state, rev, got, err, want)
		}
	}
	for _, pair := range [][2]string{{"main", "pr"}, {"main", "topic"}, {"feature", "topic"}, {"pr", "v1.0"}} {
		want := g.git("merge-base", pair[0], pair[1])
		if got, err := r.MergeBase(pair[0], pair[1]); err != nil || got != want {
			t.Errorf("%s: MergeBase(%s, %s) = %q, %v; git says %q", state, pair[0], pair[1], got, err, want)
		}
	}
	if ok, err := r.IsAncestor(s.c["t1"], "main"); err != nil || !ok {
		t.Errorf("%s: IsAncestor(t1, main) = %v, %v; want true", state, ok, err)
	}
	if ok, err := r.IsAncestor("pr", "main"); err != nil || ok {
		t.Errorf("%s: IsAncestor(pr, main) = %v, %v; want false", state, ok, err)
	}
	want := strings.Fields(g.git("rev-list", "--first-parent", "main"))
	if got, err := r.FirstParentAncestors("main", 100); err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: FirstParentAncestors(main) = %v, %v; git rev-list --first-parent says %v", state, got, err, want)
	}
}

// TestAfterGC runs `git gc` on the sample (everything packed, refs in
// packed-refs only, a commit-graph written, as gc.writeCommitGraph does by
// default), then removes the commit-graph: the answers stay git's.
func TestAfterGC(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	s.git("-c", "gc.writeCommitGraph=true", "gc", "-q", "--prune=now")
	gitDir := filepath.Join(s.dir, ".git")
	if loose := s.git("count-objects"); !strings.HasPrefix(loose, "0 objects") {
		t.Fatalf("after git gc: %q loose objects, want none", loose)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "refs", "heads", "main")); err == nil {
		t.Fatal("after git gc: refs/heads/main is still a loose ref")
	}
	if b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err != nil || !strings.Contains(string(b), "refs/tags/v1.0\n^") {
		t.Fatalf("after git gc: packed-refs lacks the peeled annotated tag: %q, %v", b, err)
	}
	graph := filepath.Join(gitDir, "objects", "info", "commit-graph")
	if _, err := os.Stat(graph); err != nil {
		t.Fatalf("git gc wrote no commit-graph: %v", err)
	}
	r := s.open()
	if !r.HasCommitGraph() {
		t.Error("HasCommitGraph() = false after git gc")
	}
	sameAnswers(t, "after gc", s, s.dir, r)

	if err := os.Remove(graph); err != nil {
		t.Fatal(err)
	}
	r = s.open()
	if r.HasCommitGraph() {
		t.Error("HasCommitGraph() = true with the commit-graph removed")
	}
	sameAnswers(t, "after gc, no commit-graph", s, s.dir, r)
}

// TestLinkedWorktree opens a `git worktree add` checkout (its .git is a
// file) from a subdirectory: it has its own HEAD and shares refs and
// objects with the main repository, including commits made in either.
func TestLinkedWorktree(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	wt := filepath.Join(filepath.Dir(s.dir), "wt")
	s.git("worktree", "add", "-q", "-b", "wtb", wt, "main")
	if fi, err := os.Stat(filepath.Join(wt, ".git")); err != nil || fi.IsDir() {
		t.Fatalf("%s/.git should be a file: %v", wt, err)
	}
	w := s.at(wt)
	own := w.commit("in the worktree", map[string]string{"src/w.go": "package a\n"})
	s.commit("in the main checkout", map[string]string{"m.txt": "m\n"})

	r, err := Open(filepath.Join(wt, "src"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Root() != wt {
		t.Errorf("Root() = %q, want %q", r.Root(), wt)
	}
	if head, err := r.Head(); err != nil || head != own {
		t.Errorf("Head() = %q, %v; want the worktree's commit %q", head, err, own)
	}
	if b, err := r.Branch(); err != nil || b != "wtb" {
		t.Errorf("Branch() = %q, %v; want wtb", b, err)
	}
	for _, rev := range []string{"HEAD", "HEAD~1", "main", "main~1", "wtb", "v1.0", "pr"} {
		want := w.revParse(rev)
		if got, err := r.Resolve(rev); err != nil || got != want {
			t.Errorf("Resolve(%q) in the worktree = %q, %v; git says %q", rev, got, err, want)
		}
	}
	if got, err := r.MergeBase("HEAD", "main"); err != nil || got != s.c["c8"] {
		t.Errorf("MergeBase(HEAD, main) = %q, %v; want c8 %q", got, err, s.c["c8"])
	}
	if d, err := r.Dirty(t.Context()); err != nil || d {
		t.Errorf("Dirty() in a clean worktree = %v, %v", d, err)
	}
}

// TestSHA256Repository: go-git v5 reads SHA-1 repositories only; a
// SHA-256 one (git init --object-format=sha256) gets a clear error naming
// the setting, never a confusing failure later.
func TestSHA256Repository(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	dir := filepath.Join(filepath.Dir(r.dir), "sha256")
	if _, err := r.run(filepath.Dir(r.dir), nil, "init", "-q", "--object-format=sha256", dir); err != nil {
		t.Skipf("this git cannot make SHA-256 repositories: %v", err)
	}
	g := r.at(dir)
	g.commit("one", map[string]string{"a": "1"})
	if head := g.revParse("HEAD"); len(head) != 64 {
		t.Fatalf("git made a %d-digit HEAD in a SHA-256 repository", len(head))
	}
	_, err := Open(filepath.Join(dir))
	if err == nil {
		t.Fatal("Open of a SHA-256 repository succeeded")
	}
	for _, want := range []string{dir, `extensions.objectFormat is "sha256"`, "SHA-1 repositories only"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if errors.Is(err, ErrNotRepository) {
		t.Errorf("error %v claims it is not a repository", err)
	}
}
