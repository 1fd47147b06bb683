package histsync

import (
	"encoding/json"
	"fmt"
	"sort"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/store"
)

// Runs a sync brought from the history branch. Whoever can push the branch
// can add runs at any commit, a pull request's own among them: after the
// pull request's job syncs, its check would use them beside the job's own
// run. The store remembers which of its runs a pull imported (by their
// sequence numbers, a few ranges), so that a check can tell the runs its
// own job stored from the ones that came from the branch (PulledAt), and
// name the branch commit that brought each (RunVias).

// pulledKey is the store mark of the ranges of pulled runs.
const pulledKey = "histsync pulled-runs"

// maxPulled bounds the ranges kept; the oldest go first (their runs are
// at commits long measured, not at a pull request's head).
const maxPulled = 1024

// pulledRange is a range of the store's sequence numbers of runs a pull
// imported from one branch of one remote.
type pulledRange struct {
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	Remote string `json:"remote"`
	Branch string `json:"branch"`
}

// Pulled says where a run came from: the remote and branch a sync
// imported it from.
type Pulled struct {
	Remote, Branch string
}

func loadPulled(st *store.Store) ([]pulledRange, error) {
	b, err := st.Mark(pulledKey)
	if err != nil || b == nil {
		return nil, err
	}
	var rs []pulledRange
	if json.Unmarshal(b, &rs) != nil {
		// Unreadable: a check then takes every run as the job's own, so
		// say it, as the caller cannot tell.
		return nil, fmt.Errorf("the history's mark %q of runs pulled from the history branch is damaged", pulledKey)
	}
	return rs, nil
}

// notePulled remembers that the runs of sequence numbers [from, to] came
// from the branch.
func (s *syncer) notePulled(st *store.Store, from, to uint64) error {
	if from < 1 || from > to {
		return nil
	}
	rs, err := loadPulled(st)
	if err != nil {
		rs = nil // rebuilt from here on
	}
	rs = append(rs, pulledRange{From: from, To: to, Remote: s.opts.Remote, Branch: s.opts.Branch})
	sort.Slice(rs, func(i, j int) bool { return rs[i].From < rs[j].From })
	var out []pulledRange
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].Remote == r.Remote && out[n-1].Branch == r.Branch && r.From <= out[n-1].To+1 {
			out[n-1].To = max(out[n-1].To, r.To)
			continue
		}
		out = append(out, r)
	}
	if len(out) > maxPulled {
		out = out[len(out)-maxPulled:]
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := st.SetMark(pulledKey, b); err != nil {
		return fmt.Errorf("remembering the runs pulled in the history: %w", err)
	}
	return nil
}

// PulledAt returns the runs of a commit that a sync brought from the
// history branch, by run id; the commit's other runs were stored in this
// history by perfgate run, ingest or import.
func PulledAt(st *store.Store, commit string) (map[string]Pulled, error) {
	rs, err := loadPulled(st)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	seqs, err := st.CommitSeqs(commit)
	if err != nil {
		return nil, err
	}
	out := map[string]Pulled{}
	for id, seq := range seqs {
		for _, r := range rs {
			if seq >= r.From && seq <= r.To {
				out[id] = Pulled{Remote: r.Remote, Branch: r.Branch}
				break
			}
		}
	}
	return out, nil
}

// RunVias finds, on the branch as last fetched into the repository at dir
// (refs/remotes/REMOTE/BRANCH), the file that holds each run of ids and
// the branch commit that added that file, with its author. Runs it does
// not find there are absent from the map. It reads every file of the
// branch: a check calls it only for the few runs at its head that came
// from the branch.
func RunVias(dir, remote, branch string, ids []string) (map[string]Via, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return nil, configErrorf("cannot open the git repository at %q: %v", dir, err)
	}
	s := &syncer{repo: repo, dir: dir, opts: Options{Remote: remote, Branch: branch, Log: func(string, ...any) {}}}
	ref, err := repo.Reference(plumbing.NewRemoteReferenceName(remote, branch), true)
	if err != nil {
		return map[string]Via{}, nil // not fetched here: nothing to name
	}
	state, err := s.list(ref.Hash())
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	where := map[string]branchFile{}
	for _, f := range state.files {
		if err := s.readLines(f, ignore, func(l line) error {
			if k, ok := keyOf(l.data); ok && want[k.ID] {
				if _, seen := where[k.ID]; !seen {
					where[k.ID] = f
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	out := map[string]Via{}
	added := map[string]*object.Commit{}
	for id, f := range where {
		c, ok := added[f.path]
		if !ok {
			if c, err = s.fileAdded(ref.Hash(), f); err != nil {
				return nil, err
			}
			added[f.path] = c
		}
		if c != nil {
			out[id] = Via{Branch: branch, Commit: c.Hash.String(), Author: fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email), Time: c.Committer.When.UTC(), File: f.path}
		}
	}
	return out, nil
}

// fileAdded returns the oldest commit of the branch's first-parent chain
// from tip, in an unbroken run of commits that hold f with its content:
// the commit that added it (a file of runs is never changed; a merge
// writes a new one).
func (s *syncer) fileAdded(tip plumbing.Hash, f branchFile) (*object.Commit, error) {
	c, err := object.GetCommit(s.repo.Storer, tip)
	if err != nil {
		return nil, remoteErrorf("%s %s: cannot read commit %s: %v", s.opts.Remote, s.opts.Branch, tip, err)
	}
	var found *object.Commit
	for n := 0; c != nil && n < maxViaWalk; n++ {
		t, err := c.Tree()
		if err != nil {
			return nil, remoteErrorf("%s %s: cannot read the tree of %s: %v", s.opts.Remote, s.opts.Branch, c.Hash, err)
		}
		e, err := t.FindEntry(f.path)
		if err != nil || e.Hash != f.hash {
			break
		}
		found = c
		if c.NumParents() == 0 {
			break
		}
		p, err := c.Parent(0)
		if err != nil {
			break // a shallow fetch: the oldest commit read
		}
		c = p
	}
	return found, nil
}
