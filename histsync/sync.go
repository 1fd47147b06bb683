package histsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/perfgate/perfgate/store"
)

// Defaults of Options.
const (
	DefaultRemote      = "origin"
	DefaultBranch      = "perfgate-history"
	DefaultMaxAttempts = 8
)

// Options configure Sync.
type Options struct {
	Remote string // the remote's name; "": DefaultRemote
	Branch string // the data branch; "": DefaultBranch
	NoPull bool   // do not import the branch's runs into the store
	NoPush bool   // do not push the store's runs

	// Token authenticates HTTPS fetches and pushes to TokenHost (a host
	// name, e.g. github.com); it is sent to no other host.
	Token     string
	TokenHost string

	// MaxAttempts bounds the pushes when other runners push first; 0:
	// DefaultMaxAttempts.
	MaxAttempts int
	// Log, when set, receives progress lines.
	Log func(format string, args ...any)
	// Now is the clock for commit times; nil: time.Now.
	Now func() time.Time
}

// Result is what Sync did.
type Result struct {
	Remote, Branch string
	URL            string // the remote's URL, without credentials
	Tip            string // the branch's commit after the sync; "" when it does not exist
	OnBranch       int    // runs on the branch after the sync
	Pulled         int    // runs imported into the store
	Pushed         int    // runs added to the branch
	Attempts       int    // pushes tried (more than one when others pushed first)
	Dirty          int    // dirty runs that were not pushed
	Skipped        []string
}

// Errors Sync matches with errors.Is, so callers can map them.
var (
	// ErrConfig: the remote or branch named does not exist or is not a
	// perfgate history branch (bad input).
	ErrConfig = errors.New("sync configuration")
	// ErrRemote: the remote could not be reached, refused the
	// credentials, or kept changing (the environment).
	ErrRemote = errors.New("remote unavailable")
)

type syncError struct {
	kind error
	msg  string
}

func (e *syncError) Error() string        { return e.msg }
func (e *syncError) Is(target error) bool { return target == e.kind }

func configErrorf(format string, args ...any) error {
	return &syncError{kind: ErrConfig, msg: fmt.Sprintf(format, args...)}
}

func remoteErrorf(format string, args ...any) error {
	return &syncError{kind: ErrRemote, msg: fmt.Sprintf(format, args...)}
}

// testHookBeforePush, when set by a test, runs between building a commit
// and pushing it, to let another clone push first.
var testHookBeforePush func()

// syncer is one Sync.
type syncer struct {
	repo   *git.Repository
	dir    string
	remote *git.Remote
	url    string
	opts   Options
	auth   transport.AuthMethod
	track  plumbing.ReferenceName
	branch plumbing.ReferenceName
	helper bool // the credential helper was asked already
}

// Sync pulls the data branch's runs into st and pushes st's runs to it;
// dir is the repository (any directory of its working tree, or a bare
// repository). st must be writable unless opts.NoPull.
func Sync(ctx context.Context, dir string, st *store.Store, opts Options) (*Result, error) {
	if opts.Remote == "" {
		opts.Remote = DefaultRemote
	}
	if opts.Branch == "" {
		opts.Branch = DefaultBranch
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	if err := plumbing.NewBranchReferenceName(opts.Branch).Validate(); err != nil || strings.HasPrefix(opts.Branch, "refs/") {
		return nil, configErrorf("branch %q is not a valid branch name; use a plain name such as %s", opts.Branch, DefaultBranch)
	}
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, configErrorf("cannot open the git repository at %q: %v", dir, err)
	}
	rem, err := repo.Remote(opts.Remote)
	if err != nil {
		var names []string
		if rs, lerr := repo.Remotes(); lerr == nil {
			for _, r := range rs {
				names = append(names, r.Config().Name)
			}
		}
		hint := "add one with git remote add origin URL"
		if len(names) > 0 {
			hint = "this repository has: " + strings.Join(names, ", ")
		}
		return nil, configErrorf("no remote %q to sync with (%s); pass --remote NAME", opts.Remote, hint)
	}
	s := &syncer{
		repo: repo, dir: dir, remote: rem, url: rem.Config().URLs[0], opts: opts,
		track:  plumbing.NewRemoteReferenceName(opts.Remote, opts.Branch),
		branch: plumbing.NewBranchReferenceName(opts.Branch),
	}
	s.auth = s.initialAuth(ctx)
	res := &Result{Remote: opts.Remote, Branch: opts.Branch, URL: redactURL(s.url)}

	var backoff time.Duration = 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		tip, err := s.fetch(ctx)
		if err != nil {
			return res, err
		}
		state, err := s.read(tip)
		if err != nil {
			return res, err
		}
		res.Tip, res.OnBranch = hashString(tip), len(state.files)
		if !opts.NoPull {
			if err := s.pull(st, state, res); err != nil {
				return res, err
			}
		}
		if opts.NoPush {
			return res, nil
		}
		runs, dirty, err := unpushed(st, state)
		if err != nil {
			return res, err
		}
		res.Dirty = dirty
		if len(runs) == 0 {
			return res, nil
		}
		objs, commit, err := s.build(state, runs)
		if err != nil {
			return res, err
		}
		res.Attempts = attempt
		if testHookBeforePush != nil {
			testHookBeforePush()
		}
		perr := s.push(ctx, tip, commit, objs)
		if perr == nil {
			if err := s.keep(objs, commit); err != nil {
				return res, err
			}
			res.Tip, res.Pushed, res.OnBranch = commit.String(), len(runs), len(state.files)+len(runs)
			opts.Log("pushed %d run%s to %s %s (%s)", len(runs), plural(len(runs)), opts.Remote, opts.Branch, commit.String()[:12])
			return res, nil
		}
		if errors.Is(perr, ErrConfig) || isAuthError(perr) {
			return res, perr
		}
		// Did another runner push first? Then fetch, merge and retry.
		now, ferr := s.lsRemote(ctx)
		if ferr != nil {
			return res, ferr
		}
		if now == tip {
			return res, remoteErrorf("push to %s (%s) %s failed: %v; the remote refused it (a hook or branch protection?): let this account push to %s, or sync with --pull-only. The runs stay in the local history and the next sync pushes them", opts.Remote, redactURL(s.url), opts.Branch, perr, opts.Branch)
		}
		if attempt >= opts.MaxAttempts {
			return res, remoteErrorf("push to %s %s: other pushes kept arriving first (%d attempts); run perfgate sync again", opts.Remote, opts.Branch, attempt)
		}
		opts.Log("%s %s moved while pushing (another runner pushed first); fetching and retrying", opts.Remote, opts.Branch)
		wait := backoff/2 + rand.N(backoff/2+1)
		backoff = min(backoff*2, 2*time.Second)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
}

// fetch updates the tracking ref from the remote and returns the branch's
// tip, or the zero hash when the remote has no such branch.
func (s *syncer) fetch(ctx context.Context) (plumbing.Hash, error) {
	spec := config.RefSpec(fmt.Sprintf("+%s:%s", s.branch, s.track))
	var err error
	for {
		err = s.remote.FetchContext(ctx, &git.FetchOptions{
			RemoteName: s.opts.Remote, RefSpecs: []config.RefSpec{spec}, Auth: s.auth, Tags: git.NoTags,
		})
		if isAuthError(err) && s.askHelper(ctx) {
			continue
		}
		break
	}
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
	case errors.Is(err, git.NoMatchingRefSpecError{}), errors.Is(err, transport.ErrEmptyRemoteRepository):
		s.opts.Log("%s has no branch %s yet", s.opts.Remote, s.opts.Branch)
		return plumbing.ZeroHash, nil
	default:
		return plumbing.ZeroHash, s.transportError("fetch from", err)
	}
	ref, err := s.repo.Reference(s.track, true)
	if err != nil {
		return plumbing.ZeroHash, remoteErrorf("fetched %s %s but cannot read %s: %v", s.opts.Remote, s.opts.Branch, s.track, err)
	}
	return ref.Hash(), nil
}

// lsRemote returns the branch's tip on the remote without fetching.
func (s *syncer) lsRemote(ctx context.Context) (plumbing.Hash, error) {
	refs, err := s.remote.ListContext(ctx, &git.ListOptions{Auth: s.auth})
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return plumbing.ZeroHash, nil
	}
	if err != nil {
		return plumbing.ZeroHash, s.transportError("list the branches of", err)
	}
	for _, r := range refs {
		if r.Name() == s.branch {
			return r.Hash(), nil
		}
	}
	return plumbing.ZeroHash, nil
}

func (s *syncer) transportError(what string, err error) error {
	msg := fmt.Sprintf("cannot %s %s (%s): %v", what, s.opts.Remote, redactURL(s.url), err)
	switch {
	case isAuthError(err):
		msg += "; give credentials: in GitHub Actions keep actions/checkout's persist-credentials (the default) and grant contents: write, " +
			"or set GITHUB_TOKEN; elsewhere use an SSH remote or a git credential helper"
	case errors.Is(err, transport.ErrRepositoryNotFound):
		msg += "; check the remote's URL (git remote -v) and that your credentials can read it"
	}
	return remoteErrorf("%s", msg)
}

func isAuthError(err error) bool {
	return errors.Is(err, transport.ErrAuthenticationRequired) || errors.Is(err, transport.ErrAuthorizationFailed)
}

func hashString(h plumbing.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// branchState is the data branch at one tip.
type branchState struct {
	tip   plumbing.Hash
	root  []object.TreeEntry            // entries of the root tree
	runs  []object.TreeEntry            // entries of runs/
	fan   map[string][]object.TreeEntry // runs/<xx>/ entries by xx
	files map[string]plumbing.Hash      // run id -> blob
}

// read lists the runs of the branch at tip.
func (s *syncer) read(tip plumbing.Hash) (*branchState, error) {
	st := &branchState{tip: tip, fan: map[string][]object.TreeEntry{}, files: map[string]plumbing.Hash{}}
	if tip.IsZero() {
		return st, nil
	}
	c, err := object.GetCommit(s.repo.Storer, tip)
	if err != nil {
		return nil, remoteErrorf("%s %s: cannot read commit %s: %v", s.opts.Remote, s.opts.Branch, tip, err)
	}
	root, err := object.GetTree(s.repo.Storer, c.TreeHash)
	if err != nil {
		return nil, remoteErrorf("%s %s: cannot read the tree of %s: %v", s.opts.Remote, s.opts.Branch, tip, err)
	}
	st.root = root.Entries
	var runsHash plumbing.Hash
	for _, e := range root.Entries {
		if e.Name == runsDir && !e.Mode.IsFile() {
			runsHash = e.Hash
		}
	}
	if runsHash.IsZero() {
		if len(root.Entries) > 0 {
			return nil, configErrorf("branch %s on %s is not a perfgate history (no %s/ directory at its root); choose another branch with --branch", s.opts.Branch, s.opts.Remote, runsDir)
		}
		return st, nil
	}
	runs, err := object.GetTree(s.repo.Storer, runsHash)
	if err != nil {
		return nil, remoteErrorf("%s %s: cannot read %s/: %v", s.opts.Remote, s.opts.Branch, runsDir, err)
	}
	st.runs = runs.Entries
	for _, d := range runs.Entries {
		if d.Mode.IsFile() {
			continue
		}
		sub, err := object.GetTree(s.repo.Storer, d.Hash)
		if err != nil {
			return nil, remoteErrorf("%s %s: cannot read %s/%s/: %v", s.opts.Remote, s.opts.Branch, runsDir, d.Name, err)
		}
		st.fan[d.Name] = sub.Entries
		for _, f := range sub.Entries {
			if id, ok := strings.CutSuffix(f.Name, ".json"); ok && f.Mode.IsFile() {
				st.files[id] = f.Hash
			}
		}
	}
	return st, nil
}

// runsDir is the directory of run files.
const runsDir = "runs"

// runPath is where a run's file lives on the branch.
func runPath(id string) string { return runsDir + "/" + id[:2] + "/" + id + ".json" }

// pull imports the branch's runs that the store lacks.
func (s *syncer) pull(st *store.Store, state *branchState, res *Result) error {
	local, err := localIDs(st)
	if err != nil {
		return err
	}
	var ids []string
	for id := range state.files {
		if !local[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	sort.Strings(ids)
	type file struct {
		path  string
		first int // its line in the JSONL input
		data  []byte
	}
	var files []file
	for _, id := range ids {
		path := runPath(id)
		data, err := s.blob(state.files[id])
		if err != nil {
			return remoteErrorf("%s %s: cannot read %s: %v", s.opts.Remote, s.opts.Branch, path, err)
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 || bytes.IndexByte(data, '\n') >= 0 {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: a run file holds exactly one JSONL line", path))
			continue
		}
		files = append(files, file{path: path, data: data})
	}
	// Import all at once; a bad file is reported, left out and the rest
	// imported again (Import stores nothing when it meets a bad line).
	source := fmt.Sprintf("%s/%s", s.opts.Remote, s.opts.Branch)
	for len(files) > 0 {
		var in bytes.Buffer
		for i := range files {
			files[i].first = i + 1
			in.Write(files[i].data)
			in.WriteByte('\n')
		}
		unknown := func(line int, field string) {
			if s.opts.Log != nil && line >= 1 && line <= len(files) {
				s.opts.Log("%s: ignored the unknown field %s (a newer perfgate wrote it?); upgrade perfgate to keep it", files[line-1].path, field)
			}
		}
		added, _, err := st.Import(&in, store.ImportOptions{File: source, Unknown: unknown})
		var le *store.LineError
		if errors.As(err, &le) && le.Line >= 1 && le.Line <= len(files) {
			bad := files[le.Line-1]
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", bad.path, le.Err))
			files = append(files[:le.Line-1], files[le.Line:]...)
			continue
		}
		if err != nil {
			return fmt.Errorf("importing the runs of %s: %w", source, err)
		}
		res.Pulled += added
		break
	}
	if res.Pulled > 0 {
		s.opts.Log("pulled %d run%s from %s %s", res.Pulled, plural(res.Pulled), s.opts.Remote, s.opts.Branch)
	}
	return nil
}

func (s *syncer) blob(h plumbing.Hash) ([]byte, error) {
	b, err := object.GetBlob(s.repo.Storer, h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, 64<<20))
}

// localIDs is the set of run ids in the store.
func localIDs(st *store.Store) (map[string]bool, error) {
	ids := map[string]bool{}
	err := st.Each(store.Filter{}, func(r store.Run) error {
		ids[r.ID] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the history: %w", err)
	}
	return ids, nil
}

// unpushed returns the store's runs the branch lacks, and how many dirty
// runs were left out.
func unpushed(st *store.Store, state *branchState) ([]store.Run, int, error) {
	var runs []store.Run
	dirty := 0
	err := st.Each(store.Filter{}, func(r store.Run) error {
		if _, ok := state.files[r.ID]; ok {
			return nil
		}
		if r.Dirty {
			dirty++
			return nil
		}
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading the history: %w", err)
	}
	return runs, dirty, nil
}

// plural is "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
