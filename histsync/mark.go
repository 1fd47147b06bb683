package histsync

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perfgate/perfgate/store"
)

// mark is what the store remembers of its syncs with one branch of one
// remote, so that a sync reads only what changed since:
//
//   - Tip: a commit of the branch whose runs are all in the store; the
//     next pull reads only the files that are not in Tip's tree.
//   - Done: the store's sequence numbers of runs that need no push (they
//     came from the branch, were pushed, or are dirty), as sorted closed
//     ranges; the next push considers only the runs outside them.
type mark struct {
	Tip  string      `json:"tip,omitempty"`
	Done [][2]uint64 `json:"done,omitempty"`
}

// maxRanges bounds Done; a longer list is dropped, and the next sync
// compares the whole store with the whole branch once.
const maxRanges = 256

func (s *syncer) markKey() string {
	return fmt.Sprintf("histsync %s %s", redactURL(s.url), s.opts.Branch)
}

// loadMark reads the mark; a missing, unreadable or inconsistent one is
// the zero mark (a full comparison).
func (s *syncer) loadMark(st *store.Store, last uint64) mark {
	var m mark
	b, err := st.Mark(s.markKey())
	if err != nil || b == nil || json.Unmarshal(b, &m) != nil {
		return mark{}
	}
	for i, r := range m.Done {
		if r[0] < 1 || r[0] > r[1] || r[1] > last || (i > 0 && r[0] <= m.Done[i-1][1]) {
			return mark{}
		}
	}
	if m.Tip != "" {
		if h := plumbing.NewHash(m.Tip); h.String() != m.Tip {
			return mark{}
		}
	}
	return m
}

func (s *syncer) saveMark(st *store.Store, m mark) error {
	m.Done = normalize(m.Done)
	if len(m.Done) > maxRanges {
		m.Done = nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := st.SetMark(s.markKey(), b); err != nil {
		return fmt.Errorf("remembering the sync in the history: %w", err)
	}
	return nil
}

// addRange adds [lo, hi] to Done.
func (m *mark) addRange(lo, hi uint64) {
	if lo >= 1 && lo <= hi {
		m.Done = normalize(append(m.Done, [2]uint64{lo, hi}))
	}
}

// gaps returns the ranges of [1, last] outside Done.
func (m *mark) gaps(last uint64) [][2]uint64 {
	var out [][2]uint64
	next := uint64(1)
	for _, r := range m.Done {
		if r[0] > next {
			out = append(out, [2]uint64{next, min(r[0]-1, last)})
		}
		next = max(next, r[1]+1)
	}
	if next <= last {
		out = append(out, [2]uint64{next, last})
	}
	return out
}

// normalize sorts ranges and merges those that overlap or touch.
func normalize(rs [][2]uint64) [][2]uint64 {
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	var out [][2]uint64
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}
