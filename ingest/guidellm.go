package ingest

import (
	"fmt"
	"strconv"
	"strings"
)

// guidellm writes a report, {"benchmarks": [...]} (v0.2/v0.3, plus "args"
// and "metadata" from v0.4 on), as JSON or YAML. Each benchmark is one
// result, named after its scheduling strategy the way guidellm's console
// names it: "synchronous", "throughput", "concurrent@8", "constant@5.00",
// "poisson@2.50". Its metrics hold a StatusDistributionSummary per
// quantity ({"successful": {mean, median, std_dev, min, max, total_sum,
// percentiles: {p001 ... p999}}, "errored": ..., ...}); perfgate reads the
// successful requests only:
//
//	time_to_first_token_ms    -> {mean,median,std,min,max,pNN}_ttft_ms
//	time_per_output_token_ms  -> *_tpot_ms
//	inter_token_latency_ms    -> *_itl_ms
//	request_latency (seconds) -> *_e2el_ms
//	requests_per_second       -> request_throughput (mean)
//	output_tokens_per_second  -> output_throughput (mean)
//	tokens_per_second         -> total_token_throughput (mean)
//	prompt_tokens_per_second  -> input_throughput (mean)
//	request_concurrency       -> concurrency (mean)
//	prompt/output_token_count -> total_input/output_tokens (total_sum)
//
// guidellm's compact percentile keys are p001 = 0.1th, p01 = 1st, p05 =
// 5th ... p999 = 99.9th; p50, when present, is the median. Request counts
// (request_totals, else run_stats/scheduler_metrics requests_made) give
// completed (successful) and failed (errored); incomplete requests, cut
// off by the end of the run, are neither. The benchmark's duration is
// duration. Labels: model, strategy, rate (constant and poisson),
// streams (concurrent), max_concurrency (throughput), profile and data.
// Report version 2 (guidellm 0.7+, metadata.version 2) moved the run's
// arguments to config.spec: the model is config.spec.backend.model and
// the profile config.spec.profile.kind (a benchmark's own
// config.profile.kind first).

func init() {
	RegisterDoc(DocFormat{
		Name:    "guidellm",
		Desc:    "guidellm benchmarks report (JSON or YAML)",
		Match:   matchGuidellm,
		Convert: convertGuidellm,
	})
}

var guidellmLatencies = []struct {
	key, kind string
	scale     float64
}{
	{"time_to_first_token_ms", "ttft", 1},
	{"time_per_output_token_ms", "tpot", 1},
	{"inter_token_latency_ms", "itl", 1},
	{"request_latency", "e2el", 1e3},
}

var guidellmRates = []struct{ key, name string }{
	{"requests_per_second", "request_throughput"},
	{"output_tokens_per_second", "output_throughput"},
	{"tokens_per_second", "total_token_throughput"},
	{"prompt_tokens_per_second", "input_throughput"},
	{"request_concurrency", "concurrency"},
}

var guidellmTotals = []struct{ key, name string }{
	{"prompt_token_count", "total_input_tokens"},
	{"output_token_count", "total_output_tokens"},
}

func matchGuidellm(obj map[string]any) bool {
	l, ok := obj["benchmarks"].([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		if b, ok := e.(map[string]any); ok && looksGuidellmBenchmark(b) {
			return true
		}
	}
	return false
}

func looksGuidellmBenchmark(b map[string]any) bool {
	m, ok := b["metrics"].(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"requests_per_second", "request_latency", "time_to_first_token_ms", "output_tokens_per_second"} {
		if _, ok := m[k].(map[string]any); ok {
			return true
		}
	}
	return false
}

func convertGuidellm(obj map[string]any) ([]Result, error) {
	list, ok := obj["benchmarks"].([]any)
	if !ok {
		return nil, fmt.Errorf("JSON object with keys %s is not a guidellm report: it has no \"benchmarks\" list; write the report with guidellm's --output-path (benchmarks.json or .yaml)", docKeys(obj))
	}
	var out []Result
	seen := map[string]int{}
	for i, e := range list {
		b, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("benchmarks[%d] is %s, not a benchmark object", i, docDescribe(e))
		}
		res, err := convertGuidellmBenchmark(obj, b)
		if err != nil {
			return nil, fmt.Errorf("benchmarks[%d] (%s): %w", i, guidellmName(b, i), err)
		}
		// Two benchmarks of one strategy (a repeated run) stay distinct.
		base := res.Name
		if n := seen[base]; n > 0 {
			res.Name = base + "#" + strconv.Itoa(n+1)
		}
		seen[base]++
		out = append(out, res)
	}
	return out, nil
}

func convertGuidellmBenchmark(report, b map[string]any) (Result, error) {
	res := NewResult("guidellm", 0)
	metrics, ok := b["metrics"].(map[string]any)
	if !ok {
		return res, fmt.Errorf("no \"metrics\" object (keys %s); is this a guidellm benchmark?", docKeys(b))
	}
	res.Name = guidellmName(b, -1)
	for _, l := range guidellmLatencies {
		s, ok, err := successful(metrics, l.key)
		if err != nil {
			return res, err
		}
		if !ok {
			continue
		}
		if err := docSetStats(&res, l.key, s, l.scale, docLatencyName(l.kind)); err != nil {
			return res, err
		}
		if p, ok := s["percentiles"].(map[string]any); ok {
			_, hasMedian := docField(s, "median")
			if err := docSetStats(&res, l.key+".percentiles", p, l.scale, guidellmPercentile(l.kind, hasMedian)); err != nil {
				return res, err
			}
		}
	}
	for _, r := range guidellmRates {
		if err := setSuccessful(&res, metrics, r.key, "mean", r.name); err != nil {
			return res, err
		}
	}
	for _, t := range guidellmTotals {
		if err := setSuccessful(&res, metrics, t.key, "total_sum", t.name); err != nil {
			return res, err
		}
	}
	if err := setGuidellmCounts(&res, b, metrics); err != nil {
		return res, err
	}
	if d, ok, err := docNum(b, "duration"); err != nil {
		return res, err
	} else if ok {
		res.Set("duration", d)
	} else {
		start, okS, _ := docNum(b, "start_time")
		end, okE, _ := docNum(b, "end_time")
		if okS && okE && end >= start {
			res.Set("duration", end-start)
		}
	}
	setGuidellmLabels(&res, report, b)
	res.perRequest = guidellmRequests(b, res.Metrics, func(w string) { res.Warnings = append(res.Warnings, w) })
	return res, nil
}

// guidellmPercentile names the keys of a percentiles object; p50 is the
// median unless the summary has its own "median".
func guidellmPercentile(kind string, hasMedian bool) func(string) string {
	return func(stat string) string {
		if stat == "median" && hasMedian {
			return ""
		}
		return docLatencyName(kind)(stat)
	}
}

// successful returns metrics[key].successful. ok is false when guidellm
// did not record the quantity (or no request succeeded).
func successful(metrics map[string]any, key string) (map[string]any, bool, error) {
	v, present := docField(metrics, key)
	if !present {
		return nil, false, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("metrics.%s is %s, not a distribution summary object", key, docDescribe(v))
	}
	sv, present := docField(m, "successful")
	if !present {
		return nil, false, nil
	}
	s, ok := sv.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("metrics.%s.successful is %s, not a distribution summary object", key, docDescribe(sv))
	}
	return s, true, nil
}

func setSuccessful(res *Result, metrics map[string]any, key, stat, name string) error {
	s, ok, err := successful(metrics, key)
	if err != nil || !ok {
		return err
	}
	v, ok, err := docNum(s, stat)
	if err != nil {
		return fmt.Errorf("metrics.%s.successful: %w", key, err)
	}
	if ok {
		res.Set(name, v)
	}
	return nil
}

func setGuidellmCounts(res *Result, b, metrics map[string]any) error {
	for _, path := range [][]string{
		{"request_totals"}, {"metrics", "request_totals"},
		{"run_stats", "requests_made"}, {"scheduler_metrics", "requests_made"},
	} {
		var src map[string]any
		if path[0] == "metrics" {
			src, _ = docMap(metrics, path[1:]...)
		} else {
			src, _ = docMap(b, path...)
		}
		if src == nil {
			continue
		}
		for _, c := range []struct{ key, name string }{{"successful", "completed"}, {"errored", "failed"}} {
			v, ok, err := docNum(src, c.key)
			if err != nil {
				return fmt.Errorf("%s: %w", strings.Join(path, "."), err)
			}
			if ok {
				res.Set(c.name, v)
			}
		}
		return nil
	}
	return nil
}

// guidellmStrategy returns the benchmark's scheduling strategy object.
func guidellmStrategy(b map[string]any) map[string]any {
	for _, p := range [][]string{{"args", "strategy"}, {"config", "strategy"}, {"strategy"}} {
		if s, ok := docMap(b, p...); ok {
			return s
		}
	}
	return nil
}

// guidellmName is guidellm's strategy_display_str; i >= 0 names an
// unnamed benchmark by its position.
func guidellmName(b map[string]any, i int) string {
	s := guidellmStrategy(b)
	typ, ok := docStr(s, "type_")
	if !ok {
		typ, ok = docStr(s, "type")
	}
	if !ok {
		if i >= 0 {
			return fmt.Sprintf("benchmark %d", i)
		}
		return "benchmark"
	}
	switch typ {
	case "concurrent":
		if n, ok := docStr(s, "streams"); ok {
			return typ + "@" + n
		}
	case "constant", "poisson":
		if r, ok, _ := docNum(s, "rate"); ok {
			return fmt.Sprintf("%s@%.2f", typ, r)
		}
	}
	return typ
}

func setGuidellmLabels(res *Result, report, b map[string]any) {
	s := guidellmStrategy(b)
	if typ, ok := docStr(s, "type_"); ok {
		res.SetLabel("strategy", typ)
	}
	if r, ok := docStr(s, "rate"); ok {
		res.SetLabel("rate", r)
	}
	if n, ok := docStr(s, "streams"); ok {
		res.SetLabel("streams", n)
	}
	if n, ok := docStr(s, "max_concurrency"); ok {
		res.SetLabel("max_concurrency", n)
	}
	for _, p := range [][]string{{"args", "profile", "type_"}, {"config", "profile", "type_"}, {"config", "profile", "kind"}} {
		if v, ok := docStr(b, p...); ok {
			res.SetLabel("profile", v)
			break
		}
	}
	// Report version 2 (guidellm 0.7+) keeps the run's arguments under
	// config.spec, the profile as a {"kind": ...} object.
	for _, p := range [][]string{{"args", "profile"}, {"config", "spec", "profile", "kind"}} {
		if v, ok := docStr(report, p...); ok {
			if _, set := res.Labels["profile"]; !set {
				res.SetLabel("profile", v)
			}
			break
		}
	}
	for _, p := range [][]string{{"worker", "backend_model"}, {"config", "backend", "model"}} {
		if v, ok := docStr(b, p...); ok {
			res.SetLabel("model", v)
			break
		}
	}
	if _, set := res.Labels["model"]; !set {
		for _, p := range [][]string{{"args", "model"}, {"args", "backend", "model"}, {"config", "spec", "backend", "model"}} {
			if v, ok := docStr(report, p...); ok {
				res.SetLabel("model", v)
				break
			}
		}
	}
	if v, ok := docStr(b, "request_loader", "data"); ok {
		res.SetLabel("data", v)
	}
}
