package ingest

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// MindIE's benchmark tool (the benchmark command of MindIE Service, its
// output.py) logs two prettytable tables per run, each after a log line:
//
//	[2025-03-17 17:32:16.757+08:00] [12089] [...] [benchmark] [INFO] [output.py:115]
//	The BenchMark test performance metric result is:
//	+----------------+------------+-----+-----+-----+-----+---------+-----+------+
//	|         Metric |    average | max | min | P75 | P90 | SLO_P90 | P99 |    N |
//	+----------------+------------+-----+-----+-----+-----+---------+-----+------+
//	| FirstTokenTime | 64.7768 ms | ... | ... | ... | ... |     ... | ... | 8792 |
//	...
//	The BenchMark test common metric result is:
//	+---------------+------------------+
//	| Common Metric |            Value |
//	|   TimeElapsed |     10714.4325 s |
//	|      Returned |   8792( 100.0% ) |
//	...
//
// The performance table and the common table after it are one result.
// Mapping:
//   - FirstTokenTime -> ttft, DecodeTime -> tpot, GenerateTime -> e2el:
//     average, max, min, P75, P90, P99 -> mean, max, min, p75, p90, p99 as
//     {stat}_{kind}_ms, in milliseconds whatever the cell's unit.
//   - SLO_P90 of DecodeTime is MindIE's P90 over per-request mean decode
//     times, not a plain P90: it is kept as slo_p90_tpot_ms, never as
//     p90. For every other row MindIE prints P90 again there (or "/"),
//     so SLO_P90 is not stored for them.
//   - other rows keep their statistics under {stat}_{sanitized row}, with
//     _ms when the cells hold times (converted: QueueWaitTime is printed
//     in μs): mean_last_decode_time_ms, p99_max_decode_time_ms,
//     mean_input_tokens, p90_generated_tokens, mean_queue_wait_time_ms,
//     mean_generated_token_speed (token/s), mean_characters_per_token...
//   - the N column (the number of requests) is not stored.
//   - common table: Throughput -> request_throughput, GenerateSpeed or
//     OutputGenerateSpeed -> output_throughput, InputGenerateSpeed ->
//     input_throughput, TotalGenerateSpeed -> total_token_throughput,
//     Returned -> completed, Failed -> failed, Total -> total_requests,
//     TimeElapsed -> duration (seconds); ModelName -> label model,
//     DataSource -> labels dataset (the last path element) and
//     data_source (as printed), Concurrency (the client concurrency the
//     run was configured with) -> label max_concurrency; CurrentTime is
//     not stored; any other numeric row (lpct, GenerateSpeedPerClient,
//     accuracy in percent) under its sanitized name, _ms-suffixed when a
//     time.
//   - label backend=mindie; the result is named "<model>/<dataset>" (or
//     whichever of the two is known, else "mindie").
//
// Log prefixes before the tables' lines, markdown pipe tables (|---|) and
// code fences around them are fine. "/" and N/A cells are absent, never
// zero. A performance table with no
// common table within a few lines after it is still a result, with a
// warning; so is a common table with no performance table before it. A
// table cut off before its bottom border is an error.
func init() {
	RegisterText(TextFormat{
		Name: "mindie",
		Desc: "MindIE benchmark console tables: performance metric and common metric results",
		New:  func(file string) LineParser { return newMindIEParser(file) },
	})
}

// mindieGap is how many lines after a performance table its common table
// may start; past it, the performance table is reported on its own.
const mindieGap = 12

type mindieParser struct {
	file    string
	grid    gridScanner
	pending *Result // performance table read, waiting for the common table
	pendEnd int     // line where that table ended
}

func newMindIEParser(file string) *mindieParser {
	p := &mindieParser{file: file}
	p.grid = gridScanner{
		format:      "MindIE",
		file:        file,
		ascii:       true,
		headerFirst: mindieHeaderFirst,
		header:      mindieHeader,
	}
	return p
}

func mindieHeaderFirst(first string) bool {
	return first == "Metric" || first == "Common Metric"
}

// mindieHeader accepts "| Metric | average | max | min | ... |" and "|
// Common Metric | Value |"; a common table with a Stage column is
// AISBench's.
func mindieHeader(cells []string, box bool) bool {
	switch cells[0] {
	case "Metric":
		return gridHasColumn(cells, "average") && gridHasColumn(cells, "max") && gridHasColumn(cells, "min")
	case "Common Metric":
		return len(cells) == 2 && strings.EqualFold(cells[1], "Value")
	}
	return false
}

func (p *mindieParser) Line(n int, line string, emit Emit) error {
	done, _, err := p.grid.feed(n, line)
	if err != nil {
		return err
	}
	if done != nil {
		p.table(done, emit)
	}
	if p.pending != nil && p.grid.t == nil && n-p.pendEnd > mindieGap {
		p.flush(emit)
	}
	return nil
}

func (p *mindieParser) End(n int, emit Emit) error {
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

func (p *mindieParser) flush(emit Emit) {
	if p.pending == nil {
		return
	}
	r := p.pending
	p.pending = nil
	r.Warnings = append(r.Warnings, fmt.Sprintf("MindIE performance table (line %d) has no common metric table after it; request counts, duration and throughputs are missing", r.Line))
	mindieFinish(r)
	emit(*r)
}

func (p *mindieParser) table(t *gridTable, emit Emit) {
	if t.header[0] == "Metric" {
		p.flush(emit)
		r := NewResult("mindie", t.start)
		mindiePerf(&r, t)
		p.pending, p.pendEnd = &r, t.end
		return
	}
	r := p.pending
	p.pending = nil
	if r == nil {
		x := NewResult("mindie", t.start)
		r = &x
		r.Warnings = append(r.Warnings, fmt.Sprintf("MindIE common metric table (line %d) has no performance metric table before it; latencies are missing", t.start))
	}
	mindieCommon(r, t)
	mindieFinish(r)
	emit(*r)
}

var mindieLatencyKinds = map[string]string{
	"firsttokentime": "ttft",
	"decodetime":     "tpot",
	"generatetime":   "e2el",
}

func mindiePerf(r *Result, t *gridTable) {
	for _, row := range t.rows {
		name := row.cells[0]
		if name == "" {
			continue
		}
		kind := mindieLatencyKinds[gridKey(name)]
		base := kind
		if base == "" {
			base = metric.Sanitize(name)
		}
		if base == "" { // no letters or digits: not a metric row
			continue
		}
		for c := 1; c < len(row.cells); c++ {
			stat := gridStatName(t.header[c])
			if stat == "" || stat == "slo_p90" && kind != "tpot" {
				continue // N, and SLO_P90 where it only repeats P90
			}
			gridSetStat(r, "MindIE", row.line, name, t.header[c], stat, base, kind != "", row.cells[c])
		}
	}
}

// mindieCommonNames maps normalized common-metric names to canonical metrics.
var mindieCommonNames = map[string]string{
	"throughput":          "request_throughput",
	"generatespeed":       "output_throughput",
	"outputgeneratespeed": "output_throughput",
	"inputgeneratespeed":  "input_throughput",
	"totalgeneratespeed":  "total_token_throughput",
	"returned":            "completed",
	"failed":              "failed",
	"total":               "total_requests",
}

func mindieCommon(r *Result, t *gridTable) {
	for _, row := range t.rows {
		name, cell := row.cells[0], row.cells[1]
		key := gridKey(name)
		switch key {
		case "", "currenttime":
			continue
		case "modelname":
			r.SetLabel("model", cell)
			continue
		case "datasource":
			r.SetLabel("data_source", cell)
			r.SetLabel("dataset", mindiePathBase(cell))
			continue
		case "concurrency":
			r.SetLabel("max_concurrency", gridFirstField(cell))
			continue
		}
		v, unit, present, ok := gridCell(cell)
		if !present {
			continue
		}
		if !ok {
			r.Warnings = append(r.Warnings, fmt.Sprintf("line %d: MindIE %s value %s is not a number; left out", row.line, name, Quote(cell)))
			continue
		}
		switch {
		case key == "timeelapsed":
			if unit == "" {
				unit = "s" // MindIE prints seconds
			}
			ms, isTime := LatencyMs(v, unit)
			if !isTime {
				r.Warnings = append(r.Warnings, fmt.Sprintf("line %d: MindIE TimeElapsed %s has unit %q, not a time; left out", row.line, Quote(cell), unit))
				continue
			}
			r.Set("duration", gridRound(ms/1e3))
		case mindieCommonNames[key] != "":
			r.Set(mindieCommonNames[key], v)
		default:
			if base := metric.Sanitize(name); base != "" {
				gridSetPlain(r, base, v, unit)
			}
		}
	}
}

// mindieFinish sets the backend label. The result has no name of its
// own: model and dataset are identity labels, and the benchmark name is
// the user's (--name), as for vLLM console blocks.
func mindieFinish(r *Result) {
	r.SetLabel("backend", "mindie")
}

// mindiePathBase returns the last element of a slash- or backslash-separated
// path ("/home/work/QwQ-32B/gsm8k-200" -> "gsm8k-200").
func mindiePathBase(p string) string {
	p = strings.TrimRight(strings.TrimSpace(p), `/\`)
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}
