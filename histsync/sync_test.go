package histsync

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/perfgate/perfgate/store"
)

// gitEnv isolates the git CLI from the user's configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+home, "GIT_TERMINAL_PROMPT=0",
	)
}

func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// world is a bare remote made with the git CLI and clones of it.
type world struct {
	t      testing.TB
	root   string
	remote string // file:// URL
	bare   string
	code   []string // the code's commits, oldest first
}

func newWorld(t testing.TB) *world {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs the git CLI")
	}
	root := t.TempDir()
	w := &world{t: t, root: root, bare: filepath.Join(root, "remote.git")}
	runGit(t, root, "init", "-q", "--bare", "-b", "main", w.bare)
	w.remote = "file://" + w.bare
	seed := filepath.Join(root, "seed")
	runGit(t, root, "init", "-q", "-b", "main", seed)
	for i := 0; i < 3; i++ {
		if err := os.WriteFile(filepath.Join(seed, "code.txt"), []byte(fmt.Sprint(i)), 0o644); err != nil {
			t.Fatal(err)
		}
		runGit(t, seed, "add", ".")
		runGit(t, seed, "commit", "-q", "-m", fmt.Sprint("code ", i))
		w.code = append(w.code, runGit(t, seed, "rev-parse", "HEAD"))
	}
	runGit(t, seed, "push", "-q", w.remote, "main")
	return w
}

// clone makes a clone with its own history file.
type clone struct {
	dir string
	st  *store.Store
}

func (w *world) clone(name string, extra ...string) *clone {
	w.t.Helper()
	dir := filepath.Join(w.root, name)
	runGit(w.t, w.root, append(append([]string{"clone", "-q"}, extra...), w.remote, dir)...)
	st, err := store.Open(filepath.Join(dir, ".perfgate", "history.db"), store.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { st.Close() })
	return &clone{dir: dir, st: st}
}

// put stores n runs of bench at the code commit i, distinct by value.
func (c *clone) put(t testing.TB, bench string, commit string, n int, dirty bool) []string {
	t.Helper()
	runs := make([]store.Run, n)
	for i := range runs {
		runs[i] = store.Run{
			Commit: commit, Benchmark: bench,
			Time:    time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC),
			Metrics: map[string]float64{"mean_ttft_ms": 100 + float64(i)},
			Labels:  map[string]string{"hardware": "910B3"},
			Source:  store.Source{Format: "generic", File: fmt.Sprintf("%s-%d.json", bench, i)},
			Dirty:   dirty,
		}
	}
	if _, err := c.st.Put(runs); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range runs {
		ids[i] = runs[i].ID
	}
	return ids
}

func (c *clone) ids(t testing.TB) []string {
	t.Helper()
	var ids []string
	if err := c.st.Each(store.Filter{}, func(r store.Run) error { ids = append(ids, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

func (c *clone) sync(t testing.TB, opts Options) *Result {
	t.Helper()
	res, err := Sync(context.Background(), c.dir, c.st, opts)
	if err != nil {
		t.Fatalf("sync %s: %v", filepath.Base(c.dir), err)
	}
	return res
}

// runsAt lists the run ids in the files of the data branch at rev of the
// remote, with the git CLI.
func (w *world) runsAt(rev string) []string {
	w.t.Helper()
	var ids []string
	for _, l := range strings.Split(runGit(w.t, w.bare, "ls-tree", "-r", rev), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[1] != "blob" || !(strings.HasSuffix(f[3], ".jsonl") || strings.HasPrefix(f[3], "runs/") || strings.HasPrefix(f[3], "unreadable/")) {
			continue
		}
		for _, line := range strings.Split(runGit(w.t, w.bare, "cat-file", "blob", f[2]), "\n") {
			if k, ok := keyOf([]byte(line)); ok {
				ids = append(ids, k.ID)
			}
		}
	}
	return sortedUnion(ids)
}

// remoteRuns lists the run ids on the remote's data branch.
func (w *world) remoteRuns() []string { return w.runsAt(DefaultBranch) }

// onlyAdds checks that no commit of the branch lost a run: every run of
// every commit is at the tip.
func (w *world) onlyAdds() {
	w.t.Helper()
	tip := w.remoteRuns()
	have := map[string]bool{}
	for _, id := range tip {
		have[id] = true
	}
	for _, c := range strings.Split(runGit(w.t, w.bare, "rev-list", DefaultBranch), "\n") {
		for _, id := range w.runsAt(c) {
			if !have[id] {
				w.t.Errorf("run %s of commit %s is not at the tip", id, c)
			}
		}
	}
}

func sortedUnion(lists ...[]string) []string {
	set := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			set[s] = true
		}
	}
	var out []string
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func TestSyncBetweenTwoClones(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	b := w.clone("b", "--depth", "1") // actions/checkout's default shallow clone

	idsA := a.put(t, "serving", w.code[1], 3, false)
	res := a.sync(t, Options{})
	if res.Pushed != 3 || res.Pulled != 0 || res.Attempts != 1 || res.Files != 1 || res.Format != FormatVersion {
		t.Errorf("first push: %+v", res)
	}
	if got := w.remoteRuns(); !equal(got, sortedUnion(idsA)) {
		t.Errorf("remote has %v, want %v", got, idsA)
	}
	readme := runGit(t, w.bare, "show", DefaultBranch+":README.md")
	if !strings.Contains(readme, "perfgate history") {
		t.Errorf("README.md: %q", readme)
	}

	// b gets CI's runs, adds its own and pushes them.
	res = b.sync(t, Options{})
	if res.Pulled != 3 || res.Pushed != 0 {
		t.Errorf("b's first sync: %+v", res)
	}
	idsB := b.put(t, "serving", w.code[2], 2, false)
	b.put(t, "serving", w.code[2], 1, true) // a dirty run stays local
	res = b.sync(t, Options{})
	if res.Pushed != 2 || res.Dirty != 1 || res.Files != 2 {
		t.Errorf("b's push: %+v", res)
	}

	// a pulls b's runs; nothing left to push; a second sync is a no-op.
	res = a.sync(t, Options{})
	if res.Pulled != 2 || res.Pushed != 0 {
		t.Errorf("a's pull: %+v", res)
	}
	res = a.sync(t, Options{})
	if res.Pulled != 0 || res.Pushed != 0 || res.Attempts != 0 {
		t.Errorf("idempotent sync: %+v", res)
	}
	all := sortedUnion(idsA, idsB)
	if got := a.ids(t); !equal(got, all) {
		t.Errorf("a has %v, want %v", got, all)
	}
	if got := w.remoteRuns(); !equal(got, all) {
		t.Errorf("remote has %v, want %v", got, all)
	}
	if n := runGit(t, w.bare, "rev-list", "--count", DefaultBranch); n != "2" {
		t.Errorf("%s commits on the branch, want 2 (one per push)", n)
	}
	w.onlyAdds()
	// The objects pushed and kept locally are sound.
	runGit(t, w.bare, "fsck", "--no-progress", "--strict")
	runGit(t, a.dir, "fsck", "--no-progress")
	if tip := runGit(t, a.dir, "rev-parse", "refs/remotes/origin/"+DefaultBranch); tip != runGit(t, w.bare, "rev-parse", DefaultBranch) {
		t.Errorf("a's tracking ref %s is not the remote's tip", tip)
	}
	// The data branch shares nothing with the code.
	if out := runGit(t, w.bare, "rev-list", "--max-parents=0", DefaultBranch); strings.Contains(out, w.code[0]) {
		t.Errorf("the data branch descends from the code")
	}

	// A clone with no history rebuilds its index from the branch.
	c := w.clone("c")
	if res := c.sync(t, Options{NoPush: true}); res.Pulled != 5 {
		t.Errorf("rebuild: %+v", res)
	}
	if got := c.ids(t); !equal(got, all) {
		t.Errorf("rebuilt history %v, want %v", got, all)
	}
	// The imported runs are identical to the pushed ones.
	var ra, rc []store.Run
	a.st.Each(store.Filter{}, func(r store.Run) error { ra = append(ra, r); return nil })
	c.st.Each(store.Filter{}, func(r store.Run) error { rc = append(rc, r); return nil })
	byID := func(rs []store.Run) { sort.Slice(rs, func(i, j int) bool { return rs[i].ID < rs[j].ID }) }
	byID(ra)
	byID(rc)
	if len(ra) != 5 || fmt.Sprint(ra) != fmt.Sprint(rc) {
		t.Errorf("runs changed on the way:\n%v\n%v", ra, rc)
	}
}

// TestSyncLosesTheRace makes another clone push between a's fetch and
// a's push: a's push is refused, a fetches, rebuilds and wins the retry.
func TestSyncLosesTheRace(t *testing.T) {
	w := newWorld(t)
	a, b := w.clone("a"), w.clone("b")
	idsA := a.put(t, "serving", w.code[1], 4, false)
	idsB := b.put(t, "serving", w.code[2], 3, false)
	fired := false
	testHookBeforePush = func() {
		if !fired {
			fired = true
			testHookBeforePush = nil
			b.sync(t, Options{}) // b pushes first
		}
	}
	t.Cleanup(func() { testHookBeforePush = nil })
	res := a.sync(t, Options{})
	if !fired || res.Attempts != 2 || res.Pushed != 4 || res.Pulled != 3 {
		t.Errorf("a's sync: %+v (hook fired %v)", res, fired)
	}
	all := sortedUnion(idsA, idsB)
	if got := w.remoteRuns(); !equal(got, all) {
		t.Errorf("remote has %d runs, want %d", len(got), len(all))
	}
	w.onlyAdds()
}

// TestSyncConcurrentPushers races two clones pushing in rounds from
// goroutines: every run ends up on the remote and in both histories.
func TestSyncConcurrentPushers(t *testing.T) {
	w := newWorld(t)
	clones := []*clone{w.clone("a"), w.clone("b")}
	const rounds, perRound = 4, 5
	var mu sync.Mutex
	var want []string
	retries := 0
	var wg sync.WaitGroup
	for ci, c := range clones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				ids := c.put(t, fmt.Sprintf("bench-%d-%d", ci, r), w.code[r%len(w.code)], perRound, false)
				res, err := Sync(context.Background(), c.dir, c.st, Options{MaxAttempts: 20})
				if err != nil {
					t.Errorf("clone %d round %d: %v", ci, r, err)
					return
				}
				mu.Lock()
				want = append(want, ids...)
				retries += res.Attempts - 1
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, c := range clones {
		c.sync(t, Options{})
	}
	all := sortedUnion(want)
	if len(all) != 2*rounds*perRound {
		t.Fatalf("%d runs made, want %d", len(all), 2*rounds*perRound)
	}
	if got := w.remoteRuns(); !equal(got, all) {
		t.Errorf("remote has %d runs, want %d", len(got), len(all))
	}
	for i, c := range clones {
		if got := c.ids(t); !equal(got, all) {
			t.Errorf("clone %d has %d runs, want %d", i, len(got), len(all))
		}
	}
	w.onlyAdds()
	t.Logf("%d pushes were refused because the other clone pushed first, and retried", retries)
}

func TestSyncSkipsBadFiles(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	ids := a.put(t, "serving", w.code[0], 2, false)
	a.sync(t, Options{})
	// Someone commits broken files to the branch with the git CLI.
	x := filepath.Join(w.root, "x")
	runGit(t, w.root, "clone", "-q", "-b", DefaultBranch, w.remote, x)
	for name, body := range map[string]string{
		"runs/ab/abababababababababababababababab.json": `{"id":"abababababababababababababababab","commit":"nope"}`,
		"runs/cd/cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd.json": "{}\n{}\n",
	} {
		os.MkdirAll(filepath.Join(x, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(x, name), []byte(body), 0o644)
	}
	runGit(t, x, "add", ".")
	runGit(t, x, "commit", "-q", "-m", "broken")
	runGit(t, x, "push", "-q", "origin", DefaultBranch)

	b := w.clone("b")
	res := b.sync(t, Options{})
	if res.Pulled != 2 || len(res.Skipped) != 2 {
		t.Errorf("sync over broken files: %+v", res)
	}
	if s := strings.Join(res.Skipped, "\n"); !strings.Contains(s, "runs/ab/abab") || !strings.Contains(s, "exactly one JSONL line") {
		t.Errorf("skipped: %s", s)
	}
	if got := b.ids(t); !equal(got, sortedUnion(ids)) {
		t.Errorf("b has %v, want %v", got, ids)
	}
}

func TestSyncErrors(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	a.put(t, "serving", w.code[0], 1, false)
	tests := []struct {
		name string
		opts Options
		kind error
		want string
	}{
		{"unknown remote", Options{Remote: "upstream"}, ErrConfig, `no remote "upstream" to sync with (this repository has: origin)`},
		{"bad branch", Options{Branch: "a..b"}, ErrConfig, `branch "a..b" is not a valid branch name`},
		{"code branch", Options{Branch: "main"}, ErrConfig, "branch main on origin is not a perfgate history (no FORMAT file or runs/ directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Sync(context.Background(), a.dir, a.st, tt.opts)
			if !errors.Is(err, tt.kind) || !strings.Contains(fmt.Sprint(err), tt.want) {
				t.Errorf("error %v, want %v containing %q", err, tt.kind, tt.want)
			}
		})
	}
	// An unreachable remote is the environment.
	runGit(t, a.dir, "remote", "add", "gone", "file://"+filepath.Join(w.root, "missing.git"))
	_, err := Sync(context.Background(), a.dir, a.st, Options{Remote: "gone"})
	if !errors.Is(err, ErrRemote) {
		t.Errorf("unreachable remote: %v", err)
	}
}

func TestInitialAuth(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	basic := "AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:from-checkout"))
	runGit(t, a.dir, "config", "http.https://github.example/.extraheader", basic)
	runGit(t, a.dir, "config", "http.http://github.example/.extraheader", basic)
	tests := []struct {
		name, url string
		opts      Options
		want      string // "user:pass", or "" for none
	}{
		{"token for its host", "https://github.example/o/r.git", Options{Token: "tok", TokenHost: "github.example"}, "x-access-token:tok"},
		{"token never sent to another host", "https://gitlab.example/o/r.git", Options{Token: "tok", TokenHost: "github.example"}, ""},
		{"a host with a port", "http://127.0.0.1:8080/o/r.git", Options{Token: "tok", TokenHost: "127.0.0.1:8080"}, "x-access-token:tok"},
		{"the default port", "https://github.example:443/o/r.git", Options{Token: "tok", TokenHost: "github.example"}, "x-access-token:tok"},
		{"another port", "http://127.0.0.1:9090/o/r.git", Options{Token: "tok", TokenHost: "127.0.0.1:8080"}, ""},
		{"never over plain http", "http://github.example/o/r.git", Options{Token: "tok", TokenHost: "github.example"}, ""},
		{"no checkout header over plain http", "http://github.example/o/r.git", Options{}, ""},
		{"actions/checkout's header", "https://github.example/o/r.git", Options{}, "x-access-token:from-checkout"},
		{"credentials in the URL", "https://u:p@github.example/o/r.git", Options{Token: "tok", TokenHost: "github.example"}, ""},
		{"ssh", "git@github.example:o/r.git", Options{Token: "tok", TokenHost: "github.example"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &syncer{dir: a.dir, url: tt.url, opts: tt.opts}
			got := ""
			if ba, ok := s.initialAuth(context.Background()).(*githttp.BasicAuth); ok {
				got = ba.Username + ":" + ba.Password
			}
			if got != tt.want {
				t.Errorf("auth %q, want %q", got, tt.want)
			}
		})
	}
	if a, ok := headerAuth("Authorization: Bearer abc").(*githttp.TokenAuth); !ok || a.Token != "abc" {
		t.Errorf("bearer header: %v", a)
	}
	for _, h := range []string{"X-Other: basic eA==", "AUTHORIZATION: basic !!!", "AUTHORIZATION: digest x"} {
		if headerAuth(h) != nil {
			t.Errorf("headerAuth(%q) accepted", h)
		}
	}
}

// TestCredentialFill: git's credential helpers of the user's global
// configuration answer; one that the repository's own configuration names
// (earlier pull-request code can write .git/config) never runs, and no
// helper sees perfgate's tokens.
func TestCredentialFill(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	marker := filepath.Join(t.TempDir(), "local-helper-ran")
	runGit(t, a.dir, "config", "credential.helper", "!f() { env > '"+marker+"'; echo username=local-user; echo password=local-pass; }; f")
	global := filepath.Join(t.TempDir(), "gitconfig")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GITHUB_TOKEN", "ghs_secret")
	u, _ := url.Parse("https://github.example/o/r.git")
	if _, _, ok := credentialFill(context.Background(), a.dir, u); ok {
		t.Errorf("credentialFill answered with no global helper")
	}
	envFile := filepath.Join(t.TempDir(), "global-helper-env")
	runGit(t, a.dir, "config", "--file", global, "credential.helper", "!f() { env > '"+envFile+"'; test \"$1\" = get && echo username=helper-user && echo password=helper-pass; }; f")
	user, pass, ok := credentialFill(context.Background(), a.dir, u)
	if !ok || user != "helper-user" || pass != "helper-pass" {
		t.Errorf("credentialFill = %q %q %v, want the global helper's", user, pass, ok)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the repository's own credential helper ran")
	}
	if env, err := os.ReadFile(envFile); err != nil || strings.Contains(string(env), "ghs_secret") {
		t.Errorf("the global helper's environment (err %v) holds GITHUB_TOKEN", err)
	}
}

// TestSyncOpenNoLockAcrossNetwork: SyncOpen holds the history only while
// it reads or writes it; while the push goes out, another process (a
// perfgate run that just finished) opens it for writing at once, and its
// runs are pushed by the next sync. Before, sync held the lock during all
// its network I/O and a finished run waited 10 s, then failed.
func TestSyncOpenNoLockAcrossNetwork(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	a.put(t, "serving", w.code[1], 3, false)
	path := filepath.Join(a.dir, ".perfgate", "history.db")
	a.st.Close()
	open := func() (*store.Store, func(), error) {
		st, err := store.Open(path, store.Options{})
		if err != nil {
			return nil, nil, err
		}
		return st, func() { st.Close() }, nil
	}
	var during []string
	testHookBeforePush = func() {
		testHookBeforePush = nil
		st, err := store.Open(path, store.Options{Timeout: 200 * time.Millisecond})
		if err != nil {
			t.Errorf("the history was locked during the push: %v", err)
			return
		}
		defer st.Close()
		c := &clone{dir: a.dir, st: st}
		during = c.put(t, "serving", w.code[2], 2, false)
	}
	t.Cleanup(func() { testHookBeforePush = nil })
	res, err := SyncOpen(context.Background(), a.dir, open, Options{})
	if err != nil || res.Pushed != 3 {
		t.Fatalf("sync: %+v, %v", res, err)
	}
	if len(during) != 2 {
		t.Fatal("no run was stored during the push")
	}
	res, err = SyncOpen(context.Background(), a.dir, open, Options{})
	if err != nil || res.Pushed != 2 {
		t.Errorf("the next sync: %+v, %v; want the 2 runs stored during the push pushed", res, err)
	}
}

// TestInterruptedPullPushesNothingBack: a pull stopped after its first
// write (as kill -9 would stop it) leaves the runs it stored marked as on
// the branch, so the next sync pushes only the clone's own run, not the
// thousands it had pulled.
func TestInterruptedPullPushesNothingBack(t *testing.T) {
	w := newWorld(t)
	a, b := w.clone("a"), w.clone("b")
	a.put(t, "serving", w.code[0], 10, false)
	a.sync(t, Options{})
	b.sync(t, Options{})
	a.put(t, "serving", w.code[1], importBatch+500, false)
	a.sync(t, Options{})
	afterPulledWrite = func() error { return errors.New("killed") }
	_, err := Sync(context.Background(), b.dir, b.st, Options{})
	afterPulledWrite = nil
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the interrupted sync returned %v", err)
	}
	if n := len(b.ids(t)); n <= 10 || n >= 10+importBatch+500 {
		t.Fatalf("b holds %d runs: the pull did not stop halfway", n)
	}
	b.put(t, "serving", w.code[2], 1, false)
	res := b.sync(t, Options{})
	if res.Pushed != 1 {
		t.Errorf("the sync after the interrupted pull pushed %d runs, want 1 (its own)", res.Pushed)
	}
	if got, want := len(w.remoteRuns()), 10+importBatch+500+1; got != want {
		t.Errorf("the branch holds %d runs, want %d", got, want)
	}
}

// A line of the branch whose id is not its content's is refused: a forged
// line that copies a genuine run's id, in a file that sorts first, must
// not stand in for the genuine run (which a clone would then skip as
// known).
func TestSyncRefusesForgedID(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	ids := a.put(t, "serving", w.code[0], 1, false)
	a.sync(t, Options{})
	runs, err := a.st.ByCommit(w.code[0])
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs at the commit: %v, %v", runs, err)
	}
	forged := runs[0]
	forged.Metrics = map[string]float64{"mean_ttft_ms": 1}
	line := store.AppendJSON(nil, &forged)

	x := filepath.Join(w.root, "x")
	runGit(t, w.root, "clone", "-q", "-b", DefaultBranch, w.remote, x)
	name := filepath.Join(x, "log", "0", "0000000000000000.jsonl")
	if err := os.WriteFile(name, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	runGit(t, x, "add", ".")
	runGit(t, x, "commit", "-q", "-m", "forged")
	runGit(t, x, "push", "-q", "origin", DefaultBranch)

	b := w.clone("b")
	res := b.sync(t, Options{NoPush: true})
	if s := strings.Join(res.Skipped, "\n"); !strings.Contains(s, "0000000000000000.jsonl:1") || !strings.Contains(s, "does not match the run's content") {
		t.Errorf("the forged line is not reported: %q", s)
	}
	got, err := b.st.ByCommit(w.code[0])
	if err != nil || len(got) != 1 || got[0].ID != ids[0] || got[0].Metrics["mean_ttft_ms"] != 100 {
		t.Fatalf("clone b holds %+v (%v); want the genuine run %s with 100", got, err, ids[0])
	}
}

// TestNoRepushAfterPullOnly: a pull-only sync never leaves a mark that
// makes the next sync push runs the branch has (duplicate lines): after
// the first push, which made the branch on a new remote, and on a store
// without a mark whose runs are already on the branch.
func TestNoRepushAfterPullOnly(t *testing.T) {
	lines := func(w *world) int {
		n := 0
		for _, l := range strings.Split(runGit(t, w.bare, "ls-tree", "-r", DefaultBranch), "\n") {
			if f := strings.Fields(l); len(f) == 4 && f[1] == "blob" {
				for _, line := range strings.Split(runGit(t, w.bare, "cat-file", "blob", f[2]), "\n") {
					if _, ok := keyOf([]byte(line)); ok {
						n++
					}
				}
			}
		}
		return n
	}
	t.Run("first push on a new remote", func(t *testing.T) {
		w := newWorld(t)
		a := w.clone("a")
		a.put(t, "serving", w.code[1], 3, false)
		if res := a.sync(t, Options{}); res.Pushed != 3 {
			t.Fatalf("first push: %d runs, want 3", res.Pushed)
		}
		a.put(t, "serving", w.code[2], 1, false)
		a.sync(t, Options{NoPush: true})
		if res := a.sync(t, Options{}); res.Pushed != 1 {
			t.Errorf("pushed %d runs, want the 1 new one", res.Pushed)
		}
		if n, runs := lines(w), len(w.remoteRuns()); n != 4 || runs != 4 {
			t.Errorf("the branch holds %d lines of %d runs, want 4 of 4", n, runs)
		}
	})
	t.Run("no mark, runs on the branch", func(t *testing.T) {
		w := newWorld(t)
		a, b := w.clone("a"), w.clone("b")
		a.put(t, "serving", w.code[1], 3, false)
		a.sync(t, Options{})
		b.put(t, "serving", w.code[1], 3, false) // the same runs, stored in b too
		b.sync(t, Options{NoPush: true})
		if res := b.sync(t, Options{}); res.Pushed != 0 {
			t.Errorf("pushed %d runs the branch has", res.Pushed)
		}
		if n := lines(w); n != 3 {
			t.Errorf("the branch holds %d lines, want 3", n)
		}
	})
}
