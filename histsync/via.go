package histsync

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/store"
)

// Via says which commit of the history branch brought a record (an
// accepted change, an invalidated run). A record names who decided (By),
// but anyone who can push to the branch can write any name there; the
// branch commit that added the record's file is what git keeps of how it
// arrived, and on GitHub who pushed it shows in the repository's activity
// log. perfgate check shows it beside every record that changes a verdict,
// and the rules' trust section can require records to come from the
// branch (gate.TrustConfig).
type Via struct {
	Branch string    `json:"branch"` // the data branch, e.g. perfgate-history
	Commit string    `json:"commit"` // the branch commit that added the record's file
	Author string    `json:"author"` // that commit's author, as git records it (the pusher's own claim)
	Time   time.Time `json:"time"`   // that commit's committer time: when the record arrived
	File   string    `json:"file"`   // the file that holds it, e.g. records/3fa2....jsonl
}

// viaKey is the store mark that holds the vias of records, by record id.
const viaKey = "histsync record-via"

// maxViaWalk bounds the branch commits read to find where record files
// were added (a branch gets a commit per push; records are few).
const maxViaWalk = 200000

// RecordVias returns, by record id, the branch commits that brought the
// store's records; records made in this store and not seen on a branch
// since have none.
func RecordVias(st *store.Store) (map[string]Via, error) {
	b, err := st.Mark(viaKey)
	if err != nil {
		return nil, err
	}
	out := map[string]Via{}
	if b == nil {
		return out, nil
	}
	if err := json.Unmarshal(b, &out); err != nil {
		// The mark is the store's own cache: a damaged one is rebuilt by
		// the next sync rather than stopping a check.
		return map[string]Via{}, nil
	}
	return out, nil
}

// attributeRecords finds, for the records of the branch that have no via
// yet, the branch commit that added their file, and stores the vias.
// files maps each records file's path to the ids of its records.
func (s *syncer) attributeRecords(st *store.Store, state *branchState, files map[string][]string) error {
	vias, err := RecordVias(st)
	if err != nil {
		return fmt.Errorf("reading the history's record marks: %w", err)
	}
	want := map[string]plumbing.Hash{} // file name in records/ -> its blob
	for _, f := range state.records {
		for _, id := range files[f.path] {
			if _, ok := vias[id]; !ok {
				want[f.name] = f.hash
				break
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	added, err := s.findAdded(state.tip, want)
	if err != nil {
		return err
	}
	changed := false
	for _, f := range state.records {
		c, ok := added[f.name]
		if !ok {
			continue
		}
		via := Via{Branch: s.opts.Branch, Commit: c.Hash.String(), Author: fmt.Sprintf("%s <%s>", c.Author.Name, c.Author.Email), Time: c.Committer.When.UTC(), File: f.path}
		for _, id := range files[f.path] {
			if _, ok := vias[id]; !ok {
				vias[id], changed = via, true
			}
		}
	}
	if !changed {
		return nil
	}
	b, err := json.Marshal(vias)
	if err != nil {
		return err
	}
	return st.SetMark(viaKey, b)
}

// findAdded walks the branch's first-parent chain from tip and returns,
// for each wanted file of records/, the oldest commit of the chain whose
// records/ holds it with that content: the commit that added it (records
// files are never changed nor removed).
func (s *syncer) findAdded(tip plumbing.Hash, want map[string]plumbing.Hash) (map[string]*object.Commit, error) {
	out := map[string]*object.Commit{}
	c, err := object.GetCommit(s.repo.Storer, tip)
	if err != nil {
		return nil, remoteErrorf("%s %s: cannot read commit %s: %v", s.opts.Remote, s.opts.Branch, tip, err)
	}
	for n := 0; c != nil && n < maxViaWalk; n++ {
		entries, err := s.recordEntries(c)
		if err != nil {
			return nil, err
		}
		held := map[string]bool{}
		for _, e := range entries {
			if h, ok := want[e.Name]; ok && e.Hash == h {
				held[e.Name] = true
			}
		}
		for name := range want {
			if held[name] {
				out[name] = c // an older commit that holds it overrides
			}
		}
		if len(held) == 0 && len(out) > 0 && len(out) == len(want) {
			break // every wanted file is found and this commit holds none of them
		}
		if c.NumParents() == 0 {
			break
		}
		p, err := c.Parent(0)
		if err != nil {
			// A shallow fetch of the branch: the records found so far are
			// attributed to the oldest commit read, which holds them.
			s.opts.Log("cannot read the parent of %s on %s (a shallow fetch?): the records' branch commits are the oldest ones read", c.Hash, s.opts.Branch)
			break
		}
		c = p
	}
	return out, nil
}

// recordEntries lists records/ at a commit of the branch (nil when it has
// none).
func (s *syncer) recordEntries(c *object.Commit) ([]object.TreeEntry, error) {
	root, err := s.tree(c.TreeHash, "")
	if err != nil {
		return nil, err
	}
	h := entryHash(root.Entries, recordsDir)
	if h.IsZero() {
		return nil, nil
	}
	t, err := s.tree(h, recordsDir)
	if err != nil {
		return nil, err
	}
	return t.Entries, nil
}
