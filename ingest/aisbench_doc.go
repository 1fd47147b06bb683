package ingest

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// AISBench (ais_bench --mode perf) writes, for every task, two files under
// outputs/default/<timestamp>/performances/<model_abbr>/:
//
//   - <dataset>.csv, format aisbench-csv: the performance table, written by
//     BasePerfMetricCalculator._export_to_csv as
//     "Performance Parameters,Stage,Average,Min,Max,Median,P75,P90,P99,N"
//     with one row per parameter and stage; cells carry units
//     ("12300.2 ms", "41.6254 token/s"), and the statistics columns are
//     configurable (any PNN).
//   - <dataset>.json, format aisbench-json: the common metrics,
//     {"Benchmark Duration": {"total": "98409.4916 ms"}, "Success Requests":
//     {"total": 8}, ...}, one object per metric keyed by stage (written by
//     dump_results_dict(calculator.get_common_res())).
//
// Neither file names the task (the directory and file names do), so
// results are unnamed for the "total" stage and named after the stage
// otherwise ("stable"); every result carries the "stage" label, as the
// console tables' results do. The mapping is the console tables' one
// (aisbench.go): TTFT, TPOT, ITL and E2EL rows are
// {mean,median,min,max,pNN}_{kind}_ms; other rows are {stat}_{row}
// (mean_input_tokens, p99_output_token_throughput), _ms-suffixed when the
// cells hold times; Success Requests -> completed, Failed Requests ->
// failed, Benchmark Duration (ms) -> duration in seconds, Request/Input/
// Output/Total Token Throughput -> request_throughput, input_throughput,
// output_throughput, total_token_throughput, Total Input Tokens and Total
// Generated (Output) Tokens -> total_input_tokens, total_output_tokens,
// Max Concurrency -> label max_concurrency, others sanitized. The CSV's N
// column of the E2EL row (the number of successful requests) is stored as
// completed, so a CSV alone still carries the request count.

func init() {
	RegisterCSV(CSVFormat{
		Name:         "aisbench-csv",
		Desc:         "AISBench per-task performance CSV (performances/<model>/<dataset>.csv)",
		Match:        isAISBenchCSV,
		ConvertLines: convertAISBenchCSV,
	})
	RegisterDoc(DocFormat{
		Name:    "aisbench-json",
		Desc:    "AISBench per-task common metrics JSON (performances/<model>/<dataset>.json)",
		Match:   isAISBenchJSON,
		Convert: convertAISBenchJSON,
	})
}

// aisDocLatency maps performance parameters to latency kinds.
var aisDocLatency = map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el"}

// aisDocCommon maps normalized common-metric names to canonical metrics.
var aisDocCommon = map[string]string{
	"successrequests":       "completed",
	"failedrequests":        "failed",
	"requestthroughput":     "request_throughput",
	"inputtokenthroughput":  "input_throughput",
	"outputtokenthroughput": "output_throughput",
	"totaltokenthroughput":  "total_token_throughput",
	"totalinputtokens":      "total_input_tokens",
	"totalgeneratedtokens":  "total_output_tokens",
	"totaloutputtokens":     "total_output_tokens",
	"benchmarkduration":     "duration",
	"maxconcurrency":        "",
}

// aisDocKey lowercases s and keeps letters and digits: "Success Requests"
// -> "successrequests".
func aisDocKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isAISBenchCSV(h []string) bool {
	return len(h) >= 3 && aisDocKey(h[0]) == "performanceparameters"
}

// aisDocStages collects one result per stage in order of appearance.
type aisDocStages struct {
	format string
	order  []string
	res    map[string]*Result
}

func (s *aisDocStages) get(stage string, line int) *Result {
	if stage == "" {
		stage = "total"
	}
	if r, ok := s.res[stage]; ok {
		return r
	}
	r := NewResult(s.format, line)
	r.SetLabel("stage", stage)
	if stage != "total" {
		r.Name = stage
	}
	if s.res == nil {
		s.res = map[string]*Result{}
	}
	s.res[stage] = &r
	s.order = append(s.order, stage)
	return &r
}

func (s *aisDocStages) results() []Result {
	out := make([]Result, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, *s.res[k])
	}
	return out
}

func convertAISBenchCSV(rows [][]string, lines []int) ([]Result, error) {
	if len(rows) == 0 || !isAISBenchCSV(rows[0]) {
		h := ""
		if len(rows) > 0 {
			h = strings.Join(rows[0], ",")
		}
		return nil, &Error{Line: docLineOf(lines, 0), Msg: fmt.Sprintf("aisbench-csv: header %s is not an AISBench performance table; it starts with \"Performance Parameters,Stage,Average,...\"", Quote(h))}
	}
	header := rows[0]
	stageCol := -1
	for i, h := range header {
		if aisDocKey(h) == "stage" {
			stageCol = i
		}
	}
	st := aisDocStages{format: "aisbench-csv"}
	for i := 1; i < len(rows); i++ {
		row := rows[i]
		line := docLineOf(lines, i)
		param := ""
		if len(row) > 0 {
			param = strings.TrimSpace(row[0])
		}
		if param == "" {
			continue
		}
		if len(row) != len(header) {
			return nil, &Error{Line: line, Msg: fmt.Sprintf("aisbench-csv: row %s has %d cells, the header %d; the file may be cut or edited, re-export it", Quote(param), len(row), len(header))}
		}
		stage := ""
		if stageCol > 0 {
			stage = strings.TrimSpace(row[stageCol])
		}
		r := st.get(stage, line)
		kind := aisDocLatency[aisDocKey(param)]
		base := kind
		if base == "" {
			base = metric.Sanitize(param)
		}
		if base == "" {
			continue
		}
		for c := 1; c < len(row); c++ {
			if c == stageCol {
				continue
			}
			col := strings.TrimSpace(header[c])
			v, unit, ok, err := docCell(row[c])
			if err != nil {
				return nil, &Error{Line: line, Msg: fmt.Sprintf("aisbench-csv: %s, column %s: %v; fix the cell or leave it empty", Quote(param), Quote(col), err)}
			}
			if !ok {
				continue
			}
			if strings.EqualFold(col, "N") {
				if kind == "e2el" {
					r.Set("completed", v)
				}
				continue
			}
			stat, ok := docStatWord(col)
			if !ok {
				continue
			}
			scale, isTime := 1.0, false
			if unit != "" || kind != "" {
				scale, isTime = docTimeScale(unit)
			}
			switch {
			case kind != "" && !isTime:
				return nil, &Error{Line: line, Msg: fmt.Sprintf("aisbench-csv: %s, column %s: %s has unit %q, not a time", Quote(param), Quote(col), Quote(row[c]), unit)}
			case kind != "":
				docSetScaled(r, metric.Latency(stat, kind), v, scale)
			case isTime:
				docSetScaled(r, stat+"_"+base+"_ms", v, scale)
			default:
				r.Set(stat+"_"+base, v)
			}
		}
	}
	return st.results(), nil
}

// aisDocNames are the common metric names as AISBench spells them.
var aisDocNames = map[string]bool{
	"benchmark duration": true, "total requests": true, "failed requests": true,
	"success requests": true, "concurrency": true, "max concurrency": true,
	"request throughput": true, "total input tokens": true, "total generated tokens": true,
	"total output tokens": true, "input token throughput": true, "output token throughput": true,
	"total token throughput": true, "prefill token throughput": true,
}

// isAISBenchJSON recognises the common-metrics document: two or more of
// AISBench's common metric names, spelled its way ("Success Requests", not
// a snake_case key of another tool), one of them a request count or the
// duration.
func isAISBenchJSON(obj map[string]any) bool {
	n, anchor := 0, false
	for k := range obj {
		name := strings.ToLower(strings.TrimSpace(k))
		if !aisDocNames[name] {
			continue
		}
		n++
		switch name {
		case "benchmark duration", "success requests", "failed requests", "total requests":
			anchor = true
		}
	}
	return n >= 2 && anchor
}

func convertAISBenchJSON(obj map[string]any) ([]Result, error) {
	if !isAISBenchJSON(obj) {
		return nil, fmt.Errorf("JSON object with keys %s is not an AISBench common-metrics file (performances/<model>/<dataset>.json): it lacks \"Benchmark Duration\", \"Success Requests\", ...", docKeys(obj))
	}
	st := aisDocStages{format: "aisbench-json"}
	for _, name := range docSortedKeys(obj) {
		v, present := docField(obj, name)
		if !present {
			continue
		}
		// {stage: value}, or a bare value for the whole run.
		stages, ok := v.(map[string]any)
		if !ok {
			stages = map[string]any{"total": v}
		}
		for _, stage := range docSortedKeys(stages) {
			cell, present := docField(stages, stage)
			if !present {
				continue
			}
			if err := aisDocCommonValue(st.get(stage, 0), name, stage, cell); err != nil {
				return nil, err
			}
		}
	}
	if len(st.order) > 1 {
		// Keep "total" first, as AISBench prints it.
		for i, k := range st.order {
			if k == "total" && i > 0 {
				copy(st.order[1:i+1], st.order[:i])
				st.order[0] = "total"
				break
			}
		}
	}
	return st.results(), nil
}

// aisDocCommonValue stores one common metric of one stage. Values are
// numbers or strings with a unit ("98409.4916 ms", "0.0813 req/s").
func aisDocCommonValue(r *Result, name, stage string, cell any) error {
	key := aisDocKey(name)
	var v float64
	var unit string
	switch x := cell.(type) {
	case string:
		var ok bool
		if v, unit, ok = ParseQuantity(x); !ok {
			if key == "maxconcurrency" {
				r.SetLabel("max_concurrency", x)
				return nil
			}
			return fmt.Errorf("%q (stage %q) is %s, not a number; fix the value (null marks a missing one)", name, stage, docDescribe(cell))
		}
	case map[string]any, []any, bool:
		return fmt.Errorf("%q (stage %q) is %s, not a number", name, stage, docDescribe(cell))
	default:
		f, ok := Num(cell)
		if !ok {
			return docNotNumber(name, cell)
		}
		v = f
	}
	switch mname, known := aisDocCommon[key]; {
	case key == "maxconcurrency":
		r.SetLabel("max_concurrency", formatNum(v))
	case key == "benchmarkduration":
		ms, ok := LatencyMs(v, unit) // printed in ms; a bare number is ms too
		if !ok {
			return fmt.Errorf("%q (stage %q) has unit %q, not a time", name, stage, unit)
		}
		r.Set("duration", docRound(ms/1e3))
	case known:
		r.Set(mname, v)
	default:
		n := metric.Sanitize(name)
		if n == "" {
			return nil
		}
		if unit != "" {
			if ms, ok := LatencyMs(v, unit); ok {
				r.Set(n+"_ms", docRound(ms))
				return nil
			}
		}
		r.Set(n, v)
	}
	return nil
}
