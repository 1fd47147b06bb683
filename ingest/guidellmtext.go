package ingest

import (
	"fmt"
	"strings"
)

// guidellm (v0.2, v0.3) ends a run by printing its report as three
// sections of fixed-width tables (`guidellm benchmark run` and
// `guidellm benchmark from-file` print the same):
//
//	Benchmarks Metadata:
//	    Profile:type=sweep, strategies=[...]
//	    Worker:type_='generative_requests_worker' ... backend_model='example_model' ...
//	Benchmarks Info:
//	=====================================================================
//	Metadata                                    |||| Requests Made  ||| ...
//	  Benchmark| Start Time| End Time| Duration (s)|  Comp|  Inc|  Err| ...
//	-----------|-----------|---------|-------------|------|-----|-----| ...
//	synchronous|   16:59:28| 16:59:58|         30.0|    46|    1|    0| ...
//	=====================================================================
//	Benchmarks Stats:
//	=====================================================================
//	Metadata   | Request Stats         || Out Tok/sec| Tot Tok/sec| Req Latency (sec)  ||| TTFT (ms) ||| ...
//	  Benchmark| Per Second| Concurrency|        mean|        mean|  mean|  median|   p99| mean| ...
//	-----------|-----------|------------|------------|------------|------|--------|------|-----| ...
//	synchronous|       1.55|        1.00|       198.1|       992.7|  0.64|    0.64|  0.69| 16.8| ...
//	=====================================================================
//
// Format "guidellm" (text; the JSON/YAML report has the same name): each
// row of the Stats table is one result, named like its JSON counterpart
// after the benchmark's strategy ("synchronous", "constant@5.00"). A group
// header spans as many columns as the pipes that follow it. Mapping:
// Request Stats Per Second -> request_throughput, Concurrency ->
// concurrency, Out Tok/sec -> output_throughput, Tot Tok/sec ->
// total_token_throughput, Req Latency (sec) -> *_e2el_ms (converted),
// TTFT, ITL, TPOT (ms) -> *_ttft_ms, *_itl_ms, *_tpot_ms. From the Info
// row of the same benchmark: Requests Made Comp -> completed, Err ->
// failed, Duration (s) -> duration, Prompt/Output Tok Total Comp ->
// total_input_tokens/total_output_tokens. Labels: strategy, rate
// (constant, poisson), streams (concurrent), model (the worker's
// backend_model), profile, data. A table row cut short, or a Stats table
// that ends before its rows, is an error naming the line. A Stats table
// without its closing rule is kept, with a warning, when it has a row for
// each benchmark of the Info table, and is otherwise cut off: an error
// (the package's truncation rule; its rows are held until the table ends). The v0.4+
// console report (titled tables) is read by guidellmtext4.go.

func init() {
	RegisterText(TextFormat{
		Name: "guidellm",
		Desc: "guidellm console report (Benchmarks Info / Benchmarks Stats tables)",
		New:  func(file string) LineParser { return &guidellmTextParser{file: file} },
	})
}

type guidellmTextParser struct {
	file    string
	section string // "metadata", "info", "stats" or ""
	labels  map[string]string
	// table state
	rule   bool     // the opening ===== rule was read
	groups []string // group of each column
	cols   []string // sub-header of each column
	body   bool     // the ----- rule after the headers was read
	start  int
	rows   int
	info   map[string]map[string]float64
	held   []Result   // Stats rows, emitted when their table closes
	v4     *guidellm4 // a v0.4+ report being read
}

func (p *guidellmTextParser) errorf(n int, format string, args ...any) error {
	return &Error{File: p.file, Line: n, Msg: fmt.Sprintf(format, args...)}
}

func (p *guidellmTextParser) Line(n int, line string, emit Emit) error {
	s := strings.TrimSpace(line)
	if took, err := p.v4Line(n, s, emit); took || err != nil {
		return err
	}
	if len(s) > 12 && s[0] == 'B' && strings.HasPrefix(s, "Benchmarks ") && strings.HasSuffix(s, ":") {
		switch s {
		case "Benchmarks Metadata:":
			p.reset("metadata", n)
			p.labels = map[string]string{}
			p.info = nil
			return nil
		case "Benchmarks Info:":
			p.reset("info", n)
			p.info = map[string]map[string]float64{}
			return nil
		case "Benchmarks Stats:":
			p.reset("stats", n)
			return nil
		}
	}
	switch p.section {
	case "":
		return nil
	case "metadata":
		p.metadata(s)
		return nil
	}
	if s == "" && !p.rule {
		return nil
	}
	if len(s) >= 10 && strings.Trim(s, "=") == "" {
		if !p.rule {
			p.rule = true
			return nil
		}
		return p.close(n, emit)
	}
	if !p.rule {
		p.section = "" // not a table after all
		return nil
	}
	if p.groups == nil {
		p.groups = guidellmSplit(line)
		for i := range p.groups {
			if p.groups[i] == "" && i > 0 {
				p.groups[i] = p.groups[i-1]
			}
		}
		return nil
	}
	if p.cols == nil {
		p.cols = guidellmSplit(line)
		if len(p.cols) != len(p.groups) {
			p.section = ""
			return p.errorf(n, "guidellm %s table header has %d columns but its group row has %d: %s; copy the complete report", p.title(), len(p.cols), len(p.groups), Quote(s))
		}
		return nil
	}
	if !p.body {
		if strings.Trim(s, "-|") == "" {
			p.body = true
			return nil
		}
		p.section = ""
		return p.errorf(n, "guidellm %s table: expected the ----- rule under the headers, found %s; copy the complete report", p.title(), Quote(s))
	}
	cells := guidellmSplit(line)
	if len(cells) != len(p.cols) || s == "" {
		if done, err := p.unclosed(n, n-1, emit); done {
			return err
		}
		p.section = ""
		return p.errorf(n, "guidellm %s table row has %d cells but its header has %d: %s; the report is cut off or damaged, copy it whole", p.title(), len(cells), len(p.cols), Quote(s))
	}
	p.rows++
	if p.section == "info" {
		return p.infoRow(n, cells)
	}
	return p.statsRow(n, cells, emit)
}

func (p *guidellmTextParser) End(n int, emit Emit) error {
	if err := p.v4End(n, emit); err != nil {
		return err
	}
	if p.section == "stats" && p.rule && p.rows == 0 {
		return p.errorf(n, "file ends inside the guidellm Benchmarks Stats table that starts at line %d: the report is cut off; copy the complete report", p.start)
	}
	if p.section == "stats" && p.body {
		if done, err := p.unclosed(n, n, emit); done {
			return err
		}
		if len(p.info) == 0 {
			return p.errorf(n, "file ends inside the guidellm Benchmarks Stats table that starts at line %d, before its closing \"=====\" rule, and no Benchmarks Info table tells how many rows it has: the report is cut off; copy the complete report", p.start)
		}
		return p.errorf(n, "file ends inside the guidellm Benchmarks Stats table that starts at line %d after %d of its %d rows: the report is cut off; copy the complete report", p.start, p.rows, len(p.info))
	}
	return nil
}

// unclosed ends a Stats table at line n, which is not part of it, though
// its closing rule was not read (last is its last line). It reports
// whether the table was complete, a row for each benchmark of the Info
// table: then its results are emitted with a warning.
func (p *guidellmTextParser) unclosed(n, last int, emit Emit) (bool, error) {
	if p.section != "stats" || p.rows == 0 || p.rows != len(p.info) || len(p.held) != p.rows {
		return false, nil
	}
	p.section = ""
	for _, r := range p.held {
		r.Warnings = append(r.Warnings, fmt.Sprintf("guidellm Benchmarks Stats table that starts at line %d has no closing \"=====\" rule after line %d; it has a row for each of the %d benchmarks of the Info table and was kept", p.start, last, p.rows))
		emit(r)
	}
	p.held = nil
	return true, nil
}

func (p *guidellmTextParser) title() string {
	if p.section == "info" {
		return "Benchmarks Info"
	}
	return "Benchmarks Stats"
}

func (p *guidellmTextParser) reset(section string, n int) {
	p.held = nil
	p.section, p.start = section, n
	p.rule, p.groups, p.cols, p.body, p.rows = false, nil, nil, false, 0
}

func (p *guidellmTextParser) close(n int, emit Emit) error {
	rows := p.rows
	sec := p.section
	p.section = ""
	if rows == 0 {
		return p.errorf(n, "guidellm %s table that starts at line %d has no rows; copy the complete report", map[string]string{"info": "Benchmarks Info", "stats": "Benchmarks Stats"}[sec], p.start)
	}
	for _, r := range p.held {
		emit(r)
	}
	p.held = nil
	return nil
}

// metadata reads the labels of "Benchmarks Metadata:".
func (p *guidellmTextParser) metadata(s string) {
	if p.labels == nil {
		p.labels = map[string]string{}
	}
	get := func(key string) (string, bool) {
		i := strings.Index(s, key)
		if i < 0 {
			return "", false
		}
		v := s[i+len(key):]
		if strings.HasPrefix(v, "'") {
			if j := strings.IndexByte(v[1:], '\''); j >= 0 {
				return v[1 : j+1], true
			}
			return "", false
		}
		if j := strings.IndexAny(v, ", "); j >= 0 {
			v = v[:j]
		}
		return v, v != ""
	}
	if v, ok := get("backend_model="); ok {
		p.labels["model"] = v
	}
	if strings.HasPrefix(s, "Profile:") {
		if v, ok := get("type="); ok {
			p.labels["profile"] = v
		}
	}
	if strings.HasPrefix(s, "Request Loader:") {
		if v, ok := get(" data="); ok {
			p.labels["data"] = v
		}
	}
}

func guidellmSplit(line string) []string {
	cells := strings.Split(strings.TrimRight(line, " \t"), "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells
}

func (p *guidellmTextParser) infoRow(n int, cells []string) error {
	m := map[string]float64{}
	for i, c := range cells {
		if i == 0 || IsAbsent(c) {
			continue
		}
		g, col := strings.ToLower(p.groups[i]), strings.ToLower(p.cols[i])
		var name string
		switch {
		case col == "duration (s)":
			name = "duration"
		case g == "requests made" && col == "comp":
			name = "completed"
		case g == "requests made" && col == "err":
			name = "failed"
		case g == "prompt tok total" && col == "comp":
			name = "total_input_tokens"
		case g == "output tok total" && col == "comp":
			name = "total_output_tokens"
		default:
			continue
		}
		v, _, ok := ParseQuantity(c)
		if !ok {
			return p.errorf(n, "guidellm Benchmarks Info row %s, column %s %s: %s is not a number; fix the cell", Quote(cells[0]), p.groups[i], p.cols[i], Quote(c))
		}
		m[name] = v
	}
	p.info[cells[0]] = m
	return nil
}

var guidellmTextKinds = map[string]string{"req latency": "e2el", "request latency": "e2el", "ttft": "ttft", "itl": "itl", "tpot": "tpot"}

func (p *guidellmTextParser) statsRow(n int, cells []string, emit Emit) error {
	res := NewResult("guidellm", n)
	res.Name = cells[0]
	for i, c := range cells {
		if i == 0 || IsAbsent(c) {
			continue
		}
		group, unit := docSplitUnit(p.groups[i])
		g, col := strings.ToLower(group), strings.ToLower(p.cols[i])
		v, _, ok := ParseQuantity(c)
		if !ok {
			return p.errorf(n, "guidellm Benchmarks Stats row %s, column %s %s: %s is not a number; fix the cell", Quote(cells[0]), p.groups[i], p.cols[i], Quote(c))
		}
		switch {
		case g == "request stats" && col == "per second":
			res.Set("request_throughput", v)
		case g == "request stats" && col == "concurrency":
			res.Set("concurrency", v)
		case g == "out tok/sec" && col == "mean":
			res.Set("output_throughput", v)
		case g == "tot tok/sec" && col == "mean":
			res.Set("total_token_throughput", v)
		default:
			kind, ok := guidellmTextKinds[g]
			word, isStat := docStatWord(col)
			if !ok || !isStat {
				continue
			}
			scale, isTime := docTimeScale(unit)
			if !isTime {
				continue
			}
			docSetScaled(&res, word+"_"+kind+"_ms", v, scale)
		}
	}
	for k, v := range p.info[cells[0]] {
		res.Set(k, v)
	}
	for k, v := range p.labels {
		res.SetLabel(k, v)
	}
	strategy, arg, _ := strings.Cut(cells[0], "@")
	res.SetLabel("strategy", strategy)
	switch strategy {
	case "constant", "poisson":
		res.SetLabel("rate", arg)
	case "concurrent":
		res.SetLabel("streams", arg)
	}
	p.held = append(p.held, res)
	return nil
}
