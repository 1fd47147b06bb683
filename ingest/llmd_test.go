package ingest

import (
	"strings"
	"testing"
)

func TestLLMD(t *testing.T) {
	// The examples llm-d-benchmark ships (an inference-perf stage), as
	// YAML v0.2, YAML v0.2.1 (keys sorted) and JSON v0.2.1.
	example := docWant{nMetric: 27,
		labels: map[string]string{"harness": "inference-perf", "stage": "3", "rate": "10", "concurrency": "inf", "input_len": "2148", "output_len": "1000",
			"model": "Qwen/Qwen3-0.6B", "accelerator": "NVIDIA-H100-80GB-HBM3", "tp": "8"},
		metrics: map[string]float64{"completed": 500, "failed": 0, "duration": 49.97206788184121,
			// units s and s/token become ms
			"mean_ttft_ms": 36.8578234129, "p0.1_ttft_ms": 27.3224007925, "p99.9_ttft_ms": 57.014757215, "median_ttft_ms": 36.2293093931,
			"mean_tpot_ms": 36.8578234129, "mean_normalized_time_per_output_token_ms": 36.8578234129,
			"request_throughput": 2262.448, "total_token_throughput": 2262.448, "mean_input_tokens": 2262.448},
		absent: []string{"p0p1_ttft_ms", "p99p9_ttft_ms", "drop_rate", "kv_cache_usage"}}
	runDocCases(t, []docCase{
		{file: "llm-d/br_v0_2_example_cut.yaml", format: "llm-d", results: 1, want: []docWant{example}},
		{file: "llm-d/br_v0_2_1_example_cut.yaml", format: "llm-d", results: 1, want: []docWant{example}},
		{file: "llm-d/br_v0_2_1_example_cut.json", format: "llm-d", results: 1, want: []docWant{example}},
		// A vllm bench serve result as llm-d-benchmark converts it: units
		// ms and ms/token, percentile keys P25, p50, p99p9, stddev.
		{file: "llm-d/br_v0_2_1_from_vllm_bench.json", format: "llm-d", results: 1, want: []docWant{
			{nMetric: 27, labels: map[string]string{"harness": "vllm-benchmark", "stage": "0", "concurrency": "64", "model": "Qwen/Qwen3-8B"},
				metrics: map[string]float64{"completed": 198, "failed": 2, "mean_ttft_ms": 120.5, "median_tpot_ms": 29.8, "p99.9_itl_ms": 95.3,
					"std_e2el_ms": 810.4, "request_throughput": 4.7676, "output_throughput": 965.81},
				absent: []string{"duration", "input_throughput"}},
		}},
	})
}

func TestLLMDErrors(t *testing.T) {
	base := readTestdata(t, "llm-d/br_v0_2_1_from_vllm_bench.json")
	cases := []struct{ name, from, to, err string }{
		{"version", `"version": "0.2.1"`, `"version": "0.1"`, `llm-d Benchmark Report version "0.1" is not one perfgate reads`},
		{"units", `"units": "ms/token"`, `"units": "tokens"`, `latency.time_per_output_token has units "tokens", not a time`},
		{"value", `"mean": 120.5`, `"mean": "fast"`, `"latency.time_to_first_token.mean" is "fast", not a number`},
	}
	for _, c := range cases {
		data := strings.Replace(base, c.from, c.to, 1)
		if data == base {
			t.Fatalf("%s: %q not in the fixture", c.name, c.from)
		}
		_, err := parseString(t, data, "br.json", "")
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "br.json:1: ") {
			t.Errorf("%s: error %v, want br.json:1: ...%s", c.name, err, c.err)
		}
	}
	for _, d := range []struct {
		in   string
		want float64
	}{{"PT49.97206788184121S", 49.97206788184121}, {"P1DT2H3M4.5S", 93784.5}, {"PT2M", 120}} {
		if got, err := isoDurationSeconds(d.in); err != nil || got != d.want {
			t.Errorf("isoDurationSeconds(%q) = %v, %v; want %v", d.in, got, err, d.want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "49.9", "PTxS"} {
		if _, err := isoDurationSeconds(bad); err == nil {
			t.Errorf("isoDurationSeconds(%q): no error", bad)
		}
	}
}

func FuzzJSONLLMD(f *testing.F) { fuzzFormat(f, "llm-d", docSeeds(f, "llm-d")...) }
