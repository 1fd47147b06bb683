package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"golang.org/x/perf/benchfmt"
)

// parseJSON decodes one JSON document, JSONL, or concatenated values, and
// dispatches every top-level object (or every object of a top-level array)
// to the first DocFormat that matches it.
func (r *Reader) parseJSON(data []byte) error {
	data = LooseJSON(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		start := dec.InputOffset()
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			r.flushAIPerfRecords()
			r.flushInferencePerfRecords()
			return nil
		}
		// The value begins after any whitespace following the previous one.
		for start < int64(len(data)) && strings.ContainsRune(" \t\r\n", rune(data[start])) {
			start++
		}
		line := lineAt(data, start)
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return r.errorf(lineAt(data, se.Offset), "invalid JSON: %v; the file may be truncated or not JSON (fix the file, or pass --format)", err)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return r.errorf(lineAt(data, int64(len(data))), "JSON value starting at line %d is truncated; re-export the complete file", line)
			}
			return r.errorf(line, "invalid JSON: %v", err)
		}
		if err := r.dispatchDoc(v, line); err != nil {
			return err
		}
	}
}

// parseYAML decodes one or more YAML documents.
func (r *Reader) parseYAML(data []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return &Error{File: r.file, Line: yamlErrLine(err), Err: errNotYAML, Msg: fmt.Sprintf("invalid YAML: %v; check the file, or pass --format", err)}
		}
		var v any
		if err := node.Decode(&v); err != nil {
			return &Error{File: r.file, Line: node.Line, Err: errNotYAML, Msg: fmt.Sprintf("invalid YAML: %v", err)}
		}
		before := len(r.queue)
		if err := r.dispatchDoc(normalizeYAML(v), node.Line); err != nil {
			return err
		}
		if err := r.checkYAMLCut(r.queue[before:], data); err != nil {
			return err
		}
	}
}

// guidellmAlways are the metrics every guidellm benchmark summary yields
// (its metrics object has all ten distributions in every version).
var guidellmAlways = []string{
	"mean_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "mean_e2el_ms", "request_throughput",
	"output_throughput", "total_token_throughput", "total_input_tokens", "total_output_tokens", "concurrency",
}

// checkYAMLCut applies the truncation rule to a YAML document, which has
// no end marker and still parses when cut at a line break: a guidellm
// benchmark must hold every distribution guidellm writes, and each of its
// latencies as many percentiles as the others. A file cut between two
// benchmarks cannot be told from a shorter report.
func (r *Reader) checkYAMLCut(res []Result, data []byte) error {
	last := bytes.Count(data, []byte("\n"))
	for _, x := range res {
		if x.Format != "guidellm" {
			continue
		}
		var miss []string
		for _, m := range guidellmAlways {
			if _, ok := x.Metrics[m]; !ok {
				miss = append(miss, m)
			}
		}
		pcts := map[string]int{}
		for m := range x.Metrics {
			for _, kind := range []string{"ttft", "tpot", "itl", "e2el"} {
				if m[0] == 'p' && strings.HasSuffix(m, "_"+kind+"_ms") {
					pcts[kind]++
				}
			}
		}
		most := 0
		for _, n := range pcts {
			most = max(most, n)
		}
		for _, kind := range []string{"ttft", "tpot", "itl", "e2el"} {
			if pcts[kind] < most {
				miss = append(miss, fmt.Sprintf("%d of the %d percentiles of %s", most-pcts[kind], most, kind))
			}
		}
		if len(miss) > 0 {
			return r.errorf(last, "guidellm YAML report: benchmark %s lacks %s, which guidellm always writes: the file is cut off; write the report again", Quote(x.Name), summarizeNames(miss, 4))
		}
	}
	return nil
}

var yamlLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

func yamlErrLine(err error) int {
	if m := yamlLineRE().FindStringSubmatch(err.Error()); m != nil {
		var n int
		fmt.Sscan(m[1], &n)
		return n
	}
	return 0
}

// normalizeYAML turns map[any]any (non-string keys) into map[string]any.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
		return x
	}
	return v
}

func (r *Reader) dispatchDoc(v any, line int) error {
	if r.forced() == "" {
		if why := skippedDoc(v); why != "" {
			r.notes = append(r.notes, fmt.Sprintf("%s:%d: %s", r.file, line, why))
			return nil
		}
	}
	switch x := v.(type) {
	case map[string]any:
		return r.dispatchObject(x, line)
	case []any:
		for _, e := range x {
			if err := r.dispatchDoc(e, line); err != nil {
				return err
			}
		}
		return nil
	case nil:
		return nil
	}
	return r.errorf(line, "top-level JSON value is a %T, not an object; perfgate reads objects of benchmark results", v)
}

func (r *Reader) dispatchObject(obj map[string]any, line int) error {
	forced := r.forced()
	if (forced == "" || forced == "aiperf") && isAIPerfRecord(obj) {
		return r.addAIPerfRecord(obj, line)
	}
	if (forced == "" || forced == "inference-perf") && isInferencePerfRecord(obj) {
		return r.addInferencePerfRecord(obj, line)
	}
	for _, f := range docFormats {
		if forced != "" && f.Name != forced {
			continue
		}
		if forced == "" && !f.Match(obj) {
			continue
		}
		var res []Result
		var err error
		if f.ConvertFile != nil {
			res, err = f.ConvertFile(obj, r.file)
		} else {
			res, err = f.Convert(obj)
		}
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				if pe.File == "" {
					pe.File = r.file
				}
				if pe.Line == 0 {
					pe.Line = line
				}
				return pe
			}
			return r.errorf(line, "%s: %v", f.Name, err)
		}
		for _, x := range res {
			if x.Line == 0 {
				x.Line = line
			}
			if x.Format == "" {
				x.Format = f.Name
			}
			r.emit(x)
		}
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 8 {
		keys = append(keys[:8], "...")
	}
	return &Error{File: r.file, Line: line, Err: ErrUnrecognized, Msg: fmt.Sprintf("%v: JSON object with keys [%s] matches no known format (tried: %s); for your own tool, write {\"metrics\": {name: value}} (the generic format)",
		ErrUnrecognized, strings.Join(keys, ", "), strings.Join(r.tried, ", "))}
}

// parseCSV reads a CSV export and hands it to the format whose header matches.
func (r *Reader) parseCSV(data []byte) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.TrimLeadingSpace = true
	var rows [][]string
	var lines []int
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return r.errorf(pe.Line, "invalid CSV: %v", pe.Err)
			}
			return r.errorf(0, "invalid CSV: %v", err)
		}
		line, _ := cr.FieldPos(0)
		rows = append(rows, rec)
		lines = append(lines, line)
	}
	if len(rows) == 0 {
		return r.unrecognized()
	}
	forced := r.forced()
	if why := skippedCSV(rows[0]); why != "" && forced == "" {
		r.notes = append(r.notes, fmt.Sprintf("%s:1: %s", r.file, why))
		return nil
	}
	for _, f := range csvFormats {
		if (forced != "" && f.Name != forced) || (forced == "" && !f.Match(rows[0])) {
			continue
		}
		var res []Result
		var err error
		if f.ConvertLines != nil {
			res, err = f.ConvertLines(rows, lines)
		} else {
			res, err = f.Convert(rows)
		}
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) {
				if pe.File == "" {
					pe.File = r.file
				}
				return pe
			}
			return r.errorf(1, "%s: %v", f.Name, err)
		}
		for _, x := range res {
			if x.Format == "" {
				x.Format = f.Name
			}
			r.emit(x)
		}
		return nil
	}
	return r.unrecognized()
}

var (
	goBenchLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*Benchmark\S*\s+\d+\s+[-\d.e+]+ \S+`) })
	goBenchNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*Benchmark\S*[ \t]`) })
	goBenchTailRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]+\d+[ \t]+[-\d.e+]+ ns/op`) })
	goBenchGoosRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*goos: `) })
	goBenchPkgRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*pkg: `) })
)

// looksGoBench accepts go test -bench output, also indented (a
// reStructuredText literal block) or with a benchmark's own output
// between its name and its numbers.
func looksGoBench(head []byte) bool {
	return goBenchLineRE().Match(head) ||
		goBenchGoosRE().Match(head) && goBenchPkgRE().Match(head) ||
		goBenchNameRE().Match(head) && goBenchTailRE().Match(head)
}

// goBenchJoin rewrites Go benchmark output, keeping its line count, into
// what benchfmt reads: indented lines (a reStructuredText or markdown
// literal block) lose their indentation, and a result whose numbers
// follow the benchmark's own output ("BenchmarkX " ... output ... "681
// 32507910 ns/op": go test prints the name, runs the benchmark, then the
// numbers) is put back on one line, at the line of its numbers; the
// output lines are left for benchfmt to skip.
func goBenchJoin(data []byte) []byte {
	lines := strings.Split(string(data), "\n")
	pending, name := -1, ""
	changed := false
	for i, l := range lines {
		s := strings.TrimLeft(l, " \t")
		switch {
		case strings.HasPrefix(s, "Benchmark"):
			n, rest, _ := strings.Cut(s, "\t")
			if sp := strings.IndexAny(n, " "); sp >= 0 {
				n, rest = n[:sp], n[sp:]+"\t"+rest
			}
			if r := strings.TrimLeft(rest, " \t"); r == "" || r[0] < '0' || r[0] > '9' {
				if !strings.Contains(r, "--- FAIL") {
					pending, name = i, n
				}
			} else {
				pending = -1
			}
		case pending >= 0 && goBenchTailRE().MatchString("\t"+s):
			s = name + "\t" + s
			lines[pending] = ""
			pending = -1
		case len(s) < len(l) && goBenchConfigRE().MatchString(s):
		default:
			continue
		}
		if s != l {
			lines[i] = s
			changed = true
		}
	}
	if !changed {
		return data
	}
	return []byte(strings.Join(lines, "\n"))
}

var goBenchConfigRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][^\s:]*: `) })

func looksCSV(head []byte) bool {
	line := head
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		line = head[:i]
	}
	if bytes.Count(line, []byte(",")) < 1 {
		return false
	}
	cr := csv.NewReader(bytes.NewReader(line))
	cr.LazyQuotes = true
	cr.TrimLeadingSpace = true
	rec, err := cr.Read()
	if err != nil {
		return false
	}
	for _, f := range csvFormats {
		if f.Match(rec) {
			return true
		}
	}
	return skippedCSV(rec) != ""
}

var yamlTopKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]*:(\s|$)`) })

// looksYAML accepts documents that start with "---" or whose first
// significant lines are lowercase top-level keys and that contain no
// console banner. It is deliberately strict: a log whose first line is
// "INFO: ..." must stay text.
func looksYAML(head []byte) bool {
	lines := strings.Split(string(head), "\n")
	keys := 0
	for _, l := range lines {
		t := strings.TrimRight(l, "\r")
		if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if t == "---" {
			return true
		}
		if strings.HasPrefix(t, " ") || strings.HasPrefix(t, "- ") {
			if keys > 0 {
				continue
			}
			return false
		}
		if !yamlTopKeyRE().MatchString(t) {
			return false
		}
		keys++
		if keys >= 2 || strings.HasPrefix(t, "benchmarks:") {
			return true
		}
	}
	return false
}

// parseGoBench reads Go testing benchmark output with x/perf/benchfmt. Each
// benchmark line is one result, in file order, named as go test prints it
// ("BenchmarkDecode/size=1k"; benchfmt drops the "Benchmark" prefix, which
// is put back) without the -GOMAXPROCS suffix, which becomes the "procs"
// label. Repetitions (-count N) are N results with the same name, so the
// gate sees N samples. Values keep the unit go test printed (benchfmt
// rescales ns/op to sec/op and MB/s to B/s; the printed value and unit are
// used) and become metrics under sanitized names (ns/op -> ns_per_op, B/op
// -> b_per_op, MB/s -> mb_per_s, µs/op -> us_per_op, % -> pct), whose
// directions package metric infers from the suffix; "iterations" is the
// iteration count. Two units of a line that become one name (a-b/op and
// a_b/op) are an error naming both. Configuration lines (goos, goarch,
// pkg, cpu, ...) become labels. Output indented as a literal block (a tab or
// spaces, reStructuredText and markdown) is read as if it were not, and a
// result whose numbers follow the benchmark's own output ("BenchmarkX "
// ... output ... "681  32507910 ns/op") is joined back, at the line of its
// numbers. As benchstat does, a line that does not parse (a
// malformed Unit line, a result line cut short, a benchmark that
// failed: "BenchmarkX-8 --- FAIL: ...") is
// left out with a warning naming its line, on the next result (the last
// one for lines after it); only input in which no result could be read is
// an error, at its first bad line.
func (r *Reader) parseGoBench(data []byte) error {
	data = goBenchJoin(data)
	br := benchfmt.NewReader(bytes.NewReader(data), r.file)
	var bad []goBadLine
	first := len(r.queue)
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			bad = append(bad, goBadLine{rec.Line, goSyntaxMsg(data, rec)})
		case *benchfmt.Result:
			res := NewResult(GoBenchFormat, 0)
			_, line := br.Result().Pos()
			res.Line = line
			base, procs := splitProcs("Benchmark" + string(rec.Name.Full()))
			res.Name = base
			if procs != "" {
				res.SetLabel("procs", procs)
			}
			for _, c := range rec.Config {
				if c.File {
					res.SetLabel(c.Key, string(c.Value))
				}
			}
			res.Set("iterations", float64(rec.Iters))
			srcs := metricSources{"iterations": "the iteration count"}
			for _, v := range rec.Values {
				val, unit := v.Value, v.Unit
				if v.OrigUnit != "" {
					val, unit = v.OrigValue, v.OrigUnit
				}
				name := goUnitName(unit)
				if msg := srcs.claim(name, fmt.Sprintf("unit %q", unit)); msg != "" {
					return r.errorf(line, "%s: %s (the unit b.ReportMetric is given)", res.Name, msg)
				}
				res.Set(name, val)
			}
			r.emit(res)
		}
	}
	if err := br.Err(); err != nil {
		return r.errorf(0, "reading Go benchmark output: %v", err)
	}
	return r.goBadLines(bad, r.queue[first:])
}

// goBadLine is a Go benchmark line that did not parse.
type goBadLine struct {
	line int
	msg  string
}

// goBadLines puts a warning for each bad line on the first result after it
// (or the last result), or, when there is no result, returns the first as
// the error.
func (r *Reader) goBadLines(bad []goBadLine, res []Result) error {
	if len(bad) == 0 {
		return nil
	}
	if len(res) == 0 {
		return r.errorf(bad[0].line, "%s; fix the line or remove it", bad[0].msg)
	}
	j := 0
	for _, b := range bad {
		for j < len(res)-1 && res[j].Line < b.line {
			j++
		}
		res[j].Warnings = append(res[j].Warnings, fmt.Sprintf("line %d: %s; left out", b.line, b.msg))
	}
	return nil
}

// goSyntaxMsg describes a line benchfmt could not parse; a benchmark that
// failed says so instead of "parsing iteration count".
func goSyntaxMsg(data []byte, e *benchfmt.SyntaxError) string {
	line := goLine(data, e.Line)
	if name, rest, ok := strings.Cut(line, "--- FAIL:"); ok && strings.HasPrefix(strings.TrimSpace(name), "Benchmark") {
		bench := strings.TrimSpace(rest)
		if bench == "" {
			bench = strings.TrimSpace(name)
		}
		return fmt.Sprintf("benchmark %s failed (--- FAIL) and has no result", bench)
	}
	return "invalid Go benchmark line: " + e.Msg
}

// goLine returns line n (1-based) of data, without its terminator.
func goLine(data []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return ""
		}
		data = data[j+1:]
	}
	if j := bytes.IndexByte(data, '\n'); j >= 0 {
		data = data[:j]
	}
	return strings.TrimSuffix(string(data), "\r")
}

var procsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*)-(\d+)$`) })

func splitProcs(name string) (string, string) {
	if m := procsRE().FindStringSubmatch(name); m != nil {
		return m[1], m[2]
	}
	return name, ""
}

func goUnitName(unit string) string {
	b := make([]byte, 0, len(unit)+8)
	under := func() {
		if len(b) > 0 && b[len(b)-1] != '_' {
			b = append(b, '_')
		}
	}
	for _, c := range strings.ToLower(unit) {
		switch {
		case c == '/':
			under()
			b = append(b, "per_"...)
		case c == '%':
			under()
			b = append(b, "pct"...)
		case c == 'µ' || c == 'μ':
			b = append(b, 'u')
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
			b = append(b, byte(c))
		default:
			under()
		}
	}
	if s := strings.Trim(string(b), "_"); s != "" {
		return s
	}
	return "value"
}
