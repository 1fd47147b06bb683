package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/jsontext"
)

// The JSONL interchange: one run per line, in the shape of DESIGN.md,
//
//	{"id":..,"commit":..,"benchmark":..,"time":..,"metrics":{..},"labels":{..},
//	 "source":{"format":..,"file":..,"line":N},"command":[..],"exit_code":N,"dirty":true,"invalid":"..",
//	 "testbed":"..","env":{..},"tree":".."}
//
// where "line" appears when known, "command" and "exit_code" for runs
// perfgate executed, "dirty", "invalid", "testbed", "env" (the facts the
// testbed was derived from) and "tree" (a dirty run's working-tree hash)
// when set. Lines without the later fields (older exports) read as runs
// without them. The time is RFC 3339
// in UTC with nanoseconds; map keys are sorted, so an export is
// deterministic and an export of an import of an export is identical.
//
// An "id" that is not a perfgate run id (32 lowercase hex digits) is
// another system's id, as a converter writes it ("run-0000001"): import
// keeps it as the label ExternalIDLabel and derives the run's own id from
// its content, as for a line without an id. The label is descriptive (it
// does not split series, see gate.DescriptiveLabels) and part of the
// content, so importing the same line again is a no-op.

// maxLineLen bounds one JSONL line.
const maxLineLen = 64 << 20

// ExternalIDLabel is the label that keeps another system's run id.
const ExternalIDLabel = "external_id"

// FieldList names the fields a line may have, for messages.
const FieldList = "id, commit, benchmark, time, metrics, labels, source (format, file, line), command, exit_code, dirty, invalid, testbed, env, tree"

// LineError is an error at a line of a JSONL input.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// Export writes the runs the filter selects as JSONL, in time order, then
// the records about them (ExportRecords), and returns how many runs it
// wrote. It streams the runs from one read transaction.
func (s *Store) Export(w io.Writer, f Filter) (n int, err error) {
	n, _, err = s.ExportRecords(w, f)
	return n, err
}

// ExportRecords is Export, also returning how many records it wrote.
// Records follow the runs, one record line each (AppendRecordJSON: they
// have "v" and "kind", which runs do not): the invalidations of the runs
// written, and the acceptances of the benchmark and commit the filter
// names (every acceptance when it names none; Since does not apply, since
// an acceptance holds from its commit on). Import reads both back. A
// perfgate from before records refuses such a line ("the run has no
// metrics") and imports nothing, rather than drop it.
func (s *Store) ExportRecords(w io.Writer, f Filter) (n, records int, err error) {
	recs, err := s.Records()
	if err != nil {
		return 0, 0, err
	}
	invalidated := map[string]bool{} // run ids with a record, until exported
	for _, r := range recs {
		if r.Kind == RecordInvalidate || r.Kind == RecordRevalidate {
			invalidated[r.Run] = false
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	err = s.Each(f, func(r Run) error {
		buf = AppendJSON(buf[:0], &r)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if _, ok := invalidated[r.ID]; ok {
			invalidated[r.ID] = true
		}
		n++
		return nil
	})
	if err != nil {
		return n, 0, err
	}
	for i := range recs {
		r := &recs[i]
		switch r.Kind {
		case RecordInvalidate, RecordRevalidate:
			if !invalidated[r.Run] {
				continue
			}
		case RecordAccept:
			if (f.Benchmark != "" && r.Benchmark != f.Benchmark) || (f.Commit != "" && r.Commit != f.Commit) {
				continue
			}
		}
		buf = append(AppendRecordJSON(buf[:0], r), '\n')
		if _, err := bw.Write(buf); err != nil {
			return n, records, fmt.Errorf("export: %w", err)
		}
		records++
	}
	if err = bw.Flush(); err != nil {
		err = fmt.Errorf("export: %w", err)
	}
	return n, records, err
}

// recordLineKind reports whether a JSONL line is a record line (it has
// "v" and "kind" at its top level), reading it only when it mentions
// "kind" at all.
func recordLineKind(line []byte) bool {
	if !bytes.Contains(line, []byte(`"kind"`)) {
		return false
	}
	var probe struct {
		V    *json.RawMessage `json:"v"`
		Kind *json.RawMessage `json:"kind"`
	}
	return json.Unmarshal(line, &probe) == nil && probe.V != nil && probe.Kind != nil
}

// ImportOptions configure Import.
type ImportOptions struct {
	// File names the input in errors ("FILE:LINE: ..."); "" and "-" are
	// shown as <stdin>.
	File string
	// BatchSize is the number of runs per write transaction; zero means
	// DefaultBatchSize.
	BatchSize int
	// Progress, when set, is called after each committed batch with the
	// totals so far.
	Progress func(added, skipped int)
	// Unknown, when set, is told of a field this version does not know
	// (a newer perfgate's; field is quoted), once per field name with the
	// line it first appears on. Such fields are ignored, so histories
	// written by newer versions still import and sync.
	Unknown func(line int, field string)
	// Records, when set, is told how many record lines the input held
	// and how many of those records were new; they are stored after the
	// runs, in the same all-or-nothing import.
	Records func(added, total int)
}

// Import reads JSONL runs and stores them, committing a write transaction
// every opts.BatchSize runs, so memory stays bounded and a process killed
// mid-import keeps every committed batch. Lines whose run is already
// stored are skipped (counted in skipped); blank lines are ignored. A bad
// line, an id stored with different content or a read error stops the
// import with an error (a *LineError with the position when the input is
// at fault), after deleting the runs that this import's earlier batches
// stored: bad input stores nothing.
func (s *boltStore) Import(r io.Reader, opts ImportOptions) (added, skipped int, err error) {
	if s.readOnly {
		return 0, 0, fmt.Errorf("import into history %s: %w", s.path, ErrReadOnly)
	}
	name, size := opts.source()
	var ranges [][2]uint64 // seqs stored by committed batches
	fail := func(err error) (int, int, error) {
		if uerr := s.undo(ranges); uerr != nil {
			err = fmt.Errorf("%w; removing the %d runs this import had already stored failed too: %v", err, added, uerr)
		}
		return 0, 0, err
	}
	// One goroutine parses and validates, this one commits: at most two
	// batches wait between them, so memory stays bounded.
	batches := make(chan parsedBatch, 1)
	stop := make(chan struct{})
	defer close(stop)
	go parseBatches(r, name, size, opts.Unknown, batches, stop)
	var recs []Record
	for b := range batches {
		if b.err != nil {
			return fail(b.err)
		}
		recs = append(recs, b.recs...)
		var a, sk int
		var lo, hi uint64
		err := s.update(func(t *txn) error {
			a, sk, lo, hi = 0, 0, 0, 0
			if err := t.internAll(b.runs); err != nil {
				return err
			}
			for i := range b.runs {
				ok, seq, err := t.put(&b.runs[i])
				if err != nil {
					return &LineError{File: name, Line: b.lines[i], Err: err}
				}
				if !ok {
					sk++
					continue
				}
				a++
				if lo == 0 {
					lo = seq
				}
				hi = seq
			}
			return nil
		})
		if err != nil {
			return fail(err)
		}
		if a > 0 {
			ranges = append(ranges, [2]uint64{lo, hi})
		}
		added += a
		skipped += sk
		if opts.Progress != nil {
			opts.Progress(added, skipped)
		}
	}
	if len(recs) > 0 {
		n, err := s.PutRecords(recs)
		if err != nil {
			return fail(fmt.Errorf("%s: storing its %d records: %w", name, len(recs), err))
		}
		if opts.Records != nil {
			opts.Records(n, len(recs))
		}
	}
	return added, skipped, nil
}

// parsedBatch is a batch of validated runs with their line numbers, or
// the error that ends the input.
type parsedBatch struct {
	runs  []Run
	lines []int
	recs  []Record // record lines, validated
	err   error
}

// parseBatches reads JSONL runs from r and sends them in batches of size,
// then closes out. It stops early when stop is closed.
func parseBatches(r io.Reader, name string, size int, warn func(int, string), out chan<- parsedBatch, stop <-chan struct{}) {
	defer close(out)
	send := func(b parsedBatch) bool {
		select {
		case out <- b:
			return true
		case <-stop:
			return false
		}
	}
	b := parsedBatch{runs: make([]Run, 0, size), lines: make([]int, 0, size)}
	// Lines in the shape export writes take fastLine; the names they
	// repeat are kept once (parseValid).
	names := map[string]string{}
	warned := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineLen)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if recordLineKind(line) {
			r, err := ParseRecord(line)
			if err != nil {
				send(parsedBatch{err: &LineError{File: name, Line: n, Err: err}})
				return
			}
			b.recs = append(b.recs, r)
			continue
		}
		v, unknown, err := parseValid(line, names)
		if unknown != "" && !warned[unknown] && warn != nil {
			warned[unknown] = true
			warn(n, unknown)
		}
		if err != nil {
			send(parsedBatch{err: &LineError{File: name, Line: n, Err: err}})
			return
		}
		b.runs = append(b.runs, v.run)
		b.lines = append(b.lines, n)
		if len(b.runs) == size {
			if !send(b) {
				return
			}
			b = parsedBatch{runs: make([]Run, 0, size), lines: make([]int, 0, size)}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = &LineError{File: name, Line: n + 1, Err: badf("the line is longer than %d MiB; each line must hold one run", maxLineLen>>20)}
		} else {
			err = fmt.Errorf("read %s: %w", name, err)
		}
		send(parsedBatch{err: err})
		return
	}
	if len(b.runs) > 0 || len(b.recs) > 0 {
		send(b)
	}
}

// undo deletes the runs with the given seq ranges, in one transaction.
func (s *boltStore) undo(ranges [][2]uint64) error {
	if len(ranges) == 0 {
		return nil
	}
	return s.update(func(t *txn) error {
		for _, r := range ranges {
			for seq := r[0]; seq <= r[1]; seq++ {
				if err := t.deleteSeq(seq); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// source is the input's name for positions ("<stdin>" for none or "-")
// and the runs per batch (DefaultBatchSize unless set).
func (o ImportOptions) source() (name string, size int) {
	name, size = o.File, o.BatchSize
	if name == "" || name == "-" {
		name = "<stdin>"
	}
	if size <= 0 {
		size = DefaultBatchSize
	}
	return name, size
}

// jsonRun is the decoded form of a line; pointers tell absent fields.
type jsonRun struct {
	ID        string             `json:"id"`
	Commit    *string            `json:"commit"`
	Benchmark *string            `json:"benchmark"`
	Time      *string            `json:"time"`
	Metrics   map[string]float64 `json:"metrics"`
	Labels    map[string]string  `json:"labels"`
	Source    struct {
		Format string `json:"format"`
		File   string `json:"file"`
		Line   int    `json:"line"`
	} `json:"source"`
	Command  []string          `json:"command"`
	ExitCode *int              `json:"exit_code"`
	Dirty    bool              `json:"dirty"`
	Invalid  string            `json:"invalid"`
	Testbed  string            `json:"testbed"`
	Env      map[string]string `json:"env"`
	Tree     string            `json:"tree"`
	Requests json.RawMessage   `json:"requests"`
}

// lineDecoder decodes lines, reusing its reader.
type lineDecoder struct{ rd bytes.Reader }

// decode parses one JSONL line into a run (not yet validated). A field
// it does not know is ignored and named in unknown (the first one, quoted):
// a newer perfgate may add fields, and its history must still import.
func (d *lineDecoder) decode(line []byte) (_ Run, unknown string, _ error) {
	var j jsonRun
	d.rd.Reset(line)
	dec := json.NewDecoder(&d.rd)
	dec.DisallowUnknownFields()
	err := dec.Decode(&j)
	if err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			unknown = field
			j = jsonRun{}
			d.rd.Reset(line)
			dec = json.NewDecoder(&d.rd)
			err = dec.Decode(&j)
		}
	}
	r, err := d.finish(line, dec, &j, err)
	return r, unknown, err
}

func (d *lineDecoder) finish(line []byte, dec *json.Decoder, j *jsonRun, err error) (Run, error) {
	if err != nil {
		return Run{}, jsonError(err)
	}
	if off := dec.InputOffset(); len(bytes.TrimSpace(line[off:])) > 0 {
		return Run{}, badf("unexpected text after the run at column %d; each line must hold exactly one JSON object", off+1)
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"commit", j.Commit != nil}, {"benchmark", j.Benchmark != nil}, {"time", j.Time != nil}, {"metrics", j.Metrics != nil}} {
		if !f.ok {
			return Run{}, badf("the run has no %q; every line needs commit, benchmark, time and metrics", f.name)
		}
	}
	t, err := time.Parse(time.RFC3339Nano, *j.Time)
	if err != nil {
		return Run{}, badf("time %q is not an RFC 3339 time such as \"2024-05-01T12:00:00Z\"", *j.Time)
	}
	r := Run{
		ID:        j.ID,
		Commit:    *j.Commit,
		Benchmark: *j.Benchmark,
		Time:      t.UTC(),
		Metrics:   j.Metrics,
		Labels:    j.Labels,
		Source:    Source{Format: j.Source.Format, File: j.Source.File, Line: j.Source.Line},
		Command:   j.Command,
		Dirty:     j.Dirty,
		Invalid:   j.Invalid,
		Testbed:   j.Testbed,
		Tree:      j.Tree,
	}
	if len(j.Requests) > 0 && string(j.Requests) != "null" {
		var c bytes.Buffer
		if err := json.Compact(&c, j.Requests); err != nil {
			return Run{}, badf("the request summary is not JSON: %v", err)
		}
		r.Requests = c.Bytes()
	}
	if len(j.Env) > 0 {
		r.Env = j.Env
	}
	if len(r.Command) == 0 {
		r.Command = nil // "command":[] is no command, as the store encodes it
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	if r.ID != "" && !isRunID(r.ID) {
		if old, ok := r.Labels[ExternalIDLabel]; ok && old != r.ID {
			return Run{}, badf("id %q is not a perfgate run id, so it would be kept as label %s, but the run has label %s=%q already; remove one of them", r.ID, ExternalIDLabel, ExternalIDLabel, old)
		}
		r.Labels[ExternalIDLabel] = r.ID
		r.ID = ""
	}
	if j.ExitCode != nil {
		if len(j.Command) == 0 {
			return Run{}, badf("exit_code %d without a command; an exit code is recorded only for a command perfgate ran", *j.ExitCode)
		}
		r.ExitCode = *j.ExitCode
	}
	return r, nil
}

// jsonError rephrases an encoding/json error for a user.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badf("not valid JSON at column %d (%v); each line must be one JSON object", syn.Offset, syn)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badf("a line must be a JSON object, not %s", typ.Value)
		}
		return badf("field %q is %s, want %s", typ.Field, typ.Value, jsonType(typ.Type.Kind().String()))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return badf("the JSON object is cut off; each line must hold one complete object")
	}
	msg := err.Error()
	if field, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return badf("unknown field %s; a run has %s", field, FieldList)
	}
	return badf("%s", strings.TrimPrefix(msg, "json: "))
}

func jsonType(kind string) string {
	switch kind {
	case "float64", "int":
		return "a number"
	case "string", "ptr":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array of strings"
	case "bool":
		return "true or false"
	}
	return kind
}

// AppendJSON appends the JSONL form of a run (without the newline) to b.
func AppendJSON(b []byte, r *Run) []byte {
	b = append(b, `{"id":`...)
	b = jsontext.AppendString(b, r.ID)
	b = append(b, `,"commit":`...)
	b = jsontext.AppendString(b, r.Commit)
	b = append(b, `,"benchmark":`...)
	b = jsontext.AppendString(b, r.Benchmark)
	b = append(b, `,"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","metrics":`...)
	b = appendMetricsJSON(b, r.Metrics)
	b = append(b, `,"labels":`...)
	b = appendStringsJSON(b, r.Labels)
	b = append(b, `,"source":{"format":`...)
	b = jsontext.AppendString(b, r.Source.Format)
	b = append(b, `,"file":`...)
	b = jsontext.AppendString(b, r.Source.File)
	if r.Source.Line > 0 {
		b = append(b, `,"line":`...)
		b = strconv.AppendInt(b, int64(r.Source.Line), 10)
	}
	b = append(b, '}')
	if len(r.Command) > 0 {
		b = append(b, `,"command":[`...)
		for i, a := range r.Command {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsontext.AppendString(b, a)
		}
		b = append(b, `],"exit_code":`...)
		b = strconv.AppendInt(b, int64(r.ExitCode), 10)
	}
	if r.Dirty {
		b = append(b, `,"dirty":true`...)
	}
	if r.Invalid != "" {
		b = append(b, `,"invalid":`...)
		b = jsontext.AppendString(b, r.Invalid)
	}
	if r.Testbed != "" {
		b = append(b, `,"testbed":`...)
		b = jsontext.AppendString(b, r.Testbed)
	}
	if len(r.Env) > 0 {
		b = append(b, `,"env":`...)
		b = appendStringsJSON(b, r.Env)
	}
	if r.Tree != "" {
		b = append(b, `,"tree":`...)
		b = jsontext.AppendString(b, r.Tree)
	}
	if len(r.Requests) > 0 {
		b = append(b, `,"requests":`...)
		b = append(b, r.Requests...)
	}
	return append(b, '}')
}

// appendMetricsJSON appends metrics as a JSON object.
func appendMetricsJSON(b []byte, m map[string]float64) []byte {
	return appendObjectJSON(b, m, appendNumber)
}

// appendStringsJSON appends labels or an environment as a JSON object.
func appendStringsJSON(b []byte, m map[string]string) []byte {
	return appendObjectJSON(b, m, jsontext.AppendString)
}

// appendObjectJSON appends m as a JSON object, keys sorted, each value
// written by value.
func appendObjectJSON[V any](b []byte, m map[string]V, value func([]byte, V) []byte) []byte {
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontext.AppendString(b, k)
		b = append(b, ':')
		b = value(b, m[k])
	}
	return append(b, '}')
}

// appendNumber formats a finite float as encoding/json does: the shortest
// representation that parses back to the same value.
func appendNumber(b []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b) - start; n >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}
