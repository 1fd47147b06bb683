package ingest

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/metric"
)

// LLMPerf (ray-project/llmperf, token_benchmark_ray.py) writes, per run,
// "<model>_<in>_<out>_summary.json": one flat object whose results are
// keys "results_<quantity>_<stat>", stat one of quantiles_pNN, mean, min,
// max, stddev, with the unit in the quantity's name (ttft_s, seconds):
//
//	{"version": "2023-08-31", "name": "...", "model": "01-ai/Yi-1.5-34B-Chat",
//	 "mean_input_tokens": 550, "num_concurrent_requests": 1,
//	 "results_ttft_s_quantiles_p99": 0.611, "results_ttft_s_mean": 0.586, ...,
//	 "results_num_completed_requests": 80, "results_number_errors": 0, ...}
//
// It is one result, format "llmperf". Mapping: ttft_s, inter_token_latency_s
// and end_to_end_latency_s are ttft, itl and e2el, converted to ms (p50 is
// the median, stddev std); other "_s" quantities are times too
// ({stat}_{quantity}_ms); the rest keep their names with the statistic
// first (mean_request_output_throughput_token_per_s, p99_number_output_tokens).
// results_num_completed_requests -> completed, results_number_errors ->
// failed, results_mean_output_throughput_token_per_s -> output_throughput,
// results_num_completed_requests_per_min -> request_throughput (per second).
// Labels: model, num_concurrent_requests -> max_concurrency (llmperf keeps
// that many requests in flight), mean_input_tokens -> input_len,
// mean_output_tokens -> output_len. String values (the error-code
// histogram) and the timestamp are skipped.
//
// The per-request "<...>_individual_responses.json" is not a result: it is
// refused with a pointer to the summary file.
//
// Results repositories collect the summaries of a concurrency sweep in one
// object keyed by the concurrency ({"1": {...}, "16": {...}}): each key is
// one result, in the order of the concurrencies, with the key as label
// max_concurrency. A summary whose own num_concurrent_requests differs
// from its key is an error naming both.

func init() {
	RegisterDoc(DocFormat{
		Name: "llmperf",
		Desc: "LLMPerf token_benchmark_ray.py *_summary.json",
		Match: func(obj map[string]any) bool {
			return isLLMPerfSummary(obj) || isLLMPerfRecord(obj) || isLLMPerfSweep(obj)
		},
		Convert: convertLLMPerfDoc,
	})
}

func isLLMPerfSummary(obj map[string]any) bool {
	for k := range obj {
		if strings.HasPrefix(k, "results_") && (strings.Contains(k, "_quantiles_p") || strings.HasSuffix(k, "_s_mean")) {
			return true
		}
	}
	return false
}

// isLLMPerfRecord recognises one request of individual_responses.json.
func isLLMPerfRecord(obj map[string]any) bool {
	_, e2e := obj["end_to_end_latency_s"]
	_, code := obj["error_code"]
	_, ttft := obj["ttft_s"]
	return e2e && code && ttft
}

var llmperfSingles = map[string]struct {
	name  string
	scale float64
}{
	"num_completed_requests":             {"completed", 1},
	"number_errors":                      {"failed", 1},
	"mean_output_throughput_token_per_s": {"output_throughput", 1},
	"num_completed_requests_per_min":     {"request_throughput", 1.0 / 60},
	"num_requests_started":               {"num_requests_started", 1},
	"error_rate":                         {"error_rate", 1},
}

var llmperfLatencies = map[string]string{"ttft_s": "ttft", "inter_token_latency_s": "itl", "end_to_end_latency_s": "e2el"}

var llmperfStatRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.+)_(quantiles_p\d+(?:\.\d+)?|mean|min|max|stddev|std|median)$`)
})

// isLLMPerfSweep recognises summaries keyed by their concurrency.
func isLLMPerfSweep(obj map[string]any) bool {
	if len(obj) == 0 {
		return false
	}
	for k, v := range obj {
		sub, ok := v.(map[string]any)
		if !allDigits(k) || !ok || !isLLMPerfSummary(sub) {
			return false
		}
	}
	return true
}

func convertLLMPerfDoc(obj map[string]any) ([]Result, error) {
	if !isLLMPerfSweep(obj) {
		return convertLLMPerf(obj)
	}
	keys := docSortedKeys(obj)
	sort.SliceStable(keys, func(i, j int) bool { return len(keys[i]) < len(keys[j]) }) // numeric order
	var out []Result
	for _, k := range keys {
		sub := obj[k].(map[string]any)
		res, err := convertLLMPerf(sub)
		if err != nil {
			return nil, fmt.Errorf("concurrency %s: %w", Quote(k), err)
		}
		for i := range res {
			if own, ok := res[i].Labels["max_concurrency"]; ok && own != formatNum(mustNum(k)) {
				return nil, fmt.Errorf("the summary under key %s says num_concurrent_requests %s; fix the key or the summary", Quote(k), Quote(own))
			}
			res[i].SetLabel("max_concurrency", k)
		}
		out = append(out, res...)
	}
	return out, nil
}

func mustNum(s string) float64 {
	f, _ := Num(s)
	return f
}

func convertLLMPerf(obj map[string]any) ([]Result, error) {
	if isLLMPerfRecord(obj) && !isLLMPerfSummary(obj) {
		return nil, &Error{Err: ErrUnrecognized, Msg: fmt.Sprintf("%v: this is a per-request record of LLMPerf's *_individual_responses.json, not a benchmark result; pass the *_summary.json written next to it", ErrUnrecognized)}
	}
	res := NewResult("llmperf", 0)
	for _, k := range docSortedKeys(obj) {
		rest, ok := strings.CutPrefix(k, "results_")
		if !ok {
			continue
		}
		v, present := docField(obj, k)
		if !present {
			continue
		}
		if !docIsNumber(v) {
			if _, isStr := v.(string); isStr {
				if _, num := Num(v); !num {
					continue // the error-code histogram, printed as a string
				}
			} else {
				continue
			}
		}
		f, ok := Num(v)
		if !ok {
			continue
		}
		if s, ok := llmperfSingles[rest]; ok {
			docSetScaled(&res, s.name, f, s.scale)
			continue
		}
		m := llmperfStatRE().FindStringSubmatch(rest)
		if m == nil {
			if n := metric.Sanitize(rest); n != "" {
				res.Set(n, f)
			}
			continue
		}
		base, stat := m[1], m[2]
		if p, ok := strings.CutPrefix(stat, "quantiles_"); ok {
			stat = p
		}
		word, ok := docStatWord(stat)
		if !ok {
			continue
		}
		if kind, ok := llmperfLatencies[base]; ok {
			docSetScaled(&res, metric.Latency(word, kind), f, 1e3)
			continue
		}
		if b, ok := strings.CutSuffix(base, "_s"); ok && !strings.HasSuffix(b, "_per") {
			docSetScaled(&res, word+"_"+metric.Sanitize(b)+"_ms", f, 1e3)
			continue
		}
		if n := metric.Sanitize(base); n != "" {
			res.Set(word+"_"+n, f)
		}
	}
	if len(res.Metrics) == 0 {
		return nil, fmt.Errorf("LLMPerf summary with keys %s holds no results_* numbers; pass the complete *_summary.json", docKeys(obj))
	}
	if name, ok := docStr(obj, "name"); ok {
		res.Name = name
	}
	for key, label := range map[string]string{"model": "model", "num_concurrent_requests": "max_concurrency",
		"mean_input_tokens": "input_len", "mean_output_tokens": "output_len"} {
		if v, ok := docField(obj, key); ok {
			if s, ok := Str(v); ok {
				res.SetLabel(label, s)
			}
		}
	}
	return []Result{res}, nil
}
