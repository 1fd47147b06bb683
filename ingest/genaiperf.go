package ingest

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// genai-perf (triton-inference-server/perf_analyzer) and its successor
// aiperf (ai-dynamo/aiperf) export one run's statistics as JSON
// (profile_export_genai_perf.json, profile_export_aiperf.json) and CSV
// (profile_export_genai_perf.csv, profile_export_aiperf.csv). Each file is
// one result.
//
// JSON: {metric: {"unit": "ms", "avg": .., "p1" .. "p99": .., "min": ..,
// "max": .., "std": ..}, ..., "input_config": {...}}; early aiperf nests the
// metrics under "records". CSV: a "Metric,avg,min,max,p99,...,p25" table of
// distributions ("Time To First Token (ms)", with thousands separators),
// a blank line, then a "Metric,Value" table of single values; aiperf adds
// std and p1..p5 columns (which is how the two are told apart) and a GPU
// telemetry section, which perfgate ignores. The exports write every cell
// (empty when absent), so a row with fewer cells than its table's header
// is a file cut off or edited: an error at its line. genai-perf's `analyze` sweep
// CSV ("Config Name,Concurrency,...,p99 Time To First Token (ms),...") is
// one result per row, named by its Config Name.
//
// Mapping: time_to_first_token, inter_token_latency and request_latency
// are ttft, itl and e2el, converted to milliseconds from the unit field
// (ms, us, ns, s; none means ms). Statistics: avg is mean and p50 is
// median (the vocabulary's name for the 50th percentile); pNN, min, max
// and std keep their names. request_throughput, output_token_throughput
// (output_throughput), request_goodput, request_count (completed),
// error_request_count (failed), benchmark_duration (duration, seconds),
// total_isl and total_osl (total_input_tokens, total_output_tokens) are
// single values. Other distributions keep sanitized names with the
// statistic first (mean_output_sequence_length, p99_time_to_second_token_ms);
// timestamps are skipped. Labels: model, concurrency, request_rate,
// endpoint_type, streaming, backend. (genai-perf's inter_token_latency is
// a per-request average like vLLM's TPOT; it keeps the name the tools give
// it, itl, so a rule on TPOT does not silently compare two definitions.)
//
// aiperf's per-request records (profile_export.jsonl) are read together as
// one result (aiperfrecords.go). Not results: genai-perf's GPU telemetry
// CSV ("Metric,GPU,avg,...") is not claimed.

func init() {
	RegisterDoc(DocFormat{
		Name:    "aiperf",
		Desc:    "aiperf profile_export_aiperf.json",
		Match:   func(obj map[string]any) bool { return isProfileExport(obj) && isAIPerf(obj) || isAIPerfRecord(obj) },
		Convert: convertAIPerfJSON,
	})
	RegisterDoc(DocFormat{
		Name:    "genai-perf",
		Desc:    "genai-perf profile_export_genai_perf.json",
		Match:   func(obj map[string]any) bool { return isProfileExport(obj) && !isAIPerf(obj) },
		Convert: func(obj map[string]any) ([]Result, error) { return convertProfileJSON("genai-perf", obj) },
	})
	RegisterCSV(CSVFormat{
		Name:         "aiperf",
		Desc:         "aiperf profile_export_aiperf.csv",
		Match:        func(h []string) bool { return isProfileCSV(h) && isAIPerfHeader(h) },
		ConvertLines: func(rows [][]string, lines []int) ([]Result, error) { return convertProfileCSV("aiperf", rows, lines) },
	})
	RegisterCSV(CSVFormat{
		Name:  "genai-perf",
		Desc:  "genai-perf profile_export_genai_perf.csv and analyze CSV",
		Match: func(h []string) bool { return isAnalyzeCSV(h) || isProfileCSV(h) && !isAIPerfHeader(h) },
		ConvertLines: func(rows [][]string, lines []int) ([]Result, error) {
			return convertProfileCSV("genai-perf", rows, lines)
		},
	})
}

// profileMarkers are metrics every genai-perf and aiperf export has.
var profileMarkers = []string{"time_to_first_token", "request_latency", "request_throughput", "inter_token_latency", "output_token_throughput"}

// profileStats returns the object holding the metric statistics.
func profileStats(obj map[string]any) (map[string]any, bool) {
	if rec, ok := obj["records"].(map[string]any); ok && hasProfileMarker(rec) {
		return rec, true
	}
	if hasProfileMarker(obj) {
		return obj, true
	}
	return nil, false
}

func hasProfileMarker(m map[string]any) bool {
	for _, k := range profileMarkers {
		if s, ok := m[k].(map[string]any); ok {
			if _, ok := s["avg"]; ok {
				return true
			}
		}
	}
	return false
}

func isProfileExport(obj map[string]any) bool {
	if _, ok := obj["metrics"]; ok {
		return false // aiperf's per-request records and the generic format
	}
	_, ok := profileStats(obj)
	return ok
}

// isAIPerf tells aiperf's export from genai-perf's by what only aiperf
// writes.
func isAIPerf(obj map[string]any) bool {
	if _, ok := obj["records"].(map[string]any); ok {
		return true
	}
	for _, k := range []string{"benchmark_duration", "error_summary", "was_cancelled", "total_isl", "total_osl", "telemetry_data"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	ic, _ := obj["input_config"].(map[string]any)
	for _, k := range []string{"endpoint", "loadgen"} {
		if _, ok := ic[k].(map[string]any); ok {
			return true
		}
	}
	_, ok := ic["cli_command"]
	return ok
}

// isAIPerfRecord recognises a per-request record of aiperf's
// profile_export.jsonl: {"metadata": {"x_request_id", ...}, "metrics":
// {name: {"value", "unit"}}, "error"}.
func isAIPerfRecord(obj map[string]any) bool {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return false
	}
	if _, ok := obj["metrics"].(map[string]any); !ok {
		return false
	}
	for _, k := range []string{"x_request_id", "request_start_ns", "benchmark_phase", "session_num"} {
		if _, ok := md[k]; ok {
			return true
		}
	}
	return false
}

// convertAIPerfJSON reads profile_export_aiperf.json. The per-request
// records of profile_export.jsonl are read together before (aiperfrecords.go).
func convertAIPerfJSON(obj map[string]any) ([]Result, error) {
	return convertProfileJSON("aiperf", obj)
}

// profileArticle is "a genai-perf" or "an aiperf".
func profileArticle(format string) string {
	if strings.HasPrefix(format, "a") {
		return "an " + format
	}
	return "a " + format
}

// profileSkip are top-level keys that are not metrics.
var profileSkip = map[string]bool{
	"input_config": true, "telemetry_data": true, "error_summary": true, "start_time": true,
	"end_time": true, "was_cancelled": true, "records": true,
}

func convertProfileJSON(format string, obj map[string]any) ([]Result, error) {
	stats, ok := profileStats(obj)
	if !ok {
		return nil, fmt.Errorf("JSON object with keys %s is not %s export: it has none of %s with an \"avg\"; use profile_export_%s.json",
			docKeys(obj), profileArticle(format), strings.Join(profileMarkers, ", "), strings.ReplaceAll(format, "-", "_"))
	}
	res := NewResult(format, 0)
	for _, k := range docSortedKeys(stats) {
		if profileSkip[k] {
			continue
		}
		v, present := docField(stats, k)
		if !present {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			if docIsNumber(v) {
				m = map[string]any{"avg": v}
			} else {
				continue
			}
		}
		if err := setProfileMetric(&res, k, m); err != nil {
			return nil, err
		}
	}
	setProfileLabels(&res, obj)
	return []Result{res}, nil
}

var profileLatencies = map[string]string{
	"time_to_first_token": "ttft", "ttft": "ttft",
	"inter_token_latency": "itl", "itl": "itl",
	"request_latency":       "e2el",
	"time_per_output_token": "tpot", "tpot": "tpot",
}

// profileSingles are single-valued metrics: their "avg" is the value.
var profileSingles = map[string]string{
	"request_throughput": "request_throughput", "output_token_throughput": "output_throughput",
	"request_goodput": "request_goodput", "goodput": "request_goodput",
	"request_count": "completed", "error_request_count": "failed",
	"benchmark_duration": "duration",
	"total_isl":          "total_input_tokens", "total_osl": "total_output_tokens",
	"total_input_tokens": "total_input_tokens", "total_output_tokens": "total_output_tokens",
}

// setProfileMetric stores one metric given as {stat: value, "unit": u}.
func setProfileMetric(res *Result, key string, m map[string]any) error {
	base := metric.Sanitize(key)
	if base == "" || strings.Contains(base, "timestamp") {
		return nil
	}
	unit, _ := Str(m["unit"])
	if kind, ok := profileLatencies[base]; ok {
		scale, ok := docTimeScale(unit)
		if !ok {
			return fmt.Errorf("%s.unit is %s, not a time unit; use ms, us, ns or s", key, Quote(unit))
		}
		return docSetStats(res, key, m, scale, docLatencyName(kind))
	}
	if name, ok := profileSingles[base]; ok {
		v, ok, err := docNum(m, "avg")
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if !ok {
			return nil
		}
		if name == "duration" {
			ms, ok := docTimeScale(unit)
			if unit == "" || !ok {
				ms = 1e3 // seconds unless the unit says otherwise
			}
			docSetScaled(res, name, v, ms/1e3)
			return nil
		}
		res.Set(name, v)
		return nil
	}
	scale, suffix := 1.0, ""
	if unit != "" {
		if s, ok := docTimeScale(unit); ok {
			scale = s
			if !strings.HasSuffix(base, "_ms") {
				suffix = "_ms"
			}
		}
	}
	onlyAvg := true
	for k := range m {
		if w, ok := docStatWord(k); ok && w != "mean" {
			onlyAvg = false
		}
	}
	if onlyAvg {
		v, ok, err := docNum(m, "avg")
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if ok {
			docSetScaled(res, base+suffix, v, scale)
		}
		return nil
	}
	return docSetStats(res, key, m, scale, docStatName(base, suffix))
}

func setProfileLabels(res *Result, obj map[string]any) {
	ic, ok := obj["input_config"].(map[string]any)
	if !ok {
		return
	}
	set := func(label string, paths ...[]string) {
		for _, p := range paths {
			if v, ok := docAt(ic, p...); ok {
				if s, ok := docLabel(v); ok {
					res.SetLabel(label, s)
					return
				}
			}
		}
	}
	set("model", []string{"endpoint", "model_names"}, []string{"model"}, []string{"model_names"})
	set("concurrency", []string{"loadgen", "concurrency"}, []string{"concurrency"})
	set("request_rate", []string{"loadgen", "request_rate"}, []string{"request_rate"})
	set("endpoint_type", []string{"endpoint", "type"}, []string{"endpoint_type"})
	set("streaming", []string{"endpoint", "streaming"}, []string{"streaming"})
	set("backend", []string{"backend"})
}

// profileHeader lowercases a CSV header cell and drops a byte-order mark.
func profileHeader(s string) string {
	return strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff")))
}

func profileHasColumn(h []string, name string) bool {
	for _, c := range h {
		if profileHeader(c) == name {
			return true
		}
	}
	return false
}

func isProfileCSV(h []string) bool {
	return len(h) >= 2 && profileHeader(h[0]) == "metric" && profileHasColumn(h, "avg") && !profileHasColumn(h, "gpu")
}

func isAIPerfHeader(h []string) bool { return profileHasColumn(h, "std") || profileHasColumn(h, "p1") }

func isAnalyzeCSV(h []string) bool {
	return len(h) >= 2 && profileHeader(h[0]) == "config name"
}

// docLineOf returns the line of row i, or 0.
func docLineOf(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// docCell reads a CSV cell ("1,234.56", "12.5 ms", "N/A"). ok is false
// for an empty or absent cell.
func docCell(cell string) (v float64, unit string, ok bool, err error) {
	c := strings.TrimSpace(cell)
	if IsAbsent(c) {
		return 0, "", false, nil
	}
	v, unit, ok = ParseQuantity(c)
	if !ok {
		return 0, "", false, fmt.Errorf("%s is not a number", Quote(c))
	}
	return v, unit, true, nil
}

func convertProfileCSV(format string, rows [][]string, lines []int) ([]Result, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("empty CSV")
	}
	if isAnalyzeCSV(rows[0]) {
		return convertAnalyzeCSV(format, rows, lines)
	}
	if profileHeader(rows[0][0]) != "metric" {
		return nil, &Error{Line: docLineOf(lines, 0), Msg: fmt.Sprintf("%s: CSV header %s is not %s export (it starts with \"Metric,avg,...\")", format, Quote(strings.Join(rows[0], ",")), profileArticle(format))}
	}
	res := NewResult(format, docLineOf(lines, 0))
	cols := rows[0]
	for i := 1; i < len(rows); i++ {
		row := rows[i]
		if len(row) == 0 {
			continue
		}
		first := strings.TrimSpace(row[0])
		lf := profileHeader(first)
		switch {
		case first == "" && len(strings.Join(row, "")) == 0:
			continue
		case strings.HasPrefix(first, "==="), lf == "endpoint", lf == "gpu index", lf == "gpu_index":
			i = len(rows) // GPU telemetry: not a benchmark metric
			continue
		case lf == "metric":
			cols = row // the next section's header
			continue
		}
		if len(row) < len(cols) {
			// The exports write every cell (empty when absent): a short row
			// is a file cut inside it (the package's truncation rule).
			return nil, &Error{Line: docLineOf(lines, i), Msg: fmt.Sprintf("%s: row %s has %d cells, its header %d: the file is cut off or was edited; re-export it", format, Quote(first), len(row), len(cols))}
		}
		name, unit := docSplitUnit(first)
		if name == "" {
			continue
		}
		m := map[string]any{"unit": unit}
		single := len(cols) == 2 && profileHeader(cols[1]) == "value"
		for j := 1; j < len(row) && j < len(cols); j++ {
			stat := profileHeader(cols[j])
			if single {
				stat = "avg"
			}
			if _, ok := docStatWord(stat); !ok {
				continue
			}
			v, _, ok, err := docCell(row[j])
			if err != nil {
				return nil, &Error{Line: docLineOf(lines, i), Msg: fmt.Sprintf("%s: %s, column %s: %v; fix the cell or leave it empty", format, Quote(first), Quote(cols[j]), err)}
			}
			if ok {
				m[stat] = v
			}
		}
		if err := setProfileMetric(&res, name, m); err != nil {
			return nil, &Error{Line: docLineOf(lines, i), Msg: format + ": " + err.Error()}
		}
	}
	return []Result{res}, nil
}

// analyzeLabels are the configuration columns of genai-perf analyze.
var analyzeLabels = map[string]string{
	"concurrency": "concurrency", "isl": "isl", "osl": "osl", "num prompts": "num_prompts",
	"request rate": "request_rate", "batch size": "batch_size",
}

// convertAnalyzeCSV reads genai-perf analyze's sweep table: one result per
// row; headers are "<stat> <Metric> (<unit>)". A second table (GPU
// telemetry, with its own "Config Name" header) ends the results.
func convertAnalyzeCSV(format string, rows [][]string, lines []int) ([]Result, error) {
	header := rows[0]
	var out []Result
	for i := 1; i < len(rows); i++ {
		row := rows[i]
		if len(row) == 0 || strings.TrimSpace(strings.Join(row, "")) == "" {
			continue
		}
		if isAnalyzeCSV(row) {
			break
		}
		if len(row) < len(header) {
			return nil, &Error{Line: docLineOf(lines, i), Msg: fmt.Sprintf("%s: row %s has %d cells, its header %d: the file is cut off or was edited; re-export it", format, Quote(strings.TrimSpace(row[0])), len(row), len(header))}
		}
		res := NewResult(format, docLineOf(lines, i))
		res.Name = strings.TrimSpace(row[0])
		byMetric := map[string]map[string]any{}
		var order []string
		for j := 1; j < len(row) && j < len(header); j++ {
			col := strings.TrimSpace(header[j])
			if lbl, ok := analyzeLabels[profileHeader(col)]; ok {
				res.SetLabel(lbl, row[j])
				continue
			}
			stat, rest := "avg", col
			if f := strings.Fields(col); len(f) > 1 {
				if _, ok := docStatWord(strings.TrimSuffix(f[0], ".")); ok {
					stat, rest = strings.TrimSuffix(strings.ToLower(f[0]), "."), strings.Join(f[1:], " ")
				}
			}
			name, unit := docSplitUnit(rest)
			v, _, ok, err := docCell(row[j])
			if err != nil {
				return nil, &Error{Line: docLineOf(lines, i), Msg: fmt.Sprintf("%s: %s, column %s: %v; fix the cell or leave it empty", format, Quote(res.Name), Quote(col), err)}
			}
			if !ok {
				continue
			}
			key := metric.Sanitize(name)
			if byMetric[key] == nil {
				byMetric[key] = map[string]any{"unit": unit}
				order = append(order, key)
			}
			byMetric[key][stat] = v
		}
		for _, k := range order {
			if err := setProfileMetric(&res, k, byMetric[k]); err != nil {
				return nil, &Error{Line: docLineOf(lines, i), Msg: format + ": " + err.Error()}
			}
		}
		out = append(out, res)
	}
	return out, nil
}
