package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGuidellm(t *testing.T) {
	// The v0.2 report as JSON and as YAML must give the same results.
	v02 := []docWant{
		{i: 0, name: "synchronous", nMetric: 69,
			metrics: map[string]float64{
				"completed": 46, "failed": 0, "duration": 29.9, "mean_ttft_ms": 16.8, "max_ttft_ms": 20.16,
				"p0.1_ttft_ms": 13.44, "p1_ttft_ms": 14.186667, "p99.9_ttft_ms": 20.16,
				"mean_e2el_ms": 644, "min_e2el_ms": 579.6, // request_latency is in seconds
				"request_throughput": 1.5, "output_throughput": 198.1, "total_token_throughput": 992.7,
				"concurrency": 1, "total_input_tokens": 256 * 46, "total_output_tokens": 128 * 46,
			},
			labels: map[string]string{"strategy": "synchronous", "model": "Qwen/Qwen3-8B", "profile": "sweep",
				"data": "prompt_tokens=256,output_tokens=128"},
			absent: []string{"incomplete", "mode_ttft_ms"}},
		{i: 1, name: "throughput", metrics: map[string]float64{"completed": 900, "failed": 3, "p99_itl_ms": 31.686667},
			labels: map[string]string{"max_concurrency": "512"}},
		{i: 2, name: "constant@5.00", labels: map[string]string{"strategy": "constant", "rate": "5"},
			metrics: map[string]float64{"request_throughput": 4.98}},
		{i: 3, name: "concurrent@8", labels: map[string]string{"strategy": "concurrent", "streams": "8"}},
	}
	runDocCases(t, []docCase{
		{file: "guidellm/v0.2_sweep.json", format: "guidellm", results: 4, want: v02},
		{file: "guidellm/v0.2_sweep.yaml", format: "guidellm", results: 4, want: v02},
		{file: "guidellm/v0.4_report.json", format: "guidellm", results: 2, want: []docWant{
			{i: 0, name: "constant@5.00", nMetric: 69,
				// request_totals moved under metrics; p50 is the median
				// when the summary has no median of its own.
				metrics: map[string]float64{"completed": 150, "failed": 0, "duration": 30, "median_ttft_ms": 18.6,
					"median_itl_ms": 5.25, "p99.9_e2el_ms": 759},
				labels: map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "profile": "constant", "rate": "5"}},
			{i: 1, name: "concurrent@8", metrics: map[string]float64{"completed": 333, "failed": 1}},
		}},
	})
}

// TestGuidellmErrors: a report whose benchmarks have the wrong shape is a
// positioned error naming the benchmark and the field.
func TestGuidellmErrors(t *testing.T) {
	tests := []struct{ name, in, err string }{
		{"benchmark not an object", `{"benchmarks": [{"metrics": {"request_latency": {"successful": {"mean": 1}}}}, 7]}`,
			"benchmarks[1] is \"7\", not a benchmark object"},
		{"metric not a summary", `{"benchmarks": [{"metrics": {"request_latency": {"successful": {"mean": 1}}, "time_to_first_token_ms": [1, 2]}}]}`,
			"benchmarks[0] (benchmark 0): metrics.time_to_first_token_ms is a list, not a distribution summary object"},
		{"statistic not a number", `{"benchmarks": [{"args": {"strategy": {"type_": "synchronous"}}, "metrics": {"request_latency": {"successful": {"mean": "slow"}}}}]}`,
			`benchmarks[0] (synchronous): "request_latency.mean" is "slow", not a number`},
		{"count not a number", `{"benchmarks": [{"metrics": {"request_latency": {"successful": {"mean": 1}}}, "request_totals": {"successful": "all"}}]}`,
			`benchmarks[0] (benchmark 0): request_totals: "successful" is "all", not a number`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseString(t, tt.in, "report.json", "")
			if err == nil || !strings.Contains(err.Error(), "report.json:1: guidellm: "+tt.err) {
				t.Errorf("err = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestGuidellmFixture(t *testing.T) {
	const rel = "guidellm/benchmarks_stripped.json"
	res := mustParse(t, string(readFixture(t, rel)), rel, "")
	if len(res) != 1 {
		t.Fatalf("got %d results, want 1", len(res))
	}
	r := res[0]
	if r.Format != "guidellm" || r.Name != "synchronous" {
		t.Errorf("result %s %q", r.Format, r.Name)
	}
	for k, v := range map[string]float64{
		"mean_ttft_ms": 16.792535781860348, "median_ttft_ms": 16.38054847717285,
		"mean_e2el_ms": 644.474366437, "p99_e2el_ms": 689.18466568, "mean_tpot_ms": 4.90300272307966,
		"mean_itl_ms": 4.941609043733832, "request_throughput": 1.5481806532737452,
		"output_throughput": 198.13346751788123, "total_token_throughput": 992.6867036588937,
		"completed": 46, "failed": 0, "duration": 29.997201442718506,
	} {
		wantMetric(t, r, k, v)
	}
	for k, v := range map[string]string{"model": "example_model", "strategy": "synchronous", "profile": "sweep"} {
		if r.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, r.Labels[k], v)
		}
	}
}

// guidellmSeed is a small report of both schema generations.
const guidellmSeed = `{"args": {"model": "m", "profile": "sweep"}, "benchmarks": [
 {"type_": "generative_benchmark", "args": {"strategy": {"type_": "constant", "rate": 2}, "profile": {"type_": "sweep"}},
  "worker": {"backend_model": "m"}, "request_totals": {"successful": 9, "errored": 1, "incomplete": 0, "total": 10},
  "duration": 30.5, "metrics": {
   "request_latency": {"successful": {"mean": 1.5, "median": 1.4, "std_dev": 0.1, "min": 1, "max": 2,
     "percentiles": {"p001": 1, "p01": 1.1, "p50": 1.4, "p99": 1.9, "p999": 2}}},
   "time_to_first_token_ms": {"successful": {"mean": 30, "percentiles": {"p05": 20}}, "errored": null},
   "requests_per_second": {"successful": {"mean": 3.3}},
   "prompt_token_count": {"successful": {"total_sum": 2560}}}},
 {"config": {"strategy": {"type_": "concurrent", "streams": 4}, "backend": {"model": "m"}},
  "scheduler_metrics": {"requests_made": {"successful": 3, "errored": 0}},
  "start_time": 1, "end_time": 31, "metrics": {"request_totals": {"successful": 3, "errored": 0},
   "inter_token_latency_ms": {"successful": {"mean": 4, "percentiles": {"p50": 3.9}}}}}]}`

func FuzzJSONGuidellm(f *testing.F) {
	fuzzFormat(f, "guidellm", guidellmSeed,
		`{"benchmarks":[{"args":{"strategy":{"type_":"constant","rate":2}},"metrics":{"request_latency":{"successful":{"mean":1,"percentiles":{"p999":2}}}}}]}`,
		"benchmarks:\n- metrics:\n    time_to_first_token_ms:\n      successful:\n        mean: 3\n        percentiles:\n          p99: 4\n")
}

// TestGuidellmSeed keeps the fuzz seed a valid report.
func TestGuidellmSeed(t *testing.T) {
	res := mustParse(t, guidellmSeed, "seed.json", "guidellm")
	if len(res) != 2 || res[0].Name != "constant@2.00" || res[1].Name != "concurrent@4" {
		t.Fatalf("got %+v", res)
	}
	wantMetric(t, res[0], "mean_e2el_ms", 1500)
	wantMetric(t, res[0], "p0.1_e2el_ms", 1000)
	wantMetric(t, res[0], "failed", 1)
	wantMetric(t, res[0], "total_input_tokens", 2560)
	wantMetric(t, res[1], "duration", 30)
	wantMetric(t, res[1], "median_itl_ms", 3.9)
}

// TestGuidellmYAMLCut: a YAML report cut at a line break still parses; a
// benchmark that lacks what guidellm always writes is the cut (issue 12,
// item 10), while a report cut between benchmarks reads as a shorter one.
func TestGuidellmYAMLCut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "guidellm", "v0.2_sweep.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	// find returns the index of the nth line (from line from on) that
	// starts with marker.
	find := func(from int, marker string, nth int) int {
		for i := from; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], marker) {
				if nth--; nth == 0 {
					return i
				}
			}
		}
		t.Fatalf("no %q", marker)
		return 0
	}
	upTo := func(i int) string { return strings.Join(lines[:i], "") }
	itl4 := find(0, "    inter_token_latency_ms:", 4)
	for _, tc := range []struct {
		name, in, err string
		results       int
	}{
		{"inside the last benchmark's metrics", upTo(itl4 + 3), `benchmark "concurrent@8" lacks output_throughput, total_token_throughput, 10 of the 10 percentiles of itl`, 0},
		{"inside a percentiles list", upTo(find(itl4, "        percentiles:", 1) + 4), `benchmark "concurrent@8" lacks`, 0},
		{"between benchmarks", upTo(find(0, "- type_: generative_benchmark", 4)), "", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := parseString(t, tc.in, "cut.yaml", "")
			if tc.err == "" {
				if err != nil || len(res) != tc.results {
					t.Fatalf("%d results, %v; want %d", len(res), err, tc.results)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || !strings.Contains(pe.Msg, tc.err) || !strings.Contains(pe.Msg, "the file is cut off") {
				t.Fatalf("error %v, want one containing %q", err, tc.err)
			}
			if want := strings.Count(tc.in, "\n"); pe.Line != want {
				t.Errorf("error at line %d, want the last line %d", pe.Line, want)
			}
		})
	}
}
