package ingest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The llm-d Benchmark Report (llm-d/llm-d-benchmark,
// llmdbenchmark/analysis/benchmark_report/, schemas br_v0_2 and br_v0_2_1)
// is a vendor-neutral report that llm-d-benchmark converts the output of
// vllm bench serve, AIPerf, guidellm, inference-perf and InferenceMAX into,
// as YAML or JSON:
//
//	version: '0.2'                      # or 0.2.1
//	run: {uid, eid, time: {start, end, duration: PT49.97S}, ...}
//	scenario:
//	  stack: [{standardized: {kind: inference_engine, model: {name},
//	           accelerator: {model, count, parallelism: {tp, ...}}}}, ...]
//	  load: {standardized: {tool, tool_version, stage, rate_qps,
//	         concurrency, input_seq_len: {value}, output_seq_len: {value}}}
//	results:
//	  request_performance:
//	    aggregate:
//	      requests: {total, failures, input_length, output_length}
//	      latency: {time_to_first_token: {units: s, mean, p0p1, ... p99p9},
//	                time_per_output_token, inter_token_latency,
//	                normalized_time_per_output_token, request_latency}
//	      throughput: {input_token_rate, output_token_rate,
//	                   total_token_rate, request_rate: {units, mean, ...}}
//
// Each report is one result (one stage of one workload). Mapping: the
// latencies, in the units they declare (s, ms, s/token, ms/token), become
// ms: time_to_first_token, time_per_output_token, inter_token_latency and
// request_latency -> *_ttft_ms, *_tpot_ms, *_itl_ms, *_e2el_ms;
// normalized_time_per_output_token ->
// *_normalized_time_per_output_token_ms (statistics mean, stddev, min,
// max, p0p1 = p0.1 ... p50 = median ... p99p9 = p99.9). The means of
// request_rate, input_token_rate, output_token_rate and total_token_rate
// -> request_throughput, input_throughput, output_throughput,
// total_token_throughput; requests total - failures -> completed,
// failures -> failed; the means of input_length and output_length ->
// mean_input_tokens and mean_output_tokens; run.time.duration (ISO 8601)
// -> duration in seconds. Labels: harness (load.standardized.tool: the
// tool that measured), stage, rate (rate_qps), concurrency, input_len and
// output_len (the sequence lengths' values), and from the first
// inference engine of the stack model, accelerator and tp. Time series,
// observability and session metrics are not stored. A report of another
// version (v0.1 has another shape) is an error naming the versions read.
func init() {
	RegisterDoc(DocFormat{
		Name:    "llm-d",
		Desc:    "llm-d Benchmark Report v0.2/v0.2.1 (YAML or JSON)",
		Match:   matchLLMD,
		Convert: convertLLMD,
	})
}

func matchLLMD(obj map[string]any) bool {
	if _, ok := obj["version"]; !ok {
		return false
	}
	_, ok := docMap(obj, "results", "request_performance")
	if !ok {
		return false
	}
	_, ok = obj["scenario"].(map[string]any)
	return ok
}

var llmdLatencies = []struct{ key, kind string }{
	{"time_to_first_token", "ttft"},
	{"time_per_output_token", "tpot"},
	{"inter_token_latency", "itl"},
	{"request_latency", "e2el"},
}

var llmdRates = []struct{ key, name string }{
	{"request_rate", "request_throughput"},
	{"input_token_rate", "input_throughput"},
	{"output_token_rate", "output_throughput"},
	{"total_token_rate", "total_token_throughput"},
}

func convertLLMD(obj map[string]any) ([]Result, error) {
	v, _ := docStr(obj, "version")
	if v != "0.2" && !strings.HasPrefix(v, "0.2.") {
		return nil, fmt.Errorf("llm-d Benchmark Report version %s is not one perfgate reads (0.2, 0.2.x); convert the results with llm-d-benchmark's benchmark_report to v0.2.1", Quote(v))
	}
	res := NewResult("llm-d", 0)
	agg, ok := docMap(obj, "results", "request_performance", "aggregate")
	if !ok {
		rp, _ := docMap(obj, "results", "request_performance")
		return nil, fmt.Errorf("results.request_performance has no \"aggregate\" object (keys %s); the report holds no summary of the run", docKeys(rp))
	}
	if err := llmdLatency(&res, agg); err != nil {
		return nil, err
	}
	if err := llmdAggregate(&res, agg); err != nil {
		return nil, err
	}
	if d, ok := docStr(obj, "run", "time", "duration"); ok {
		secs, err := isoDurationSeconds(d)
		if err != nil {
			return nil, fmt.Errorf("run.time.duration %s: %v", Quote(d), err)
		}
		res.Set("duration", secs)
	}
	setLLMDLabels(&res, obj)
	return []Result{res}, nil
}

func llmdLatency(res *Result, agg map[string]any) error {
	lat, _ := docMap(agg, "latency")
	for _, l := range llmdLatencies {
		if err := llmdStats(res, lat, l.key, docLatencyName(l.kind)); err != nil {
			return err
		}
	}
	return llmdStats(res, lat, "normalized_time_per_output_token", docStatName("normalized_time_per_output_token", "_ms"))
}

// llmdStats stores one latency statistics object, scaled to ms by its
// units.
func llmdStats(res *Result, lat map[string]any, key string, name func(string) string) error {
	v, ok := docField(lat, key)
	if !ok {
		return nil
	}
	s, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("results.request_performance.aggregate.latency.%s is %s, not a statistics object", key, docDescribe(v))
	}
	unit, _ := docStr(s, "units")
	scale, ok := docTimeScale(strings.TrimSuffix(unit, "/token"))
	if !ok {
		return fmt.Errorf("latency.%s has units %s, not a time (s, ms, s/token, ms/token); fix the report", key, Quote(unit))
	}
	return docSetStats(res, "latency."+key, llmdStatKeys(s), scale, name)
}

// llmdStatKeys renames the report's percentile keys to ones docStatWord
// reads: p0p1 -> p0.1, p99p9 -> p99.9 (P25 and stddev it reads as they
// are).
func llmdStatKeys(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if len(k) > 1 && (k[0] == 'p' || k[0] == 'P') && strings.Contains(k[1:], "p") {
			k = k[:1] + strings.Replace(k[1:], "p", ".", 1)
		}
		if _, dup := out[k]; !dup {
			out[k] = v
		}
	}
	return out
}

func llmdAggregate(res *Result, agg map[string]any) error {
	for _, r := range llmdRates {
		if err := ipSet(res, agg, r.name, "throughput", r.key, "mean"); err != nil {
			return fmt.Errorf("throughput.%s: %w", r.key, err)
		}
	}
	total, hasTotal, err := docNum(agg, "requests", "total")
	if err != nil {
		return err
	}
	failures, hasFail, err := docNum(agg, "requests", "failures")
	if err != nil {
		return err
	}
	if hasFail {
		res.Set("failed", failures)
	}
	if hasTotal {
		res.Set("completed", total-failures)
	}
	for _, n := range []struct{ key, name string }{{"input_length", "mean_input_tokens"}, {"output_length", "mean_output_tokens"}} {
		if err := ipSet(res, agg, n.name, "requests", n.key, "mean"); err != nil {
			return err
		}
	}
	return nil
}

func setLLMDLabels(res *Result, obj map[string]any) {
	load, _ := docMap(obj, "scenario", "load", "standardized")
	for _, l := range []struct {
		label string
		path  []string
	}{
		{"harness", []string{"tool"}},
		{"stage", []string{"stage"}},
		{"rate", []string{"rate_qps"}},
		{"concurrency", []string{"concurrency"}},
		{"input_len", []string{"input_seq_len", "value"}},
		{"output_len", []string{"output_seq_len", "value"}},
	} {
		if v, ok := docStr(load, l.path...); ok {
			res.SetLabel(l.label, v)
		}
	}
	stack, _ := docAt(obj, "scenario", "stack")
	list, _ := stack.([]any)
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if kind, _ := docStr(m, "standardized", "kind"); kind != "inference_engine" {
			continue
		}
		if v, ok := docStr(m, "standardized", "model", "name"); ok {
			res.SetLabel("model", v)
		}
		if v, ok := docStr(m, "standardized", "accelerator", "model"); ok {
			res.SetLabel("accelerator", v)
		}
		if v, ok := docStr(m, "standardized", "accelerator", "parallelism", "tp"); ok {
			res.SetLabel("tp", v)
		}
		break
	}
}

var isoDurRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)
})

// isoDurationSeconds reads an ISO 8601 duration as pydantic writes a
// timedelta (PT49.97S, P1DT2H3M4.5S) in seconds.
func isoDurationSeconds(s string) (float64, error) {
	m := isoDurRE().FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || s == "P" || s == "PT" {
		return 0, fmt.Errorf("not an ISO 8601 duration such as PT49.97S")
	}
	var secs float64
	for i, mult := range []float64{86400, 3600, 60, 1} {
		if m[i+1] == "" {
			continue
		}
		f, err := strconv.ParseFloat(m[i+1], 64)
		if err != nil {
			return 0, err
		}
		secs += f * mult
	}
	return secs, nil
}
