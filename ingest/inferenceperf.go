package ingest

import (
	"fmt"
	"path/filepath"
)

// inference-perf (kubernetes-sigs/inference-perf) writes a lifecycle
// report per load stage, stage_N_lifecycle_metrics.json, and one over all
// stages, summary_lifecycle_metrics.json (inference_perf/reportgen/base.py
// summarize_requests):
//
//	{"load_summary": {"count", "schedule_delay": {...}, "send_duration",
//	                  "requested_rate", "achieved_rate", "concurrency"},
//	 "successes": {"count", "latency": {"request_latency": {mean, min,
//	               p0.1 ... median ... p99.9, max}, "time_to_first_token",
//	               "time_per_output_token", "inter_token_latency",
//	               "normalized_time_per_output_token"},
//	               "throughput": {"input_tokens_per_sec", ...},
//	               "prompt_len", "output_len", "goodput_metrics"},
//	 "failures": {"count", "request_latency", ...},
//	 "benchmark_time_seconds"}
//
// Each file is one result; the stage's number, from the file name
// (stage_N_...), is the label stage ("all" for the summary), and its requested rate and
// concurrency are the labels rate and concurrency, so the stages of a
// sweep are distinct series. Mapping: latencies are in seconds and become
// ms: request_latency -> *_e2el_ms, time_to_first_token -> *_ttft_ms,
// time_per_output_token -> *_tpot_ms, inter_token_latency -> *_itl_ms,
// normalized_time_per_output_token ->
// *_normalized_time_per_output_token_ms. successes.count -> completed,
// failures.count -> failed; requests_per_sec, input_tokens_per_sec,
// output_tokens_per_sec, total_tokens_per_sec -> request_throughput,
// input_throughput, output_throughput, total_token_throughput;
// benchmark_time_seconds -> duration; load_summary.achieved_rate ->
// achieved_rate; goodput_metrics request_goodput, token_goodput and
// goodput_percentage keep their names; the means of prompt_len and
// output_len -> mean_input_tokens and mean_output_tokens. The Prometheus
// reports beside them (*_prometheus_metrics.json: server metrics, no
// "latency" object) are not benchmark results: they are left out with a
// note (Reader.Notes), so a pattern over the report directory reads.
func init() {
	RegisterDoc(DocFormat{
		Name:        "inference-perf",
		Desc:        "inference-perf lifecycle report (stage_N_lifecycle_metrics.json, summary_lifecycle_metrics.json)",
		Match:       matchInferencePerf,
		Convert:     func(obj map[string]any) ([]Result, error) { return convertInferencePerf(obj, "") },
		ConvertFile: convertInferencePerf,
	})
}

func matchInferencePerf(obj map[string]any) bool {
	if _, ok := obj["load_summary"].(map[string]any); !ok {
		return false
	}
	_, ok := docMap(obj, "successes", "latency")
	return ok
}

var ipLatencies = []struct{ key, kind string }{
	{"request_latency", "e2el"},
	{"time_to_first_token", "ttft"},
	{"time_per_output_token", "tpot"},
	{"inter_token_latency", "itl"},
}

var ipRates = []struct{ key, name string }{
	{"requests_per_sec", "request_throughput"},
	{"input_tokens_per_sec", "input_throughput"},
	{"output_tokens_per_sec", "output_throughput"},
	{"total_tokens_per_sec", "total_token_throughput"},
}

func convertInferencePerf(obj map[string]any, file string) ([]Result, error) {
	res := NewResult("inference-perf", 0)
	switch base := filepath.Base(file); {
	case ipStageRE().MatchString(base):
		res.SetLabel("stage", ipStageRE().FindStringSubmatch(base)[1])
	case base == "summary_lifecycle_metrics.json":
		res.SetLabel("stage", "all")
	}
	if err := ipLatency(&res, obj); err != nil {
		return nil, err
	}
	for _, n := range []struct {
		path []string
		name string
	}{
		{[]string{"successes", "count"}, "completed"},
		{[]string{"failures", "count"}, "failed"},
		{[]string{"benchmark_time_seconds"}, "duration"},
		{[]string{"load_summary", "achieved_rate"}, "achieved_rate"},
		{[]string{"successes", "prompt_len", "mean"}, "mean_input_tokens"},
		{[]string{"successes", "output_len", "mean"}, "mean_output_tokens"},
		{[]string{"successes", "goodput_metrics", "request_goodput"}, "request_goodput"},
		{[]string{"successes", "goodput_metrics", "token_goodput"}, "token_goodput"},
		{[]string{"successes", "goodput_metrics", "goodput_percentage"}, "goodput_percentage"},
	} {
		if err := ipSet(&res, obj, n.name, n.path...); err != nil {
			return nil, err
		}
	}
	for _, r := range ipRates {
		if err := ipSet(&res, obj, r.name, "successes", "throughput", r.key); err != nil {
			return nil, err
		}
	}
	if v, ok := docStr(obj, "load_summary", "requested_rate"); ok {
		res.SetLabel("rate", v)
	}
	if v, ok := docStr(obj, "load_summary", "concurrency"); ok {
		res.SetLabel("concurrency", v)
	}
	return []Result{res}, nil
}

// ipLatency stores the latency summaries of successes.latency, in seconds.
func ipLatency(res *Result, obj map[string]any) error {
	lat, _ := docMap(obj, "successes", "latency")
	for _, l := range ipLatencies {
		if err := ipStats(res, lat, l.key, docLatencyName(l.kind)); err != nil {
			return err
		}
	}
	return ipStats(res, lat, "normalized_time_per_output_token", docStatName("normalized_time_per_output_token", "_ms"))
}

func ipStats(res *Result, lat map[string]any, key string, name func(string) string) error {
	v, ok := docField(lat, key)
	if !ok {
		return nil // no request of the stage measured it (null)
	}
	s, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("successes.latency.%s is %s, not a summary object", key, docDescribe(v))
	}
	return docSetStats(res, "successes.latency."+key, s, 1e3, name)
}

func ipSet(res *Result, obj map[string]any, name string, path ...string) error {
	v, ok, err := docNum(obj, path...)
	if err != nil {
		return err
	}
	if ok {
		res.Set(name, v)
	}
	return nil
}
