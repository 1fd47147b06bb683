package gitrepo

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// oracle holds git's own answers for a set of commits.
type oracle struct {
	shas       []string
	ancestors  map[string]map[string]bool // sha -> its ancestors (itself included)
	mergeBases map[[2]string][]string     // git merge-base --all, in git's order
}

func newOracle(r *testRepo, shas []string, pairs [][2]string) *oracle {
	r.t.Helper()
	o := &oracle{shas: shas, ancestors: map[string]map[string]bool{}, mergeBases: map[[2]string][]string{}}
	for _, s := range shas {
		set := map[string]bool{}
		for _, a := range strings.Fields(r.git("rev-list", s)) {
			set[a] = true
		}
		o.ancestors[s] = set
	}
	for _, p := range pairs {
		out, err := r.run(r.dir, nil, "merge-base", "--all", p[0], p[1])
		if err != nil {
			out = "" // unrelated: git exits 1
		}
		o.mergeBases[p] = strings.Fields(out)
	}
	return o
}

// allPairs lists each unordered pair once, and each commit with itself;
// check asks both orders.
func allPairs(shas []string) [][2]string {
	var out [][2]string
	for i, a := range shas {
		for _, b := range shas[i:] {
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

func (o *oracle) check(t *testing.T, state string, r *Repo) {
	t.Helper()
	for _, a := range o.shas {
		for _, b := range o.shas {
			got, err := r.IsAncestor(a, b)
			if want := o.ancestors[b][a]; err != nil || got != want {
				t.Errorf("%s: IsAncestor(%.7s, %.7s) = %v, %v; git says %v", state, a, b, got, err, want)
			}
		}
	}
	bases := func(a, b string) ([]string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		ids, err := r.mergeBases(plumbing.NewHash(a), plumbing.NewHash(b), "test")
		var out []string
		for _, id := range ids {
			out = append(out, id.String())
		}
		return out, err
	}
	for p, want := range o.mergeBases {
		got, err := bases(p[0], p[1])
		if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: merge bases of %.7s and %.7s = %.7s, %v; git says %.7s", state, p[0], p[1], got, err, want)
		}
		// The other order gives the same set.
		rev, err := bases(p[1], p[0])
		sort.Strings(rev)
		sorted := append([]string{}, want...)
		sort.Strings(sorted)
		if err != nil || strings.Join(rev, " ") != strings.Join(sorted, " ") {
			t.Errorf("%s: merge bases of %.7s and %.7s = %.7s, %v; git says %.7s", state, p[1], p[0], rev, err, sorted)
		}
		mb, err := r.MergeBase(p[0], p[1])
		switch {
		case len(want) == 0 && !errors.Is(err, ErrUnrelated):
			t.Errorf("%s: MergeBase(%.7s, %.7s) = %q, %v; want ErrUnrelated", state, p[0], p[1], mb, err)
		case len(want) > 0 && (err != nil || mb != want[0]):
			t.Errorf("%s: MergeBase(%.7s, %.7s) = %.7s, %v; git says %.7s", state, p[0], p[1], mb, err, want[0])
		}
	}
}

// withGraphStates runs check against the repository without a commit-graph,
// with a full one, with one that misses the newest commits, and with a split
// commit-graph chain. extend adds commits to the repository.
func withGraphStates(t *testing.T, tr *testRepo, extend func(), check func(state string, r *Repo)) {
	t.Helper()
	open := func(wantGraph bool) *Repo {
		r, err := Open(tr.dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		if r.HasCommitGraph() != wantGraph {
			t.Fatalf("HasCommitGraph() = %v, want %v", r.HasCommitGraph(), wantGraph)
		}
		return r
	}
	graphDir := filepath.Join(tr.dir, ".git", "objects", "info")
	os.Remove(filepath.Join(graphDir, "commit-graph"))
	os.RemoveAll(filepath.Join(graphDir, "commit-graphs"))
	tr.git("-c", "gc.writeCommitGraph=false", "-c", "fetch.writeCommitGraph=false", "config", "core.commitGraph", "true")

	tr.git("commit-graph", "write", "--reachable")
	// The graph must not matter when git disables it.
	tr.git("config", "core.commitGraph", "false")
	check("commit-graph disabled", open(false))
	tr.git("config", "core.commitGraph", "true")
	check("full commit-graph", open(true))

	extend()
	check("commit-graph missing the newest commits", open(true))

	// A chain of two layers: the older half of the history, then the rest.
	os.Remove(filepath.Join(graphDir, "commit-graph"))
	all := strings.Fields(tr.git("rev-list", "--all"))
	if _, err := tr.run(tr.dir, strings.NewReader(all[len(all)/2]+"\n"), "commit-graph", "write", "--stdin-commits", "--split"); err != nil {
		t.Fatal(err)
	}
	tr.git("commit-graph", "write", "--reachable", "--split=no-merge", "--size-multiple=1000")
	if chain, err := os.ReadFile(filepath.Join(graphDir, "commit-graphs", "commit-graph-chain")); err != nil || len(strings.Fields(string(chain))) != 2 {
		t.Fatalf("expected a commit-graph chain of two layers: %q, %v", chain, err)
	}
	check("commit-graph chain", open(true))

	os.Remove(filepath.Join(graphDir, "commit-graph"))
	os.RemoveAll(filepath.Join(graphDir, "commit-graphs"))
	check("no commit-graph", open(false))
}

func TestMergeBaseAndAncestry(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	// Unrelated history on another branch.
	s.git("checkout", "-q", "--orphan", "other")
	orphan := s.commit("orphan root", map[string]string{"o": "o"})
	s.git("checkout", "-q", "main")

	extra := map[string]string{}
	extend := func() {
		// New commits after the graph was written: a criss-cross merge
		// between two branches off f2 and p2.
		s.git("checkout", "-q", "-b", "x1", s.c["f2"])
		extra["x1"] = s.commit("x1", map[string]string{"x1": "1"})
		s.git("checkout", "-q", "-b", "x2", s.c["p2"])
		extra["x2"] = s.commit("x2", map[string]string{"x2": "1"})
		extra["x2m"] = s.merge("x1", "x2 merges x1")
		s.git("checkout", "-q", "x1")
		extra["x1m"] = s.merge(extra["x2"], "x1 merges x2 (criss-cross)")
		s.git("checkout", "-q", "main")
	}

	var oldShas []string
	for _, v := range s.c {
		oldShas = append(oldShas, v)
	}
	oldShas = append(oldShas, orphan)
	sort.Strings(oldShas)
	var o *oracle
	withGraphStates(t, s.testRepo, extend, func(state string, r *Repo) {
		if o == nil || len(extra) > 0 && len(o.shas) == len(oldShas) {
			shas := append([]string{}, oldShas...)
			for _, v := range extra {
				shas = append(shas, v)
			}
			sort.Strings(shas)
			o = newOracle(s.testRepo, shas, allPairs(shas))
		}
		o.check(t, state, r)
	})
	// The criss-cross merge really has two merge bases.
	if mb := o.mergeBases[[2]string{extra["x1m"], extra["x2m"]}]; len(mb) != 2 {
		t.Errorf("expected two merge bases for the criss-cross merge, git gives %v", mb)
	}
}

// TestMergeBaseRandomHistories compares with git on random histories with
// many merges, including criss-cross merges and octopus merges.
func TestMergeBaseRandomHistories(t *testing.T) {
	t.Parallel()
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			tr := newTestRepo(t)
			rng := rand.New(rand.NewSource(seed))
			stream, marks := randomHistory(rng, 250, 6)
			tr.fastImport(stream)
			var shas []string
			for _, m := range marks {
				shas = append(shas, tr.git("rev-parse", fmt.Sprintf("refs/heads/b%d", m)))
			}
			// Sample pairs among branch tips and random commits.
			all := strings.Fields(tr.git("rev-list", "--all"))
			for i := 0; i < 12; i++ {
				shas = append(shas, all[rng.Intn(len(all))])
			}
			sort.Strings(shas)
			shas = dedupe(shas)
			var o *oracle
			withGraphStates(t, tr, func() {}, func(state string, r *Repo) {
				if o == nil {
					var pairs [][2]string
					for i := 0; i < 40; i++ {
						pairs = append(pairs, [2]string{shas[rng.Intn(len(shas))], shas[rng.Intn(len(shas))]})
					}
					o = newOracle(tr, shas, pairs)
				}
				o.check(t, state, r)
			})
		})
	}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// randomHistory makes n commits on `branches` branches b0..; each commit
// goes to a random branch and, one time in four, merges one or two other
// branches (criss-cross merges arise naturally). Commit dates increase.
func randomHistory(rng *rand.Rand, n, branches int) ([]byte, []int) {
	var b strings.Builder
	tip := make([]int, branches)
	for i := 1; i <= n; i++ {
		br := rng.Intn(branches)
		msg := fmt.Sprintf("commit %d", i)
		fmt.Fprintf(&b, "commit refs/heads/b%d\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata %d\n%s\n",
			br, i, baseTime+int64(i)*60, len(msg), msg)
		if tip[br] > 0 {
			fmt.Fprintf(&b, "from :%d\n", tip[br])
		} else if i > 1 {
			fmt.Fprintf(&b, "from :%d\n", rng.Intn(i-1)+1)
		}
		if i > 1 && rng.Intn(4) == 0 {
			seen := map[int]bool{tip[br]: true}
			for k := 0; k < 1+rng.Intn(2); k++ {
				other := tip[rng.Intn(branches)]
				if other > 0 && !seen[other] {
					seen[other] = true
					fmt.Fprintf(&b, "merge :%d\n", other)
				}
			}
		}
		fmt.Fprintf(&b, "M 100644 inline f%d\ndata 2\n%d\n", br, i%10)
		tip[br] = i
	}
	var used []int
	for br := range tip {
		if tip[br] > 0 {
			used = append(used, br)
		}
	}
	return []byte(b.String()), used
}

func TestFirstParentWalks(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	withGraphStates(t, s.testRepo, func() {}, func(state string, r *Repo) {
		for _, n := range []int{1, 3, 5, 100} {
			want := strings.Fields(s.git("rev-list", "--first-parent", fmt.Sprintf("-n%d", n), "main"))
			got, err := r.FirstParentAncestors("main", n)
			if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: FirstParentAncestors(main, %d) = %.7s, %v; git says %.7s", state, n, got, err, want)
			}
		}
		if got, err := r.FirstParentAncestors("main", 0); err != nil || len(got) != 0 {
			t.Errorf("%s: FirstParentAncestors(main, 0) = %v, %v; want nothing", state, got, err)
		}

		for _, tc := range [][2]string{
			{"c1", "c8"}, {"c3", "m1"}, {"f1", "c8"}, {"f2", "c8"}, {"t1", "m2"}, {"c8", "c8"}, {"c2", "f2"},
		} {
			good, bad := s.c[tc[0]], s.c[tc[1]]
			want := strings.Fields(s.git("rev-list", "--first-parent", "--reverse", good+".."+bad))
			got, err := r.FirstParents(good, bad)
			if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: FirstParents(%s, %s) = %.7s, %v; git says %.7s", state, tc[0], tc[1], got, err, want)
			}
		}
		if _, err := r.FirstParents(s.c["c8"], s.c["c3"]); err == nil || !strings.Contains(err.Error(), "is not an ancestor") {
			t.Errorf("%s: FirstParents(newer, older) error = %v, want not-an-ancestor", state, err)
		}
		if _, err := r.FirstParents(s.c["p1"], s.c["c8"]); err == nil || !strings.Contains(err.Error(), "is not an ancestor") {
			t.Errorf("%s: FirstParents(unmerged, main) error = %v, want not-an-ancestor", state, err)
		}
	})
}

func TestNearestMeasured(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	r := s.open()
	// First-parent chain of main: c8 m2 c6 m1 c3 c2 c1; f2, f1 and t1 are
	// on merged branches and must never be chosen.
	tests := []struct {
		name     string
		from     string
		measured []string
		max      int
		want     string
		dist     int
	}{
		{"itself", "c8", []string{"c8", "c6"}, 10, "c8", 0},
		{"skips merged branches", "c8", []string{"f2", "t1", "c3"}, 10, "c3", 4},
		{"nearest wins", "c8", []string{"c1", "m1"}, 10, "m1", 3},
		{"beyond max distance", "c8", []string{"c2"}, 4, "", -1},
		{"exactly max distance", "c8", []string{"c2"}, 5, "c2", 5},
		{"max distance zero", "c8", []string{"m2"}, 0, "", -1},
		{"history ends", "c8", nil, 100, "", -1},
		{"from a branch", "f2", []string{"c2"}, 10, "c2", 3},
		{"by revision", "main~2", []string{"c3"}, 10, "c3", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			measured := map[string]bool{}
			for _, m := range tt.measured {
				measured[s.c[m]] = true
			}
			from := s.c[tt.from]
			if from == "" {
				from = tt.from
			}
			var asked int
			sha, d, err := r.NearestMeasured(from, tt.max, func(sha string) bool { asked++; return measured[sha] })
			want := s.c[tt.want]
			if err != nil || sha != want || d != tt.dist {
				t.Errorf("NearestMeasured = %.7s, %d, %v; want %.7s (%s), %d", sha, d, err, want, tt.want, tt.dist)
			}
			if asked > tt.max+1 {
				t.Errorf("has() called %d times, more than max distance + 1", asked)
			}
		})
	}
	if _, _, err := r.NearestMeasured("main", -1, func(string) bool { return true }); err == nil {
		t.Error("NearestMeasured with a negative distance: want an error")
	}
}

func TestShallowClone(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	parent := filepath.Dir(s.dir)
	url := "file://" + filepath.ToSlash(s.dir)

	shallow1 := filepath.Join(parent, "depth1")
	s.gitIn(parent, "clone", "-q", "--depth", "1", "--no-single-branch", url, shallow1)
	r1 := s.at(shallow1).open()
	if !r1.IsShallow() {
		t.Fatal("IsShallow() = false for a --depth 1 clone")
	}
	if head, err := r1.Head(); err != nil || head != s.c["c8"] {
		t.Errorf("Head() = %q, %v; want %q", head, err, s.c["c8"])
	}
	if c, err := r1.Commit("HEAD"); err != nil || c.Subject != "c8" {
		t.Errorf("Commit(HEAD) = %+v, %v", c, err)
	}
	expectShallow := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrShallow) {
			t.Errorf("%s: error = %v, want ErrShallow", what, err)
			return
		}
		var se *ShallowError
		if !errors.As(err, &se) || se.Commit == "" {
			t.Errorf("%s: error %v carries no boundary commit", what, err)
		}
		for _, want := range []string{"fetch-depth: 0", "actions/checkout", "git fetch --unshallow", "git fetch --deepen=N"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", what, err, want)
			}
		}
		if strings.Contains(err.Error(), "object not found") {
			t.Errorf("%s: error %q leaks go-git's object-not-found", what, err)
		}
	}
	_, err := r1.MergeBase("origin/main", "origin/feature")
	expectShallow("MergeBase", err)
	_, err = r1.Resolve("HEAD~1")
	expectShallow("Resolve(HEAD~1)", err)
	_, _, err = r1.NearestMeasured("HEAD", 10, func(string) bool { return false })
	expectShallow("NearestMeasured", err)
	got, err := r1.FirstParentAncestors("HEAD", 5)
	expectShallow("FirstParentAncestors", err)
	if len(got) != 1 || got[0] != s.c["c8"] {
		t.Errorf("FirstParentAncestors before the boundary = %v, want [c8]", got)
	}
	_, err = r1.IsAncestor("origin/feature", "HEAD")
	expectShallow("IsAncestor", err)
	// Found before the boundary: no error.
	if sha, d, err := r1.NearestMeasured("HEAD", 10, func(sha string) bool { return sha == s.c["c8"] }); err != nil || d != 0 || sha != s.c["c8"] {
		t.Errorf("NearestMeasured(HEAD measured) = %q, %d, %v", sha, d, err)
	}
	// A commit that was never fetched.
	_, err = r1.Resolve(s.c["c2"])
	if !errors.Is(err, ErrUnknownRevision) || !strings.Contains(err.Error(), "fetch-depth: 0") {
		t.Errorf("Resolve(unfetched SHA) error = %v, want an unknown revision that suggests fetch-depth: 0", err)
	}

	// Deep enough for the question: answers like a full clone.
	shallow4 := filepath.Join(parent, "depth4")
	s.gitIn(parent, "clone", "-q", "--depth", "4", "--no-single-branch", "--no-tags", url, shallow4)
	r4 := s.at(shallow4).open()
	if mb, err := r4.MergeBase("origin/main", "origin/topic"); err != nil || mb != s.c["t1"] {
		t.Errorf("depth 4: MergeBase(main, topic) = %.7s, %v; want t1 %.7s", mb, err, s.c["t1"])
	}
	if ok, err := r4.IsAncestor(s.c["m1"], "origin/main"); err != nil || !ok {
		t.Errorf("depth 4: IsAncestor(m1, main) = %v, %v; want true", ok, err)
	}
	if got, err := r4.FirstParentAncestors("origin/main", 3); err != nil || len(got) != 3 {
		t.Errorf("depth 4: FirstParentAncestors(main, 3) = %v, %v", got, err)
	}
	shallow2 := filepath.Join(parent, "depth2")
	s.gitIn(parent, "clone", "-q", "--depth", "2", "--no-single-branch", "--no-tags", url, shallow2)
	r2 := s.at(shallow2).open()
	_, err = r2.MergeBase("origin/main", "origin/pr")
	expectShallow("depth 2: MergeBase(main, pr)", err)
	// t1 was fetched (topic's tip) but main reaches it only through m2,
	// whose parents the clone cut: unknown here, not "no merge base".
	_, err = r2.MergeBase("origin/main", "origin/topic")
	expectShallow("depth 2: MergeBase(main, topic)", err)
	if mb, err := r2.MergeBase("origin/main", "origin/main~1"); err != nil || mb != s.c["m2"] {
		t.Errorf("depth 2: MergeBase(main, main~1) = %.7s, %v; want m2 %.7s", mb, err, s.c["m2"])
	}

	// git fetch --unshallow makes the same clone fully usable.
	s.at(shallow4).git("fetch", "-q", "--unshallow")
	rFull := s.at(shallow4).open()
	if mb, err := rFull.MergeBase("origin/main", "origin/pr"); err != nil || mb != s.c["c3"] {
		t.Errorf("after --unshallow: MergeBase(main, pr) = %.7s, %v; want c3", mb, err)
	}
}

func TestMissingObjectIsNotShallow(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	// Delete a loose commit object: a damaged, not a shallow, repository.
	id := s.c["c2"]
	if err := os.Remove(filepath.Join(s.dir, ".git", "objects", id[:2], id[2:])); err != nil {
		t.Fatal(err)
	}
	r := s.open()
	_, err := r.FirstParentAncestors("main", 100)
	if !errors.Is(err, ErrMissingObject) || errors.Is(err, ErrShallow) {
		t.Fatalf("error = %v, want ErrMissingObject and not ErrShallow", err)
	}
	if !strings.Contains(err.Error(), id[:12]) || !strings.Contains(err.Error(), "git fsck") {
		t.Errorf("error %q should name the commit and suggest git fsck", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	r := s.open()
	want, _ := r.MergeBase("main", "pr")
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() {
			for k := 0; k < 20; k++ {
				mb, err := r.MergeBase("main", "pr")
				if err == nil && mb != want {
					err = fmt.Errorf("MergeBase = %s, want %s", mb, want)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
