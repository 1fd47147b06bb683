package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestResolveMatchesGit(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	r := s.open()
	revs := []string{
		"HEAD", "@", "main", "refs/heads/main", "heads/main", "feature", "topic", "pr",
		"v1.0", "refs/tags/v1.0", "tags/v1.0", "v1.0^{}", "v1.0^{commit}", "light",
		s.c["c3"], strings.ToUpper(s.c["c3"]), s.c["c3"][:7], s.c["c3"][:4], s.c["m1"][:9],
		"main~3", "main~", "main^", "main^^", "HEAD~1^2", "main~1^2~1", "HEAD^0", "main~3^2",
		"v1.0~2", "light~1", "main~1^2^",
	}
	for _, rev := range revs {
		want := s.revParse(rev)
		got, err := r.Resolve(rev)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; git says %q", rev, got, err, want)
		}
	}
}

func TestResolveRemoteAndBranch(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	cloneDir := filepath.Join(filepath.Dir(s.dir), "clone")
	s.gitIn(filepath.Dir(s.dir), "clone", "-q", s.dir, cloneDir)
	c := s.at(cloneDir)
	r := c.open()
	for _, rev := range []string{"origin/main", "origin/feature", "remotes/origin/topic", "origin", "origin/HEAD~2"} {
		want := c.revParse(rev)
		if got, err := r.Resolve(rev); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; git says %q", rev, got, err, want)
		}
	}

	tests := []struct {
		name, sha, ref string
	}{
		{"main", s.c["c8"], "refs/heads/main"},
		{"feature", s.c["f2"], "refs/remotes/origin/feature"},
		{"v1.0", s.c["c3"], ""},
		{"origin/HEAD", s.c["c8"], "refs/remotes/origin/main"},
	}
	for _, tt := range tests {
		sha, ref, err := r.ResolveBranch(tt.name)
		if err != nil || sha != tt.sha || ref != tt.ref {
			t.Errorf("ResolveBranch(%q) = %q, %q, %v; want %q, %q", tt.name, sha, ref, err, tt.sha, tt.ref)
		}
	}
	_, _, err := r.ResolveBranch("release")
	if !errors.Is(err, ErrUnknownRevision) {
		t.Fatalf("ResolveBranch(release) error = %v, want ErrUnknownRevision", err)
	}
	for _, want := range []string{`"release"`, "refs/remotes/origin/release", "fetch-depth: 0", "git fetch origin release"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveBranch error %q does not mention %s", err, want)
		}
	}
	// Typos of local and remote-tracking branches get a suggestion.
	for typo, want := range map[string]string{"mian": `did you mean "main"?`, "featuer": `did you mean "feature"?`} {
		_, _, err := r.ResolveBranch(typo)
		if !errors.Is(err, ErrUnknownRevision) || !strings.Contains(err.Error(), want) {
			t.Errorf("ResolveBranch(%q) error = %v, want one saying %s", typo, err, want)
		}
	}
}

// TestResolveUpstream resolves @{u} in a clone whose branches track
// origin's, and a branch that tracks a local one, as git does; and checks
// the errors for a branch without upstream, a detached HEAD and reflog
// selectors.
func TestResolveUpstream(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	cloneDir := filepath.Join(filepath.Dir(s.dir), "clone")
	s.gitIn(filepath.Dir(s.dir), "clone", "-q", s.dir, cloneDir)
	c := s.at(cloneDir)
	c.git("branch", "-q", "--track", "work", "origin/feature")
	c.git("branch", "-q", "--no-track", "loc", "main")
	c.git("branch", "-q", "--set-upstream-to=main", "loc")
	c.git("branch", "-q", "--no-track", "nou", "main")
	// Move the local main away from its upstream, so @{u} != main.
	c.commit("local only", map[string]string{"local": "1"})
	r := c.open()
	for _, rev := range []string{"@{u}", "@{upstream}", "@{U}", "HEAD@{u}", "main@{u}", "main@{upstream}^", "work@{u}", "work@{u}~1", "loc@{u}"} {
		want := c.revParse(rev)
		if got, err := r.Resolve(rev); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; git says %q", rev, got, err, want)
		}
	}
	if got, _ := r.Resolve("@{u}"); got == c.revParse("main") {
		t.Fatalf("setup: main and its upstream are the same commit")
	}
	errs := []struct {
		rev  string
		want []string
	}{
		{"nou@{u}", []string{`branch "nou" has no upstream`, "git branch --set-upstream-to=origin/nou nou", "origin/main"}},
		{"nosuch@{u}", []string{`no local branch "nosuch"`, "origin/nosuch"}},
		{"@{u}x", []string{`unexpected "x" after @{u}`}},
		{"@{yesterday}", []string{"reflog selector @{yesterday} is unsupported", "only @{u}"}},
		{"main@{push}", []string{"reflog selector @{push} is unsupported"}},
		{"main@{u", []string{"unterminated @{"}},
	}
	for _, tt := range errs {
		_, err := r.Resolve(tt.rev)
		if !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("Resolve(%q) error = %v, want ErrUnknownRevision", tt.rev, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q) error %q does not mention %q", tt.rev, err, w)
			}
		}
	}
	// Upstream not fetched: the remote-tracking branch is gone.
	c.git("update-ref", "-d", "refs/remotes/origin/feature")
	r = c.open()
	if _, err := r.Resolve("work@{u}"); err == nil || !strings.Contains(err.Error(), "refs/remotes/origin/feature, which does not exist in this clone; run `git fetch origin`") {
		t.Errorf("Resolve(work@{u}) without origin/feature: %v", err)
	}
	// Detached HEAD, as CI checks out.
	c.git("checkout", "-q", "--detach", "HEAD")
	r = c.open()
	if _, err := r.Resolve("@{u}"); err == nil || !strings.Contains(err.Error(), "HEAD is detached") || !strings.Contains(err.Error(), "origin/main") {
		t.Errorf("Resolve(@{u}) on a detached HEAD: %v", err)
	}
}

func TestResolveFetchHead(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	cloneDir := filepath.Join(filepath.Dir(s.dir), "clone")
	s.gitIn(filepath.Dir(s.dir), "clone", "-q", s.dir, cloneDir)
	c := s.at(cloneDir)
	c.git("fetch", "-q", "origin", "topic")
	r := c.open()
	if got, err := r.Resolve("FETCH_HEAD"); err != nil || got != s.c["t1"] {
		t.Errorf("Resolve(FETCH_HEAD) = %q, %v; want %q", got, err, s.c["t1"])
	}
}

func TestResolveErrors(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	r := s.open()
	tree := s.git("rev-parse", "main^{tree}")
	tests := []struct {
		rev  string
		want []string
	}{
		{"nope", []string{`"nope"`, "not a branch, tag or commit", "git fetch"}},
		{"", []string{"empty revision"}},
		{"main~100", []string{`"main~100"`, "past the first commit", "smaller number"}},
		{"c8^2", []string{`"c8^2"`}},
		{"main^3", []string{`"main^3"`, "1 parent(s)", "^1"}},
		{"main..feature", []string{"unsupported revision syntax"}},
		{"main@{1}", []string{"reflog selector @{1} is unsupported", "git rev-parse main@{1}"}},
		{"@{-1}", []string{"reflog selector @{-1} is unsupported"}},
		{"HEAD:README.md", []string{"unsupported revision syntax"}},
		{"~3", []string{"missing the branch"}},
		{tree, []string{"names a tree", "not a commit"}},
		{strings.Repeat("ab", 20), []string{"is not in the repository", "git fetch origin"}},
		{"abcdef123", []string{"not a branch, tag or commit"}},
		{"bad*name", []string{"not a valid branch or tag name"}},
		{"../../config", []string{"unsupported revision syntax"}},
		{"refs/heads/.x", []string{"not a valid branch or tag name"}},
		{"config", []string{"not a branch, tag or commit"}},
		{"v1.0^{tree}", []string{"^{tree} is not supported"}},
		{"main^{", []string{"unterminated"}},
		{"main~99999999999999999999", []string{"too large"}},
	}
	for _, tt := range tests {
		got, err := r.Resolve(tt.rev)
		if err == nil {
			t.Errorf("Resolve(%q) = %q, want an error", tt.rev, got)
			continue
		}
		if !errors.Is(err, ErrUnknownRevision) {
			t.Errorf("Resolve(%q) error %v is not ErrUnknownRevision", tt.rev, err)
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q) error %q does not mention %q", tt.rev, err, w)
			}
		}
		if _, gitErr := s.run(s.dir, nil, "rev-parse", "--verify", "-q", tt.rev+"^{commit}"); gitErr == nil && tt.rev != "" && !strings.Contains(tt.rev, "@{") {
			t.Errorf("git resolves %q but Resolve does not", tt.rev)
		}
	}
}

// TestResolveAmbiguousShortSHA makes enough commits that two share a
// four-digit prefix, and checks both tools refuse it (and accept a longer
// one).
func TestResolveAmbiguousShortSHA(t *testing.T) {
	t.Parallel()
	r := newTestRepo(t)
	var stream strings.Builder
	for i := 1; i <= 800; i++ {
		msg := fmt.Sprintf("commit %d", i)
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata %d\n%s\n", i, baseTime+i, len(msg), msg)
		if i > 1 {
			fmt.Fprintf(&stream, "from :%d\n", i-1)
		}
	}
	r.fastImport([]byte(stream.String()))
	all := strings.Fields(r.git("rev-list", "--all"))
	sort.Strings(all)
	var a, b string
	for i := 1; i < len(all); i++ {
		if all[i][:4] == all[i-1][:4] {
			a, b = all[i-1], all[i]
			break
		}
	}
	if a == "" {
		t.Fatal("no two commits share a 4-digit prefix; make more commits")
	}
	prefix := a[:4]
	// Other objects (trees) may share the prefix too; only commits count.
	repo := r.open()
	_, err := repo.Resolve(prefix)
	if err == nil || !strings.Contains(err.Error(), "ambiguous") || !strings.Contains(err.Error(), a[:12]) || !strings.Contains(err.Error(), b[:12]) {
		t.Errorf("Resolve(%q) error = %v, want an ambiguity error listing %s and %s", prefix, err, a[:12], b[:12])
	}
	if _, gitErr := r.run(r.dir, nil, "rev-parse", "--verify", "-q", prefix+"^{commit}"); gitErr == nil {
		t.Errorf("git resolves ambiguous %q", prefix)
	}
	n := 5
	for a[:n] == b[:n] {
		n++
	}
	if got, err := repo.Resolve(a[:n]); err != nil || got != a {
		t.Errorf("Resolve(%q) = %q, %v; want %q", a[:n], got, err, a)
	}
	if got := repo.Short(a); len(got) < n || !strings.HasPrefix(a, got) {
		t.Errorf("Short(%s) = %q, want a unique prefix of at least %d digits", a, got, n)
	}
}

func TestResolveLooseAndPacked(t *testing.T) {
	t.Parallel()
	s := newSample(t)
	// Pack half the history, leave the rest loose, add packed refs.
	s.git("repack", "-q", "-d")
	s.git("pack-refs", "--all")
	s.commit("loose one", map[string]string{"x": "1"})
	s.git("tag", "-a", "-m", "loose tag", "v2.0")
	r := s.open()
	for _, rev := range []string{"HEAD", "HEAD~1", "v2.0", "v1.0", "feature", s.c["c2"][:6]} {
		want := s.revParse(rev)
		if got, err := r.Resolve(rev); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; git says %q", rev, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(s.dir, ".git", "packed-refs")); err != nil {
		t.Fatalf("expected packed-refs: %v", err)
	}
}

func TestValidRefName(t *testing.T) {
	for _, ok := range []string{"main", "feature/x", "v1.0", "HEAD", "release-2024.01", "a@b"} {
		if err := validRefName(ok); err != nil {
			t.Errorf("validRefName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "/main", "main/", "a//b", "a..b", "a.lock", "a.", ".hidden", "x/.y", "a b", "a~b", "a^b", "a:b", "a?b", "a*b", "a[b", `a\b`, "@", "a@{b", "a\x01b"} {
		if err := validRefName(bad); err == nil {
			t.Errorf("validRefName(%q) = nil, want an error", bad)
		}
	}
}
