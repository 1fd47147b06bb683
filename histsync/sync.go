package histsync

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
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
	Files          int    // files of runs on the branch after the sync
	Pulled         int    // runs imported into the store
	Read           int    // files of the branch read (the ones new since the last sync)
	Pushed         int    // runs added to the branch
	Attempts       int    // pushes tried (more than one when others pushed first)
	Dirty          int    // dirty runs that were not pushed
	Format         int    // the branch's format after the sync (0: no branch)
	// RecordsPulled and RecordsPushed count the records (accepted
	// changes, invalidated runs) imported and added to the branch.
	RecordsPulled, RecordsPushed int
	// Skipped lists files and lines of the branch that are no runs (the
	// first 50 of SkippedTotal), as "path[:line]: why".
	Skipped      []string
	SkippedTotal int
	// Warnings are about limits the branch approaches.
	Warnings []string
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
	// pending holds the objects of the commit being built, which blob
	// also reads.
	pending *objects
	// packs reads large blobs straight from the packs (see blob); nil
	// until first used, and again after a fetch.
	packs storer.EncodedObjectStorer
	mu    sync.Mutex // guards the Result while a pull reads and stores at once
}

// Sync pulls the data branch's runs into st and pushes st's runs to it;
// dir is the repository (any directory of its working tree, or a bare
// repository). st must be writable: it also remembers what was synced.
func Sync(ctx context.Context, dir string, st *store.Store, opts Options) (*Result, error) {
	return SyncOpen(ctx, dir, func() (*store.Store, func(), error) { return st, func() {}, nil }, opts)
}

// Opener opens the history for writing and returns it with the function
// that closes it.
type Opener func() (*store.Store, func(), error)

// SyncOpen is Sync with the history opened only while it is read or
// written: never across a fetch or a push, so that a benchmark finishing
// meanwhile (perfgate run) can store its results instead of waiting for
// the network behind the history's lock.
func SyncOpen(ctx context.Context, dir string, open Opener, opts Options) (*Result, error) {
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
		done, err := s.attempt(ctx, open, res, attempt)
		if done || err != nil {
			return res, err
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

// attempt fetches, pulls and pushes once; done is false when another
// runner pushed first and the caller should try again.
func (s *syncer) attempt(ctx context.Context, open Opener, res *Result, attempt int) (done bool, err error) {
	tip, err := s.fetch(ctx)
	if err != nil {
		return false, err
	}
	state, err := s.list(tip)
	if err != nil {
		return false, err
	}
	st, release, err := open()
	if err != nil {
		return false, err
	}
	p, err := s.prepare(st, tip, state, res)
	release()
	if err != nil || p == nil {
		return p == nil && err == nil, err
	}
	return s.pushPrepared(ctx, open, tip, state, p, res, attempt)
}

// prepared is what a push needs from the history, read while it was open.
type prepared struct {
	m    mark
	runs []store.Run
	seqs [][2]uint64
	recs []store.Record // records the branch lacks
}

// prepare pulls the branch's new runs into st and reads the runs to push;
// nil when there is nothing to push (the sync is done).
func (s *syncer) prepare(st *store.Store, tip plumbing.Hash, state *branchState, res *Result) (*prepared, error) {
	opts := s.opts
	res.Tip, res.Format, res.Files = hashString(tip), state.format, len(state.files)
	last, err := st.LastSeq()
	if err != nil {
		return nil, fmt.Errorf("reading the history: %w", err)
	}
	m := s.loadMark(st, last)
	base := map[string]plumbing.Hash{}
	hasBase := false
	if m.Tip != "" {
		if b, err := s.list(plumbing.NewHash(m.Tip)); err == nil {
			base, hasBase = b.byPath, true
		}
	}
	if !hasBase {
		m = mark{}
	}
	var branchIDs map[string]bool
	before := last // runs up to here may need a push; later ones came from the branch
	if !opts.NoPull {
		res.Skipped, res.SkippedTotal = nil, 0
		// The ids of the branch's runs tell which runs stored before
		// need a push; a store that held none needs no such list.
		// Each write of pulled runs marks them as on the branch (the
		// mark's tip stays the old one until the pull is complete, so an
		// interrupted pull reads the same files again and finds them
		// stored): a pull killed halfway pushes none of them back.
		pulled := func() error {
			now, err := st.LastSeq()
			if err != nil {
				return err
			}
			if err := s.notePulled(st, last+1, now); err != nil {
				return err
			}
			if !hasBase {
				return nil // no mark to extend: the next sync compares ids
			}
			m.addRange(last+1, now)
			if err := s.saveMark(st, m); err != nil {
				return err
			}
			if afterPulledWrite != nil {
				return afterPulledWrite()
			}
			return nil
		}
		ids, err := s.pull(st, state, base, !hasBase && last > 0, last == 0, res, pulled)
		if err != nil {
			return nil, err
		}
		branchIDs = ids
		now, err := st.LastSeq()
		if err != nil {
			return nil, fmt.Errorf("reading the history: %w", err)
		}
		if err := s.notePulled(st, last+1, now); err != nil {
			return nil, err
		}
		m.addRange(last+1, now)
		m.Tip, last = tip.String(), now
		if tip.IsZero() {
			m.Tip = ""
		}
		saved := m
		if !hasBase && before > 0 {
			// The runs stored before this sync are not yet told apart
			// (on the branch, or to push): until a push marks them
			// done, the next sync compares ids again rather than push
			// them all from a tip that claims they were seen
			// (sync --pull-only, or a push that fails, after a first
			// push or on a store without a mark).
			saved.Tip = ""
		}
		if err := s.saveMark(st, saved); err != nil {
			return nil, err
		}
	}
	recs, err := s.syncRecords(st, state, res)
	if err != nil {
		return nil, err
	}
	if opts.NoPush {
		return nil, nil
	}
	var runs []store.Run
	seqs := m.gaps(last)
	if !hasBase {
		// No record of earlier syncs: compare the runs stored before this
		// sync with the whole branch, once.
		if branchIDs == nil && before > 0 {
			if branchIDs, err = s.branchIDs(state); err != nil {
				return nil, err
			}
		}
		seqs = [][2]uint64{{1, last}}
		if runs, res.Dirty, err = unpushed(st, 1, before, branchIDs); err != nil {
			return nil, err
		}
	} else {
		res.Dirty = 0
		for _, g := range seqs {
			rs, dirty, err := unpushed(st, g[0], g[1], nil)
			if err != nil {
				return nil, err
			}
			runs, res.Dirty = append(runs, rs...), res.Dirty+dirty
		}
	}
	if len(runs) == 0 && len(recs) == 0 && (state.format == FormatVersion || state.format == 0) {
		for _, g := range seqs {
			m.addRange(g[0], g[1])
		}
		return nil, s.saveMark(st, m)
	}
	return &prepared{m: m, runs: runs, seqs: seqs, recs: recs}, nil
}

// pushPrepared builds the commit of p's runs and pushes it with the
// history closed, then opens it to remember what was pushed; done is
// false when another runner pushed first.
func (s *syncer) pushPrepared(ctx context.Context, open Opener, tip plumbing.Hash, state *branchState, p *prepared, res *Result, attempt int) (done bool, err error) {
	opts, m, runs, seqs := s.opts, p.m, p.runs, p.seqs
	objs, commit, files, warnings, err := s.build(state, runs, p.recs)
	if err != nil {
		return false, err
	}
	res.Attempts = attempt
	if testHookBeforePush != nil {
		testHookBeforePush()
	}
	perr := s.push(ctx, tip, commit, objs)
	if perr == nil {
		if err := s.keep(objs, commit); err != nil {
			return false, err
		}
		res.Warnings = append(res.Warnings, warnings...)
		for _, w := range warnings {
			opts.Log("warning: %s", w)
		}
		res.Tip, res.Pushed, res.Format, res.Files = commit.String(), len(runs), FormatVersion, files
		res.RecordsPushed = len(p.recs)
		if len(p.recs) > 0 {
			opts.Log("pushed %d record%s (accepted changes, invalidated runs)", len(p.recs), plural(len(p.recs)))
		}
		for _, g := range seqs {
			m.addRange(g[0], g[1])
		}
		if m.Tip == tip.String() || tip.IsZero() {
			// The store had every run of tip (none, when this push
			// made the branch): it has every run of commit.
			m.Tip = commit.String()
		}
		opts.Log("pushed %d run%s to %s %s (%s)", len(runs), plural(len(runs)), opts.Remote, opts.Branch, commit.String()[:12])
		st, release, err := open()
		if err != nil {
			return false, err
		}
		defer release()
		return true, s.saveMark(st, m)
	}
	if errors.Is(perr, ErrConfig) || isAuthError(perr) {
		return false, perr
	}
	// Did another runner push first? Then fetch, merge and retry.
	now, ferr := s.lsRemote(ctx)
	if ferr != nil {
		return false, ferr
	}
	if now == tip {
		return false, remoteErrorf("push to %s (%s) %s failed: %v; the remote refused it (a hook, branch protection, or a file or repository size limit?): let this account push to %s, or sync with --pull-only. The runs stay in the local history and the next sync pushes them", opts.Remote, redactURL(s.url), opts.Branch, perr, opts.Branch)
	}
	return false, nil
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
	s.packs = nil // it lists the packs once: not the one just fetched
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

// unpushed returns the runs with sequence numbers in [from, to] that are
// not on the branch (ids; nil: none of them is), and how many dirty runs
// were left out.
func unpushed(st *store.Store, from, to uint64, ids map[string]bool) ([]store.Run, int, error) {
	var runs []store.Run
	dirty := 0
	err := st.EachSeq(from, to, func(_ uint64, r store.Run) error {
		switch {
		case ids[r.ID]:
		case r.Dirty:
			dirty++
		default:
			runs = append(runs, r)
		}
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

// afterPulledWrite, set by tests, runs after each write of pulled runs is
// marked (to stop a pull halfway, as a kill would).
var afterPulledWrite func() error
