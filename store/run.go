package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"
	"unicode/utf8"
)

// Run is one benchmark result in the history.
type Run struct {
	// ID identifies the run: 32 lowercase hex digits. Put derives it from
	// the run's content when it is empty (see ContentID).
	ID string
	// Commit is the full object name of the commit the run measured (40
	// or 64 lowercase hex digits). The store treats it as an opaque key.
	Commit string
	// Benchmark is the benchmark name (--name).
	Benchmark string
	// Time is when the run was measured or ingested. Put sets a zero Time
	// to the current time. It is stored with nanosecond precision, in UTC.
	Time time.Time
	// Metrics maps canonical metric names to finite values.
	Metrics map[string]float64
	// Labels are the run's identity labels (model, hardware, config, ...).
	Labels map[string]string
	// Source says where the result was read from.
	Source Source
	// Command is the command perfgate ran to produce the result; nil when
	// the result was ingested from a file or stdin.
	Command []string
	// ExitCode is the command's exit status; only meaningful with Command.
	ExitCode int
	// Dirty reports that the working tree had uncommitted changes.
	Dirty bool
	// Invalid, when not empty, says why the run must not be used as a
	// baseline (for example "514 of 1000 requests failed").
	Invalid string
	// Testbed names the machine (kind) that measured the run, part of a
	// series' identity; "" for runs stored before perfgate recorded it.
	Testbed string
	// Env holds the facts the testbed was derived from (accelerator,
	// accelerator_count, cpu, os, arch, ci, runner facts); nil when not
	// recorded.
	Env map[string]string
	// Tree identifies the working tree of a dirty run: a hash of its
	// changes against the commit (tracked and untracked files), so that
	// only runs of the tree as it is now are checked. "" for clean runs
	// and for dirty runs stored before perfgate recorded it.
	Tree string
	// Requests is the run's request summary (package slo, compact JSON):
	// a bounded histogram per latency from which goodput, attainment and
	// percentiles for any SLO are computed without the benchmark file;
	// nil when the file carried no per-request measurements. The store
	// keeps it as given (a compact JSON object of at most MaxRequestsLen
	// bytes) and does not interpret it. It is not part of the run's
	// identity (ContentID): the same file stored before perfgate kept
	// summaries is the same run.
	Requests []byte
}

// MaxRequestsLen bounds a run's request summary (its histograms are
// bounded whatever the request count: tens of kilobytes at most).
const MaxRequestsLen = 1 << 20

// Source says where a run's result was read from.
type Source struct {
	Format string // the ingest format name, e.g. "vllm-serve-text"
	File   string // the file name as the caller recorded it; "-" for stdin
	Line   int    // 1-based line where the result block starts; 0 unknown
}

// Limits on what a run may hold. Names and label values are interned in a
// dictionary whose keys bbolt bounds; these limits keep them far below.
const (
	maxNameLen = 4096 // benchmark, metric, label key/value, format, file
	maxTextLen = 1 << 20
	maxEnv     = 256 // environment entries
)

// ErrBadInput is matched (errors.Is) by every error caused by the data
// given to the store: an invalid run, a malformed JSONL line, an id stored
// with different content. The CLI maps it to exit code 2.
var ErrBadInput = errors.New("bad input")

// inputError is a bad-input error message.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

func badf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// isEvent reports whether a run is an event that cannot be read again:
// perfgate ran its command, or it came from stdin or from no named file.
// The time of such a run is part of its identity, so two repetitions with
// identical numbers are distinct runs. A result read from a named file is
// identified without its time, so ingesting the same file again is a no-op.
func isEvent(r *Run) bool {
	return len(r.Command) > 0 || r.Source.File == "" || r.Source.File == "-"
}

// ContentID returns the id Put gives a run: the first 128 bits of the
// SHA-256 of its identity, in hex. The identity is everything the run
// holds except its ID: commit, benchmark, labels, metrics (exact float64
// bits), source format, file and line, command, exit code, dirty flag,
// invalid reason, testbed, environment and working-tree hash, plus its time when the run is an event (perfgate ran its
// command, or it was read from stdin or from no named file). So ingesting
// the same file twice stores it once, while two repetitions of a command
// with identical numbers at different times are two runs. Put stamps a
// zero Time before it derives the id; do the same before calling ContentID.
func ContentID(r Run) string {
	sum := sha256.Sum256(identity(&r, nil))
	return hex.EncodeToString(sum[:16])
}

// identity appends the canonical encoding of a run's identity to b.
func identity(r *Run, b []byte) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = append(b, "perfgate-run-v1"...)
	str(r.Commit)
	str(r.Benchmark)
	if isEvent(r) {
		b = append(b, 1)
		b = binary.BigEndian.AppendUint64(b, uint64(r.Time.UnixNano()))
	} else {
		b = append(b, 0)
	}
	str(r.Source.Format)
	str(r.Source.File)
	b = binary.AppendUvarint(b, uint64(r.Source.Line))
	b = binary.AppendUvarint(b, uint64(len(r.Labels)))
	for _, k := range sortedKeys(r.Labels) {
		str(k)
		str(r.Labels[k])
	}
	b = binary.AppendUvarint(b, uint64(len(r.Metrics)))
	for _, k := range sortedKeys(r.Metrics) {
		str(k)
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(r.Metrics[k]))
	}
	b = binary.AppendUvarint(b, uint64(len(r.Command)))
	for _, a := range r.Command {
		str(a)
	}
	b = binary.AppendVarint(b, int64(r.ExitCode))
	if r.Dirty {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	str(r.Invalid)
	// Fields added later are appended only when set, so the ids of runs
	// stored before them do not change.
	if r.Testbed != "" || len(r.Env) > 0 || r.Tree != "" {
		b = append(b, "testbed-v1"...)
		str(r.Testbed)
		b = binary.AppendUvarint(b, uint64(len(r.Env)))
		for _, k := range sortedKeys(r.Env) {
			str(k)
			str(r.Env[k])
		}
		str(r.Tree)
	}
	// The request summary is not part of the identity: it derives from
	// the same file as the metrics, and a file ingested before perfgate
	// kept summaries must, ingested again, be the same run (a no-op), not
	// a second repetition.
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Times the store can represent (int64 nanoseconds since 1970).
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// prepare stamps a zero Time, validates the run and derives its ID. It
// changes the run in place; errors are bad input.
func prepare(r *Run, now time.Time) error {
	if r.Time.IsZero() {
		r.Time = now
	}
	if err := validate(r); err != nil {
		return err
	}
	if r.ID == "" {
		r.ID = ContentID(*r)
	}
	return nil
}

// validate checks everything the store relies on. Strings must be valid
// UTF-8 so that a run survives the JSONL round trip unchanged.
// MaxMetrics and MaxLabels bound one run. A line of the history branch
// is written by more hands than CI's: one run with two million metrics
// (57 MB) cost every fresh clone 46 s and 1.7 GB before this bound.
const (
	MaxMetrics = 100000
	MaxLabels  = 1000
)

func validate(r *Run) error {
	if !isSHA(r.Commit) {
		return badf("commit %q is not a full commit id (40 or 64 lowercase hex digits); resolve it first, e.g. with git rev-parse", r.Commit)
	}
	if r.ID != "" && !isRunID(r.ID) {
		return badf("id %q is not a perfgate run id (32 lowercase hex digits); remove it and perfgate derives the id from the run's content", r.ID)
	}
	if r.Benchmark == "" {
		return badf("the benchmark name is empty; name the benchmark (--name)")
	}
	if err := checkName("benchmark name", r.Benchmark); err != nil {
		return err
	}
	if r.Time.Before(minTime) || r.Time.After(maxTime) {
		return badf("time %s is out of range (%d to %d)", r.Time.Format(time.RFC3339), minTime.Year(), maxTime.Year())
	}
	if len(r.Metrics) > MaxMetrics {
		return badf("the run has %d metrics, over perfgate's limit of %d a run; a benchmark's output has hundreds at most: split the file into benchmarks (--name), or check that it is benchmark output", len(r.Metrics), MaxMetrics)
	}
	if len(r.Labels) > MaxLabels {
		return badf("the run has %d labels, over perfgate's limit of %d a run; keep the labels that identify the series (model, hardware, settings)", len(r.Labels), MaxLabels)
	}
	for name, v := range r.Metrics {
		if name == "" {
			return badf("a metric has an empty name (value %v); every metric needs a name", v)
		}
		if err := checkName("metric name", name); err != nil {
			return err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return badf("metric %q is %v; only finite values can be stored", name, v)
		}
	}
	for k, v := range r.Labels {
		if k == "" {
			return badf("a label has an empty key (value %q); every label needs a key", v)
		}
		if err := checkName("label key", k); err != nil {
			return err
		}
		if !nameOK(v) {
			return checkName(fmt.Sprintf("label %q", k), v)
		}
	}
	if err := checkName("source format", r.Source.Format); err != nil {
		return err
	}
	if err := checkName("source file", r.Source.File); err != nil {
		return err
	}
	if r.Source.Line < 0 {
		return badf("source line %d is negative; lines count from 1 (0 means unknown)", r.Source.Line)
	}
	if len(r.Command) == 0 && r.ExitCode != 0 {
		return badf("exit code %d without a command; an exit code is recorded only for a command perfgate ran", r.ExitCode)
	}
	total := 0
	for i, a := range r.Command {
		if !utf8.ValidString(a) {
			return badf("command argument %d %q is not valid UTF-8", i, a)
		}
		total += len(a)
	}
	if total > maxTextLen {
		return badf("the command is %d bytes long; the limit is %d", total, maxTextLen)
	}
	if err := checkName("testbed", r.Testbed); err != nil {
		return err
	}
	if len(r.Env) > maxEnv {
		return badf("the environment has %d entries; the limit is %d", len(r.Env), maxEnv)
	}
	for k, v := range r.Env {
		if k == "" {
			return badf("an environment entry has an empty key (value %q); every entry needs a key", v)
		}
		if err := checkName("environment key", k); err != nil {
			return err
		}
		if !nameOK(v) {
			return checkName(fmt.Sprintf("environment %q", k), v)
		}
	}
	if r.Tree != "" && (!r.Dirty || !isLowerHex(r.Tree) || len(r.Tree) > 128) {
		if !r.Dirty {
			return badf("tree %q on a clean run; a working-tree hash is recorded only for dirty runs", r.Tree)
		}
		return badf("tree %q is not a working-tree hash (lowercase hex, at most 128 digits)", r.Tree)
	}
	if err := validRequests(r.Requests); err != nil {
		return err
	}
	if !utf8.ValidString(r.Invalid) {
		return badf("the invalid reason %q is not valid UTF-8", r.Invalid)
	}
	if len(r.Invalid) > maxTextLen {
		return badf("the invalid reason is %d bytes long; the limit is %d", len(r.Invalid), maxTextLen)
	}
	return nil
}

// validRequests checks a request summary: a compact JSON object within
// MaxRequestsLen, so that it survives every backend's round trip byte for
// byte.
func validRequests(b []byte) error {
	if b == nil {
		return nil
	}
	if len(b) > MaxRequestsLen {
		return badf("the request summary is %d bytes long; the limit is %d", len(b), MaxRequestsLen)
	}
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return badf("the request summary %.40q is not a JSON object", b)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, b); err != nil || c.Len() != len(b) || !utf8.Valid(b) || hasControl(string(b)) {
		return badf("the request summary %.40q is not compact JSON (no blanks between tokens, valid UTF-8, no control characters)", b)
	}
	return nil
}

// nameOK reports whether checkName accepts s, without naming it: the
// name of a label's value is formatted only for the error.
func nameOK(s string) bool { return len(s) <= maxNameLen && utf8.ValidString(s) && !hasControl(s) }

func checkName(what, s string) error {
	if len(s) > maxNameLen {
		return badf("%s %.40q... is %d bytes long; the limit is %d", what, s, len(s), maxNameLen)
	}
	if !utf8.ValidString(s) {
		return badf("%s %q is not valid UTF-8", what, s)
	}
	if hasControl(s) {
		return badf("%s %q holds a control character (a newline, ESC, ...); names and labels print on terminals and in CI logs, where one would act: rename it", what, s)
	}
	return nil
}

// hasControl reports whether s holds a C0 or C1 control character (but
// tab, which moves the cursor, no more) or DEL.
func hasControl(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\t') || (r >= 0x7f && r < 0xa0) {
			return true
		}
	}
	return false
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// isSHA reports whether s is a full SHA-1 or SHA-256 object name.
func isSHA(s string) bool { return (len(s) == 40 || len(s) == 64) && isLowerHex(s) }

// isRunID reports whether s has the form of a run id.
func isRunID(s string) bool { return len(s) == 32 && isLowerHex(s) }

// equalIdentity reports whether two runs have the same identity (and so,
// for runs sharing an id, whether the second is a re-ingest of the first).
func equalIdentity(a, b *Run) bool {
	return string(identity(a, nil)) == string(identity(b, nil))
}
