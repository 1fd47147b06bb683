package store

import (
	"errors"
	"fmt"
	"time"
)

// What a sync with a shared copy of the history needs: runs in the order
// they were stored (sequence numbers), a place to remember what was
// synced (marks), a cheap test for runs already stored, and a lenient
// bulk insert that skips and reports bad runs instead of storing none.

// metaMarkPrefix prefixes the keys of marks in bucket "meta".
const metaMarkPrefix = "mark:"

// ParseLine decodes and validates one JSONL line of the interchange and
// derives the run's id when the line has none. unknown names (quoted) the
// first field this version does not know, which is ignored.
func ParseLine(line []byte) (r Run, unknown string, err error) {
	p, unknown, err := ParseValid(line)
	return p.run, unknown, err
}

// Valid is a run that ParseValid decoded and validated, with its id:
// MergeValid stores it without checking it again. The zero Valid is no
// run.
type Valid struct{ run Run }

// ID returns the run's id.
func (v *Valid) ID() string { return v.run.ID }

// Run returns the run. Its maps are the Valid's own: change a copy.
func (v *Valid) Run() Run { return v.run }

// ParseValid is ParseLine for MergeValid.
func ParseValid(line []byte) (v Valid, unknown string, err error) {
	return parseValid(line, nil)
}

// Parser parses many lines, keeping one copy of each name (benchmark,
// metric, label, ...) they repeat. It is not safe for concurrent use.
type Parser struct{ names map[string]string }

// ParseValid is ParseValid of the package, with the parser's names.
func (p *Parser) ParseValid(line []byte) (v Valid, unknown string, err error) {
	if p.names == nil {
		p.names = map[string]string{}
	}
	return parseValid(line, p.names)
}

func parseValid(line []byte, names map[string]string) (v Valid, unknown string, err error) {
	r, ok := fastLine(line, names)
	if !ok || validate(&r) != nil {
		var d lineDecoder
		r, unknown, err = d.decode(line)
		if err == nil {
			err = validate(&r)
		}
		if err != nil {
			return Valid{}, unknown, err
		}
	}
	if r.ID == "" {
		r.ID = ContentID(r)
	}
	return Valid{run: r}, unknown, nil
}

// LastSeq returns the sequence number of the last run ever stored (0 when
// none was). Runs stored later have greater numbers; numbers are never
// reused.
func (s *boltStore) LastSeq() (uint64, error) {
	var seq uint64
	err := s.view(func(t *txn) error {
		seq = t.run.Sequence()
		return nil
	})
	return seq, err
}

// EachSeq calls fn with the stored runs whose sequence numbers are in
// [from, to], in that order, within one read transaction.
func (s *boltStore) EachSeq(from, to uint64, fn func(seq uint64, r Run) error) error {
	if from > to || from > 0xffffffff {
		return nil
	}
	return s.view(func(t *txn) error {
		c := t.run.Cursor()
		for k, v := c.Seek(appendSeq(nil, from)); k != nil && seqOf(k) <= to; k, v = c.Next() {
			r, err := t.decodeRun(v)
			if err != nil {
				return err
			}
			if err := fn(seqOf(k), r); err != nil {
				return err
			}
		}
		return nil
	})
}

// Mark returns the value SetMark stored under key, or nil.
func (s *boltStore) Mark(key string) ([]byte, error) {
	var v []byte
	err := s.view(func(t *txn) error {
		if b := t.meta.Get([]byte(metaMarkPrefix + key)); b != nil {
			v = append([]byte(nil), b...)
		}
		return nil
	})
	return v, err
}

// SetMark stores value under key (nil deletes it), for a caller to
// remember what it synced with the history.
func (s *boltStore) SetMark(key string, value []byte) error {
	return s.update(func(t *txn) error {
		if value == nil {
			return t.meta.Delete([]byte(metaMarkPrefix + key))
		}
		return t.meta.Put([]byte(metaMarkPrefix+key), value)
	})
}

// RunKey names a stored run: its commit and id.
type RunKey struct{ Commit, ID string }

// Known reports, for each key, whether a run with that commit and id is
// stored. Malformed keys are not.
func (s *boltStore) Known(keys []RunKey) ([]bool, error) {
	out := make([]bool, len(keys))
	err := s.view(func(t *txn) error {
		var k []byte
		for i, key := range keys {
			if !isSHA(key.Commit) || !isRunID(key.ID) {
				continue
			}
			k = appendHex(appendCommitKey(k[:0], key.Commit), key.ID)
			out[i] = t.byCommit.Get(k) != nil
		}
		return nil
	})
	return out, err
}

// clock is the store's time source (Put stamps runs without a time).
func (s *boltStore) clock() time.Time { return s.now() }

// MergeValid is Merge for runs ParseValid checked already (a zero Valid
// is skipped): a pull of a history branch validates each line once.
func (s *boltStore) MergeValid(runs []Valid, bad func(i int, err error)) (added int, err error) {
	if s.readOnly {
		return 0, fmt.Errorf("write to history %s: %w", s.path, ErrReadOnly)
	}
	var rejected []int
	var rejectedErr []error
	// put interns each run's strings (in sorted order); a batch-wide pass
	// first, as Put makes, costs a third more here, where a pull's runs
	// mostly repeat the names already stored.
	err = s.update(func(t *txn) error {
		added, rejected, rejectedErr = 0, rejected[:0], rejectedErr[:0]
		for i := range runs {
			if runs[i].run.ID == "" {
				continue
			}
			stored, _, err := t.put(&runs[i].run)
			if isBadInput(err) {
				rejected, rejectedErr = append(rejected, i), append(rejectedErr, err)
				continue
			}
			if err != nil {
				return err
			}
			if stored {
				added++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for j, i := range rejected {
		bad(i, rejectedErr[j])
	}
	return added, nil
}

func isBadInput(err error) bool { return err != nil && errors.Is(err, ErrBadInput) }

// Bulk runs fn, a large import into a history that holds no run (a first
// sync), with the sync to disk after each write transaction off, and then
// syncs the file once. A crash of the process keeps every committed
// write (the operating system has them); only a crash of the machine
// could damage the file, which then fails with ErrDamaged, and it holds
// nothing that is not on the branch it came from. fn must be the only
// writer meanwhile.
func (s *boltStore) Bulk(fn func() error) error {
	if s.readOnly {
		return fmt.Errorf("write to history %s: %w", s.path, ErrReadOnly)
	}
	s.db.NoSync = true
	err := fn()
	s.db.NoSync = false
	if serr := guard(s.path, s.db.Sync); err == nil && serr != nil {
		err = fmt.Errorf("history %s: %w", s.path, serr)
	}
	return err
}
