package ingest

import "fmt"

// genai-bench (sgl-project/genai-bench) writes, per traffic scenario and
// concurrency (or batch size) of an experiment, a run file
// {"aggregated_metrics": {...}, "individual_request_metrics": [...]}
// beside the experiment's experiment_metadata.json:
//
//	"aggregated_metrics": {"scenario": "D(100,100)", "num_concurrency": 1,
//	  "batch_size": 1, "iteration_type": "num_concurrency",
//	  "run_duration": 60.1, "mean_output_throughput_tokens_per_s": ..,
//	  "mean_input_throughput_tokens_per_s": .., "requests_per_second": ..,
//	  "num_completed_requests": 32, "num_error_requests": 0, ...,
//	  "stats": {"ttft": {min, max, mean, stddev, sum, p25 ... p99},
//	            "tpot", "e2e_latency", "output_latency",
//	            "output_inference_speed", "num_input_tokens", ...}}
//
// Each run file is one result. Mapping: the latencies are in seconds and
// become ms: ttft, tpot, e2e_latency -> *_ttft_ms, *_tpot_ms, *_e2el_ms,
// output_latency -> *_output_latency_ms; output_inference_speed (tokens/s
// per request) -> *_output_token_throughput_per_user (aiperf's name);
// the means of num_input_tokens and num_output_tokens ->
// mean_input_tokens, mean_output_tokens. mean_output_throughput_tokens_per_s,
// mean_input_throughput_tokens_per_s, mean_total_tokens_throughput_tokens_per_s
// -> output_throughput, input_throughput, total_token_throughput;
// requests_per_second (older versions: requests_per_minute / 60) ->
// request_throughput; num_completed_requests -> completed;
// num_error_requests -> failed; run_duration -> duration. Labels:
// scenario, and concurrency (or batch_size, for an iteration_type of
// batch_size). The per-request records (individual_request_metrics: ttft,
// tpot, e2e_latency in seconds; error_code set on a failed request) become
// the result's request summary (requests.go). The experiment metadata
// file, which holds no result, is left out with a note (Reader.Notes).
func init() {
	RegisterDoc(DocFormat{
		Name:    "genai-bench",
		Desc:    "genai-bench run JSON (aggregated_metrics)",
		Match:   matchGenAIBench,
		Convert: convertGenAIBench,
	})
}

func matchGenAIBench(obj map[string]any) bool {
	_, ok := docMap(obj, "aggregated_metrics", "stats")
	return ok
}

var genaiBenchStats = []struct {
	key  string
	name func(string) string
}{
	{"ttft", docLatencyName("ttft")},
	{"tpot", docLatencyName("tpot")},
	{"e2e_latency", docLatencyName("e2el")},
	{"output_latency", docStatName("output_latency", "_ms")},
}

var genaiBenchValues = []struct{ key, name string }{
	{"mean_output_throughput_tokens_per_s", "output_throughput"},
	{"mean_input_throughput_tokens_per_s", "input_throughput"},
	{"mean_total_tokens_throughput_tokens_per_s", "total_token_throughput"},
	{"requests_per_second", "request_throughput"},
	{"num_completed_requests", "completed"},
	{"num_error_requests", "failed"},
	{"run_duration", "duration"},
}

func convertGenAIBench(obj map[string]any) ([]Result, error) {
	agg, _ := docMap(obj, "aggregated_metrics")
	stats, _ := docMap(agg, "stats")
	res := NewResult("genai-bench", 0)
	for _, s := range genaiBenchStats {
		if err := genaiBenchDist(&res, stats, s.key, 1e3, s.name); err != nil {
			return nil, err
		}
	}
	if err := genaiBenchDist(&res, stats, "output_inference_speed", 1, docStatName("output_token_throughput_per_user", "")); err != nil {
		return nil, err
	}
	for _, n := range []struct{ key, name string }{{"num_input_tokens", "mean_input_tokens"}, {"num_output_tokens", "mean_output_tokens"}} {
		if err := ipSet(&res, stats, n.name, n.key, "mean"); err != nil {
			return nil, fmt.Errorf("aggregated_metrics.stats: %w", err)
		}
	}
	for _, v := range genaiBenchValues {
		if err := ipSet(&res, agg, v.name, v.key); err != nil {
			return nil, fmt.Errorf("aggregated_metrics: %w", err)
		}
	}
	if _, ok := res.Metrics["request_throughput"]; !ok {
		rpm, ok, err := docNum(agg, "requests_per_minute")
		if err != nil {
			return nil, fmt.Errorf("aggregated_metrics: %w", err)
		}
		if ok {
			res.Set("request_throughput", docRound(rpm/60))
		}
	}
	if v, ok := docStr(agg, "scenario"); ok {
		res.SetLabel("scenario", v)
	}
	if it, _ := docStr(agg, "iteration_type"); it == "batch_size" {
		if v, ok := docStr(agg, "batch_size"); ok {
			res.SetLabel("batch_size", v)
		}
	} else if v, ok := docStr(agg, "num_concurrency"); ok {
		res.SetLabel("concurrency", v)
	}
	res.perRequest = genaiBenchRequests(obj, res.Metrics["duration"], func(w string) { res.Warnings = append(res.Warnings, w) })
	return []Result{res}, nil
}

// genaiBenchDist stores stats[key] (min, max, mean, stddev, pNN; sum is
// not a statistic) multiplied by scale.
func genaiBenchDist(res *Result, stats map[string]any, key string, scale float64, name func(string) string) error {
	v, ok := docField(stats, key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("aggregated_metrics.stats.%s is %s, not a statistics object", key, docDescribe(v))
	}
	return docSetStats(res, "aggregated_metrics.stats."+key, m, scale, name)
}

// isGenAIBenchMetadata recognises genai-bench's experiment_metadata.json.
func isGenAIBenchMetadata(obj map[string]any) bool {
	for _, k := range []string{"api_backend", "traffic_scenario", "iteration_type", "experiment_folder_name"} {
		if _, ok := obj[k]; !ok {
			return false
		}
	}
	return true
}
