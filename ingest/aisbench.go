package ingest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/perfgate/perfgate/metric"
)

// AISBench (ais_bench --mode perf) prints, for every task (one model
// configuration with one dataset), a log line naming the task and two
// tabulate "fancy_grid" tables:
//
//	[2025-11-06 10:35:43,667] [ais_bench] [INFO] Performance Results of task: vllm-api-stream-chat/demo_gsm8k:
//	╒══════════════════════════╤═════════╤═════════════════╤═════╤═════╕
//	│ Performance Parameters   │ Stage   │ Average         │ ... │  N  │
//	╞══════════════════════════╪═════════╪═════════════════╪═════╪═════╡
//	│ TTFT                     │ total   │ 2006.0 ms       │ ... │  8  │
//	╘══════════════════════════╧═════════╧═════════════════╧═════╧═════╛
//	╒══════════════════════════╤═════════╤══════════════════╕
//	│ Common Metric            │ Stage   │ Value            │
//	...
//
// Newer versions write the task line as "Performance Results of task
// [model/dataset]:", older ones as "MM/DD hh:mm:ss - AISBench - INFO -
// Performance Results of task: model/dataset:"; all three are read.
//
// The performance table and the common table of one task are one result,
// named after the task ("model_abbr/dataset_abbr", or "aisbench" when the
// task line is missing). Mapping:
//   - TTFT, TPOT, ITL, E2EL rows: {mean,median,min,max,pNN}_{kind}_ms from
//     the Average, Median, Min, Max and PNN columns (AISBench lets users
//     choose the statistics; any PNN column is read). Cells carry units
//     ("2006.0 ms"); latencies are stored in milliseconds.
//   - other rows (InputTokens, OutputTokens, OutputTokenThroughput,
//     PrefillTokenThroughput, ...): {stat}_{sanitized row}, with an _ms
//     suffix when the cells hold times (converted to ms); other units are
//     dropped (mean_output_token_throughput is in token/s as printed).
//   - the N column (a request count) is not stored.
//   - common table: Success Requests -> completed, Failed Requests ->
//     failed, Benchmark Duration (printed in ms) -> duration in seconds,
//     Request Throughput -> request_throughput, Input/Output/Total Token
//     Throughput -> input_throughput/output_throughput/
//     total_token_throughput, Total Input Tokens -> total_input_tokens,
//     Total Generated (or Output) Tokens -> total_output_tokens, Max
//     Concurrency (the configured limit) -> label max_concurrency; others
//     (Total Requests, Concurrency — the measured average —, Prefill
//     Token Throughput) under sanitized names, _ms-suffixed when a time.
//   - the dataset abbreviation of the task becomes the label "dataset".
//
// Stages: the default_perf summarizer prints the stage "total" (all
// requests); the stable_stage summarizer prints "stable" (requests sent
// while the client ran at its maximum concurrency). Every stage of a task
// becomes its own result with the canonical metric names and a "stage"
// label; the "total" stage is named after the task, any other stage
// "<task>:<stage>", so a stable-stage run is never compared with an
// all-requests run.
//
// The tables are read in the box-drawing form AISBench prints, in ASCII
// grid form (+---+ |, as tabulate's "grid" and re-encoded logs show them)
// and as markdown pipe tables, with or without log prefixes. A table cut
// off before its bottom border is an error; a performance table with no
// common table after it is still a result, with a warning.
func init() {
	RegisterText(TextFormat{
		Name: "aisbench",
		Desc: "AISBench (ais_bench --mode perf) console tables: Performance Parameters and Common Metric",
		New:  func(file string) LineParser { return newAISBenchParser(file) },
	})
}

// aisGap is how many lines after a performance table its common table
// may start; past it, the performance table is reported on its own.
const aisGap = 12

type aisBenchParser struct {
	file     string
	grid     gridScanner
	task     string // from the last task line not yet used by a table
	taskLine int
	cur      *aisTask // performance table read, waiting for the common table
	curEnd   int
}

// aisTask is the results of one task, one per stage, in stage order.
type aisTask struct {
	name    string
	line    int
	stages  []string
	res     map[string]*Result
	warning string
}

func newAISBenchParser(file string) *aisBenchParser {
	p := &aisBenchParser{file: file}
	p.grid = gridScanner{
		format:      "AISBench",
		file:        file,
		ascii:       true,
		box:         true,
		headerFirst: aisHeaderFirst,
		header:      p.isHeader,
	}
	return p
}

func aisHeaderFirst(first string) bool {
	return strings.EqualFold(first, "Performance Parameters") || strings.EqualFold(first, "Common Metric")
}

// isHeader accepts the AISBench table headers. MindIE's common table has
// the same first cell but no Stage column and is drawn in ASCII; without
// a Stage column an ASCII common table belongs to AISBench only right
// after an AISBench task line or performance table.
func (p *aisBenchParser) isHeader(cells []string, box bool) bool {
	if len(cells) < 2 {
		return false
	}
	if strings.EqualFold(cells[0], "Performance Parameters") {
		return true
	}
	if !strings.EqualFold(cells[0], "Common Metric") {
		return false
	}
	if gridHasColumn(cells, "stage") || box {
		return true
	}
	return p.cur != nil || p.task != ""
}

func (p *aisBenchParser) Line(n int, line string, emit Emit) error {
	done, other, err := p.grid.feed(n, line)
	if err != nil {
		return err
	}
	if done != nil {
		p.table(done, emit)
	}
	if !other || p.grid.t != nil {
		return nil
	}
	if task, ok := aisTaskLine(line); ok {
		p.flush(emit)
		p.task, p.taskLine = task, n
		return nil
	}
	if p.cur != nil && n-p.curEnd > aisGap {
		p.flush(emit)
	}
	return nil
}

func (p *aisBenchParser) End(n int, emit Emit) error {
	t, err := p.grid.end(n)
	if err != nil {
		return err
	}
	if t != nil {
		p.table(t, emit)
	}
	p.flush(emit)
	return nil
}

// aisTaskLine reads the task name from "... Performance Results of task:
// m/d:" or "... Performance Results of task [m/d]:".
func aisTaskLine(line string) (string, bool) {
	const marker = "Performance Results of task"
	i := strings.Index(line, marker)
	if i < 0 {
		return "", false
	}
	s := strings.TrimSpace(line[i+len(marker):])
	s = strings.TrimSuffix(s, ":")
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, ":")
	s = strings.TrimPrefix(s, "[")
	s = strings.TrimSuffix(s, "]")
	s = strings.TrimSpace(s)
	return s, true
}

// flush emits a performance table that got no common table.
func (p *aisBenchParser) flush(emit Emit) {
	if p.cur == nil {
		return
	}
	p.cur.warning = fmt.Sprintf("AISBench performance table (line %d) has no Common Metric table after it; request counts, duration and throughputs are missing", p.cur.line)
	p.emitTask(p.cur, emit)
	p.cur = nil
}

func (p *aisBenchParser) newTask(t *gridTable) *aisTask {
	task := &aisTask{name: p.task, line: p.taskLine, res: map[string]*Result{}}
	if task.line == 0 {
		task.line = t.start
	}
	p.task, p.taskLine = "", 0
	return task
}

func (p *aisBenchParser) table(t *gridTable, emit Emit) {
	if strings.EqualFold(t.header[0], "Performance Parameters") {
		p.flush(emit)
		task := p.newTask(t)
		p.perfTable(task, t)
		p.cur, p.curEnd = task, t.end
		return
	}
	task := p.cur
	p.cur = nil
	if task == nil {
		task = p.newTask(t)
		task.warning = fmt.Sprintf("AISBench Common Metric table (line %d) has no Performance Parameters table before it; latencies are missing", t.start)
	}
	p.commonTable(task, t)
	p.emitTask(task, emit)
}

// stage returns the result of a stage, creating it in stage order.
func (task *aisTask) stage(stage string) *Result {
	key := stage
	if key == "" {
		key = "total"
	}
	if r, ok := task.res[key]; ok {
		if stage != "" {
			r.SetLabel("stage", stage)
		}
		return r
	}
	r := NewResult("aisbench", task.line)
	if stage != "" {
		r.SetLabel("stage", stage)
	}
	task.res[key] = &r
	task.stages = append(task.stages, key)
	return &r
}

func (p *aisBenchParser) emitTask(task *aisTask, emit Emit) {
	name := task.name
	if name == "" {
		name = "aisbench"
	}
	dataset := ""
	if i := strings.IndexByte(task.name, '/'); i >= 0 {
		dataset = task.name[i+1:]
	}
	for _, key := range task.stages {
		r := task.res[key]
		r.Name = name
		if key != "total" {
			r.Name = name + ":" + key
		}
		if dataset != "" {
			r.SetLabel("dataset", dataset)
		}
		if task.warning != "" {
			r.Warnings = append(r.Warnings, task.warning)
		}
		emit(*r)
	}
}

var aisLatencyKinds = map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el"}

func (p *aisBenchParser) perfTable(task *aisTask, t *gridTable) {
	stageCol := gridColumn(t.header, "stage")
	for _, row := range t.rows {
		name := row.cells[0]
		if name == "" { // continuation line of a multi-line cell
			continue
		}
		stage := ""
		if stageCol > 0 {
			stage = row.cells[stageCol]
		}
		r := task.stage(stage)
		kind := aisLatencyKinds[gridKey(name)]
		base := kind
		if base == "" {
			base = metric.Sanitize(name)
		}
		if base == "" { // no letters or digits: not a metric row
			continue
		}
		for c := 1; c < len(row.cells); c++ {
			if c == stageCol {
				continue
			}
			stat := gridStatName(t.header[c])
			if stat == "" {
				continue
			}
			gridSetStat(r, "AISBench", row.line, name, t.header[c], stat, base, kind != "", row.cells[c])
		}
	}
}

// aisCommon maps normalized common-metric names to canonical metrics.
var aisCommon = map[string]string{
	"successrequests":       "completed",
	"failedrequests":        "failed",
	"requestthroughput":     "request_throughput",
	"inputtokenthroughput":  "input_throughput",
	"outputtokenthroughput": "output_throughput",
	"totaltokenthroughput":  "total_token_throughput",
	"totalinputtokens":      "total_input_tokens",
	"totalgeneratedtokens":  "total_output_tokens",
	"totaloutputtokens":     "total_output_tokens",
}

func (p *aisBenchParser) commonTable(task *aisTask, t *gridTable) {
	stageCol := gridColumn(t.header, "stage")
	valueCol := gridColumn(t.header, "value")
	if valueCol < 0 {
		valueCol = len(t.header) - 1
	}
	for _, row := range t.rows {
		name := row.cells[0]
		if name == "" || valueCol == 0 || valueCol == stageCol {
			continue
		}
		stage := ""
		if stageCol > 0 {
			stage = row.cells[stageCol]
		}
		r := task.stage(stage)
		cell := row.cells[valueCol]
		key := gridKey(name)
		if key == "maxconcurrency" {
			r.SetLabel("max_concurrency", gridFirstField(cell))
			continue
		}
		v, unit, present, ok := gridCell(cell)
		if !present {
			continue
		}
		if !ok {
			r.Warnings = append(r.Warnings, fmt.Sprintf("line %d: AISBench %s value %s is not a number; left out", row.line, name, Quote(cell)))
			continue
		}
		switch {
		case key == "benchmarkduration":
			ms, isTime := LatencyMs(v, unit) // printed in ms; a bare number is ms too
			if !isTime {
				r.Warnings = append(r.Warnings, fmt.Sprintf("line %d: AISBench Benchmark Duration %s has unit %q, not a time; left out", row.line, Quote(cell), unit))
				continue
			}
			r.Set("duration", gridRound(ms/1e3))
		case aisCommon[key] != "":
			r.Set(aisCommon[key], v)
		default:
			if base := metric.Sanitize(name); base != "" {
				gridSetPlain(r, base, v, unit)
			}
		}
	}
}

// Console tables.
//
// MindIE (prettytable) and AISBench (tabulate) print their results as
// drawn tables, and users paste them into markdown. A gridScanner cuts
// such tables out of a stream of lines: a table starts at a header row the
// format recognises, collects its rows up to the bottom border (or the
// first line that is not part of it), and is reported as an error when it
// stops without its bottom border, when a row is cut, or when a row does
// not have as many cells as the header. Text before the table on a line
// (a log prefix, a markdown quote or indentation) is ignored.
//
// While no table is open, a line costs one or two byte searches.

type gridKind uint8

const (
	gridOther  gridKind = iota // not a table line
	gridRow                    // | a | b |  or  │ a │ b │
	gridRule                   // +---+, ╞═══╪═══╡, ├───┼───┤, |---|:--|
	gridBottom                 // ╘═══╧═══╛, └───┴───┘: the box table is complete
)

// gridLine is one classified line.
type gridLine struct {
	kind  gridKind
	cells []string // trimmed cells of a row
	cut   bool     // a row without its closing separator
	box   bool     // drawn with box-drawing characters
	drawn bool     // a drawn rule (+---+ or box drawing), not a markdown |---|
}

// gridTable is one table read by a gridScanner.
type gridTable struct {
	header   []string
	headerAt int
	rows     []gridTableRow
	start    int  // first line: the top border when there is one, else the header
	end      int  // last line read
	box      bool // drawn with box-drawing characters
	bordered bool // drawn with borders (not a markdown table), so it ends with one
	closed   bool // the last line read may be the bottom border
}

type gridTableRow struct {
	line  int
	cells []string
}

type gridScanner struct {
	format     string // "MindIE", "AISBench": for messages
	file       string
	ascii, box bool // which drawings to read
	// headerFirst is a cheap test of a row's first cell, made before the
	// row is split; header decides on the whole row.
	headerFirst func(first string) bool
	header      func(cells []string, box bool) bool

	prev string     // the previous line, which may be the top border
	t    *gridTable // the table being read
}

func (g *gridScanner) errorf(line int, format string, args ...any) error {
	return &Error{File: g.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// feed reads one line. done is a table that this line completed or that
// ended just before it; other reports that the line is not part of a
// table, so the caller may read it as something else.
func (g *gridScanner) feed(n int, line string) (done *gridTable, other bool, err error) {
	prev := g.prev
	g.prev = line
	if t := g.t; t != nil {
		gl := g.classify(line)
		switch gl.kind {
		case gridBottom:
			t.end, t.closed = n, true
			g.t = nil
			return t, false, g.check(t, n)
		case gridRule:
			if t.closed && !t.box && len(t.rows) > 0 {
				// Two rules in a row: the table ended at the first; this
				// one is the top border of the next table.
				g.t = nil
				return t, false, g.check(t, n)
			}
			if len(t.rows) == 0 && gl.drawn {
				t.bordered = true
			}
			t.end = n
			t.closed = t.bordered && !t.box
			return nil, false, nil
		case gridRow:
			if (len(t.rows) > 0 || t.closed) && !gl.cut && g.header(gl.cells, gl.box) {
				// The next table starts right after this one.
				g.t = nil
				if err := g.check(t, n); err != nil {
					return nil, false, err
				}
				g.begin(n, gl, prev)
				return t, false, nil
			}
			if gl.cut {
				return nil, false, g.errorf(n, "%s table row is cut off (no closing %q): %s; the output is truncated or was re-wrapped, copy the complete table",
					g.format, gridSep(gl.box), Quote(strings.TrimSpace(line)))
			}
			if len(gl.cells) != len(t.header) {
				return nil, false, g.errorf(n, "%s table row has %d cells but its header (line %d) has %d: %s; the table is damaged, copy it whole or remove it",
					g.format, len(gl.cells), t.headerAt, len(t.header), Quote(strings.TrimSpace(line)))
			}
			t.rows = append(t.rows, gridTableRow{line: n, cells: gl.cells})
			t.end, t.closed = n, false
			return nil, false, nil
		}
		// Not a table line: the table ended with the previous line.
		g.t = nil
		if err := g.check(t, n); err != nil {
			return nil, true, err
		}
		return t, true, nil
	}
	if !g.maybeHeader(line) {
		return nil, true, nil
	}
	gl := g.classify(line)
	if gl.kind != gridRow || gl.cut || !g.header(gl.cells, gl.box) {
		return nil, true, nil
	}
	g.begin(n, gl, prev)
	return nil, false, nil
}

func (g *gridScanner) begin(n int, header gridLine, prev string) {
	t := &gridTable{header: header.cells, headerAt: n, start: n, end: n, box: header.box}
	if pl := g.classify(prev); pl.kind == gridRule && pl.drawn {
		t.start, t.bordered = n-1, true
	}
	g.t = t
}

// check reports a table that ended (at line n) incomplete.
func (g *gridScanner) check(t *gridTable, n int) error {
	if len(t.rows) == 0 {
		return g.errorf(t.headerAt, "%s table has a header but no rows (it ends at line %d); the output is cut off, copy the complete table", g.format, n)
	}
	if t.bordered && !t.closed {
		return g.errorf(n, "%s table that starts at line %d stops without its bottom border: the output is cut off; copy the complete table or re-run the benchmark", g.format, t.start)
	}
	return nil
}

// end is called at the end of input (line n): it returns the table still
// open, if it is complete.
func (g *gridScanner) end(n int) (*gridTable, error) {
	t := g.t
	g.t = nil
	if t == nil {
		return nil, nil
	}
	if len(t.rows) == 0 || (t.bordered && !t.closed) {
		return nil, g.errorf(n, "file ends inside the %s table that starts at line %d: the output is cut off; copy the complete table or re-run the benchmark", g.format, t.start)
	}
	return t, nil
}

const gridBoxVert = "│"

func gridSep(box bool) string {
	if box {
		return gridBoxVert
	}
	return "|"
}

// maybeHeader is the cheap test made on every line outside a table: a
// separator, another one after it, and between them a first cell the
// format knows.
func (g *gridScanner) maybeHeader(line string) bool {
	if g.ascii {
		if i := strings.IndexByte(line, '|'); i >= 0 {
			if c, ok := gridFirstCell(line[i+1:], "|"); ok && g.headerFirst(c) {
				return true
			}
		}
	}
	if g.box {
		if i := strings.Index(line, gridBoxVert); i >= 0 {
			if c, ok := gridFirstCell(line[i+len(gridBoxVert):], gridBoxVert); ok && g.headerFirst(c) {
				return true
			}
		}
	}
	return false
}

// gridFirstCell returns the text of s up to the next separator without
// the blanks around it; ok is false when no separator follows.
func gridFirstCell(s, sep string) (string, bool) {
	var i int
	if len(sep) == 1 {
		i = strings.IndexByte(s, sep[0])
	} else {
		i = strings.Index(s, sep)
	}
	if i < 0 {
		return "", false
	}
	s = s[:i]
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s, true
}

// classify reads one line as a table line.
func (g *gridScanner) classify(line string) gridLine {
	if g.box {
		if i := gridBoxStart(line); i >= 0 {
			if k, ok := gridBoxRule(line[i:]); ok {
				return gridLine{kind: k, box: true, drawn: true}
			}
		}
	}
	if g.ascii {
		for _, m := range []string{"+-", "+="} {
			if i := strings.Index(line, m); i >= 0 && gridASCIIRule(line[i:]) {
				return gridLine{kind: gridRule, drawn: true}
			}
		}
	}
	if g.box {
		if i := strings.Index(line, gridBoxVert); i >= 0 {
			return gridSplitRow(line[i:], gridBoxVert, true)
		}
	}
	if g.ascii {
		if i := strings.IndexByte(line, '|'); i >= 0 {
			s := strings.TrimRight(line[i:], " \t")
			if gridMarkdownRule(s) {
				return gridLine{kind: gridRule}
			}
			return gridSplitRow(s, "|", false)
		}
	}
	return gridLine{kind: gridOther}
}

func gridSplitRow(s, sep string, box bool) gridLine {
	s = strings.TrimRight(s, " \t")
	body := s[len(sep):]
	cut := !strings.HasSuffix(body, sep)
	if !cut {
		body = body[:len(body)-len(sep)]
	}
	cells := strings.Split(body, sep)
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return gridLine{kind: gridRow, cells: cells, cut: cut, box: box}
}

// gridBoxStart returns the offset of the first box-drawing character
// (U+2500-U+257F, encoded E2 94 xx or E2 95 xx), or -1.
func gridBoxStart(line string) int {
	for off := 0; ; {
		i := strings.IndexByte(line[off:], 0xE2)
		if i < 0 {
			return -1
		}
		i += off
		if i+2 < len(line) && (line[i+1] == 0x94 || line[i+1] == 0x95) {
			return i
		}
		off = i + 1
	}
}

// gridBoxRule reports whether s is a box-drawing rule (only box-drawing
// characters other than vertical bars, and spaces), and whether it is a
// bottom border.
func gridBoxRule(s string) (gridKind, bool) {
	s = strings.TrimRight(s, " \t")
	if s == "" {
		return gridOther, false
	}
	first, _ := utf8.DecodeRuneInString(s)
	for _, r := range s {
		if r == ' ' {
			continue
		}
		if r < 0x2500 || r > 0x257F || r == '│' || r == '┃' || r == '║' {
			return gridOther, false
		}
	}
	switch first {
	case '╘', '└', '╰', '┗', '╚', '┕', '┖':
		return gridBottom, true
	}
	return gridRule, true
}

// gridASCIIRule reports whether s (starting with '+') is a rule like
// +-----+=====+.
func gridASCIIRule(s string) bool {
	s = strings.TrimRight(s, " \t")
	dash := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-', '=':
			dash = true
		case '+', ':':
		default:
			return false
		}
	}
	return dash && s[len(s)-1] == '+'
}

// gridMarkdownRule reports whether s (starting with '|') is a markdown
// delimiter row such as |---|:---:|.
func gridMarkdownRule(s string) bool {
	if !strings.Contains(s, "--") {
		return false
	}
	for _, c := range strings.Split(strings.Trim(s, "|"), "|") {
		c = strings.TrimSpace(c)
		if c == "" {
			return false
		}
		for i := 0; i < len(c); i++ {
			if c[i] != '-' && c[i] != ':' && c[i] != '=' {
				return false
			}
		}
	}
	return true
}

// Cells and names shared by the MindIE and AISBench parsers.

// gridCell reads a table cell such as "64.7768 ms", "3.7201 token/s",
// "0( 0.0% )" or "200[ 100.0% ]" (what follows a parenthesis or bracket
// is an annotation). present is false for an absent value ("/", "N/A",
// "/ μs"); ok is false for a cell that is not a number with a unit.
func gridCell(cell string) (v float64, unit string, present, ok bool) {
	s := strings.TrimSpace(cell)
	if i := strings.IndexAny(s, "(["); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	num := gridFirstField(s)
	if IsAbsent(s) || IsAbsent(num) {
		return 0, "", false, true
	}
	// Fast path for the usual "64.7768 ms" and "8792".
	if strings.Trim(num, "0123456789.eE+-") == "" {
		f, err := strconv.ParseFloat(num, 64)
		unit = strings.TrimSpace(s[len(num):])
		if err == nil && !strings.ContainsAny(unit, " \t") && gridUnitWord(unit) {
			return f, unit, true, true
		}
	}
	v, unit, ok = ParseQuantity(s)
	if !ok || !gridUnitWord(unit) {
		return 0, "", true, false
	}
	return v, unit, true, true
}

func gridFirstField(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i]
	}
	return s
}

// gridUnitWord accepts units such as ms, μs, token/s, req/s and %.
func gridUnitWord(u string) bool {
	for _, r := range u {
		if !unicode.IsLetter(r) && r != '/' && r != '%' && r != '_' {
			return false
		}
	}
	return true
}

// gridKey lower-cases a table label and drops everything but letters and
// digits, so "Total generated tokens" and "TotalGeneratedTokens" match.
func gridKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + ('a' - 'A'))
		}
	}
	return b.String()
}

func gridColumn(header []string, name string) int {
	for i, h := range header {
		if strings.EqualFold(h, name) {
			return i
		}
	}
	return -1
}

func gridHasColumn(header []string, name string) bool { return gridColumn(header, name) >= 0 }

// gridStatName maps a statistic column header to the metric prefix: Average,
// avg and mean -> mean; Median, Min, Max; Std -> std; P75 -> p75, P99.9 ->
// p99.9; N (a request count) -> "" (not stored). Others are sanitized
// (MindIE's SLO_P90 -> slo_p90: the P90 over per-request mean decode
// times, which is not a plain P90, so it never takes the canonical name).
func gridStatName(col string) string {
	switch strings.ToLower(strings.TrimSpace(col)) {
	case "average", "avg", "mean":
		return "mean"
	case "median", "p50":
		return "median"
	case "min", "minimum":
		return "min"
	case "max", "maximum":
		return "max"
	case "std", "stddev", "std dev":
		return "std"
	case "n", "count", "":
		return ""
	}
	if s := strings.TrimSpace(col); len(s) > 1 && (s[0] == 'P' || s[0] == 'p') && gridDecimal(s[1:]) {
		return "p" + s[1:]
	}
	return metric.Sanitize(col)
}

// gridDecimal reports whether s is digits with at most one inner dot: "99", "99.9".
func gridDecimal(s string) bool {
	dot := false
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] >= '0' && s[i] <= '9':
		case s[i] == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return s != ""
}

// gridSetStat stores one statistic cell of a table row. A latency row takes
// the canonical name {stat}_{base}_ms and must hold times; another row
// takes {stat}_{base}, with _ms when its cells hold times.
func gridSetStat(r *Result, format string, line int, row, col, stat, base string, latency bool, cell string) {
	v, unit, present, ok := gridCell(cell)
	if !present {
		return
	}
	if !ok {
		r.Warnings = append(r.Warnings, fmt.Sprintf("line %d: %s %s %s value %s is not a number; left out", line, format, row, col, Quote(cell)))
		return
	}
	name := stat + "_" + base
	if latency {
		ms, isTime := LatencyMs(v, unit)
		if !isTime {
			r.Warnings = append(r.Warnings, fmt.Sprintf("line %d: %s %s %s value %s has unit %q, not a time; left out", line, format, row, col, Quote(cell), unit))
			return
		}
		r.Set(name+"_ms", gridRound(ms))
		return
	}
	gridSetPlain(r, name, v, unit)
}

// gridSetPlain stores a value under name, converted to milliseconds with an
// _ms suffix when its unit is a time; other units are dropped.
func gridSetPlain(r *Result, name string, v float64, unit string) {
	if unit != "" {
		if ms, isTime := LatencyMs(v, unit); isTime {
			r.Set(name+"_ms", gridRound(ms))
			return
		}
	}
	r.Set(name, v)
}

// gridRound rounds a unit-converted value to 12 significant digits, so
// 893.4933 μs is stored as 0.8934933 ms, not 0.8934932999999999.
func gridRound(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	y, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	if err != nil {
		return x
	}
	return y
}
