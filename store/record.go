package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Records are the history's decisions about its runs, kept next to them
// (schema v2, bucket "record") and shared like them:
//
//	accept      a change of a benchmark's metric at a commit was intended
//	            (perfgate accept): from that commit on, its level is the
//	            reference
//	invalidate  a run must never be a baseline or part of a window again
//	            (perfgate invalidate); the run stays in the history
//	revalidate  an invalidation is withdrawn (perfgate invalidate --undo):
//	            the run counts again; the newest of a run's invalidate and
//	            revalidate records decides
//
// A record is immutable: its id is derived from all of its content, so
// the same decision made twice is stored once, and a later decision is
// another record (readers take the newest). Nothing is ever deleted.
//
// Its interchange form is one JSON line,
//
//	{"v":1,"kind":"accept","id":..,"commit":..,"benchmark":..,"metric":..,"reason":..,"by":..,"time":..}
//	{"v":1,"kind":"invalidate","id":..,"commit":..,"run":..,"reason":..,"by":..,"time":..}
//	{"v":1,"kind":"revalidate","id":..,"commit":..,"run":..,"reason":..,"by":..,"time":..}
//
// which is also how the store keeps it. ParseRecord reads it as untrusted
// input (it comes from a shared branch): every field is checked, a version
// other than 1 is refused, and unknown fields are ignored.

// Record kinds.
const (
	RecordAccept     = "accept"
	RecordInvalidate = "invalidate"
	// RecordRevalidate withdraws a run's invalidation (a perfgate from
	// before it refuses the record as of an unknown kind).
	RecordRevalidate = "revalidate"
)

// RecordVersion is the version of the record line this package writes.
const RecordVersion = 1

// Limits of a record's fields.
const (
	maxRecordLine   = 64 << 10
	maxReasonLen    = 4096
	maxRecordName   = 1024 // benchmark, metric, by
	recordIDVersion = "perfgate-record-v1"
)

// Record is one decision about the history: an accepted change or an
// invalidated run.
type Record struct {
	// ID is 32 lowercase hex digits, derived from the content (RecordID).
	ID   string
	Kind string // RecordAccept, RecordInvalidate or RecordRevalidate
	// Commit is the accepted commit, or the invalidated run's commit.
	Commit string
	// Benchmark and Metric name the accepted change (accept only).
	Benchmark, Metric string
	// Run is the invalidated run's id (invalidate and revalidate only).
	Run string
	// Reason says why, as the user gave it.
	Reason string
	// By names who decided: a git identity or a GitHub login.
	By string
	// Time is when the decision was recorded, UTC.
	Time time.Time
}

// RecordID returns the id of a record's content.
func RecordID(r Record) string {
	var b []byte
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = append(b, recordIDVersion...)
	str(r.Kind)
	str(r.Commit)
	str(r.Benchmark)
	str(r.Metric)
	str(r.Run)
	str(r.Reason)
	str(r.By)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// ValidateRecord checks a record (its ID may be empty: then it is not
// checked). Errors match ErrBadInput.
func ValidateRecord(r *Record) error {
	switch r.Kind {
	case RecordAccept:
		if err := recordName("benchmark", r.Benchmark); err != nil {
			return err
		}
		if err := recordName("metric", r.Metric); err != nil {
			return err
		}
		if r.Run != "" {
			return badf("an accept record names no run (got %q)", r.Run)
		}
	case RecordInvalidate, RecordRevalidate:
		if !isRunID(r.Run) {
			return badf("run %q is not a run id (32 lowercase hex digits)", r.Run)
		}
		if r.Benchmark != "" || r.Metric != "" {
			return badf("an %s record names no benchmark or metric", r.Kind)
		}
	default:
		return badf("record kind %q is not %q, %q or %q", r.Kind, RecordAccept, RecordInvalidate, RecordRevalidate)
	}
	if !isSHA(r.Commit) {
		return badf("commit %q is not a full commit id (40 or 64 lowercase hex digits)", r.Commit)
	}
	if err := recordText("reason", r.Reason, maxReasonLen); err != nil {
		return err
	}
	if strings.TrimSpace(r.Reason) == "" {
		return badf("the reason is empty; say why")
	}
	if err := recordText("by", r.By, maxRecordName); err != nil {
		return err
	}
	if r.Time.IsZero() || r.Time.Before(minTime) || r.Time.After(maxTime) {
		return badf("time %s is out of range", r.Time)
	}
	if r.ID != "" && r.ID != RecordID(*r) {
		return badf("record id %q does not match its content (%s)", r.ID, RecordID(*r))
	}
	return nil
}

// recordName checks a benchmark or metric name: not empty, no control
// characters.
func recordName(what, s string) error {
	if s == "" {
		return badf("the %s is empty", what)
	}
	return recordText(what, s, maxRecordName)
}

// recordText checks a text field: valid UTF-8, no control characters
// (a reason is shown in terminals, logs and PR comments), bounded.
func recordText(what, s string, limit int) error {
	if len(s) > limit {
		return badf("the %s is %d bytes long; the limit is %d", what, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return badf("the %s %q is not valid UTF-8", what, s)
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029 {
			return badf("the %s %q holds a control character; give one line of plain text", what, s)
		}
	}
	return nil
}

// recordLine is the JSON form of a record.
type recordLine struct {
	V         *int   `json:"v"`
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	Commit    string `json:"commit"`
	Benchmark string `json:"benchmark,omitempty"` // accept only
	Metric    string `json:"metric,omitempty"`    // accept only
	Run       string `json:"run,omitempty"`       // invalidate and revalidate only
	Reason    string `json:"reason"`
	By        string `json:"by"`
	Time      string `json:"time"`
}

// ParseRecord decodes and validates one record line; the id is derived
// when the line has none. Errors match ErrBadInput.
func ParseRecord(line []byte) (Record, error) {
	line = bytes.TrimSpace(line)
	if len(line) > maxRecordLine {
		return Record{}, badf("a record line is %d bytes; the limit is %d", len(line), maxRecordLine)
	}
	var l recordLine
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&l); err != nil {
		return Record{}, badf("not a record (JSON with v, kind, commit, reason, by, time): %v", err)
	}
	if dec.More() {
		return Record{}, badf("more data after the record")
	}
	if l.V == nil {
		return Record{}, badf("a record line has no version (\"v\")")
	}
	if *l.V != RecordVersion {
		return Record{}, badf("record version %d is not %d: a newer perfgate wrote it; upgrade perfgate", *l.V, RecordVersion)
	}
	t, err := time.Parse(time.RFC3339Nano, l.Time)
	if err != nil {
		return Record{}, badf("time %q is not RFC 3339", l.Time)
	}
	r := Record{ID: l.ID, Kind: l.Kind, Commit: l.Commit, Benchmark: l.Benchmark, Metric: l.Metric, Run: l.Run,
		Reason: l.Reason, By: l.By, Time: t.UTC()}
	if err := ValidateRecord(&r); err != nil {
		return Record{}, err
	}
	if r.ID == "" {
		r.ID = RecordID(r)
	}
	return r, nil
}

// AppendRecordJSON appends the JSON line of a record (without the newline).
func AppendRecordJSON(b []byte, r *Record) []byte {
	v := RecordVersion
	l := recordLine{V: &v, Kind: r.Kind, ID: r.ID, Commit: r.Commit, Benchmark: r.Benchmark, Metric: r.Metric, Run: r.Run,
		Reason: r.Reason, By: r.By, Time: r.Time.UTC().Format(time.RFC3339Nano)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(&l) // strings and an int: it cannot fail
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// PutRecords stores records in one write transaction, all or none. It
// stamps a zero Time with the current time and sets each ID (in place);
// a record already stored is skipped. It returns how many were added.
func (s *boltStore) PutRecords(recs []Record) (added int, err error) {
	if s.readOnly {
		return 0, ErrReadOnly
	}
	if err := prepareRecords(recs, s.now()); err != nil {
		return 0, err
	}
	err = guard(s.path, func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketRecord)
			if b == nil {
				return corruptf("bucket %q is missing", bucketRecord)
			}
			for i := range recs {
				key, _ := hex.DecodeString(recs[i].ID)
				if b.Get(key) != nil {
					continue
				}
				if err := b.Put(key, AppendRecordJSON(nil, &recs[i])); err != nil {
					return err
				}
				added++
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// Records returns every stored record, oldest first (then by id). A
// stored record that no longer validates is damage, reported as such.
func (s *boltStore) Records() ([]Record, error) {
	var out []Record
	err := guard(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucketRecord)
			if b == nil {
				return corruptf("bucket %q is missing", bucketRecord)
			}
			return b.ForEach(func(k, v []byte) error {
				r, err := ParseRecord(v)
				if err != nil {
					return corruptf("record %x: %v", k, err)
				}
				out = append(out, r)
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	sortRecords(out)
	return out, nil
}

// sortRecords orders records oldest first, then by id.
func sortRecords(out []Record) {
	sort.Slice(out, func(i, j int) bool {
		if c := out[i].Time.Compare(out[j].Time); c != 0 {
			return c < 0
		}
		return out[i].ID < out[j].ID
	})
}

// prepareRecords stamps a zero Time with now, sets each ID (in place) and
// validates the records.
func prepareRecords(recs []Record, now time.Time) error {
	now = now.UTC()
	for i := range recs {
		r := &recs[i]
		if r.Time.IsZero() {
			r.Time = now
		}
		r.Time = r.Time.UTC()
		if r.ID == "" {
			r.ID = RecordID(*r)
		}
		if err := ValidateRecord(r); err != nil {
			return err
		}
	}
	return nil
}

// FindRuns returns the commit of each run whose id is id or starts with
// it (at least 4 hex digits), reading only the commit index. More than
// one match means the prefix is ambiguous; none, that no such run is
// stored.
func (s *boltStore) FindRuns(id string) ([]RunKey, error) {
	id = strings.ToLower(id)
	if len(id) < 4 || len(id) > 32 || !isLowerHex(id) {
		return nil, badf("%q is not a run id (32 hex digits, or a prefix of at least 4)", id)
	}
	var out []RunKey
	err := s.view(func(t *txn) error {
		c := t.byCommit.Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			n := commitKeyLen(k)
			if n == 0 || len(k) != n+idLen {
				return corruptf("by_commit key %x is malformed", k)
			}
			rid := hex.EncodeToString(k[n:])
			if strings.HasPrefix(rid, id) {
				out = append(out, RunKey{Commit: hex.EncodeToString(k[1:n]), ID: rid})
				if len(out) > 10 {
					return nil
				}
			}
		}
		return nil
	})
	return out, err
}
