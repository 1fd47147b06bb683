// Package ingest owns the first stage of perfgate's data flow: reading
// benchmark output (a file, stdin, or a command's captured output),
// detecting its format, and turning every result block into a Result whose
// metrics use the canonical vocabulary of package metric.
//
// A Reader streams: it reads its input line by line, hands lines to the
// parser of the detected format, and returns results as their blocks
// complete (Scan/Result/Err, like bufio.Scanner). Structured documents
// (JSON, YAML, CSV) are decoded whole, since their meaning depends on the
// whole document; one larger than Options.MaxDocBytes is an error. A
// malformed or cut-off block is a positioned *Error ("file:line: what,
// and what to do"), never a panic and never a silently partial result;
// the input then stores nothing (Go benchmark output, read as benchstat
// reads it, is the one exception: see below).
//
// # Truncation
//
// One rule for every format. A block (a result block, report or table)
// that ends without its end marker — its closing rule or bottom border —
// because the input ends or other output follows is kept, with a warning
// naming the line after which it ends, when it holds everything its tool
// prints before that marker; otherwise it was cut off, which is a
// positioned error. What "everything" is, by format:
//   - vllm, sglang: Successful requests, a throughput, the last of the
//     default latency sections, with as many statistics as the first
//     (SGLang's diffusion block: Successful requests, the request
//     throughput, Latency Mean and Latency P99).
//   - trtllm-bench: the request throughput, an output or total throughput,
//     a latency, and every latency breakdown with all its statistics. An
//     overview without any breakdown, as blog posts and docs paste it, is
//     kept with a warning saying so, whichever label set it prints.
//   - guidellm console: a row for each of the report's benchmarks, counted
//     in the table before (v0.4+: the first table that closed; v0.2/v0.3:
//     the Benchmarks Info table).
//   - aisbench, mindie, genai-perf and aiperf console tables: the tools
//     print no row count, so a table without its bottom border can never
//     be told complete and is an error, as is a row without its closing
//     separator (the only cut a markdown vLLM results table, which has no
//     bottom border, can show).
//   - JSON and CSV documents: a document cut short does not decode, or its
//     last CSV row has fewer cells than its header: an error there. JSONL
//     cut at a line break reads as fewer results, which cannot be told.
//   - YAML has no end marker and still parses when cut at a line break: a
//     guidellm benchmark must hold every distribution guidellm writes and
//     as many percentiles for each latency (else an error at the last
//     line); a report cut between two benchmarks cannot be told from a
//     shorter one.
//   - A block that ends without its end marker because the input ends,
//     and whose last line is the input's last and has no line break, was
//     cut inside that line (a value may have lost its last digits: "P99
//     ITL (ms): 38" where the tool printed 383.97), whatever it holds:
//     an error at that line (vllm, sglang, trtllm-bench; the console
//     tables are errors without their border already).
//   - gobench: every result line is a block of its own; a line cut short
//     is a bad line, which, as benchstat does, is left out with a warning
//     (only output without any result is an error).
//   - mlperf: a LoadGen summary ends at "No errors encountered during
//     test."; before it, it must hold the scenario, its result and the
//     validity, and, once its Additional Stats began, their 99.90
//     percentile latency.
//
// Formats come in families, chosen by sniffing the head of the input:
//   - text: console output; every text parser sees every line, so a log
//     that mixes server lines with result blocks of several tools parses.
//   - json: one JSON document, JSONL, or several concatenated objects;
//     each object goes to the first document format that claims it.
//   - yaml: the same document formats, decoded from YAML.
//   - csv: per-task CSV exports, chosen by their header.
//   - gobench: Go testing benchmark output, read with x/perf/benchfmt, also
//     indented as a literal block (reStructuredText, markdown) or with a
//     benchmark's own output between its name and its numbers.
//
// # Documents
//
// Results are kept in documents as often as in logs. A YAML document the
// structured readers reject — it is not YAML after all, or its objects
// match no format — is read again by the text readers: markdown with
// front matter ("---" / "sidebar_position: 3" / "---", as Docusaurus,
// Hugo and Jekyll pages start), a recipe whose guide, with the console
// output, is a block scalar ("guide: |"). A JSON document whose objects
// match no format has its string values of several lines read as
// console output (a block never spans two strings; its lines have the
// line of the string). When the text readers find nothing either, the
// structured readers' error stands.
//
// # Sections
//
// The text reader notes the markdown headings of its input ("#" to
// "######", outside fenced code blocks; not rules, banners or
// "Label: 12" lines commented out with "# "). A result under a heading
// that has the benchmark name and labels of an earlier result of the
// input, under another heading, gets a warning: stored at one commit,
// the two become repetitions of one series (an optimisation log keeps
// one section per change). With Options.SectionLabel (perfgate's
// --section-label NAME) each result of console output gets its nearest
// heading above as label NAME instead, made inert (control characters
// dropped, blanks folded, at most MaxHeadingBytes).
//
// # Labels
//
// A label value that is an unexpanded shell variable ("$input_len",
// "${ISL}": a command line copied from a script above its output) names
// no setting and is left out with a warning.
//
// # Formats
//
// Text (console output, every parser sees every line): vllm, sglang
// (bench_serving), vllm-throughput, vllm-latency, vllm-table (markdown
// results tables), trtllm-bench, guidellm (console tables), genai-perf and
// aiperf (console tables), mindie, aisbench, mlperf (MLPerf Inference
// LoadGen mlperf_log_summary.txt), load-table (load curves typed by hand
// as markdown tables, read only from a page where no other format found a
// result). Documents (JSON, JSONL or YAML; the
// first format whose Match claims an object converts it): aisbench-json,
// genai-bench (run JSON), aiperf and genai-perf (profile exports),
// generic ({"metrics": {...}}), guidellm (report v1 and v2),
// inference-perf (lifecycle reports), llm-d (Benchmark Report v0.2,
// v0.2.1), llmperf, sglang-one-batch (bench_one_batch_server JSONL),
// vllm-json, sglang-jsonl, vllm-throughput, vllm-latency. CSV: aiperf,
// genai-perf, aisbench-csv. And gobench. Formats lists the names
// --format accepts; each format's file documents its mapping.
//
// # Repeated runs and documents that are not results
//
// Tools that repeat a run write a file per repetition beside an
// aggregate of their own (vllm bench sweep serve, AIPerf
// --num-profile-runs, inference-perf's stages): DirInputs lists the run
// files of such a directory, once each, and why each other file is left
// out. The runs of one configuration parse to results of one name and
// identity labels, repetitions of one series. A document recognised as a
// tool's aggregate or as a companion that holds no result (AIPerf's
// profile_export_aiperf_aggregate.json/.csv, inference-perf's Prometheus
// report, genai-bench's experiment metadata) is never a result: it is left
// out with a note (Reader.Notes), not refused. A result may carry its
// tool's own verdict that the run is invalid (Result.Invalid: MLPerf's
// "Result is : INVALID").
//
// # Per-request measurements
//
// A result whose file carries each request's latencies (vLLM and SGLang
// per-request lists, AIPerf's profile_export.jsonl records, guidellm's
// kept requests, genai-bench's individual_request_metrics, inference-perf's
// per_request_lifecycle_metrics.json) gets a bounded
// summary of them (Result.Requests, package slo), and with Options.SLO
// exact request_goodput and slo_attainment metrics (requests.go).
//
// Absent values (N/A, /, -, None, not set, null) are left out of Metrics,
// never stored as zero. Non-finite values are dropped with a warning. A
// result that completed no request (completed is 0) has no latency: its
// *_ms statistics, which tools print as 0, are left out with a warning.
package ingest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/suggest"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/slo"
)

// Result is one benchmark result block.
type Result struct {
	Format   string             `json:"format"`
	Name     string             `json:"name"`
	Metrics  map[string]float64 `json:"metrics"`
	Labels   map[string]string  `json:"labels"`
	File     string             `json:"file,omitempty"`
	Line     int                `json:"line,omitempty"`
	Warnings []string           `json:"warnings,omitempty"`
	// Invalid, when not empty, is the tool's own verdict that the run is
	// not valid (MLPerf LoadGen's "Result is : INVALID"); perfgate ingest
	// stores the run marked invalid, so it is never a baseline.
	Invalid string `json:"invalid,omitempty"`
	// Requests summarises the result's per-request measurements, when its
	// file carries them (see requests.go); nil otherwise.
	Requests *slo.Summary `json:"requests,omitempty"`

	perRequest *requestSet // the requests, until the reader summarises them
}

// NewResult returns an empty result of the given format that starts at line.
func NewResult(format string, line int) Result {
	return Result{Format: format, Line: line, Metrics: map[string]float64{}, Labels: map[string]string{}}
}

// Set stores a metric value under its canonical name (metric.Canonical),
// dropping non-finite values with a warning.
func (r *Result) Set(name string, v float64) {
	name = metric.Canonical(name)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("metric %s is %v; left out", name, v))
		return
	}
	if r.Metrics == nil {
		r.Metrics = map[string]float64{}
	}
	r.Metrics[name] = v
}

// metricSources remembers the source name (a unit, a JSON key) each
// metric of a result was read from, so that two source names that
// normalise to one metric name ("a-b/op" and "a_b/op" both become
// a_b_per_op) are an error naming both, never one value silently kept.
type metricSources map[string]string

// claim records that metric name comes from src (described for a
// message: `unit "ns/op"`) and returns the message of a clash, or "".
func (m metricSources) claim(name, src string) string {
	other, ok := m[name]
	if !ok {
		m[name] = src
		return ""
	}
	if other == src {
		return fmt.Sprintf("%s appears twice; keep one of its values", src)
	}
	return fmt.Sprintf("%s and %s both become metric %q, so one value would be lost; rename one of them", other, src, name)
}

// SetLabel stores a label, normalizing numbers ("10.00" -> "10",
// "Infinity" -> "inf") so labels from different tools compare. Absent
// values are skipped.
//
// A value that is an unexpanded shell variable ("$input_len",
// "${ISL}"), as a command line copied from a script states it, names no
// setting: it is left out with a warning.
func (r *Result) SetLabel(key, value string) {
	if v := strings.Trim(strings.TrimSpace(value), `'"`); isShellVar(v) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("label %s is the unexpanded shell variable %s (a command line copied from a script); left out: pass its value with --label %s=VALUE", key, Quote(v), key))
		return
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	setLabel(r.Labels, key, value)
}

// isShellVar reports "$name", "$1" and "${...}".
func isShellVar(s string) bool {
	if len(s) < 2 || s[0] != '$' {
		return false
	}
	if s[1] == '{' {
		return len(s) > 3 && s[len(s)-1] == '}' && !strings.ContainsAny(s[2:len(s)-1], "{}")
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Error is a positioned parse error.
type Error struct {
	File string
	Line int
	Msg  string
	Err  error // optional cause, for errors.Is
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", file, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", file, e.Msg)
}

// ErrUnrecognized is wrapped by the error returned when no format
// recognises the input.
var ErrUnrecognized = errors.New("unrecognised benchmark output")

// Emit receives completed results from a parser.
type Emit func(Result)

// LineParser parses console output line by line. Line receives each line
// (1-based number, without its terminator, with ANSI codes and a trailing
// CR removed); End is called once at the end of input with the number of
// the last line, and must report a block that was started but not
// completed as an error. Errors should be *Error values.
type LineParser interface {
	Line(n int, line string, emit Emit) error
	End(n int, emit Emit) error
}

// unterminatedNoter is implemented by the LineParsers whose blocks can
// end without their end marker: lastUnterminated is called, before the
// last Line, when the last line of the input (line n) has no line break,
// which is where a copy or a download that was cut ends. A block without
// its end marker that holds that line is cut off (see Truncation).
type unterminatedNoter interface {
	lastUnterminated(n int)
}

// noteUnterminated tells the parsers that the line being read is the last
// and has no line break.
func (r *Reader) noteUnterminated() {
	for _, p := range r.parsers {
		if u, ok := p.(unterminatedNoter); ok {
			u.lastUnterminated(r.lineNo)
		}
	}
}

// TextFormat is a console-output format.
type TextFormat struct {
	Name string
	Desc string
	New  func(file string) LineParser
	// Auto, when set, makes the parser used in auto mode instead of New:
	// one that also emits the results of the formats named in Covers,
	// whose own parsers auto mode then leaves out. Related formats so
	// share one scan of every line (New stays the forced-format parser).
	Auto   func(file string) LineParser
	Covers []string
}

// DocFormat is a structured-document format (JSON, JSONL line, YAML).
// Match reports whether a decoded top-level object belongs to the format;
// Convert turns it into results (their Line is set by the caller when 0).
type DocFormat struct {
	Name    string
	Desc    string
	Match   func(obj map[string]any) bool
	Convert func(obj map[string]any) ([]Result, error)
	// ConvertFile, when set, is used instead of Convert and is also given
	// the input's name, for formats whose files are named by what they
	// hold (inference-perf's stage_N_lifecycle_metrics.json).
	ConvertFile func(obj map[string]any, file string) ([]Result, error)
}

// CSVFormat is a CSV export format chosen by its header row.
type CSVFormat struct {
	Name    string
	Desc    string
	Match   func(header []string) bool
	Convert func(rows [][]string) ([]Result, error) // rows[0] is the header
	// ConvertLines, when set, is used instead of Convert; lines[i] is the
	// 1-based line on which rows[i] starts, for errors and Result.Line.
	ConvertLines func(rows [][]string, lines []int) ([]Result, error)
}

var (
	textFormats []TextFormat
	docFormats  []DocFormat
	csvFormats  []CSVFormat
)

// RegisterText, RegisterDoc and RegisterCSV add formats; they are called
// from init functions of the format files. Order is priority order.
func RegisterText(f TextFormat) { textFormats = append(textFormats, f) }
func RegisterDoc(f DocFormat)   { docFormats = append(docFormats, f) }
func RegisterCSV(f CSVFormat)   { csvFormats = append(csvFormats, f) }

// GoBenchFormat is the name of the Go testing benchmark format.
const GoBenchFormat = "gobench"

// Formats lists every format name --format accepts, "auto" first.
func Formats() []string {
	out := []string{"auto"}
	seen := map[string]bool{"auto": true}
	addName := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, f := range textFormats {
		addName(f.Name)
	}
	for _, f := range docFormats {
		addName(f.Name)
	}
	for _, f := range csvFormats {
		addName(f.Name)
	}
	addName(GoBenchFormat)
	return out
}

// Options configure a Reader.
type Options struct {
	// Format forces a format by name; "" or "auto" detects.
	Format string
	// MaxDocBytes bounds a structured document (JSON, YAML, CSV, Go
	// benchmark output), which is read whole: a larger input is an
	// error, read no further than the limit. Zero means
	// DefaultMaxDocBytes. Text output streams and is not bounded.
	MaxDocBytes int64
	// SectionLabel, when set, stores the nearest markdown heading above
	// each result of console output as the label of that name (see
	// "Sections").
	SectionLabel string
	// SLO, when set, is the objective whose goodput and attainment are
	// computed exactly from the requests of a result that carries them
	// (requests.go): metrics request_goodput, slo_attainment and
	// slo_attainment_ttft/_tpot/_e2el.
	SLO *slo.Objective
}

// DefaultMaxDocBytes is the default bound on a structured document. Decoded
// into Go values a JSON document takes about five times its size (a 1 GiB
// file took 5.3 GB), so this keeps a parse under about 1.3 GB.
const DefaultMaxDocBytes = 256 << 20

// DocTooLargeError is the cause (errors.As) of the *Error for a
// structured document over the limit.
type DocTooLargeError struct {
	Family string // "json", "yaml", "csv", "gobench"
	Limit  int64
}

func (e *DocTooLargeError) Error() string {
	return fmt.Sprintf("the %s document is larger than %s, the most perfgate reads of one document (it is read whole, and decoding takes several times its size in memory); raise the limit with perfgate parse or ingest --max-doc-size (or PERFGATE_MAX_DOC_SIZE), e.g. --max-doc-size %s, or split the file",
		e.Family, FormatBytes(e.Limit), FormatBytes(e.Limit*4))
}

// FormatBytes prints a size in the units --max-doc-size accepts.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// Reader reads results from one input.
type Reader struct {
	file   string
	opts   Options
	br     *bufio.Reader
	queue  []Result
	cur    Result
	err    error
	done   bool
	start  bool
	count  int
	family string
	tried  []string
	notes  []string // documents recognised and deliberately not read

	// text family state
	parsers []LineParser
	lineNo  int
	// docErr is the structured readers' rejection of a document the text
	// readers then read (docfallback.go); it is the error when they find
	// nothing either.
	docErr  error
	docData []byte // the YAML document the text readers read instead
	// heads are the markdown headings read so far, ids the identities of
	// the results returned so far (sections.go).
	heads   headingTracker
	ids     map[string]sectionSeen
	repeats sectionRepeats
	// records accumulates AIPerf's per-request records (aiperfrecords.go),
	// ipRecords inference-perf's (inferenceperfrecords.go).
	records   *aiperfRecords
	ipRecords *ipRecords
}

// NewReader returns a Reader over r; file names the input in errors and
// results ("-" or "" for stdin).
func NewReader(r io.Reader, file string, opts Options) *Reader {
	if file == "" || file == "-" {
		file = "<stdin>"
	}
	return &Reader{file: file, opts: opts, br: bufio.NewReaderSize(r, 1<<16)}
}

// Scan advances to the next result. It returns false at the end of input
// or on error; Err tells which.
func (r *Reader) Scan() bool {
	for len(r.queue) == 0 {
		if r.done || r.err != nil {
			return false
		}
		if !r.start {
			r.start = true
			if err := r.detect(); err != nil {
				r.err = err
				return false
			}
			continue
		}
		r.step()
	}
	r.cur = r.queue[0]
	r.queue = r.queue[1:]
	if r.cur.File == "" {
		r.cur.File = r.file
	}
	if r.cur.Metrics == nil {
		r.cur.Metrics = map[string]float64{}
	}
	if r.cur.Labels == nil {
		r.cur.Labels = map[string]string{}
	}
	dropLatenciesOfNothing(&r.cur)
	r.applySection(&r.cur)
	r.count++
	return true
}

// dropLatenciesOfNothing leaves out the time statistics (every *_ms
// metric) of a result that completed no request: tools print and save
// 0.0 for them (vLLM's np.mean(ttfts or 0) when every request failed), but
// a run that served nothing has no latency, and a stored zero would read
// as the best run in history, compare and charts.
func dropLatenciesOfNothing(res *Result) {
	if c, ok := res.Metrics["completed"]; !ok || c != 0 {
		return
	}
	var dropped []string
	for k := range res.Metrics {
		if strings.HasSuffix(k, "_ms") {
			dropped = append(dropped, k)
		}
	}
	if len(dropped) == 0 {
		return
	}
	sort.Strings(dropped)
	for _, k := range dropped {
		delete(res.Metrics, k)
	}
	res.Warnings = append(res.Warnings, fmt.Sprintf("no request completed: its %d latency statistics (%s) are absent, not 0", len(dropped), summarizeNames(dropped, 4)))
}

// summarizeNames lists the first n names and how many more there are.
func summarizeNames(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// Result returns the result Scan found.
func (r *Reader) Result() Result { return r.cur }

// Notes returns what the input held that was recognised and deliberately
// not read as results (a tool's own aggregate of runs read elsewhere), one
// sentence each, for the caller to print on stderr.
func (r *Reader) Notes() []string { return r.notes }

// Err returns the first error met, or nil at a clean end of input.
func (r *Reader) Err() error { return r.err }

func (r *Reader) emit(res Result) {
	if res.perRequest != nil {
		summarise(&res, r.opts.SLO)
	}
	r.queue = append(r.queue, res)
}

func (r *Reader) errorf(line int, format string, args ...any) error {
	return &Error{File: r.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// detect chooses the family (and, for text, the parsers) from the head.
func (r *Reader) detect() error {
	head, _ := r.br.Peek(1 << 16)
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	name := strings.ToLower(strings.TrimSpace(r.opts.Format))
	if name == "" || name == "auto" {
		r.family = sniff(head)
		switch r.family {
		case "text":
			r.parsers = autoTextParsers(r.file)
			for _, f := range textFormats {
				r.tried = append(r.tried, f.Name)
			}
		case "json", "yaml":
			for _, f := range docFormats {
				r.tried = append(r.tried, f.Name)
			}
		case "csv":
			for _, f := range csvFormats {
				r.tried = append(r.tried, f.Name)
			}
		case GoBenchFormat:
			r.tried = []string{GoBenchFormat}
		}
		return nil
	}
	r.tried = []string{name}
	if name == GoBenchFormat {
		r.family = GoBenchFormat
		return nil
	}
	// One name can cover formats of several families (vLLM's bench
	// throughput prints text and writes --output-json; genai-perf writes
	// JSON and CSV): JSON input goes to the document format, a first line
	// with commas to the CSV one.
	if looksJSON(head) {
		for _, f := range docFormats {
			if f.Name == name {
				r.family = "json"
				return nil
			}
		}
	} else if first, _, _ := bytes.Cut(head, []byte("\n")); bytes.IndexByte(first, ',') >= 0 {
		for _, f := range csvFormats {
			if f.Name == name {
				r.family = "csv"
				return nil
			}
		}
	}
	if looksYAML(head) {
		// guidellm writes YAML and prints console tables under one name.
		for _, f := range docFormats {
			if f.Name == name {
				r.family = "yaml"
				return nil
			}
		}
	}
	for _, f := range textFormats {
		if f.Name == name {
			r.family = "text"
			r.parsers = append(r.parsers, f.New(r.file))
		}
	}
	if r.family != "" {
		return nil
	}
	for _, f := range docFormats {
		if f.Name == name {
			r.family = "json"
			if !looksJSON(head) {
				r.family = "yaml"
			}
			return nil
		}
	}
	for _, f := range csvFormats {
		if f.Name == name {
			r.family = "csv"
			return nil
		}
	}
	return &Error{File: r.file, Msg: UnknownFormat(r.opts.Format)}
}

// UnknownFormat is the complaint about a --format that names no format:
// the closest valid name, and all of them.
func UnknownFormat(name string) string {
	msg := fmt.Sprintf("--format %q is not a known format", name)
	if s := suggest.Closest(strings.ToLower(strings.TrimSpace(name)), Formats()); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg + "; valid formats: " + strings.Join(Formats(), ", ")
}

// forced reports the format name the user forced, or "".
func (r *Reader) forced() string {
	n := strings.ToLower(strings.TrimSpace(r.opts.Format))
	if n == "auto" {
		return ""
	}
	return n
}

func (r *Reader) step() {
	switch r.family {
	case "text":
		r.stepText()
	default:
		limit := r.opts.MaxDocBytes
		if limit <= 0 {
			limit = DefaultMaxDocBytes
		}
		data, err := io.ReadAll(io.LimitReader(r.br, limit+1))
		r.done = true
		if err != nil {
			r.err = &Error{File: r.file, Msg: fmt.Sprintf("read failed: %v", err)}
			return
		}
		if int64(len(data)) > limit {
			tooLarge := &DocTooLargeError{Family: r.family, Limit: limit}
			r.err = &Error{File: r.file, Msg: tooLarge.Error(), Err: tooLarge}
			return
		}
		switch r.family {
		case "json":
			r.err = r.parseJSON(data)
		case "yaml":
			r.err = r.parseYAML(data)
		case "csv":
			r.err = r.parseCSV(data)
		case GoBenchFormat:
			r.err = r.parseGoBench(data)
		}
		if r.err != nil && r.fallBack(data) {
			return
		}
		if r.err == nil && len(r.queue) == 0 && len(r.notes) == 0 {
			r.err = r.unrecognized()
		}
	}
}

func (r *Reader) unrecognized() error {
	return &Error{File: r.file, Msg: fmt.Sprintf("%v: no result block found (tried formats: %s)%s; check that the file holds a complete benchmark result, or force a format with --format (valid: %s)",
		ErrUnrecognized, strings.Join(r.tried, ", "), r.refusals(), strings.Join(Formats(), ", ")), Err: ErrUnrecognized}
}

// fallbackParser is a text parser whose results count only when no other
// parser found any (the load tables typed by hand: see loadtable.go).
type fallbackParser interface {
	holdsForFallback()
	flush(emit Emit) error
	refusal() string
}

// flushFallbacks gives the held results of the fallback parsers, at the
// end of an input where no other parser found a result.
func (r *Reader) flushFallbacks(emit Emit) error {
	for _, p := range r.parsers {
		if f, ok := p.(fallbackParser); ok {
			if err := f.flush(emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// refusals says what the fallback parsers saw but could not read.
func (r *Reader) refusals() string {
	var b strings.Builder
	for _, p := range r.parsers {
		if f, ok := p.(fallbackParser); ok {
			b.WriteString(f.refusal())
		}
	}
	return b.String()
}

// stepText feeds lines until at least one result is queued or input ends.
func (r *Reader) stepText() {
	emit := r.emit // one method value, not one allocation per parser and line
	for len(r.queue) == 0 {
		line, err := r.readLine()
		if len(line) > 0 {
			r.lineNo++
			if err == io.EOF && line[len(line)-1] != '\n' {
				r.noteUnterminated()
			}
			line = cleanLine(line)
			r.heads.line(r.lineNo, line)
			for _, p := range r.parsers {
				if perr := p.Line(r.lineNo, line, emit); perr != nil {
					r.err = perr
					return
				}
			}
		}
		if err != nil {
			r.done = true
			if err != io.EOF {
				r.err = &Error{File: r.file, Line: r.lineNo, Msg: fmt.Sprintf("read failed: %v", err)}
				return
			}
			before := len(r.queue)
			for _, p := range r.parsers {
				if perr := p.End(r.lineNo, emit); perr != nil {
					r.err = perr
					return
				}
			}
			if r.count == 0 && len(r.queue) == 0 {
				if err := r.flushFallbacks(emit); err != nil {
					r.err = err
					return
				}
			}
			// Results flushed at the end keep file order.
			tail := r.queue[before:]
			sort.SliceStable(tail, func(i, j int) bool { return tail[i].Line < tail[j].Line })
			if r.count == 0 && len(r.queue) == 0 {
				r.err = r.unrecognized()
				if r.docErr != nil {
					r.err = r.textFallbackEnd()
				}
			}
			return
		}
	}
}

// MaxLineBytes is how much of one text line the parsers see: a longer line
// (a progress bar redrawn with carriage returns for hours, a binary blob in
// a log) is cut to its first MaxLineBytes bytes and the rest skipped, so
// reading a command's output or a file takes bounded memory. No result
// line is anywhere near this long.
const MaxLineBytes = 1 << 20

// readLine returns the next line with its terminator, at most
// MaxLineBytes of it (and the terminator when it was cut).
func (r *Reader) readLine() (string, error) {
	frag, err := r.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return string(frag), err
	}
	buf := append([]byte(nil), frag...)
	for err == bufio.ErrBufferFull {
		frag, err = r.br.ReadSlice('\n')
		if room := MaxLineBytes - len(buf); room > 0 {
			buf = append(buf, frag[:min(room, len(frag))]...)
		}
	}
	if len(buf) >= MaxLineBytes && len(frag) > 0 && frag[len(frag)-1] == '\n' && buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n')
	}
	return string(buf), err
}

// cleanLine drops the terminator, a trailing CR and ANSI escape codes.
func cleanLine(s string) string {
	s = strings.TrimSuffix(s, "\n")
	s = strings.TrimSuffix(s, "\r")
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = StripANSI(s)
	}
	return s
}

// sniff chooses a family from the first bytes of the input.
func sniff(head []byte) string {
	if looksJSON(head) {
		return "json"
	}
	if looksGoBench(head) {
		return GoBenchFormat
	}
	if looksCSV(head) {
		return "csv"
	}
	if looksYAML(head) {
		return "yaml"
	}
	return "text"
}

func looksJSON(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') {
		return false
	}
	// A log whose first line is "[2025-03-18 11:42:57] [INFO] ..." starts
	// like a JSON array too: a syntax error on the first line means text.
	// (Running out of head is fine; a later syntax error stays JSON, so
	// it is reported where it is.)
	first := bytes.IndexByte(t, '\n')
	if first < 0 {
		first = len(t)
	}
	dec := json.NewDecoder(bytes.NewReader(LooseJSON(t[:first])))
	for {
		if _, err := dec.Token(); err != nil {
			var se *json.SyntaxError
			return !errors.As(err, &se)
		}
	}
}
