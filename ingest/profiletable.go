package ingest

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/perfgate/perfgate/metric"
)

// genai-perf and aiperf print their statistics as a rich console table
// (the same numbers they export as JSON and CSV, see genaiperf.go):
//
//	                    NVIDIA AIPerf | LLM Metrics
//	┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━┓
//	┃                               Metric ┃       avg ┃    min ┃   std ┃
//	┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━┩
//	│             Time to First Token (ms) │     18.26 │  11.22 │ 12.07 │
//	│     Output Token Throughput Per User │     89.23 │  75.93 │  3.70 │
//	│                    (tokens/sec/user) │           │        │       │
//	│ Output Token Throughput (tokens/sec) │ 10,944.03 │    N/A │   N/A │
//	└──────────────────────────────────────┴───────────┴────────┴───────┘
//
// Formats "genai-perf" and "aiperf" (the same names as their exports; a
// forced --format picks the table for console output). A table is one
// result. Its header's first cell is "Statistic" (genai-perf) or "Metric"
// (aiperf) and it has an "avg" column; the tool is told by the title line
// above the table ("NVIDIA GenAI-Perf | ...", "NVIDIA AIPerf | ...", or
// just "LLM Metrics" in genai-perf before 24.08), else by the header. Rows
// are mapped like the exports: "<Metric> (<unit>)" -> the JSON key
// (metric.Sanitize of the name), the columns avg, min, max, pNN, std its
// statistics, so Time to First Token (ms) gives mean_ttft_ms, p99_ttft_ms,
// ...; Request Latency (in ns before genai-perf 24.08) gives *_e2el_ms in
// milliseconds; Output Token Throughput -> output_throughput, Request
// Throughput -> request_throughput, Request Count -> completed, Goodput ->
// request_goodput; other rows {stat}_{name} (mean_output_sequence_length).
// A label that rich wrapped onto a second row with empty cells ("(tokens/
// sec/user)") is joined to the row above. Thousands separators are read;
// N/A is absent.
//
// In a narrow terminal rich cuts a word that does not fit its column with
// "…": "(tokens/sec/u…". Such a label resolves to the one known label
// (profileLabels: aiperf's metric headers with their display units, and
// the table's own uncut labels) that it is the start of, unit included,
// so a series keeps its name whatever the terminal width; a label that
// matches none or several is left out with a warning, as is a cut value.
//
// Tables are read drawn with rich's box characters or in ASCII (| and
// +---+, as rich prints on legacy terminals; an ASCII table needs the
// title line, so other pipe tables are not taken for one). Tables titled
// as GPU telemetry are not results and are skipped. A table that stops
// before its bottom border, a row cut short or with a different number of
// cells than the header, is an error naming the line.

func init() {
	RegisterText(TextFormat{
		Name:   "genai-perf",
		Desc:   "genai-perf console table (NVIDIA GenAI-Perf | LLM Metrics)",
		New:    func(file string) LineParser { return newProfileTableParser(file, "genai-perf") },
		Auto:   func(file string) LineParser { return newProfileTableParser(file, "") },
		Covers: []string{"aiperf"},
	})
	RegisterText(TextFormat{
		Name: "aiperf",
		Desc: "aiperf console table (NVIDIA AIPerf | LLM Metrics)",
		New:  func(file string) LineParser { return newProfileTableParser(file, "aiperf") },
	})
}

type profileTableParser struct {
	file      string
	want      string // format to emit, "" for both
	title     string // last line that looked like a table title
	titleLine int
	t         *profileTable
	// pend is a result whose table ended, held for the lines genai-perf
	// before 24.08 printed after it ("Request throughput (per sec): 1.99").
	pend     *Result
	pendLine int
}

type profileTable struct {
	format  string
	start   int
	header  []string
	box     bool
	rows    []profileRow
	skip    bool // telemetry: read but not a result
	lastSep int  // line of the last rule
}

type profileRow struct {
	line   int
	label  string
	cells  []string
	values bool // some value cell is not empty
}

func newProfileTableParser(file, want string) *profileTableParser {
	return &profileTableParser{file: file, want: want}
}

// profileSeps are the cell separators: rich's heavy head, light body, ASCII.
const profileSeps = "┃│|"

func (p *profileTableParser) errorf(line int, format string, args ...any) error {
	return &Error{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func (p *profileTableParser) Line(n int, line string, emit Emit) error {
	if p.pend != nil && p.after(n, line, emit) {
		return nil
	}
	if p.t == nil {
		if strings.Contains(line, "Metric") || strings.Contains(line, "Statistic") {
			if p.header(n, line) {
				return nil
			}
		}
		if strings.Contains(line, "Metrics") || strings.Contains(line, "GenAI-Perf") || strings.Contains(line, "AIPerf") || strings.Contains(line, "Telemetry") {
			p.title, p.titleLine = strings.TrimSpace(line), n
		}
		return nil
	}
	t := p.t
	s := strings.TrimSpace(line)
	if k, ok := profileRule(s); ok {
		t.lastSep = n
		if k == gridBottom || (!t.box && len(t.rows) > 0) {
			p.t = nil
			return p.finish(n, t, emit)
		}
		return nil
	}
	i := strings.IndexAny(s, profileSeps)
	if i < 0 || strings.TrimSpace(s[:i]) != "" && !t.box {
		p.t = nil
		if s == "" && t.box {
			return p.errorf(n, "%s table that starts at line %d stops without its bottom border: the output is cut off; copy the complete table or re-run the benchmark", t.format, t.start)
		}
		return p.errorf(n, "%s table that starts at line %d stops without its bottom border at %s: the output is cut off; copy the complete table or re-run the benchmark", t.format, t.start, Quote(s))
	}
	cells, cut := profileSplit(s[i:])
	if cut {
		p.t = nil
		return p.errorf(n, "%s table row is cut off (no closing separator): %s; copy the complete table", t.format, Quote(s))
	}
	if len(cells) != len(t.header) {
		p.t = nil
		return p.errorf(n, "%s table row has %d cells but its header (line %d) has %d: %s; the table is damaged, copy it whole", t.format, len(cells), t.start, len(t.header), Quote(s))
	}
	row := profileRow{line: n, label: cells[0], cells: cells}
	for _, c := range cells[1:] {
		if c != "" {
			row.values = true
		}
	}
	if !row.values && len(t.rows) > 0 && row.label != "" {
		// rich wrapped the label: "Output Token Throughput Per User" / "(tokens/sec/user)".
		prev := &t.rows[len(t.rows)-1]
		prev.label += " " + row.label
		return nil
	}
	t.rows = append(t.rows, row)
	return nil
}

// after reads a line after a table: a "<Metric> (per sec): <value>" line
// joins the held result; any other non-blank line (or the third line)
// releases it. It reports whether it used the line.
func (p *profileTableParser) after(n int, line string, emit Emit) bool {
	s := strings.TrimSpace(line)
	if s == "" && n-p.pendLine < 3 {
		return true
	}
	if label, value, ok := strings.Cut(s, ":"); ok && n-p.pendLine < 6 {
		name, unit := docSplitUnit(label)
		key := metric.Sanitize(name)
		if _, single := profileSingles[key]; single && strings.Contains(strings.ToLower(unit), "per sec") {
			if v, _, ok, err := docCell(value); err == nil && ok {
				_ = setProfileMetric(p.pend, key, map[string]any{"avg": v})
			}
			p.pendLine = n
			return true
		}
	}
	emit(*p.pend)
	p.pend = nil
	return false
}

func (p *profileTableParser) End(n int, emit Emit) error {
	if p.pend != nil {
		emit(*p.pend)
		p.pend = nil
	}
	if t := p.t; t != nil {
		p.t = nil
		return p.errorf(n, "file ends inside the %s table that starts at line %d: the output is cut off; copy the complete table or re-run the benchmark", t.format, t.start)
	}
	return nil
}

// header starts a table at a header row; it reports whether it did.
func (p *profileTableParser) header(n int, line string) bool {
	s := strings.TrimSpace(line)
	i := strings.IndexAny(s, profileSeps)
	if i < 0 {
		return false
	}
	prefix := strings.TrimSpace(s[:i])
	cells, cut := profileSplit(s[i:])
	if cut || len(cells) < 2 {
		return false
	}
	first := strings.ToLower(cells[0])
	if first != "metric" && first != "statistic" {
		return false
	}
	hasAvg := false
	for _, c := range cells[1:] {
		if strings.EqualFold(c, "avg") {
			hasAvg = true
		}
	}
	if !hasAvg {
		return false
	}
	box := !strings.HasPrefix(s[i:], "|")
	title := ""
	if n-p.titleLine <= 3 {
		title = p.title
	}
	if !box && (title == "" || prefix != "") {
		return false // an ASCII table needs its title; a log line is not a table
	}
	t := &profileTable{start: n, header: cells, box: box}
	lt := strings.ToLower(title)
	switch {
	case strings.Contains(lt, "aiperf"):
		t.format = "aiperf"
	case strings.Contains(lt, "genai-perf"):
		t.format = "genai-perf"
	case first == "statistic":
		t.format = "genai-perf"
	default:
		t.format = "aiperf"
	}
	for _, w := range []string{"telemetry", "gpu", "power", "memory", "utilization", "energy"} {
		if strings.Contains(lt, w) {
			t.skip = true
		}
	}
	if p.want != "" && p.want != t.format {
		t.skip = true
	}
	p.t = t
	return true
}

// profileSplit splits a row that starts with a separator into trimmed
// cells; cut reports a row without its closing separator.
func profileSplit(s string) (cells []string, cut bool) {
	s = strings.TrimRight(s, " \t")
	_, w := utf8.DecodeRuneInString(s)
	body := s[w:]
	last, lw := utf8.DecodeLastRuneInString(body)
	if !strings.ContainsRune(profileSeps, last) || last == utf8.RuneError {
		return nil, true
	}
	body = body[:len(body)-lw]
	start := 0
	for i, r := range body {
		if r == '┃' || r == '│' || r == '|' {
			cells = append(cells, strings.TrimSpace(body[start:i]))
			start = i + utf8.RuneLen(r)
		}
	}
	cells = append(cells, strings.TrimSpace(body[start:]))
	return cells, false
}

// profileRule reports whether s is a border line (rich box drawing or
// ASCII +---+), and whether it is the bottom one.
func profileRule(s string) (gridKind, bool) {
	if s == "" {
		return gridOther, false
	}
	if s[0] == '+' {
		if gridASCIIRule(s) {
			return gridRule, true
		}
		return gridOther, false
	}
	if s[0] == '|' && strings.Contains(s, "--") && strings.Trim(s, "|+-=: ") == "" {
		return gridRule, true // |----+----| (rich's ASCII box) or a markdown |---|---|
	}
	return gridBoxRule(s)
}

func (p *profileTableParser) finish(n int, t *profileTable, emit Emit) error {
	if len(t.rows) == 0 {
		return p.errorf(t.start, "%s table has a header but no rows (it ends at line %d); the output is cut off, copy the complete table", t.format, n)
	}
	if t.skip {
		return nil
	}
	res := NewResult(t.format, t.start)
	for _, row := range t.rows {
		label := row.label
		if strings.Contains(label, "…") {
			full, ok := profileResolveLabel(label, t.rows)
			if !ok {
				res.Warnings = append(res.Warnings, fmt.Sprintf("line %d: metric label %s was truncated by the terminal and matches no single known label; left out (widen the terminal or use the JSON export)", row.line, Quote(label)))
				continue
			}
			label = full
		}
		name, unit := docSplitUnit(label)
		key := metric.Sanitize(name)
		if key == "" {
			continue
		}
		m := map[string]any{"unit": unit}
		for j := 1; j < len(row.cells); j++ {
			cell := row.cells[j]
			if IsAbsent(cell) {
				continue
			}
			if strings.Contains(cell, "…") {
				res.Warnings = append(res.Warnings, fmt.Sprintf("line %d: %s %s value %s was truncated by the terminal; left out (widen the terminal or use the JSON export)", row.line, row.label, t.header[j], Quote(cell)))
				continue
			}
			v, _, ok, err := docCell(cell)
			if err != nil {
				return p.errorf(row.line, "%s table: %s, column %s: %v; fix the cell or write N/A", t.format, Quote(row.label), Quote(t.header[j]), err)
			}
			if ok {
				m[strings.ToLower(t.header[j])] = v
			}
		}
		if err := setProfileMetric(&res, key, m); err != nil {
			return p.errorf(row.line, "%s table: %v", t.format, err)
		}
	}
	if len(res.Metrics) == 0 {
		return p.errorf(t.start, "%s table holds no numbers; copy the complete table", t.format)
	}
	if p.pend != nil {
		emit(*p.pend)
	}
	p.pend, p.pendLine = &res, n
	return nil
}

// profileLabels are the console labels of aiperf's metrics,
// "<header> (<display unit>)" (aiperf/metrics/types, v0.1), and
// genai-perf's that differ.
var profileLabels = []string{
	"Time to First Token (ms)", "Time to Second Token (ms)", "Request Latency (ms)",
	"Inter Token Latency (ms)", "Inter Chunk Latency (ms)", "Stream Setup Latency (ms)",
	"Stream Prefill Latency (ms)", "Credit Drop Latency (ms)",
	"Output Token Throughput Per User (tokens/sec/user)", "Output Token Throughput (tokens/sec)",
	"Prefill Throughput (tokens/sec)", "Request Throughput (requests/sec)", "Goodput (requests/sec)",
	"Output Sequence Length (tokens)", "Input Sequence Length (tokens)",
	"Total Output Sequence Length (tokens)", "Total Input Sequence Length (tokens)",
	"Output Token Count (tokens)", "Total Output Tokens (tokens)",
	"Reasoning Token Count (tokens)", "Total Reasoning Tokens (tokens)",
	"Request Count (requests)", "Error Request Count (requests)", "Benchmark Duration (sec)",
	"Thinking Efficiency (ratio)", "Overall Thinking Efficiency (ratio)",
	"Time To First Token (ms)", "Time To Second Token (ms)",
	"Output Token Throughput (per sec)", "Request Throughput (per sec)",
}

// profileResolveLabel returns the one label that a label cut with "…"
// is the start of (case-insensitively, spaces collapsed), among
// profileLabels and the uncut labels of rows; ok is false when none or
// several match.
func profileResolveLabel(label string, rows []profileRow) (string, bool) {
	cut, _, _ := strings.Cut(label, "…")
	prefix := strings.ToLower(strings.Join(strings.Fields(cut), " "))
	if prefix == "" {
		return "", false
	}
	found := ""
	try := func(cand string) bool {
		norm := strings.Join(strings.Fields(cand), " ")
		if !strings.HasPrefix(strings.ToLower(norm), prefix) || strings.EqualFold(norm, found) {
			return true
		}
		if found != "" {
			return false // ambiguous
		}
		found = norm
		return true
	}
	for _, c := range profileLabels {
		if !try(c) {
			return "", false
		}
	}
	for _, r := range rows {
		if !strings.Contains(r.label, "…") && !try(r.label) {
			return "", false
		}
	}
	return found, found != ""
}
