package store

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SalvageReport says what Salvage read from a history.
type SalvageReport struct {
	// Runs is the number of runs written.
	Runs int
	// Counted is the number of runs the history says it holds, -1 when
	// that count could not be read.
	Counted int
	// Problems describes the damage met, in file order, at most
	// maxProblems of them.
	Problems []string
	// More counts the problems left out of Problems.
	More int
	// Scanned is how many of Runs were found by reading the file's pages
	// directly, past the damage.
	Scanned int
	// Records is the number of records (acceptances, invalidations)
	// written after the runs, as Export writes them.
	Records int
}

// Lost reports whether runs the history counted could not be read (or
// the count could not).
func (r SalvageReport) Lost() bool {
	return r.Counted < 0 || r.Runs < r.Counted
}

const maxProblems = 10

func (r *SalvageReport) problem(format string, args ...any) {
	if len(r.Problems) < maxProblems {
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	} else {
		r.More++
	}
}

// Salvage writes every run it can read from the history at path to w as
// JSONL (Import's input, ids kept) and reports what it could not read. It
// opens the file read-only and does not trust it. First it reads the runs
// through bbolt in the order they were stored: each run record on its
// own, a damaged one reported and skipped, and when the pages after a
// run cannot be reached it seeks past them (1, 2, 4, ... runs further).
// When that misses runs the history counts, it reads every page of the
// file directly and adds the runs it finds there (in time order, each
// once); these can include runs that a failed import had removed. The
// error is for a file it cannot read at all or a failed write to w;
// damage is in the report.
func Salvage(path string, w io.Writer, timeout time.Duration) (SalvageReport, error) {
	rep := SalvageReport{Counted: -1}
	if IsPostgres(path) {
		return rep, &inputError{msg: fmt.Sprintf("history %s is a PostgreSQL database: recover reads a damaged bbolt file and does not apply to it (PostgreSQL keeps its own write-ahead log; restore a damaged database from its backups, or save its runs with perfgate export)", redactURL(path))}
	}
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 0 {
		timeout = time.Nanosecond
	}
	fi, err := os.Stat(path)
	if err != nil {
		return rep, fmt.Errorf("recover: %w", err)
	}
	if fi.Size() == 0 {
		rep.Counted = 0
		return rep, nil // an empty file holds nothing
	}
	checkErr := checkFile(path)
	var de *DamagedError
	if errors.As(checkErr, &de) {
		rep.problem("%s", de.Detail)
	} else if checkErr != nil {
		return rep, checkErr
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	written := map[string]bool{}
	var records bytes.Buffer // written after every run, as Export does
	var werr error
	db, err := boltOpen(path, &bolt.Options{Timeout: timeout, ReadOnly: true})
	switch {
	case errors.Is(err, ErrLocked), errors.Is(err, berrors.ErrTimeout):
		return rep, openError(path, timeout, err)
	case err != nil:
		rep.problem("bbolt cannot open it: %s", detail(err))
	default:
		err = guard(path, func() error {
			return db.View(func(tx *bolt.Tx) error {
				werr = salvageTx(tx, path, bw, &rep, written)
				salvageRecords(tx, &records, &rep)
				return nil
			})
		})
		if err != nil {
			rep.problem("%s", detail(err))
		}
		defer guard(path, db.Close) // its lock keeps writers out of the scan too
	}
	if werr == nil && rep.Lost() {
		werr = salvageScan(path, fi.Size(), bw, &rep, written)
	}
	if werr == nil {
		_, werr = bw.Write(records.Bytes())
	}
	if werr == nil {
		werr = bw.Flush()
	}
	if werr != nil {
		return rep, fmt.Errorf("recover: write failed: %w", werr)
	}
	return rep, nil
}

// salvageRecords appends to w the records bbolt can read, one line each
// as Export writes them; a record that does not validate is a problem,
// skipped.
func salvageRecords(tx *bolt.Tx, w *bytes.Buffer, rep *SalvageReport) {
	b := tx.Bucket(bucketRecord)
	if b == nil {
		return // a history from before records
	}
	defer func() {
		if p := recover(); p != nil {
			rep.problem("reading the records: %v", p)
		}
	}()
	var buf []byte
	bad := 0
	b.ForEach(func(k, v []byte) error {
		r, err := ParseRecord(v)
		if err != nil {
			bad++
			return nil
		}
		buf = append(AppendRecordJSON(buf[:0], &r), '\n')
		w.Write(buf)
		rep.Records++
		return nil
	})
	if bad > 0 {
		rep.problem("%d records could not be decoded", bad)
	}
}

// detail is what an error says of the damage, without the advice to run
// recover that a *DamagedError adds.
func detail(err error) string {
	var de *DamagedError
	if errors.As(err, &de) {
		return de.Detail
	}
	return err.Error()
}

// salvageScan adds the runs scanPages finds that were not written yet.
func salvageScan(path string, size int64, w io.Writer, rep *SalvageReport, written map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		rep.problem("reading the pages: %v", err)
		return nil
	}
	defer f.Close()
	pageSize := int64(os.Getpagesize())
	if m, err := readMeta(f, size); err == nil {
		pageSize = int64(m.pageSize)
	}
	var runs []Run
	var bad int
	if err := guard(path, func() error {
		runs, bad = scanPages(f, size, pageSize).runs(func(r *Run) bool { return written[r.Commit+"/"+r.ID] })
		return nil
	}); err != nil {
		rep.problem("reading the pages: %s", detail(err))
	}
	if bad > 0 {
		rep.problem("%d run records found in the pages could not be decoded", bad)
	}
	var buf []byte
	for i := range runs {
		buf = append(AppendJSON(buf[:0], &runs[i]), '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	rep.Runs += len(runs)
	rep.Scanned = len(runs)
	return nil
}

// salvageTx reads the runs of one read transaction; only a write error
// is returned.
func salvageTx(tx *bolt.Tx, path string, w io.Writer, rep *SalvageReport, written map[string]bool) error {
	t := &txn{tx: tx, d: newDict()}
	step := func(what string, fn func()) bool {
		err := guard(path, func() error { fn(); return nil })
		if err != nil {
			rep.problem("%s: %s", what, detail(err))
		}
		return err == nil
	}
	step("reading the run count", func() {
		if meta := tx.Bucket(bucketMeta); meta != nil {
			if n, k := binary.Uvarint(meta.Get(metaRuns)); k > 0 && n <= 1<<32 {
				rep.Counted = int(n)
			}
		}
	})
	var last uint64
	ok := step("finding the runs", func() {
		t.strID = tx.Bucket(bucketStrID)
		t.run = tx.Bucket(bucketRun)
		if t.run != nil {
			last = t.run.Sequence()
		}
	})
	if !ok || t.run == nil {
		if ok {
			rep.problem("the history has no runs bucket")
		}
		return nil
	}
	if t.strID == nil {
		rep.problem("the history has no string dictionary: runs cannot be decoded")
		return nil
	}
	last = min(last, 1<<32-1)
	var buf []byte
	var c *bolt.Cursor
	var k, v []byte
	next := uint64(1) // the first sequence number not yet read
	skip := uint64(0) // how far past next the last failed seek was
	if rep.Counted > 0 {
		last = max(last, uint64(rep.Counted))
	}
	for {
		if c == nil {
			at := next + skip
			if at > last {
				rep.problem("the runs stored as numbers %d to %d, if any, could not be read", next, last)
				break
			}
			err := guard(path, func() error {
				c = t.run.Cursor()
				k, v = c.Seek(appendSeq(nil, at))
				return nil
			})
			if err != nil {
				if skip == 0 {
					rep.problem("the pages after run %d: %s", next-1, detail(err))
				}
				c = nil
				skip = max(1, 2*skip)
				continue
			}
			if skip > 0 {
				rep.problem("the runs stored as numbers %d to %d, if any, could not be read", next, at-1)
				next, skip = at, 0
			}
		}
		if k == nil {
			break
		}
		if len(k) != seqLen {
			rep.problem("run key %x has the wrong length", k)
		} else if seq := seqOf(k); seq < next {
			rep.problem("run keys out of order at run %d", seq)
			c = nil
			next++
			continue
		} else {
			next = seq + 1
			var r Run
			var derr error
			if step(fmt.Sprintf("run %d", seq), func() { r, derr = t.decodeRun(v) }) {
				if derr == nil {
					derr = validate(&r)
				}
				if derr != nil {
					rep.problem("run %d: %v", seq, derr)
				} else {
					buf = append(AppendJSON(buf[:0], &r), '\n')
					if _, err := w.Write(buf); err != nil {
						return err
					}
					written[r.Commit+"/"+r.ID] = true
					rep.Runs++
				}
			}
		}
		if guard(path, func() error { k, v = c.Next(); return nil }) != nil {
			c = nil // seek again, and say so if that fails too
		}
	}
	return nil
}

// bbolt page and element layout (go.etcd.io/bbolt/internal/common).
const (
	boltLeafPage      = 0x02
	boltLeafElemSize  = 16 // flags, pos, ksize, vsize
	boltBucketLeaf    = 0x01
	boltInBucketSize  = 16 // root page id, sequence
	maxScanPageGroups = 1 << 20
)

// pageScan is what scanPages found: run records and dictionary entries,
// from live pages and from pages freed by later transactions alike.
type pageScan struct {
	records [][]byte
	names   map[uint32]string // from the str_id bucket: id -> string
	ids     map[uint32]string // from the str bucket: string -> id, inverted
}

// scanPages reads every leaf page of the file with ReadAt (nothing is
// mapped, every offset is checked), whatever points to it or not, and
// collects what looks like a run record (a 4-byte key and a record of
// format recFormat) or a dictionary entry. It is Salvage's way around
// damage to the pages that lead to the runs.
func scanPages(r io.ReaderAt, size, pageSize int64) *pageScan {
	sc := &pageScan{names: map[uint32]string{}, ids: map[uint32]string{}}
	hdr := make([]byte, boltPageHeader)
	for p, groups := int64(2), 0; p*pageSize+boltPageHeader <= size && groups < maxScanPageGroups; groups++ {
		if _, err := r.ReadAt(hdr, p*pageSize); err != nil {
			break
		}
		flags, overflow := binary.LittleEndian.Uint16(hdr[8:]), int64(binary.LittleEndian.Uint32(hdr[12:]))
		n := int64(1)
		if flags == boltLeafPage {
			n += overflow
		}
		end := (p + n) * pageSize
		if end > size {
			// Cut short, or a damaged overflow count: read to the end
			// of the file, and scan the pages after this one too.
			end, n = size, 1
		}
		// A page whose type is damaged may be a leaf too: every offset
		// is checked and every record validated, so trying costs only
		// time.
		if flags == boltLeafPage || !knownPageType(flags) {
			buf := make([]byte, end-p*pageSize)
			if _, err := r.ReadAt(buf, p*pageSize); err == nil {
				sc.leaf(buf, 0)
			}
		}
		p += n
	}
	return sc
}

// knownPageType reports whether flags is one of bbolt's page types.
func knownPageType(flags uint16) bool {
	switch flags {
	case 0x01, 0x02, 0x04, 0x10: // branch, leaf, meta, freelist
		return true
	}
	return false
}

// leaf collects the entries of the leaf page in buf; depth bounds the
// inline buckets it descends into.
func (sc *pageScan) leaf(buf []byte, depth int) {
	if len(buf) < boltPageHeader {
		return
	}
	count := int(binary.LittleEndian.Uint16(buf[10:]))
	for i := range count {
		at := boltPageHeader + i*boltLeafElemSize
		if at+boltLeafElemSize > len(buf) {
			return
		}
		e := buf[at : at+boltLeafElemSize]
		flags := binary.LittleEndian.Uint32(e)
		pos, ksize, vsize := uint64(binary.LittleEndian.Uint32(e[4:])), uint64(binary.LittleEndian.Uint32(e[8:])), uint64(binary.LittleEndian.Uint32(e[12:]))
		kstart := uint64(at) + pos
		if kstart+ksize+vsize > uint64(len(buf)) {
			continue
		}
		key := buf[kstart : kstart+ksize]
		val := buf[kstart+ksize : kstart+ksize+vsize]
		if flags&boltBucketLeaf != 0 {
			// An inline bucket: its header, then a page of its own.
			if depth < 2 && len(val) > boltInBucketSize && binary.LittleEndian.Uint64(val) == 0 {
				sc.leaf(val[boltInBucketSize:], depth+1)
			}
			continue
		}
		sc.entry(key, val)
	}
}

// entry classifies one key/value pair.
func (sc *pageScan) entry(key, val []byte) {
	switch {
	case len(key) == seqLen && len(val) > 0 && val[0] == recFormat:
		sc.records = append(sc.records, bytes.Clone(val))
	case len(key) == seqLen && len(val) > 0 && len(val) <= maxNameLen && utf8.Valid(val):
		sc.names[binary.BigEndian.Uint32(key)] = string(val)
	case len(key) > 0 && len(key) <= maxNameLen && utf8.Valid(key):
		id, n := binary.Uvarint(val)
		if n == len(val) && id > 0 && id <= math.MaxUint32 {
			sc.ids[uint32(id)] = string(key)
		}
	}
}

// runs decodes the records found with the dictionary found (str_id
// entries first, str entries for ids they lack), validates them and
// returns them in time order, each once, leaving out those for which
// skip is true.
func (sc *pageScan) runs(skip func(*Run) bool) (runs []Run, bad int) {
	d := newDict()
	for id, s := range sc.ids {
		d.add(s, id)
	}
	for id, s := range sc.names {
		d.add(s, id)
	}
	t := &txn{d: d}
	seen := map[string]bool{}
	for _, rec := range sc.records {
		r, err := t.decodeRun(rec)
		if err == nil {
			err = validate(&r)
		}
		if err != nil {
			bad++
			continue
		}
		key := r.Commit + "/" + r.ID
		if seen[key] || skip(&r) {
			continue
		}
		seen[key] = true
		runs = append(runs, r)
	}
	sortRuns(runs)
	return runs, bad
}
