package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAISBenchCSV(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "aisbench-csv/gsm8k_total.csv", format: "aisbench-csv", results: 1, want: []docWant{
			{nMetric: 50, labels: map[string]string{"stage": "total"},
				metrics: map[string]float64{
					"mean_e2el_ms": 12300.2, "p99_e2el_ms": 12305.1, "median_ttft_ms": 2006.1, "max_itl_ms": 21.3,
					"p75_tpot_ms": 20.1, "mean_input_tokens": 1512.5, "p90_output_tokens": 512,
					"mean_output_token_throughput": 41.6254, // token/s, as AISBench prints it
					"completed":                    8,       // the E2EL row's N
				},
				absent: []string{"n_e2el_ms", "mean_output_token_throughput_ms"}},
		}},
		{file: "aisbench-csv/stable_stage_custom_stats.csv", format: "aisbench-csv", results: 2, want: []docWant{
			{i: 0, nMetric: 17, labels: map[string]string{"stage": "total"},
				metrics: map[string]float64{"mean_e2el_ms": 2754.0929, "median_e2el_ms": 2753.1668, "p95_ttft_ms": 200.1,
					"p99_prefill_token_throughput": 13000.9, "completed": 1319},
				absent: []string{"p50_e2el_ms"}},
			{i: 1, name: "stable", labels: map[string]string{"stage": "stable"},
				metrics: map[string]float64{"mean_e2el_ms": 2701.5, "p99_tpot_ms": 22.9, "completed": 1200}},
		}},
		{file: "aisbench-csv/bad_cell.csv", format: "aisbench-csv", err: `aisbench-csv: "TTFT", column "Max": "fast" is not a number`, errLine: 3},
		{file: "aisbench-csv/cut_row.csv", format: "aisbench-csv", err: `row "E2EL" has 6 cells, the header 10`, errLine: 2},
	})
}

func TestAISBenchJSON(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "aisbench-json/gsm8k_total.json", format: "aisbench-json", results: 1, want: []docWant{
			{nMetric: 11, labels: map[string]string{"stage": "total", "max_concurrency": "1"},
				metrics: map[string]float64{
					"duration": 98.4094916, "completed": 8, "failed": 0, "total_requests": 8, "concurrency": 0.9999,
					"request_throughput": 0.0813, "total_input_tokens": 12100, "total_output_tokens": 4096,
					"input_throughput": 122.9556, "output_throughput": 41.622, "total_token_throughput": 164.5776}},
		}},
		{file: "aisbench-json/stable_stage.json", format: "aisbench-json", results: 2, want: []docWant{
			{i: 0, labels: map[string]string{"stage": "total", "max_concurrency": "100"},
				metrics: map[string]float64{"duration": 38.0399928, "completed": 1317, "failed": 2, "total_output_tokens": 675328}},
			{i: 1, name: "stable", labels: map[string]string{"stage": "stable"},
				metrics: map[string]float64{"duration": 30.1005, "request_throughput": 39.8664, "failed": 0}},
		}},
		{file: "aisbench-json/bad_count.json", format: "aisbench-json",
			err: `aisbench-json: "Success Requests" (stage "total") is "eight", not a number`, errLine: 1},
	})
}

// TestAISBenchFilesMatchConsole: the per-task files hold the console
// tables' numbers (fixture aisbench_docs_console_perf.txt, first task), and
// give them the same names as the console parser does.
func TestAISBenchFilesMatchConsole(t *testing.T) {
	const rel = "aisbench/aisbench_docs_console_perf.txt"
	console := mustParse(t, string(readFixture(t, rel)), rel, "aisbench")
	if len(console) == 0 {
		t.Fatal("no console result")
	}
	c := console[0]
	for _, f := range []string{"aisbench-csv/gsm8k_total.csv", "aisbench-json/gsm8k_total.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		res := mustParse(t, string(data), f, "")
		for k, v := range res[0].Metrics {
			if cv, ok := c.Metrics[k]; ok && !approx(cv, v) {
				t.Errorf("%s: %s = %v, console %v", f, k, v, cv)
			} else if !ok && k != "completed" {
				t.Errorf("%s: metric %s has no console counterpart (console has %v)", f, k, keys(c.Metrics))
			}
		}
	}
}

func TestAISBenchJSONNotOtherTools(t *testing.T) {
	// snake_case keys of other tools that normalize to AISBench's names
	// must not be claimed.
	in := `{"request_throughput": 1, "total_input_tokens": 2, "failed_requests": 0, "benchmark_duration": 3}`
	if isAISBenchJSON(topObjects(t, []byte(in))[0]) {
		t.Error("snake_case object claimed as AISBench common metrics")
	}
}

func FuzzJSONAISBench(f *testing.F) {
	fuzzFormat(f, "aisbench-json", docSeeds(f, "aisbench-json")...)
}

func FuzzJSONAISBenchCSV(f *testing.F) {
	fuzzFormat(f, "aisbench-csv", append(docSeeds(f, "aisbench-csv"),
		strings.Join([]string{"Performance Parameters,Stage,Average,P99.9,N", "TTFT,total,1 s,2 us,3", "Foo,stable,1 ms,,x"}, "\n"))...)
}
