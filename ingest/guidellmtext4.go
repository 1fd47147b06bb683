package ingest

import (
	"fmt"
	"strconv"
	"strings"
)

// guidellm v0.4 and later print their console report differently from v0.2
// and v0.3 (src/guidellm/benchmark/outputs/console.py rendered by
// src/guidellm/utils/console.py): titled tables, one row per benchmark,
// each column headed by three rows (group, name, unit), cells merged into
// the one before them where a header repeats ("Request Latency ||"):
//
//	ℹ Request Latency Statistics (Completed Requests)
//	|=============|=========|========|=======|=======|...
//	| Benchmark   | Request Latency || TTFT         ||...
//	| Strategy    | Sec             || ms           ||...
//	|             | Mdn     | p95    | Mdn   | p95   |...
//	|-------------|---------|--------|-------|-------|...
//	| synchronous | 1.5     | 1.6    | 19.8  | 24.1  |...
//	|=============|=========|========|=======|=======|...
//
// Each row is one result, named after its strategy (the console prints the
// strategy type only, so a second "constant" row is "constant#2"). The
// tables of one report are read together: Run Summary Info (Timings Dur Sec
// -> duration, Input/Output Tokens Comp Tot -> total_input_tokens,
// total_output_tokens), Request Latency Statistics (Request Latency Sec,
// TTFT, ITL, TPOT ms; Mdn, Mean, p95, p99 -> median, mean, p95, p99 of
// *_e2el_ms, *_ttft_ms, *_itl_ms, *_tpot_ms) and Server Throughput
// Statistics (Requests Per Sec -> request_throughput, Requests Concurrency
// Mean -> concurrency, Input/Output/Total Tokens Per Sec ->
// input_throughput, output_throughput, total_token_throughput). Per-request
// token and modality tables are not read; their Input and Output halves
// are stacked under one title, the second's headers after the first's
// closing rule. "--" is absent. Titles are read with or without their
// "(Completed Requests)"/"(All Requests)" qualifier (v0.4 and v0.5 print
// "Server Throughput Statistics" bare). The report ends with the Server
// Throughput table. A table without its closing rule is kept, with a
// warning, when it has a row for each of the report's benchmarks (counted
// in the first table that closed), and is otherwise cut off; a cut table,
// or a report that ends before its Request Latency and Server Throughput
// tables, is an error naming the line.

// guidellm4Titles maps a table title, without the "(Completed Requests)"
// or "(All Requests)" qualifier that later versions add, to its kind.
// v0.4 and v0.5 print "Server Throughput Statistics" bare; v0.6 on add
// "(All Requests)"; v0.7 adds the Tool Call table.
var guidellm4Titles = map[string]string{
	"Run Summary Info":             "summary",
	"Request Latency Statistics":   "latency",
	"Server Throughput Statistics": "throughput",
	"Request Token Statistics":     "skip",
	"Text Metrics Statistics":      "skip",
	"Image Metrics Statistics":     "skip",
	"Video Metrics Statistics":     "skip",
	"Audio Metrics Statistics":     "skip",
	"Tool Call Metrics Statistics": "skip",
}

// guidellm4Title recognises a table title, with or without rich's status
// icon in front of it and with or without its qualifier in parentheses.
func guidellm4Title(s string) (string, bool) {
	if len(s) < len("Run Summary Info") || s[0] == '|' {
		return "", false
	}
	switch s[len(s)-1] {
	case ')':
	case 'o':
		if !strings.HasSuffix(s, " Info") {
			return "", false
		}
	case 's':
		if !strings.HasSuffix(s, " Statistics") {
			return "", false
		}
	default:
		return "", false
	}
	if i := strings.IndexByte(s, ' '); i > 0 && i <= 4 {
		if kind, ok := guidellm4Base(s[i+1:]); ok {
			return kind, true
		}
	}
	return guidellm4Base(s)
}

// guidellm4Base looks a title up without its "(... Requests)" qualifier.
func guidellm4Base(t string) (string, bool) {
	if strings.HasSuffix(t, " Requests)") {
		if i := strings.LastIndex(t, " ("); i > 0 {
			t = t[:i]
		}
	}
	kind, ok := guidellm4Titles[t]
	return kind, ok
}

type guidellm4 struct {
	start   int    // line of the report's first title
	kind    string // kind of the current table ("" between tables)
	title   string // its title as printed, without the status icon
	tstart  int    // line of the current title
	state   int    // 0 want top rule, 1 headers, 2 values, 3 after bottom rule
	headers [][]string
	row     int
	bench   int // rows of the first table closed by its rule: one per benchmark
	rows    []*Result
	warns   []string
	seen    map[string]bool
}

const (
	g4Top = iota
	g4Head
	g4Values
	g4Closed
)

// v4Line handles a line of a v0.4 report; it reports whether it took it.
func (p *guidellmTextParser) v4Line(n int, s string, emit Emit) (bool, error) {
	if kind, ok := guidellm4Title(s); ok {
		if p.v4 != nil && p.v4.kind != "" && p.v4.state != g4Closed {
			if err := p.v4Unclosed(n, n-1); err != nil {
				return true, err
			}
		}
		// A report starts with its summary; a latency or throughput table
		// read before is the previous report's (the per-request tables
		// are "skip", several to a report).
		if p.v4 != nil && (kind == "summary" || kind != "skip" && p.v4.seen[kind]) {
			if err := p.v4Finish(n, emit); err != nil {
				return true, err
			}
		}
		if p.v4 == nil {
			p.v4 = &guidellm4{start: n, seen: map[string]bool{}}
		}
		g := p.v4
		g.kind, g.tstart, g.state, g.headers, g.row = kind, n, g4Top, nil, 0
		g.title = s
		if _, bare := guidellm4Base(s); !bare {
			g.title = s[strings.IndexByte(s, ' ')+1:] // without the status icon
		}
		g.seen[kind] = true
		return true, nil
	}
	g := p.v4
	if g == nil || g.kind == "" {
		return false, nil
	}
	if s == "" && g.state == g4Top {
		return true, nil
	}
	if !strings.HasPrefix(s, "|") {
		if g.state != g4Closed {
			if err := p.v4Unclosed(n, n-1); err != nil {
				return true, err
			}
		}
		// The table ended on the previous line.
		done := g.kind == "throughput"
		g.kind = ""
		if done {
			return false, p.v4Finish(n, emit)
		}
		return false, nil
	}
	inner := strings.Trim(s, "|")
	switch {
	case inner != "" && strings.Trim(inner, "=|") == "":
		switch g.state {
		case g4Top, g4Closed: // the next table of a group starts
			g.state, g.headers, g.row = g4Head, nil, 0
		case g4Values:
			g.state = g4Closed
			if g.bench == 0 {
				g.bench = g.row
			}
		default:
			return true, &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm table %s that starts at line %d has no \"-----\" rule under its headers; copy the complete report", Quote(p.v4TitleName()), g.tstart)}
		}
		return true, nil
	case inner != "" && strings.Trim(inner, "-|") == "":
		if g.state != g4Head || len(g.headers) == 0 {
			return true, &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm table %s that starts at line %d: a \"-----\" rule where its headers should be; copy the complete report", Quote(p.v4TitleName()), g.tstart)}
		}
		g.state = g4Values
		return true, nil
	}
	cells := guidellmSplit(s)
	cells = cells[1 : len(cells)-1] // the edges
	switch g.state {
	case g4Head:
		g.headers = append(g.headers, cells)
		return true, nil
	case g4Values:
		return true, p.v4Row(n, cells)
	case g4Closed:
		// The Input and Output halves of a modality table are stacked
		// under one title (print_tables): the rule that closed the first
		// half opens the second, whose headers follow.
		g.state, g.headers, g.row = g4Head, [][]string{cells}, 0
		return true, nil
	}
	return true, &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm table %s that starts at line %d: a row outside the table's rules: %s; copy the complete report", Quote(p.v4TitleName()), g.tstart, Quote(s))}
}

// v4TitleName is the current table's title as printed.
func (p *guidellmTextParser) v4TitleName() string { return p.v4.title }

// v4Unclosed ends the current table, whose last line is last, at line n
// (the input's last line, or the first that is not part of the table),
// though no closing rule was read. A table that has a row for each of the
// report's benchmarks (counted in the first table that closed) is complete
// and kept, with a warning on the report's results; any other was cut off.
func (p *guidellmTextParser) v4Unclosed(n, last int) error {
	g := p.v4
	if g.state != g4Values || g.bench == 0 || g.row != g.bench {
		return p.v4Cut(n)
	}
	g.state = g4Closed
	g.warns = append(g.warns, fmt.Sprintf("guidellm table %s that starts at line %d has no closing \"=====\" rule after line %d; it has a row for each of the report's %d benchmarks and was kept", Quote(g.title), g.tstart, last, g.bench))
	return nil
}

func (p *guidellmTextParser) v4Cut(n int) error {
	g := p.v4
	p.v4 = nil
	return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm table %s that starts at line %d is cut off before its closing \"=====\" rule; copy the complete report", Quote(g.title), g.tstart)}
}

// v4Columns resolves each column's group, name and unit, filling the
// cells merged into the one before them.
func (g *guidellm4) columns(ncells int) [][3]string {
	cols := make([][3]string, ncells)
	for r, hr := range g.headers {
		if r > 2 {
			break
		}
		prev := ""
		for c := 0; c < ncells && c < len(hr); c++ {
			v := hr[c]
			if v == "" && c > 0 && (r == 0 || cols[c][r-1] == cols[c-1][r-1]) {
				v = prev
			}
			cols[c][r] = v
			prev = v
		}
	}
	return cols
}

var guidellm4Kinds = map[string]string{"request latency": "e2el", "ttft": "ttft", "itl": "itl", "tpot": "tpot"}

func guidellm4Stat(s string) (string, bool) {
	if strings.EqualFold(s, "mdn") {
		return "median", true
	}
	return docStatWord(s)
}

func (p *guidellmTextParser) v4Row(n int, cells []string) error {
	g := p.v4
	idx := g.row
	g.row++
	if g.kind == "skip" {
		return nil
	}
	cols := g.columns(len(cells))
	for idx >= len(g.rows) {
		r := NewResult("guidellm", n)
		g.rows = append(g.rows, &r)
	}
	res := g.rows[idx]
	if len(cells) == 0 || cells[0] == "" {
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm table %s row has no strategy: %s; the report is damaged, copy it whole", Quote(p.v4TitleName()), Quote(strings.Join(cells, "|")))}
	}
	if res.Name == "" {
		res.Name = cells[0]
	}
	for i := 1; i < len(cells); i++ {
		c := cells[i]
		if c == "" || IsAbsent(c) {
			continue
		}
		group, name, unit := strings.ToLower(cols[i][0]), strings.ToLower(cols[i][1]), strings.ToLower(cols[i][2])
		target, scale := "", 1.0
		switch g.kind {
		case "summary":
			switch {
			case group == "timings" && name == "dur":
				target = "duration"
			case group == "input tokens" && name == "comp" && unit == "tot":
				target = "total_input_tokens"
			case group == "output tokens" && name == "comp" && unit == "tot":
				target = "total_output_tokens"
			}
		case "latency":
			kind, ok := guidellm4Kinds[group]
			word, isStat := guidellm4Stat(unit)
			if !ok || !isStat {
				continue
			}
			s, isTime := docTimeScale(name)
			if !isTime {
				continue
			}
			target, scale = word+"_"+kind+"_ms", s
		case "throughput":
			switch {
			case group == "requests" && name == "per sec" && unit == "mean":
				target = "request_throughput"
			case group == "requests" && name == "concurrency" && unit == "mean":
				target = "concurrency"
			case group == "input tokens" && name == "per sec" && unit == "mean":
				target = "input_throughput"
			case group == "output tokens" && name == "per sec" && unit == "mean":
				target = "output_throughput"
			case group == "total tokens" && name == "per sec" && unit == "mean":
				target = "total_token_throughput"
			}
		}
		if target == "" {
			continue
		}
		v, unit, ok := ParseQuantity(c)
		if !ok || unit != "" { // the console prints bare numbers
			return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm table %s row %s, column %s: %s is not a number; fix the cell", Quote(p.v4TitleName()), Quote(cells[0]), Quote(strings.TrimSpace(cols[i][0]+" "+cols[i][1]+" "+cols[i][2])), Quote(c))}
		}
		docSetScaled(res, target, v, scale)
	}
	return nil
}

// v4Finish emits the results of the report read so far.
func (p *guidellmTextParser) v4Finish(n int, emit Emit) error {
	g := p.v4
	p.v4 = nil
	if g == nil || len(g.rows) == 0 {
		return nil
	}
	if !g.seen["throughput"] || !g.seen["latency"] {
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("guidellm report that starts at line %d ends before its Request Latency and Server Throughput tables; copy the complete report", g.start)}
	}
	seen := map[string]int{}
	for _, r := range g.rows {
		base := r.Name
		if k := seen[base]; k > 0 {
			r.Name = base + "#" + strconv.Itoa(k+1)
		}
		seen[base]++
		r.SetLabel("strategy", base)
		for k, v := range p.labels {
			r.SetLabel(k, v)
		}
		r.Warnings = append(r.Warnings, g.warns...)
		emit(*r)
	}
	return nil
}

func (p *guidellmTextParser) v4End(n int, emit Emit) error {
	if p.v4 == nil {
		return nil
	}
	if p.v4.kind != "" && p.v4.state != g4Closed {
		if err := p.v4Unclosed(n, n); err != nil {
			return err
		}
	}
	return p.v4Finish(n, emit)
}
