package ingest

import (
	"strings"
	"testing"
)

func TestGenAIBench(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "genai-bench/mock_run_data.json", format: "genai-bench", results: 1, want: []docWant{
			{nMetric: 58, labels: map[string]string{"scenario": "D(100,100)", "concurrency": "1"},
				metrics: map[string]float64{
					"completed": 32, "failed": 0, "output_throughput": 54.891401311421, "input_throughput": 1703.6747431525607,
					"total_token_throughput": 101.71515709330262,
					// requests_per_minute / 60
					"request_throughput": 0.533325418153,
					// seconds to ms
					"mean_ttft_ms": 52.3553271778, "median_ttft_ms": 32.4082877487, "p99_ttft_ms": 472.345793899, "std_ttft_ms": 110.849242115,
					"p25_tpot_ms": 17.8866226692, "max_e2el_ms": 2530.95619939, "mean_output_latency_ms": 1791.20868997,
					"mean_output_token_throughput_per_user": 55.83089341351254, "mean_input_tokens": 90.71875, "mean_output_tokens": 100,
				},
				absent: []string{"sum_ttft_ms", "mean_total_chars_per_hour", "error_rate", "ttft"}},
		}},
	})
	// The experiment's metadata is left out with a note, not refused.
	r := NewReader(strings.NewReader(readTestdata(t, "genai-bench/mock_experiment_data.json")), "m.json", Options{})
	for r.Scan() {
		t.Errorf("unexpected result %+v", r.Result())
	}
	if r.Err() != nil || len(r.Notes()) != 1 || !strings.Contains(r.Notes()[0], "genai-bench's experiment metadata") {
		t.Errorf("err %v, notes %q", r.Err(), r.Notes())
	}
	// An iteration over batch sizes (embeddings) labels the batch size.
	batch := strings.Replace(readTestdata(t, "genai-bench/mock_run_data.json"), `"num_concurrency": 1,`, `"num_concurrency": 1, "batch_size": 12, "iteration_type": "batch_size", "requests_per_second": 0.6,`, 1)
	res := mustParse(t, batch, "b.json", "")
	if res[0].Labels["batch_size"] != "12" || res[0].Labels["concurrency"] != "" {
		t.Errorf("labels %v, want batch_size 12 and no concurrency", res[0].Labels)
	}
	wantMetric(t, res[0], "request_throughput", 0.6)
}

func TestSGLangOneBatch(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "sglang-one-batch/result.jsonl", format: "sglang-one-batch", results: 3, want: []docWant{
			{i: 0, nMetric: 3, labels: map[string]string{"batch_size": "1", "input_len": "1024", "output_len": "1024"},
				metrics: map[string]float64{"mean_e2el_ms": 14468.7, "output_throughput": 70.77, "total_token_throughput": 141.55}},
			{i: 2, name: "fp8-kv", nMetric: 4, labels: map[string]string{"batch_size": "16"},
				metrics: map[string]float64{"mean_e2el_ms": 19823.1, "last_gen_throughput": 868.93}},
		}},
	})
	// Newer versions add the batch's TTFT (s), input throughput and the
	// speculative acceptance length.
	line := `{"run_name": "default", "batch_size": 8, "input_len": 512, "output_len": 64, "latency": 2.5, "ttft": 0.41, "input_throughput": 9990.2, "output_throughput": 250.1, "overall_throughput": 1843.2, "last_gen_throughput": 260.0, "acc_length": 2.31}`
	r := mustParse(t, line, "r.jsonl", "")[0]
	for k, v := range map[string]float64{"max_ttft_ms": 410, "input_throughput": 9990.2, "spec_decode_acceptance_length": 2.31, "mean_e2el_ms": 2500} {
		wantMetric(t, r, k, v)
	}
	if _, err := parseString(t, strings.Replace(line, `"latency": 2.5`, `"latency": "slow"`, 1), "r.jsonl", ""); err == nil || !strings.Contains(err.Error(), `"latency" is "slow", not a number`) {
		t.Errorf("error %v", err)
	}
}

func FuzzJSONGenAIBench(f *testing.F) { fuzzFormat(f, "genai-bench", docSeeds(f, "genai-bench")...) }

func FuzzJSONSGLangOneBatch(f *testing.F) {
	fuzzFormat(f, "sglang-one-batch", docSeeds(f, "sglang-one-batch")...)
}
