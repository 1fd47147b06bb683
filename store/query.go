package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"time"
)

// Filter selects runs for Each and Export. Zero fields select everything.
type Filter struct {
	Since     time.Time // runs at or after Since
	Until     time.Time // runs before Until
	Benchmark string    // runs of this benchmark only
	Commit    string    // runs of this commit only (a full commit id)
}

func checkCommits(commits []string) error {
	for _, c := range commits {
		if !isSHA(c) {
			return badf("commit %q is not a full commit id (40 or 64 lowercase hex digits); resolve it first, e.g. with git rev-parse", c)
		}
	}
	return nil
}

// moved reports whether a skip-scan made progress: the key a Seek found
// is past the one it skipped from, or the scan is over. A damaged page can
// send a Seek back (a key offset pointing at an earlier key); without this
// check the scan would loop forever.
func moved(prev, next []byte) bool {
	return next == nil || bytes.Compare(next, prev) > 0
}

// successor returns the smallest key greater than every key that starts
// with prefix and has at most n more bytes.
func successor(prefix []byte, n int) []byte {
	k := slices.Clone(prefix)
	for range n + 1 {
		k = append(k, 0xff)
	}
	return k
}

// commitSeqs calls fn with the seq of every run of a commit, through
// by_commit.
func (t *txn) commitSeqs(commit string, fn func(seq []byte) error) error {
	prefix := appendCommitKey(nil, commit)
	c := t.byCommit.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(v); err != nil {
			return err
		}
	}
	return nil
}

// benchSeqs calls fn with the seq of every run of a benchmark (by its
// string id) at a commit, or at every commit when commit is "", through
// by_bench.
func (t *txn) benchSeqs(bench uint32, commit string, fn func(seq []byte) error) error {
	prefix := binary.BigEndian.AppendUint32(nil, bench)
	if commit != "" {
		prefix = appendCommitKey(prefix, commit)
	}
	c := t.byBench.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) < 4+seqLen {
			return corruptf("by_bench key %x is too short", k)
		}
		if err := fn(k[len(k)-seqLen:]); err != nil {
			return err
		}
	}
	return nil
}

// collect returns a function that decodes the run behind each seq.
func (t *txn) collect(dst *[]Run) func(seq []byte) error {
	return func(seq []byte) error {
		r, err := t.runAt(seq)
		if err != nil {
			return err
		}
		*dst = append(*dst, r)
		return nil
	}
}

// commitSeqs returns the seq of every run of a commit, by run id.
func (s *boltStore) commitSeqs(commit string) (map[string]uint64, error) {
	if err := checkCommits([]string{commit}); err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	err := s.view(func(t *txn) error {
		prefix := appendCommitKey(nil, commit)
		c := t.byCommit.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(k) != len(prefix)+idLen || len(v) != seqLen {
				return corruptf("by_commit entry %x is malformed", k)
			}
			out[hex.EncodeToString(k[len(prefix):])] = seqOf(v)
		}
		return nil
	})
	return out, err
}

// ByCommit returns every run of a commit, in time order.
func (s *boltStore) ByCommit(commit string) ([]Run, error) {
	if err := checkCommits([]string{commit}); err != nil {
		return nil, err
	}
	var runs []Run
	err := s.view(func(t *txn) error { return t.commitSeqs(commit, t.collect(&runs)) })
	if err != nil {
		return nil, err
	}
	sortRuns(runs)
	return runs, nil
}

// ByCommits returns the runs of each of the commits that has any, in time
// order; commits without runs are absent from the map. It is one read
// transaction and one index seek per commit.
func (s *boltStore) ByCommits(commits []string) (map[string][]Run, error) {
	if err := checkCommits(commits); err != nil {
		return nil, err
	}
	out := map[string][]Run{}
	err := s.view(func(t *txn) error {
		var seqs [][]byte // valid for the transaction
		for _, c := range commits {
			if _, done := out[c]; done {
				continue
			}
			// The index first, so that the runs are allocated once.
			seqs = seqs[:0]
			if err := t.commitSeqs(c, func(seq []byte) error {
				seqs = append(seqs, seq)
				return nil
			}); err != nil {
				return err
			}
			runs := make([]Run, 0, len(seqs))
			for _, seq := range seqs {
				r, err := t.runAt(seq)
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			if len(runs) > 0 {
				sortRuns(runs)
				out[c] = runs
			}
		}
		return nil
	})
	return out, err
}

// ByBenchmark returns the runs of one benchmark at each of the commits
// that has any (commits absent from the map have none), in time order.
// With commits nil it returns the benchmark's runs at every commit.
func (s *boltStore) ByBenchmark(benchmark string, commits []string) (map[string][]Run, error) {
	if benchmark == "" {
		return nil, badf("the benchmark name is empty; name the benchmark (--name)")
	}
	if err := checkCommits(commits); err != nil {
		return nil, err
	}
	out := map[string][]Run{}
	err := s.view(func(t *txn) error {
		bench, ok, err := t.lookupID(benchmark)
		if err != nil || !ok {
			return err
		}
		add := func(seq []byte) error {
			r, err := t.runAt(seq)
			if err != nil {
				return err
			}
			out[r.Commit] = append(out[r.Commit], r)
			return nil
		}
		if commits == nil {
			return t.benchSeqs(bench, "", add)
		}
		for _, c := range commits {
			if _, done := out[c]; done {
				continue
			}
			if err := t.benchSeqs(bench, c, add); err != nil {
				return err
			}
		}
		return nil
	})
	for _, runs := range out {
		sortRuns(runs)
	}
	return out, err
}

// Measured reports how many runs each of the commits has (of one
// benchmark, or of any when benchmark is ""), without decoding them:
// the gate's question "which of these ancestors have results for B".
// Commits without runs are absent from the map.
func (s *boltStore) Measured(benchmark string, commits []string) (map[string]int, error) {
	if err := checkCommits(commits); err != nil {
		return nil, err
	}
	out := map[string]int{}
	err := s.view(func(t *txn) error {
		var bench uint32
		if benchmark != "" {
			id, ok, err := t.lookupID(benchmark)
			if err != nil || !ok {
				return err
			}
			bench = id
		}
		for _, c := range commits {
			if _, done := out[c]; done {
				continue
			}
			n := 0
			count := func([]byte) error { n++; return nil }
			var err error
			if benchmark == "" {
				err = t.commitSeqs(c, count)
			} else {
				err = t.benchSeqs(bench, c, count)
			}
			if err != nil {
				return err
			}
			if n > 0 {
				out[c] = n
			}
		}
		return nil
	})
	return out, err
}

// HasCommit reports whether a commit has runs (of benchmark, or of any
// benchmark when it is "").
func (s *Store) HasCommit(commit, benchmark string) (bool, error) {
	m, err := s.Measured(benchmark, []string{commit})
	return m[commit] > 0, err
}

// Commits returns the commits that have runs (of benchmark, or of any
// when it is ""), in byte order of their ids. It skips from one commit to
// the next in the index, so its cost grows with the number of commits,
// not of runs.
func (s *boltStore) Commits(benchmark string) ([]string, error) {
	var out []string
	err := s.view(func(t *txn) error {
		if benchmark == "" {
			c := t.byCommit.Cursor()
			for k, _ := c.First(); k != nil; {
				n := commitKeyLen(k)
				if n == 0 {
					return corruptf("by_commit key %x has no commit", k)
				}
				out = append(out, hex.EncodeToString(k[1:n]))
				prev := k
				if k, _ = c.Seek(successor(k[:n], idLen)); !moved(prev, k) {
					return corruptf("by_commit index does not advance past key %x", prev)
				}
			}
			return nil
		}
		bench, ok, err := t.lookupID(benchmark)
		if err != nil || !ok {
			return err
		}
		prefix := binary.BigEndian.AppendUint32(nil, bench)
		c := t.byBench.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
			n := commitKeyLen(k[4:])
			if n == 0 {
				return corruptf("by_bench key %x has no commit", k)
			}
			out = append(out, hex.EncodeToString(k[5:4+n]))
			prev := k
			if k, _ = c.Seek(successor(k[:4+n], seqLen)); !moved(prev, k) {
				return corruptf("by_bench index does not advance past key %x", prev)
			}
		}
		return nil
	})
	return out, err
}

// Benchmarks returns the names of the benchmarks that have runs, sorted.
func (s *boltStore) Benchmarks() ([]string, error) {
	var out []string
	err := s.view(func(t *txn) error {
		c := t.byBench.Cursor()
		for k, _ := c.First(); k != nil; {
			if len(k) < 4 {
				return corruptf("by_bench key %x is too short", k)
			}
			id := binary.BigEndian.Uint32(k)
			name, err := t.name(id)
			if err != nil {
				return err
			}
			out = append(out, name)
			if id == 1<<32-1 {
				break
			}
			prev := k
			if k, _ = c.Seek(binary.BigEndian.AppendUint32(nil, id+1)); !moved(prev, k) {
				return corruptf("by_bench index does not advance past key %x", prev)
			}
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// Each calls fn with every run the filter selects, in time order (then
// in the order they were stored), within one read transaction. An error
// from fn stops the iteration and is returned.
func (s *boltStore) Each(f Filter, fn func(Run) error) error {
	if f.Commit != "" {
		if err := checkCommits([]string{f.Commit}); err != nil {
			return err
		}
	}
	// The store keeps times as int64 nanoseconds (years 1677-2262):
	// bounds outside that range select everything or nothing.
	if f.Since.After(maxTime) || (!f.Until.IsZero() && !f.Until.After(minTime)) {
		return nil
	}
	if f.Since.Before(minTime) {
		f.Since = time.Time{}
	}
	if f.Until.After(maxTime) {
		f.Until = time.Time{}
	}
	return s.view(func(t *txn) error {
		var bench uint32
		if f.Benchmark != "" {
			id, ok, err := t.lookupID(f.Benchmark)
			if err != nil || !ok {
				return err
			}
			bench = id
		}
		keep := func(r *Run) bool {
			return (f.Since.IsZero() || !r.Time.Before(f.Since)) &&
				(f.Until.IsZero() || r.Time.Before(f.Until))
		}
		if f.Commit != "" {
			// A commit has few runs: collect them through the index.
			var runs []Run
			var err error
			if f.Benchmark != "" {
				err = t.benchSeqs(bench, f.Commit, t.collect(&runs))
			} else {
				err = t.commitSeqs(f.Commit, t.collect(&runs))
			}
			if err != nil {
				return err
			}
			sortRuns(runs)
			for i := range runs {
				if keep(&runs[i]) {
					if err := fn(runs[i]); err != nil {
						return err
					}
				}
			}
			return nil
		}
		c := t.byTime.Cursor()
		var k []byte
		if f.Since.IsZero() {
			k, _ = c.First()
		} else {
			k, _ = c.Seek(appendTime(nil, f.Since))
		}
		var until []byte
		if !f.Until.IsZero() {
			until = appendTime(nil, f.Until)
		}
		whole := f.Since.IsZero() && until == nil && f.Benchmark == ""
		seen := uint64(0)
		for ; k != nil; k, _ = c.Next() {
			if len(k) != 8+seqLen {
				return corruptf("by_time key %x has the wrong length", k)
			}
			if until != nil && bytes.Compare(k[:8], until) >= 0 {
				break
			}
			seen++
			rec := t.run.Get(k[8:])
			if rec == nil {
				return corruptf("by_time refers to missing run %d", seqOf(k[8:]))
			}
			if f.Benchmark != "" {
				if b := benchOf(rec); b != 0 && b != bench {
					continue // damage (b == 0) is reported by decodeRun
				}
			}
			r, err := t.decodeRun(rec)
			if err != nil {
				return err
			}
			if f.Benchmark != "" && r.Benchmark != f.Benchmark {
				continue
			}
			if err := fn(r); err != nil {
				return err
			}
		}
		if whole {
			// A damaged page can hide entries without any read failing
			// (its element count is smaller): a scan of everything must
			// find as many runs as the store counted in.
			if n, _ := binary.Uvarint(t.meta.Get(metaRuns)); n != seen {
				return corruptf("the history counts %d runs but its time index lists %d", n, seen)
			}
		}
		return nil
	})
}

// benchOf returns the benchmark string id of a record without decoding
// the rest (0 when the record is damaged; decodeRun reports that).
func benchOf(rec []byte) uint32 {
	if len(rec) < 1 {
		return 0
	}
	r := reader{b: rec[1:]}
	r.uvarint()
	r.bytes(idLen)
	n := commitKeyLen(r.b)
	if n == 0 {
		return 0
	}
	r.bytes(n)
	return r.id()
}
