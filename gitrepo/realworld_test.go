package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
)

// matchGit checks r against the git CLI in g.dir (with the commit-graph
// off, so the objects are the truth): revisions, commit subjects and
// first-parent walks for revs, merge-bases for pairs.
func matchGit(t *testing.T, state string, g *testRepo, r *Repo, revs []string, pairs [][2]string) {
	t.Helper()
	git := func(args ...string) (string, error) {
		return g.run(g.dir, nil, append([]string{"-c", "core.commitGraph=false"}, args...)...)
	}
	for _, rev := range revs {
		want, _ := git("rev-parse", "--verify", "-q", rev+"^{commit}")
		got, err := r.Resolve(rev)
		if err != nil || got != want {
			t.Errorf("%s: Resolve(%q) = %q, %v; git says %q", state, rev, got, err, want)
			continue
		}
		wantSubj, _ := git("log", "-1", "--format=%s", rev)
		if c, err := r.Commit(rev); err != nil || c.Subject != wantSubj {
			t.Errorf("%s: Commit(%q).Subject = %q, %v; git log says %q", state, rev, c.Subject, err, wantSubj)
		}
		wantFP, _ := git("rev-list", "--first-parent", rev)
		if got, err := r.FirstParentAncestors(rev, 1000); err != nil || strings.Join(got, "\n") != wantFP {
			t.Errorf("%s: FirstParentAncestors(%q) = %d commits, %v; git rev-list --first-parent lists %d", state, rev, len(got), err, len(strings.Fields(wantFP)))
		}
	}
	for _, p := range pairs {
		want, _ := git("merge-base", p[0], p[1])
		if got, err := r.MergeBase(p[0], p[1]); err != nil || got != want {
			t.Errorf("%s: MergeBase(%s, %s) = %q, %v; git says %q", state, p[0], p[1], got, err, want)
		}
		_, notAnc := git("merge-base", "--is-ancestor", p[0], p[1])
		if ok, err := r.IsAncestor(p[0], p[1]); err != nil || ok != (notAnc == nil) {
			t.Errorf("%s: IsAncestor(%s, %s) = %v, %v; git says %v", state, p[0], p[1], ok, err, notAnc == nil)
		}
	}
}

var (
	sampleRevs  = []string{"HEAD", "main", "main~3", "light~1^2", "v1.0", "light", "feature", "pr~1", "topic", "pr", "HEAD~2"}
	samplePairs = [][2]string{{"main", "pr"}, {"main", "topic"}, {"feature", "topic"}, {"pr", "v1.0"}, {"topic", "HEAD"}, {"HEAD~1", "HEAD"}, {"HEAD", "HEAD~1"}, {"v1.0", "HEAD"}}
)

// TestCommitGraphLayouts: split chains as fetch.writeCommitGraph and
// `git commit-graph write --split` leave them, with and without
// generation data and stale (commits newer than the graph), give git's
// answers; a truncated or overwritten graph is ignored or dropped, never
// an error or a wrong answer.
func TestCommitGraphLayouts(t *testing.T) {
	t.Parallel()
	split := func(gens ...string) func(s *sample) {
		return func(s *sample) {
			for i, v := range gens {
				mode := "--split=no-merge"
				if i == 0 {
					mode = "--split"
				}
				s.git("-c", "commitGraph.generationVersion="+v, "commit-graph", "write", "--reachable", mode)
				s.commit("after layer "+v, map[string]string{"x": v + string(rune('a'+i))})
			}
		}
	}
	damage := func(f func(b []byte) []byte) func(s *sample) {
		return func(s *sample) {
			s.git("commit-graph", "write", "--reachable")
			p := filepath.Join(s.dir, ".git", "objects", "info", "commit-graph")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			os.Chmod(p, 0o644)
			if err := os.WriteFile(p, f(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		setup func(s *sample)
		graph bool // HasCommitGraph right after Open
	}{
		{"split chain, generation v2, stale", split("2", "2", "2"), true},
		{"split chain, generation v1", split("1", "1"), true},
		{"split chain, v1 below v2", split("1", "2"), true},
		{"split chain, v2 below v1", split("2", "1"), true},
		{"chain file naming a missing layer", func(s *sample) {
			split("2", "2")(s)
			p := filepath.Join(s.dir, ".git", "objects", "info", "commit-graphs", "commit-graph-chain")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, strings.Repeat("ab", 20)+"\n"...), 0o644)
		}, false},
		{"truncated graph", damage(func(b []byte) []byte { return b[:len(b)*2/3] }), false},
		{"graph cut inside the chunk table", damage(func(b []byte) []byte { return b[:30] }), false},
		{"overwritten commit data", damage(func(b []byte) []byte {
			for i := len(b) - 20 - 200; i < len(b)-20; i++ { // commit data and generations
				b[i] ^= 0x5a
			}
			return b
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSample(t)
			tt.setup(s)
			r := s.open()
			if r.HasCommitGraph() != tt.graph {
				t.Errorf("HasCommitGraph() = %v, want %v", r.HasCommitGraph(), tt.graph)
			}
			matchGit(t, tt.name, s.testRepo, r, sampleRevs, samplePairs)
		})
	}
}

// TestPackReplacedAfterOpen: git gc or repack replaces the packs while a
// Repo is open and before it read them; reads find the new pack instead of
// failing on the deleted one.
func TestPackReplacedAfterOpen(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	s.git("repack", "-q", "-a", "-d")
	r := s.open()
	s.commit("new objects, so a new pack name", map[string]string{"n.txt": "n\n"})
	s.git("repack", "-q", "-a", "-d")
	matchGit(t, "after repack", s.testRepo, r, []string{"v1.0", "main~2", s.c["c2"]}, [][2]string{{"v1.0", "pr"}})
}

// TestUnusualCommits: headers real histories carry (signatures, mergetags,
// encodings, extra headers, odd or missing dates, octopus merges) read as
// git reads them.
func TestUnusualCommits(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	g := s.testRepo
	tree, head := g.git("rev-parse", "HEAD^{tree}"), s.c["c8"]
	hdr := "tree " + tree + "\nparent " + head + "\n"
	who := "author A <a@x> 1700001000 +0000\ncommitter C <c@x> 1700001000 +0000\n"
	commits := []struct{ name, body, subject string }{
		{"ssh-signed", hdr + "author A <a@x> 1700001000 +1400\ncommitter C <c@x> 1700001000 -1200\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lH\n \n -----END SSH SIGNATURE-----\n\nsigned\n", "signed"},
		{"mergetag", hdr + "parent " + s.c["f2"] + "\n" + who + "mergetag object " + s.c["f2"] + "\n type commit\n tag v9\n tagger T <t@x> 1700000000 +0000\n \n tag message\n\nmerge a signed tag\n", "merge a signed tag"},
		{"latin1", hdr + who + "encoding ISO-8859-1\n\ncaf\xe9\n", "café"},
		{"invalid-utf8", hdr + who + "\nbad \xff bytes\n", "bad \uFFFD bytes"},
		{"extra-headers", hdr + who + "change-id I1234\nx-custom yes\n\nextra headers\n", "extra headers"},
		{"no-dates", hdr + "author A <a@x>\ncommitter C <c@x>\n\nno dates\n", "no dates"},
		{"no-email", hdr + "author A 1700001000 +0000\ncommitter C 1700001000 +0000\n\nno email\n", "no email"},
		{"negative-date", hdr + "author A <a@x> -100 +0000\ncommitter C <c@x> -100 +0000\n\nbefore 1970\n", "before 1970"},
		{"far-future", hdr + "author A <a@x> 99999999999 +0000\ncommitter C <c@x> 99999999999 +0000\n\nyear 5138\n", "year 5138"},
		{"octopus", hdr + "parent " + s.c["p2"] + "\nparent " + s.c["t1"] + "\n" + who + "\noctopus\n", "octopus"},
	}
	var revs []string
	var pairs [][2]string
	for _, c := range commits {
		id, err := g.run(g.dir, strings.NewReader(c.body), "hash-object", "-t", "commit", "-w", "--literally", "--stdin")
		if err != nil {
			t.Fatal(err)
		}
		g.git("branch", c.name, id)
		revs = append(revs, c.name+"~1")
		pairs = append(pairs, [2]string{c.name, "pr"}, [2]string{"feature", c.name})
	}
	for _, withGraph := range []bool{false, true} {
		if withGraph {
			g.git("commit-graph", "write", "--reachable")
		}
		r := g.open()
		matchGit(t, "unusual commits", g, r, revs, pairs)
		for _, c := range commits {
			got, err := r.Commit(c.name)
			if err != nil || got.Subject != c.subject || !utf8.ValidString(got.Subject) {
				t.Errorf("Commit(%s).Subject = %q, %v; want %q", c.name, got.Subject, err, c.subject)
			}
		}
		if p, err := r.Resolve("octopus^3"); err != nil || p != s.c["t1"] {
			t.Errorf("Resolve(octopus^3) = %q, %v; want t1", p, err)
		}
	}
}

// TestRepositoryFormat: extensions git 2.39 repositories carry work; those
// perfgate cannot read (and format versions git itself refuses) give an
// error naming the setting and what to do.
func TestRepositoryFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version, key, value string
		want                []string // substrings of the error; none: Open works
	}{
		{"1", "worktreeConfig", "true", nil},
		{"1", "partialclone", "origin", nil},
		{"1", "preciousObjects", "true", nil},
		{"1", "noop", "x", nil},
		{"1", "refStorage", "reftable", []string{`extensions.refStorage is "reftable"`, "git refs migrate"}},
		{"1", "objectFormat", "sha256", []string{`extensions.objectFormat is "sha256"`, "SHA-1"}},
		{"1", "frobnicate", "true", []string{`"frobnicate"`}},
		{"2", "", "", []string{`core.repositoryformatversion is "2"`, "versions 0 and 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.version+" "+tt.key, func(t *testing.T) {
			t.Parallel()
			r := newTestRepo(t)
			r.commit("one", map[string]string{"a": "1"})
			r.git("config", "core.repositoryformatversion", tt.version)
			if tt.key != "" {
				r.git("config", "extensions."+tt.key, tt.value)
			}
			repo, err := Open(r.dir)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer repo.Close()
				if h, err := repo.Head(); err != nil || h != r.revParse("HEAD") {
					t.Errorf("Head() = %q, %v", h, err)
				}
				return
			}
			if err == nil {
				repo.Close()
				t.Fatal("Open succeeded")
			}
			for _, w := range append(tt.want, r.dir) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestDirtyLikeGitStatus: a submodule checked out at another commit than
// the superproject records is a change (git status: "M path"); a file
// behind a clean/smudge filter (as Git LFS), freshly checked out and so
// racily clean, is not.
func TestDirtyLikeGitStatus(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	g := s.testRepo
	sub := newTestRepo(t)
	sub.commit("s1", map[string]string{"s": "1"})
	sub.commit("s2", map[string]string{"s": "2"})
	g.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", sub.dir, "mods/sub")
	g.commit("add a submodule", nil)
	g.git("config", "filter.up.clean", "tr a-z A-Z")
	g.git("config", "filter.up.smudge", "tr A-Z a-z")
	g.write(map[string]string{".gitattributes": "*.dat filter=up\n", "x.dat": "hello\n"})
	g.commit("a filtered file", nil)
	subDir := filepath.Join(g.dir, "mods", "sub")
	steps := []struct {
		name string
		do   func()
	}{
		{"clean", func() {}},
		{"filtered file checked out again", func() {
			os.Remove(filepath.Join(g.dir, "x.dat"))
			g.git("checkout", "--", "x.dat")
		}},
		{"filtered file edited", func() { g.write(map[string]string{"x.dat": "bye\n"}) }},
		{"filtered file restored", func() { g.git("checkout", "--", "x.dat") }},
		{"submodule at another commit", func() { g.gitIn(subDir, "checkout", "-q", "HEAD~1") }},
		{"submodule back", func() { g.gitIn(subDir, "checkout", "-q", "main") }},
		{"submodule with uncommitted changes", func() { os.WriteFile(filepath.Join(subDir, "s"), []byte("edited"), 0o644) }},
	}
	for _, st := range steps {
		st.do()
		status := g.git("status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty")
		r, err := Open(filepath.Join(g.dir, "src"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := r.Dirty(t.Context())
		r.Close()
		if err != nil || d != (status != "") {
			t.Errorf("%s: Dirty() = %v, %v; git status says %q", st.name, d, err, status)
		}
	}
}

// TestShortCountsLooseObjects: abbreviations are unique among loose
// objects too (a repository that was never gc'ed has only loose ones).
func TestShortCountsLooseObjects(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	// A loose blob sharing c8's first five hex digits.
	for i := 0; ; i++ {
		content := fmt.Sprintf("collide %d\n", i)
		if plumbing.ComputeHash(plumbing.BlobObject, []byte(content)).String()[:5] == s.c["c8"][:5] {
			s.write(map[string]string{"collide.txt": content})
			s.git("hash-object", "-w", "collide.txt")
			break
		}
	}
	r := s.open()
	if n, want := r.odb.uniqueLen(plumbing.NewHash(s.c["c8"]), 4), s.git("rev-parse", "--short=4", s.c["c8"]); n != len(want) {
		t.Errorf("uniqueLen(c8) = %d; git rev-parse --short=4 says %q", n, want)
	}
	for _, sha := range s.c {
		n := r.odb.uniqueLen(plumbing.NewHash(sha), 1)
		ids, err := r.odb.withPrefix(sha[:max(n, 4)], 10)
		if err != nil || len(ids) != 1 {
			t.Errorf("uniqueLen(%s) = %d, but %d objects start with %q (%v)", sha, n, len(ids), sha[:max(n, 4)], err)
		}
		if want := s.git("rev-parse", "--short=4", sha); len(want) != max(n, 4) {
			t.Errorf("uniqueLen(%s) = %d; git rev-parse --short=4 says %q", sha, n, want)
		}
	}
}
