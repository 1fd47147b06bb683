package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Buckets of schema v1. Index keys are flat composite keys searched by
// prefix, so a point lookup is one cursor seek.
var (
	bucketMeta   = []byte("meta")      // "schema" -> uvarint version, "runs" -> uvarint count
	bucketStr    = []byte("str")       // interned string -> uvarint string id
	bucketStrID  = []byte("str_id")    // be32 string id -> string
	bucketRun    = []byte("run")       // be32 seq -> run record
	bucketCommit = []byte("by_commit") // commit key + 16-byte run id -> be32 seq
	bucketBench  = []byte("by_bench")  // be32 benchmark string id + commit key + be32 seq -> nil
	bucketTime   = []byte("by_time")   // be64 time + be32 seq -> nil
	bucketRecord = []byte("record")    // 16-byte record id -> record JSON line (schema v2, record.go)

	v1Buckets = [][]byte{bucketMeta, bucketStr, bucketStrID, bucketRun, bucketCommit, bucketBench, bucketTime}
	// allBuckets are the buckets of the current schema.
	allBuckets = append(append([][]byte(nil), v1Buckets...), bucketRecord)

	metaSchema = []byte("schema")
	metaRuns   = []byte("runs")
)

const (
	seqLen    = 4 // run sequence numbers are uint32
	idLen     = 16
	recFormat = 1 // first byte of every run record

	flagDirty   = 1 << 0
	flagCommand = 1 << 1
	flagInvalid = 1 << 2
	flagTestbed = 1 << 3 // testbed and environment follow the invalid reason
	flagTree    = 1 << 4 // the working-tree hash follows
	flagReqs    = 1 << 5 // the request summary follows

	maxInternArg = 256 // longer command arguments are stored inline
)

// errFresh: a string is not in the dictionary (intern with lookupOnly).
var errFresh = errors.New("string not interned yet")

// corruptf reports damage found in the file (not bad input).
func corruptf(format string, args ...any) error {
	return &corruptError{msg: fmt.Sprintf(format, args...)}
}

// dict caches the string dictionary (metric names, label keys and values,
// benchmark names, formats, files). Entries are immutable once committed,
// so the cache is shared by the transactions of a Store; entries made by a
// write transaction join it only after that transaction commits.
type dict struct {
	mu    sync.RWMutex
	names map[uint32]string
	ids   map[string]uint32
}

func newDict() *dict {
	return &dict{names: map[uint32]string{}, ids: map[string]uint32{}}
}

func (d *dict) name(id uint32) (string, bool) {
	d.mu.RLock()
	s, ok := d.names[id]
	d.mu.RUnlock()
	return s, ok
}

func (d *dict) id(s string) (uint32, bool) {
	d.mu.RLock()
	id, ok := d.ids[s]
	d.mu.RUnlock()
	return id, ok
}

func (d *dict) add(s string, id uint32) {
	d.mu.Lock()
	d.names[id] = s
	d.ids[s] = id
	d.mu.Unlock()
}

// txn is one bbolt transaction with the v1 buckets and the dictionary.
type txn struct {
	tx                                               *bolt.Tx
	d                                                *dict
	meta, str, strID, run, byCommit, byBench, byTime *bolt.Bucket

	// Write transactions only.
	pending map[string]uint32 // strings interned by this transaction
	pnames  map[uint32]string
	cache   map[string]uint32 // committed entries this transaction used
	rec     []byte            // encodeNew's record
	// lookupOnly makes intern fail with errFresh instead of adding a
	// string (encodeNew's first try).
	lookupOnly bool
	fresh      []string // internAll's scratch
	arena      []byte   // keys and values must stay valid until commit
	scratch    []byte
	added      int // runs added minus runs deleted, for the meta counter
}

func newTxn(tx *bolt.Tx, d *dict) (*txn, error) {
	t := &txn{tx: tx, d: d}
	for _, b := range []struct {
		name []byte
		dst  **bolt.Bucket
	}{
		{bucketMeta, &t.meta}, {bucketStr, &t.str}, {bucketStrID, &t.strID}, {bucketRun, &t.run},
		{bucketCommit, &t.byCommit}, {bucketBench, &t.byBench}, {bucketTime, &t.byTime},
	} {
		*b.dst = tx.Bucket(b.name)
		if *b.dst == nil {
			return nil, corruptf("bucket %q is missing", b.name)
		}
	}
	if tx.Writable() {
		t.pending = map[string]uint32{}
		t.pnames = map[uint32]string{}
		t.cache = map[string]uint32{}
		// Runs and times are appended in key order: pack their pages.
		t.run.FillPercent = 1.0
		t.byTime.FillPercent = 0.9
	}
	return t, nil
}

// alloc returns n bytes that stay valid for the life of the transaction.
func (t *txn) alloc(n int) []byte {
	if len(t.arena)+n > cap(t.arena) {
		t.arena = make([]byte, 0, max(64<<10, n))
	}
	start := len(t.arena)
	t.arena = t.arena[:start+n]
	return t.arena[start : start+n : start+n]
}

func (t *txn) keep(b []byte) []byte {
	k := t.alloc(len(b))
	copy(k, b)
	return k
}

// intern returns the id of s in the dictionary, adding it if needed.
// The empty string is id 0 and never stored.
func (t *txn) intern(s string) (uint32, error) {
	if s == "" {
		return 0, nil
	}
	if id, ok := t.pending[s]; ok {
		return id, nil
	}
	if id, ok := t.cachedID(s); ok {
		return id, nil
	}
	if v := t.str.Get([]byte(s)); v != nil {
		id, n := binary.Uvarint(v)
		if n <= 0 || id == 0 || id > math.MaxUint32 {
			return 0, corruptf("dictionary entry %q has a bad id", s)
		}
		t.d.add(s, uint32(id))
		return uint32(id), nil
	}
	if !t.tx.Writable() {
		return 0, nil // unknown string: nothing refers to it
	}
	if t.lookupOnly {
		return 0, errFresh
	}
	seq, err := t.str.NextSequence()
	if err != nil {
		return 0, err
	}
	if seq > math.MaxUint32 {
		return 0, fmt.Errorf("the history's string dictionary is full (%d entries)", seq)
	}
	id := uint32(seq)
	key := t.keep([]byte(s))
	if err := t.str.Put(key, t.keep(binary.AppendUvarint(nil, seq))); err != nil {
		return 0, err
	}
	if err := t.strID.Put(t.keep(binary.BigEndian.AppendUint32(nil, id)), key); err != nil {
		return 0, err
	}
	t.pending[s] = id
	t.pnames[id] = s
	return id, nil
}

// internAll interns, in sorted order, the strings of runs that the
// dictionary does not hold yet. Until commit, bbolt keeps a transaction's
// new keys in the in-memory node of their leaf page, a sorted slice:
// adding a run's metric names in map order moved that slice's tail on
// every insert, so storing one run was quadratic in its metric count
// (250,000 metrics: 57 s). In sorted order each new key lands after the
// previous one, and storing a run is linear in its size.
func (t *txn) internAll(runs []Run) error {
	fresh := t.fresh[:0]
	for i := range runs {
		fresh = t.appendFresh(fresh, &runs[i])
	}
	return t.internFresh(fresh)
}

// internFresh interns fresh (sorted and deduplicated first).
func (t *txn) internFresh(fresh []string) error {
	if len(fresh) == 0 {
		return nil
	}
	slices.Sort(fresh)
	fresh = slices.Compact(fresh)
	for _, s := range fresh {
		if _, err := t.intern(s); err != nil {
			return err
		}
	}
	t.fresh = fresh[:0]
	return nil
}

// appendFresh appends the strings of r the dictionary lacks (repeats
// included) to fresh.
func (t *txn) appendFresh(fresh []string, r *Run) []string {
	add := func(s string) {
		if s != "" && !t.interned(s) {
			fresh = append(fresh, s)
		}
	}
	add(r.Benchmark)
	add(r.Source.Format)
	add(r.Source.File)
	for k, v := range r.Labels {
		add(k)
		add(v)
	}
	for name := range r.Metrics {
		add(name)
	}
	for _, a := range r.Command {
		if len(a) <= maxInternArg {
			add(a)
		}
	}
	return fresh
}

// interned reports whether s has an id already (in this transaction, or
// committed and cached).
func (t *txn) interned(s string) bool {
	if _, ok := t.pending[s]; ok {
		return true
	}
	_, ok := t.cachedID(s)
	return ok
}

// cachedID looks s up in the committed dictionary's cache, through the
// transaction's own copy of the entries it used (no lock).
func (t *txn) cachedID(s string) (uint32, bool) {
	if id, ok := t.cache[s]; ok {
		return id, true
	}
	id, ok := t.d.id(s)
	if ok && t.cache != nil {
		t.cache[s] = id
	}
	return id, ok
}

// lookupID returns the id of s without adding it; ok is false when s was
// never interned (so no run refers to it).
func (t *txn) lookupID(s string) (uint32, bool, error) {
	if s == "" {
		return 0, true, nil
	}
	if id, ok := t.pending[s]; ok {
		return id, true, nil
	}
	if id, ok := t.d.id(s); ok {
		return id, true, nil
	}
	v := t.str.Get([]byte(s))
	if v == nil {
		return 0, false, nil
	}
	id, n := binary.Uvarint(v)
	if n <= 0 || id == 0 || id > math.MaxUint32 {
		return 0, false, corruptf("dictionary entry %q has a bad id", s)
	}
	t.d.add(s, uint32(id)) // committed: entries of this transaction are pending
	return uint32(id), true, nil
}

// name returns the string of a dictionary id.
func (t *txn) name(id uint32) (string, error) {
	if id == 0 {
		return "", nil
	}
	if s, ok := t.pnames[id]; ok {
		return s, nil
	}
	if s, ok := t.d.name(id); ok {
		return s, nil
	}
	var v []byte
	if t.strID != nil { // nil when Salvage decodes with a dictionary of its own
		v = t.strID.Get(binary.BigEndian.AppendUint32(nil, id))
	}
	if v == nil {
		return "", corruptf("dictionary id %d is missing", id)
	}
	s := string(v)
	t.d.add(s, id)
	return s, nil
}

// commitPending publishes the strings of a committed write transaction.
func (t *txn) commitPending() {
	for s, id := range t.pending {
		t.d.add(s, id)
	}
}

// appendCommitKey appends the key form of a validated commit id: its
// length in bytes, then the bytes.
func appendCommitKey(b []byte, commit string) []byte {
	b = append(b, byte(len(commit)/2))
	return appendHex(b, commit)
}

// appendHex decodes validated lowercase hex.
func appendHex(b []byte, s string) []byte {
	for i := 0; i+1 < len(s); i += 2 {
		b = append(b, unhex(s[i])<<4|unhex(s[i+1]))
	}
	return b
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// commitKeyLen returns the length of the commit key at the start of k, or
// 0 when k does not start with one.
func commitKeyLen(k []byte) int {
	if len(k) == 0 || (k[0] != 20 && k[0] != 32) || len(k) < 1+int(k[0]) {
		return 0
	}
	return 1 + int(k[0])
}

func appendSeq(b []byte, seq uint64) []byte { return binary.BigEndian.AppendUint32(b, uint32(seq)) }

func seqOf(k []byte) uint64 { return uint64(binary.BigEndian.Uint32(k)) }

// appendTime appends a time key that sorts in time order.
func appendTime(b []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(b, uint64(t.UnixNano())^(1<<63))
}

func timeOfKey(k []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(k)^(1<<63))).UTC()
}

// encodeRun appends the record of a validated run to b and returns it with
// the benchmark's string id. Strings are interned; metric values are
// stored as short decimals when that is smaller than 8 bytes and exact.
//
// Record: format byte, uvarint flags, 16-byte id, commit key, uvarint
// benchmark, 8-byte time, uvarint format, file and line, uvarint label
// count and (key, value) pairs, uvarint metric count and metrics (uvarint
// name<<1|kind, then 8 bytes little-endian float64 for kind 0 or varint
// mantissa and varint exponent for kind 1), then the command (uvarint
// count, length-prefixed arguments, varint exit code) when flagged, and
// the invalid reason (length-prefixed) when flagged, then the testbed
// (uvarint string id) and the environment (uvarint count and (key, value)
// string ids) when flagged, then the working-tree hash (length-prefixed)
// when flagged. Older records lack the later sections and read as before;
// an older perfgate ignores the flags it does not know and the bytes after
// the sections it reads. A command argument is
// uvarint id<<1 when interned, or uvarint length<<1|1 and its bytes when
// longer than maxInternArg.
func (t *txn) encodeRun(b []byte, r *Run) ([]byte, uint32, error) {
	var flags uint64
	if r.Dirty {
		flags |= flagDirty
	}
	if len(r.Command) > 0 {
		flags |= flagCommand
	}
	if r.Invalid != "" {
		flags |= flagInvalid
	}
	if r.Testbed != "" || len(r.Env) > 0 {
		flags |= flagTestbed
	}
	if r.Tree != "" {
		flags |= flagTree
	}
	if len(r.Requests) > 0 {
		flags |= flagReqs
	}
	b = append(b, recFormat)
	b = binary.AppendUvarint(b, flags)
	b = appendHex(b, r.ID)
	b = appendCommitKey(b, r.Commit)
	bench, err := t.intern(r.Benchmark)
	if err != nil {
		return nil, 0, err
	}
	b = binary.AppendUvarint(b, uint64(bench))
	b = binary.BigEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
	for _, s := range []string{r.Source.Format, r.Source.File} {
		id, err := t.intern(s)
		if err != nil {
			return nil, 0, err
		}
		b = binary.AppendUvarint(b, uint64(id))
	}
	b = binary.AppendUvarint(b, uint64(r.Source.Line))
	b = binary.AppendUvarint(b, uint64(len(r.Labels)))
	for k, v := range r.Labels {
		kid, err := t.intern(k)
		if err != nil {
			return nil, 0, err
		}
		vid, err := t.intern(v)
		if err != nil {
			return nil, 0, err
		}
		b = binary.AppendUvarint(b, uint64(kid))
		b = binary.AppendUvarint(b, uint64(vid))
	}
	b = binary.AppendUvarint(b, uint64(len(r.Metrics)))
	for name, v := range r.Metrics {
		id, err := t.intern(name)
		if err != nil {
			return nil, 0, err
		}
		b = appendMetric(b, id, v)
	}
	if flags&flagCommand != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Command)))
		for _, a := range r.Command {
			if len(a) > maxInternArg {
				b = binary.AppendUvarint(b, uint64(len(a))<<1|1)
				b = append(b, a...)
				continue
			}
			id, err := t.intern(a)
			if err != nil {
				return nil, 0, err
			}
			b = binary.AppendUvarint(b, uint64(id)<<1)
		}
		b = binary.AppendVarint(b, int64(r.ExitCode))
	}
	if flags&flagInvalid != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Invalid)))
		b = append(b, r.Invalid...)
	}
	if flags&flagTestbed != 0 {
		id, err := t.intern(r.Testbed)
		if err != nil {
			return nil, 0, err
		}
		b = binary.AppendUvarint(b, uint64(id))
		b = binary.AppendUvarint(b, uint64(len(r.Env)))
		for _, k := range sortedKeys(r.Env) {
			kid, err := t.intern(k)
			if err != nil {
				return nil, 0, err
			}
			vid, err := t.intern(r.Env[k])
			if err != nil {
				return nil, 0, err
			}
			b = binary.AppendUvarint(b, uint64(kid))
			b = binary.AppendUvarint(b, uint64(vid))
		}
	}
	if flags&flagTree != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Tree)))
		b = append(b, r.Tree...)
	}
	if flags&flagReqs != 0 {
		b = binary.AppendUvarint(b, uint64(len(r.Requests)))
		b = append(b, r.Requests...)
	}
	return b, bench, nil
}

// reader reads a record without panicking on damage.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad = true
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad = true
		r.b = nil
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) id() uint32 {
	v := r.uvarint()
	if v > math.MaxUint32 {
		r.bad = true
		return 0
	}
	return uint32(v)
}

// count reads a count and checks it against the bytes left (each element
// takes at least min bytes), so damage cannot make us allocate wildly.
func (r *reader) count(min int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/min) {
		r.bad = true
		r.b = nil
		return 0
	}
	return int(v)
}

// decodeRun decodes a record written by encodeRun.
func (t *txn) decodeRun(rec []byte) (Run, error) {
	var run Run
	if len(rec) == 0 || rec[0] != recFormat {
		return run, corruptf("run record has an unknown format")
	}
	r := reader{b: rec[1:]}
	flags := r.uvarint()
	run.Dirty = flags&flagDirty != 0
	run.ID = hex.EncodeToString(r.bytes(idLen))
	n := commitKeyLen(r.b)
	if n == 0 {
		return run, corruptf("run %s has a bad commit", run.ID)
	}
	run.Commit = hex.EncodeToString(r.bytes(n)[1:])
	var err error
	str := func(id uint32) string {
		if err != nil {
			return ""
		}
		var s string
		s, err = t.name(id)
		return s
	}
	run.Benchmark = str(r.id())
	if tb := r.bytes(8); tb != nil {
		run.Time = time.Unix(0, int64(binary.BigEndian.Uint64(tb))).UTC()
	}
	run.Source.Format = str(r.id())
	run.Source.File = str(r.id())
	run.Source.Line = int(r.uvarint())
	nl := r.count(2)
	run.Labels = make(map[string]string, nl)
	for i := 0; i < nl; i++ {
		k := str(r.id())
		run.Labels[k] = str(r.id())
	}
	nm := r.count(2)
	run.Metrics = make(map[string]float64, nm)
	for i := 0; i < nm; i++ {
		h := r.uvarint()
		name := str(uint32(h >> 1))
		var v float64
		if h&1 == 0 {
			if vb := r.bytes(8); vb != nil {
				v = math.Float64frombits(binary.LittleEndian.Uint64(vb))
			}
		} else {
			m := r.varint()
			v = fromDecimal(m, int(r.varint()))
		}
		run.Metrics[name] = v
	}
	if flags&flagCommand != 0 {
		na := r.count(1)
		run.Command = make([]string, na)
		for i := range run.Command {
			h := r.uvarint()
			if h&1 == 0 {
				run.Command[i] = str(uint32(h >> 1))
			} else if h>>1 <= uint64(len(r.b)) {
				run.Command[i] = string(r.bytes(int(h >> 1)))
			} else {
				r.bad = true
			}
		}
		run.ExitCode = int(r.varint())
	}
	if flags&flagInvalid != 0 {
		run.Invalid = string(r.bytes(r.count(1)))
	}
	if flags&flagTestbed != 0 {
		run.Testbed = str(r.id())
		if ne := r.count(2); ne > 0 {
			run.Env = make(map[string]string, ne)
			for i := 0; i < ne; i++ {
				k := str(r.id())
				run.Env[k] = str(r.id())
			}
		}
	}
	if flags&flagTree != 0 {
		run.Tree = string(r.bytes(r.count(1)))
	}
	if flags&flagReqs != 0 {
		run.Requests = bytes.Clone(r.bytes(r.count(1)))
		if run.Requests == nil {
			run.Requests = []byte{}
		}
	}
	if err != nil {
		return run, err
	}
	if r.bad {
		return run, corruptf("run %s has a truncated record", run.ID)
	}
	return run, nil
}

// appendMetric appends one metric of a record.
func appendMetric(b []byte, nameID uint32, v float64) []byte {
	if m, e, ok := decimal(v); ok {
		var tmp [2 * binary.MaxVarintLen64]byte
		enc := binary.AppendVarint(tmp[:0], m)
		enc = binary.AppendVarint(enc, int64(e))
		if len(enc) < 8 {
			b = binary.AppendUvarint(b, uint64(nameID)<<1|1)
			return append(b, enc...)
		}
	}
	b = binary.AppendUvarint(b, uint64(nameID)<<1)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// decimal returns the shortest decimal m×10^e that parses back to v
// exactly. -0 has none (the sign would be lost).
func decimal(v float64) (m int64, e int, ok bool) {
	if v == 0 {
		return 0, 0, !math.Signbit(v)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, 0, false
	}
	if m, e, ok := fewDecimals(v); ok {
		return m, e, true
	}
	return shortestDecimal(v)
}

// shortestDecimal is decimal by way of strconv's shortest formatting.
func shortestDecimal(v float64) (m int64, e int, ok bool) {
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], v, 'e', -1, 64) // -d.ddddde±dd
	i, neg := 0, false
	if s[0] == '-' {
		neg, i = true, 1
	}
	digits := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if s[i] != '.' {
			m = m*10 + int64(s[i]-'0') // at most 17 digits: fits
			digits++
		}
	}
	i++ // 'e'
	esign := 1
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		if s[i] == '-' {
			esign = -1
		}
		i++
	}
	x := 0
	for ; i < len(s); i++ {
		x = x*10 + int(s[i]-'0')
	}
	e = esign*x - (digits - 1)
	if neg {
		m = -m
	}
	return m, e, true
}

// fewDecimals is decimal for a value with at most 4 decimals, most
// measured values, without formatting it: the fewest decimals p for which
// v×10^p rounded to an integer reads back as v exactly.
func fewDecimals(v float64) (m int64, e int, ok bool) {
	for p := 0; p <= 4; p++ {
		f := math.Round(v * pow10[p])
		if math.Abs(f) >= 1<<53 {
			return 0, 0, false
		}
		if m = int64(f); m != 0 && fromDecimal(m, -p) == v {
			e = -p
			for m%10 == 0 {
				m, e = m/10, e+1
			}
			return m, e, true
		}
	}
	return 0, 0, false
}

var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// fromDecimal returns the float64 nearest to m×10^e. When m and 10^|e|
// are exact float64 values, one multiplication or division is correctly
// rounded (the fast path of strconv); otherwise strconv does the work.
func fromDecimal(m int64, e int) float64 {
	if m == 0 {
		return 0
	}
	am := m
	if am < 0 {
		am = -am
	}
	if am < 1<<53 {
		switch {
		case e == 0:
			return float64(m)
		case e > 0 && e < len(pow10):
			return float64(m) * pow10[e]
		case e < 0 && -e < len(pow10):
			return float64(m) / pow10[-e]
		}
	}
	var buf [48]byte
	s := strconv.AppendInt(buf[:0], m, 10)
	s = append(s, 'e')
	s = strconv.AppendInt(s, int64(e), 10)
	f, _ := strconv.ParseFloat(string(s), 64)
	return f
}
