package histsync

import (
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/store"
)

// Records (accepted changes, invalidated runs: store.Record) live on the
// branch in records/<name>.jsonl, one record line each, a file per push
// that had any, named like the files of runs. They are few, so every sync
// reads them all: a record the store lacks is imported, a record the
// branch lacks is pushed. A line that is no valid record is skipped with
// its file and line, like a bad run. A perfgate that predates records
// lists records/ as a directory it does not know and leaves it alone.

// readRecords reads every record of the branch. It returns them with the
// set of their ids.
func (s *syncer) readRecords(state *branchState, res *Result) ([]store.Record, map[string]bool, map[string][]string, error) {
	ids := map[string]bool{}
	byFile := map[string][]string{}
	var recs []store.Record
	files := append([]branchFile(nil), state.records...)
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	skipped := func(msg string) error {
		s.skip(res, "%s", msg)
		return nil
	}
	for _, f := range files {
		err := s.readLines(f, skipped, func(l line) error {
			r, err := store.ParseRecord(l.data)
			if err != nil {
				s.skip(res, "%s:%d: %v", show(l.path), l.n, err)
				return nil
			}
			if !ids[r.ID] {
				ids[r.ID] = true
				recs = append(recs, r)
			}
			byFile[f.path] = append(byFile[f.path], r.ID)
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return recs, ids, byFile, nil
}

// syncRecords imports the branch's records into st (unless NoPull) and
// returns the store's records the branch lacks (unless NoPush).
func (s *syncer) syncRecords(st *store.Store, state *branchState, res *Result) ([]store.Record, error) {
	branch, ids, byFile, err := s.readRecords(state, res)
	if err != nil {
		return nil, err
	}
	if !s.opts.NoPull && len(branch) > 0 {
		n, err := st.PutRecords(branch)
		if err != nil {
			return nil, fmt.Errorf("storing the branch's records: %w", err)
		}
		if err := s.attributeRecords(st, state, byFile); err != nil {
			return nil, err
		}
		res.RecordsPulled = n
		if n > 0 {
			s.opts.Log("pulled %d record%s (accepted changes, invalidated runs) from %s %s", n, plural(n), s.opts.Remote, s.opts.Branch)
		}
	}
	if s.opts.NoPush {
		return nil, nil
	}
	mine, err := st.Records()
	if err != nil {
		return nil, fmt.Errorf("reading the history's records: %w", err)
	}
	var out []store.Record
	for _, r := range mine {
		if !ids[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// writeRecords adds one file of records to the plan.
func (p *plan) writeRecords(recs []store.Record) error {
	if len(recs) == 0 {
		return nil
	}
	var data []byte
	for i := range recs {
		data = append(store.AppendRecordJSON(data, &recs[i]), '\n')
	}
	h, err := p.o.blob(data)
	if err != nil {
		return err
	}
	name := h.String()[:16] + ".jsonl"
	p.set(recordsDir, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	p.notes = append(p.notes, fmt.Sprintf("records: add %d (accepted changes, invalidated runs) in %s/%s", len(recs), recordsDir, name))
	return nil
}
