package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Benchmarks on a 10,000-commit repository (main with a three-commit side
// branch merged every 50 commits, about 11,500 files' worth of history
// packed by `git repack -adf`), in two copies: as a plain clone has it (no
// commit-graph file) and after `git commit-graph write --reachable`.
//
// Each benchmark compares, on the same question:
//   - gogit-naive: git.PlainOpen + ResolveRevision + go-git's own
//     Commit.MergeBase or a Commit.Parent walk (what a direct go-git
//     implementation costs);
//   - gitrepo-cold: Open + the query + Close, as one perfgate command pays;
//   - gitrepo-warm: the query on an open Repo (bisect, repeated queries);
//   - git-cli: exec of the git CLI, the target; B/op there counts only the
//     Go side of starting the process.
//
// Run: go test -run '^$' -bench . -benchtime 20x ./gitrepo/
// (PERFGATE_BENCH_COMMITS=50000 for a 50,000-commit history).

var bench struct {
	once  sync.Once
	root  string
	dirs  map[string]string // "nograph", "graph" -> repository
	err   error
	shas  map[string]string // names -> SHA
	chain []string          // first-parent chain of "pr", from its tip
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.root != "" {
		os.RemoveAll(bench.root)
	}
	for _, d := range templates {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// benchRepos builds the benchmark repositories once per test binary.
func benchRepos(b *testing.B) {
	b.Helper()
	needGit(b)
	bench.once.Do(func() {
		bench.err = buildBenchRepos()
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
}

func buildBenchRepos() error {
	root, err := os.MkdirTemp("", "gitrepo-bench-")
	if err != nil {
		return err
	}
	bench.root = root
	gitc := func(dir string, stdin []byte, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
		}
		return strings.TrimSpace(out.String()), nil
	}
	plain := filepath.Join(root, "nograph")
	if _, err := gitc(root, nil, "-c", "init.defaultBranch=main", "init", "-q", plain); err != nil {
		return err
	}
	// pr: a pull request 50 commits behind main; old: a long-lived branch
	// forked 2,000 commits back.
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("PERFGATE_BENCH_COMMITS")); err == nil && v >= 3000 {
		n = v // e.g. PERFGATE_BENCH_COMMITS=50000
	}
	stream := genHistory(n, branchSpec{"pr", 50, 5}, branchSpec{"old", 2000, 20})
	if _, err := gitc(plain, stream, "fast-import", "--quiet"); err != nil {
		return err
	}
	if _, err := gitc(plain, nil, "repack", "-q", "-a", "-d", "-f", "--window=10", "--depth=50"); err != nil {
		return err
	}
	graph := filepath.Join(root, "graph")
	if err := os.CopyFS(graph, os.DirFS(plain)); err != nil {
		return err
	}
	if _, err := gitc(graph, nil, "commit-graph", "write", "--reachable"); err != nil {
		return err
	}
	bench.dirs = map[string]string{"nograph": plain, "graph": graph}
	bench.shas = map[string]string{}
	for _, name := range []string{"main", "pr", "old"} {
		if bench.shas[name], err = gitc(plain, nil, "rev-parse", name); err != nil {
			return err
		}
	}
	out, err := gitc(plain, nil, "rev-list", "--first-parent", "pr")
	if err != nil {
		return err
	}
	bench.chain = strings.Fields(out)
	return nil
}

func gitCLI(b *testing.B, dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

func naiveMergeBase(b *testing.B, dir, x, y string) string {
	r, err := git.PlainOpen(dir)
	if err != nil {
		b.Fatal(err)
	}
	var cs [2]*object.Commit
	for i, rev := range []string{x, y} {
		h, err := r.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			b.Fatal(err)
		}
		if cs[i], err = r.CommitObject(*h); err != nil {
			b.Fatal(err)
		}
	}
	bases, err := cs[0].MergeBase(cs[1])
	if err != nil || len(bases) == 0 {
		b.Fatalf("go-git MergeBase: %v, %d bases", err, len(bases))
	}
	return bases[0].Hash.String()
}

func BenchmarkMergeBase(b *testing.B) {
	benchRepos(b)
	for _, state := range []string{"nograph", "graph"} {
		dir := bench.dirs[state]
		for _, branch := range []string{"pr", "old"} {
			want := gitCLI(b, dir, "merge-base", "main", branch)
			prefix := state + "/main-" + branch + "/"
			b.Run(prefix+"gogit-naive", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if got := naiveMergeBase(b, dir, "main", branch); got != want {
						b.Fatalf("go-git merge-base %s, git says %s", got, want)
					}
				}
			})
			b.Run(prefix+"gitrepo-cold", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					r, err := Open(dir)
					if err != nil {
						b.Fatal(err)
					}
					got, err := r.MergeBase("main", branch)
					if err != nil || got != want {
						b.Fatalf("MergeBase = %s, %v; git says %s", got, err, want)
					}
					r.Close()
				}
			})
			b.Run(prefix+"gitrepo-warm", func(b *testing.B) {
				r, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if got, err := r.MergeBase("main", branch); err != nil || got != want {
						b.Fatalf("MergeBase = %s, %v; git says %s", got, err, want)
					}
				}
			})
			b.Run(prefix+"git-cli", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if got := gitCLI(b, dir, "merge-base", "main", branch); got != want {
						b.Fatalf("git merge-base = %s, want %s", got, want)
					}
				}
			})
		}
	}
}

// BenchmarkNearestMeasured asks for the nearest measured first-parent
// ancestor of the pull request's tip within 50 commits, with main measured
// every 30 first-parent commits (a nightly job): found at distance 15. The
// "none" case has nothing measured, so every walk goes the full 50.
func BenchmarkNearestMeasured(b *testing.B) {
	benchRepos(b)
	const maxDistance = 50
	measured := map[string]bool{}
	// The chain runs pr's 5 commits, then main from 50 commits behind its
	// tip; main's first-parent commits at multiples of 30 are measured.
	for i := 5; i < len(bench.chain); i++ {
		if (i-5+50)%30 == 0 {
			measured[bench.chain[i]] = true
		}
	}
	cases := map[string]struct {
		has  func(string) bool
		sha  string
		dist int
	}{
		"found": {func(s string) bool { return measured[s] }, bench.chain[15], 15},
		"none":  {func(string) bool { return false }, "", -1},
	}
	for _, state := range []string{"nograph", "graph"} {
		dir := bench.dirs[state]
		for _, name := range []string{"found", "none"} {
			tc := cases[name]
			if tc.sha != "" && !measured[tc.sha] {
				b.Fatalf("setup: %s is not measured", tc.sha)
			}
			prefix := state + "/" + name + "/"
			b.Run(prefix+"gogit-naive", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					r, err := git.PlainOpen(dir)
					if err != nil {
						b.Fatal(err)
					}
					h, err := r.ResolveRevision("pr")
					if err != nil {
						b.Fatal(err)
					}
					c, err := r.CommitObject(*h)
					if err != nil {
						b.Fatal(err)
					}
					sha, dist := "", -1
					for d := 0; d <= maxDistance; d++ {
						if tc.has(c.Hash.String()) {
							sha, dist = c.Hash.String(), d
							break
						}
						if c, err = c.Parent(0); err != nil {
							b.Fatal(err)
						}
					}
					if sha != tc.sha || dist != tc.dist {
						b.Fatalf("naive walk found %s at %d, want %s at %d", sha, dist, tc.sha, tc.dist)
					}
				}
			})
			check := func(b *testing.B, sha string, dist int, err error) {
				if err != nil || sha != tc.sha || dist != tc.dist {
					b.Fatalf("NearestMeasured = %s, %d, %v; want %s, %d", sha, dist, err, tc.sha, tc.dist)
				}
			}
			b.Run(prefix+"gitrepo-cold", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					r, err := Open(dir)
					if err != nil {
						b.Fatal(err)
					}
					sha, dist, err := r.NearestMeasured("pr", maxDistance, tc.has)
					check(b, sha, dist, err)
					r.Close()
				}
			})
			b.Run(prefix+"gitrepo-warm", func(b *testing.B) {
				r, err := Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					sha, dist, err := r.NearestMeasured("pr", maxDistance, tc.has)
					check(b, sha, dist, err)
				}
			})
			b.Run(prefix+"git-cli", func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					out := gitCLI(b, dir, "rev-list", "--first-parent", fmt.Sprintf("--max-count=%d", maxDistance+1), "pr")
					sha, dist := "", -1
					for d, s := range strings.Fields(out) {
						if tc.has(s) {
							sha, dist = s, d
							break
						}
					}
					check(b, sha, dist, nil)
				}
			})
		}
	}
}

// BenchmarkReadCommits walks 1,000 first-parent commits from main's tip
// reading each commit object (no commit-graph), opening the repository in
// each op: go-git's filesystem storage as git.PlainOpen sets it up, the
// same with KeepDescriptors and a 96 MB object cache, and gitrepo's odb.
// It is the per-object cost behind every walk.
func BenchmarkReadCommits(b *testing.B) {
	benchRepos(b)
	const n = 1000
	dir := bench.dirs["nograph"]
	want := gitCLI(b, dir, "rev-parse", fmt.Sprintf("main~%d", n))
	gogit := func(b *testing.B, open func() *git.Repository) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r := open()
			ref, err := r.Reference("refs/heads/main", true)
			if err != nil {
				b.Fatal(err)
			}
			h := ref.Hash()
			for k := 0; k < n; k++ {
				c, err := r.CommitObject(h)
				if err != nil {
					b.Fatal(err)
				}
				h = c.ParentHashes[0]
			}
			if h.String() != want {
				b.Fatalf("walked to %s, want %s", h, want)
			}
		}
	}
	b.Run("gogit-default", func(b *testing.B) {
		gogit(b, func() *git.Repository {
			r, err := git.PlainOpen(dir)
			if err != nil {
				b.Fatal(err)
			}
			return r
		})
	})
	b.Run("gogit-keepdescriptors", func(b *testing.B) {
		var st *filesystem.Storage
		defer func() {
			if st != nil {
				st.Close()
			}
		}()
		gogit(b, func() *git.Repository {
			if st != nil {
				st.Close()
			}
			st = filesystem.NewStorageWithOptions(osfs.New(filepath.Join(dir, ".git")), cache.NewObjectLRUDefault(),
				filesystem.Options{KeepDescriptors: true})
			r, err := git.Open(st, nil)
			if err != nil {
				b.Fatal(err)
			}
			return r
		})
	})
	b.Run("gitrepo", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			r, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			got, err := r.FirstParentAncestors("main", n+1)
			if err != nil || got[n] != want {
				b.Fatalf("FirstParentAncestors: %v", err)
			}
			r.Close()
		}
	})
}
