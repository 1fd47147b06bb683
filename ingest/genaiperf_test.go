package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/slo"
)

func TestGenAIPerf(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "genai-perf/profile_export_genai_perf.json", format: "genai-perf", results: 1, want: []docWant{
			{nMetric: 61, metrics: map[string]float64{
				"mean_ttft_ms": 16.26, "median_ttft_ms": 16.3, "p1_ttft_ms": 12.5, "p99_ttft_ms": 17.09, "std_ttft_ms": 1.1,
				"mean_e2el_ms": 499.2, "max_e2el_ms": 554.61, "mean_itl_ms": 1.85,
				"request_throughput": 1.9941, "output_throughput": 520.87, "completed": 100,
				"mean_time_to_second_token_ms": 2.1, "p99_output_token_throughput_per_user": 600.2,
				"mean_output_sequence_length": 261.9, "max_input_sequence_length": 553},
				labels: map[string]string{"model": "gpt2", "concurrency": "1", "endpoint_type": "chat", "streaming": "true",
					"backend": "tensorrtllm"},
				absent: []string{"p50_ttft_ms", "mean_ttft", "synthetic_input_tokens_mean"}},
		}},
		{file: "genai-perf/v24_nanoseconds.json", format: "genai-perf", results: 1, want: []docWant{
			{metrics: map[string]float64{"mean_e2el_ms": 497, "p99_ttft_ms": 17.09, "std_itl_ms": 0.1,
				"mean_output_token_throughput_per_request": 540.2, "p99_num_output_token": 296},
				labels: map[string]string{"model": "gpt2", "concurrency": "4"}},
		}},
		{file: "genai-perf/profile_export_genai_perf.csv", format: "genai-perf", results: 1, want: []docWant{
			{nMetric: 57, metrics: map[string]float64{
				"mean_ttft_ms": 16.26, "median_ttft_ms": 16.3, "p25_ttft_ms": 15.5,
				"mean_e2el_ms": 1499.2, "p99_e2el_ms": 1548.69, // "1,499.20": thousands separators
				"output_throughput": 520.87, "request_throughput": 1.99, "completed": 100,
				"p99_time_to_second_token_ms": 3.5, "mean_output_sequence_length": 261.9}},
		}},
		{file: "genai-perf/analyze_sweep.csv", format: "genai-perf", results: 2, want: []docWant{
			{i: 0, name: "llama_run_config_0", nMetric: 6,
				metrics: map[string]float64{"p99_ttft_ms": 44.1, "p99_itl_ms": 9.8, "p99_e2el_ms": 1210.55,
					"p99_output_sequence_length": 126, "output_throughput": 812.4, "request_throughput": 6.31},
				labels: map[string]string{"concurrency": "8", "isl": "128", "num_prompts": "100"}},
			// N/A is absent; the GPU telemetry table that follows is not a result.
			{i: 1, name: "llama_run_config_1", nMetric: 5, absent: []string{"output_throughput"}},
		}},
		{file: "genai-perf/bad_cell.csv", format: "genai-perf",
			err: `genai-perf: "Request Latency (ms)", column "min": "fast" is not a number`, errLine: 3},
		{file: "genai-perf/telemetry.csv", err: "no result block found", unrecog: true, autoOnly: true},
	})
}

func TestAIPerf(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "aiperf/profile_export_aiperf.json", format: "aiperf", results: 1, want: []docWant{
			{nMetric: 41, metrics: map[string]float64{
				"mean_e2el_ms": 6550.356151749999, "median_e2el_ms": 5799.897624499999, "p1_e2el_ms": 5523.63769363,
				"p95_ttft_ms": 4051.42644575, "max_ttft_ms": 4121.087335, "mean_itl_ms": 51.76,
				"request_throughput": 13.16084556379392, "output_throughput": 1274.63,
				"duration": 15.196591969000002, "completed": 200, "failed": 84,
				"total_input_tokens": 110000, "total_output_tokens": 19370},
				labels: map[string]string{"model": "openai/gpt-oss-20b", "concurrency": "100", "endpoint_type": "chat", "streaming": "true"},
				absent: []string{"min_request_timestamp", "request_goodput", "gpu_power_usage"}},
		}},
		{file: "aiperf/v0.1_records.json", format: "aiperf", results: 1, want: []docWant{
			{nMetric: 30, metrics: map[string]float64{"mean_ttft_ms": 18.26, "p99_ttft_ms": 68.82, "median_e2el_ms": 480.5,
				"output_throughput": 10944.03, "request_throughput": 255.54, "completed": 711},
				labels: map[string]string{"model": "Qwen/Qwen3-0.6B", "concurrency": "10"}},
		}},
		{file: "aiperf/profile_export_aiperf.csv", format: "aiperf", results: 1, want: []docWant{
			{nMetric: 56, metrics: map[string]float64{"mean_e2el_ms": 6550.36, "std_ttft_ms": 1189.99, "p5_itl_ms": 50.5,
				"duration": 15.2, "request_throughput": 13.16, "completed": 200, "output_throughput": 1274.63,
				"p99_output_sequence_length": 97},
				absent: []string{"mean_gpu_power_usage", "gpu_power_usage"}},
		}},
		// Issue 12, item 10: the same export cut inside a row is an error,
		// not a result without the metrics after the cut.
		{file: "aiperf/profile_export_aiperf_cut.csv", format: "aiperf", errLine: 11,
			err: `aiperf: row "Output Token" has 1 cells, its header 2: the file is cut off or was edited; re-export it`},
	})
}

// TestAIPerfRecords: aiperf's per-request records (profile_export.jsonl)
// are read together as one result: counts, duration from the first start
// to the last end, exact means, the request summary, and goodput for --slo;
// warmup records are left out, a record with an error is a failed request.
func TestAIPerfRecords(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "aiperf", "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	o := slo.Objective{TTFTms: 130, TPOTms: 40}
	r := NewReader(strings.NewReader(string(data)), "profile_export.jsonl", Options{SLO: &o})
	var res []Result
	for r.Scan() {
		res = append(res, r.Result())
	}
	if r.Err() != nil || len(res) != 1 {
		t.Fatalf("%d results, %v", len(res), r.Err())
	}
	x := res[0]
	if x.Format != "aiperf" || x.Line != 1 || x.Requests == nil || x.Requests.Requests != 5 || x.Requests.Failed != 1 {
		t.Fatalf("result %+v", x)
	}
	// The first request starts at t0, the fourth (t0+0.3 s, 700 ms) ends last.
	wantMetric(t, x, "completed", 5)
	wantMetric(t, x, "failed", 1)
	wantMetric(t, x, "duration", 1)
	wantMetric(t, x, "mean_ttft_ms", (100+150+90+400+120)/5.0)
	wantMetric(t, x, "mean_e2el_ms", (300+500+250+700+420)/5.0)
	wantMetric(t, x, "mean_itl_ms", (200/8.0+350/10.0+160/8.0+300/4.0+300/12.0)/5)
	// TTFT <= 130 and TPOT <= 40: requests 1 (25), 3 (20) and 5 (25); 2 has
	// TTFT 150, 4 TTFT 400 and TPOT 75.
	wantMetric(t, x, "request_goodput", 3)
	wantMetric(t, x, "slo_attainment", 50)
	wantMetric(t, x, "slo_attainment_ttft", 50)
	wantMetric(t, x, "slo_attainment_tpot", 200.0/3)
	checkWarn(t, x, "")
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestGenAIPerfAnalyzeFixture(t *testing.T) {
	const rel = "genai_perf_aiperf/genai-perf_analyze_export_genai_perf.csv"
	res := mustParse(t, string(readFixture(t, rel)), rel, "")
	if len(res) != 5 {
		t.Fatalf("got %d results, want 5 (the GPU telemetry table is not one)", len(res))
	}
	r := res[0]
	if r.Format != "genai-perf" || r.Name != "gpt2_run_config_3" || r.Line != 2 {
		t.Errorf("first result %s %q at line %d", r.Format, r.Name, r.Line)
	}
	for k, v := range map[string]float64{
		"p99_ttft_ms": 184.43, "p99_itl_ms": 30.90, "p99_e2el_ms": 3406.24,
		"output_throughput": 1134.92, "request_throughput": 10.12, "p99_output_sequence_length": 125.98,
	} {
		wantMetric(t, r, k, v)
	}
	if r.Labels["concurrency"] != "32" || r.Labels["num_prompts"] != "175" || r.Labels["isl"] != "200" {
		t.Errorf("labels %v", r.Labels)
	}
	wantMetric(t, res[4], "request_throughput", 9.83)
}

func FuzzJSONGenAIPerf(f *testing.F) {
	fuzzFormat(f, "genai-perf", docSeeds(f, "genai-perf", "aiperf")...)
}

func FuzzJSONAIPerf(f *testing.F) {
	fuzzFormat(f, "aiperf", docSeeds(f, "aiperf", "genai-perf")...)
}
