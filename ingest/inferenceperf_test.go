package ingest

import (
	"strings"
	"testing"
)

func TestInferencePerf(t *testing.T) {
	const dir = "inference-perf/vllm-batch-size/"
	runDocCases(t, []docCase{
		{file: dir + "stage_0_lifecycle_metrics.json", format: "inference-perf", results: 1, want: []docWant{
			{nMetric: 79, labels: map[string]string{"stage": "0", "rate": "1"},
				metrics: map[string]float64{
					"completed": 60, "failed": 0, "request_throughput": 0.996850670841712, "output_throughput": 62.15363932698074,
					"total_token_throughput": 262.204954787065, "achieved_rate": 1.0048047820203576,
					// seconds to ms, rounded to 12 significant digits
					"mean_ttft_ms": 33.3189859288, "p0.1_ttft_ms": 23.2189225808, "p99.9_e2el_ms": 494.179818320,
					"median_tpot_ms": 3.46824372469, "max_itl_ms": 8.94493598025, "mean_normalized_time_per_output_token_ms": 7.8220491297,
					"mean_input_tokens": 200.68333333333334, "mean_output_tokens": 62.35,
				},
				absent: []string{"requested_rate", "send_duration", "count"}},
		}},
		{file: dir + "stage_1_lifecycle_metrics.json", format: "inference-perf", results: 1, want: []docWant{
			{labels: map[string]string{"stage": "1", "rate": "37.97"}, metrics: map[string]float64{"completed": 2278, "p99_ttft_ms": 45.7425108645}},
		}},
		{file: dir + "summary_lifecycle_metrics.json", format: "inference-perf", results: 1, want: []docWant{
			{labels: map[string]string{"stage": "all"}, metrics: map[string]float64{"completed": 47002}},
		}},
	})
}

// TestInferencePerfPrometheus: the Prometheus report beside the lifecycle
// reports is left out with a note, not refused.
func TestInferencePerfPrometheus(t *testing.T) {
	data := readTestdata(t, "inference-perf/vllm-batch-size/stage_0_prometheus_metrics.json")
	r := NewReader(strings.NewReader(data), "p.json", Options{})
	for r.Scan() {
		t.Errorf("unexpected result %+v", r.Result())
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if n := r.Notes(); len(n) != 1 || !strings.HasPrefix(n[0], "p.json:1: inference-perf's Prometheus report") {
		t.Errorf("notes %q, want one about the Prometheus report", n)
	}
}

func FuzzJSONInferencePerf(f *testing.F) {
	fuzzFormat(f, "inference-perf", docSeeds(f, "inference-perf/vllm-batch-size")...)
}
