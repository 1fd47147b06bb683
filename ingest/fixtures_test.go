package ingest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notResults are fixture files that hold no benchmark result: scripts,
// benchmark configurations, command lines and provenance notes. Auto mode
// must refuse them with ErrUnrecognized rather than invent results.
var notResults = map[string]bool{
	"vllm_ascend_benchmarks/convert_json_to_markdown.py":                                                 true,
	"vllm_ascend_benchmarks/run-performance-benchmarks.sh":                                               true,
	"vllm_ascend_benchmarks/latency-tests.json":                                                          true,
	"vllm_ascend_benchmarks/serving-tests.json":                                                          true,
	"vllm_ascend_benchmarks/throughput-tests.json":                                                       true,
	"vllm_ascend_benchmarks/perf_result_template.md":                                                     true,
	"vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.commands": true,
	// llmperf's per-request records, not the summary.
	"llmperf/01-ai-Yi-1-5-34B-Chat_550_150_individual_responses.json": true,
}

// fixtureSpot is what one fixture must parse to: the number of results,
// the format and name of result idx, and some of its metrics and labels,
// checked by eye against the file.
type fixtureSpot struct {
	count   int
	idx     int
	format  string
	metrics map[string]float64
	labels  map[string]string
}

// fixtureWant lists every result file of ../shared/fixtures and
// ../shared/seeds (relative to the fixtures directory).
var fixtureWant = map[string]fixtureSpot{
	"aisbench/aisbench_docs_console_perf.txt": {count: 1, format: "aisbench",
		metrics: map[string]float64{"mean_ttft_ms": 2006.0, "p99_e2el_ms": 12305.1, "duration": 98.4094916, "completed": 8, "failed": 0, "total_token_throughput": 164.5776},
		labels:  map[string]string{"max_concurrency": "1", "dataset": "demo_gsm8k"}},
	"genai_perf_aiperf/aiperf_README_console_table.txt": {count: 1, format: "aiperf",
		metrics: map[string]float64{"mean_ttft_ms": 18.26, "std_ttft_ms": 12.07, "p75_e2el_ms": 536.17, "output_throughput": 10944.03, "request_throughput": 255.54, "completed": 711, "mean_output_token_throughput_per_user": 89.23}},
	"genai_perf_aiperf/aiperf_goodput_console_table.txt": {count: 1, format: "aiperf",
		metrics: map[string]float64{"median_ttft_ms": 51.80, "mean_e2el_ms": 3651.23, "request_goodput": 0.14, "p99_output_sequence_length": 1649.78}},
	"genai_perf_aiperf/genai-perf_README_console_table.txt": {count: 1, format: "genai-perf",
		metrics: map[string]float64{"mean_ttft_ms": 16.26, "p99_itl_ms": 2.02, "max_e2el_ms": 554.61, "output_throughput": 520.87, "request_throughput": 1.99}},
	"genai_perf_aiperf/genai-perf_analyze_export_genai_perf.csv": {count: 5, format: "genai-perf",
		metrics: map[string]float64{"request_throughput": 10.12, "output_throughput": 1134.92}, labels: map[string]string{"concurrency": "32"}},
	"guidellm/benchmarks_stripped_output.txt": {count: 1, format: "guidellm",
		metrics: map[string]float64{"completed": 46, "failed": 0, "duration": 30, "request_throughput": 1.55, "mean_ttft_ms": 16.8, "p99_e2el_ms": 690, "median_itl_ms": 4.9, "total_input_tokens": 11827},
		labels:  map[string]string{"strategy": "synchronous", "model": "example_model"}},
	"guidellm/benchmarks_stripped.json": {count: 1, format: "guidellm",
		metrics: map[string]float64{"completed": 46, "mean_ttft_ms": 16.792535781860348}, labels: map[string]string{"strategy": "synchronous", "model": "example_model"}},
	"llmperf/01-ai-Yi-1-5-34B-Chat_550_150_summary.json": {count: 1, format: "llmperf",
		metrics: map[string]float64{"mean_ttft_ms": 586.9289812874854, "p99_e2el_ms": 7522.39977344012, "median_itl_ms": 46.70670377673851, "completed": 80, "failed": 0, "output_throughput": 20.982177074314603},
		labels:  map[string]string{"model": "01-ai/Yi-1.5-34B-Chat", "max_concurrency": "1"}},
	"mindie_benchmark/mindie_qwq32b_gsm8k_log_excerpt.txt": {count: 1, format: "mindie",
		metrics: map[string]float64{"mean_ttft_ms": 106.8642, "p99_e2el_ms": 228628.2242, "mean_queue_wait_time_ms": 246.1830655, "completed": 200, "duration": 2502.9557, "request_throughput": 0.0799, "output_throughput": 35.9032},
		labels:  map[string]string{"model": "QwQ-32B", "max_concurrency": "10"}},
	"mindie_benchmark/mindie_qwq32b_gsm8k_tuned_log_excerpt.txt": {count: 1, format: "mindie"},
	"sglang_bench_serving_jsonl/h200-benchmarks_llama_3_3_70b_offline_output.jsonl": {count: 7, format: "sglang-jsonl",
		metrics: map[string]float64{"completed": 3000, "median_ttft_ms": 91282.20983641222, "mean_e2el_ms": 224918.79882259612}, labels: map[string]string{"request_rate": "inf", "backend": "sglang"}},
	"sglang_bench_serving_jsonl/h200-benchmarks_llama_3_3_70b_online_output.jsonl": {count: 7, format: "sglang-jsonl",
		metrics: map[string]float64{"completed": 300}, labels: map[string]string{"request_rate": "1"}},
	"sglang_bench_serving_text/SGLang-dLoRA_sglang_results.md": {count: 6, format: "sglang",
		metrics: map[string]float64{"mean_ttft_ms": 1955.72, "request_throughput": 3.8, "completed": 996}, labels: map[string]string{"backend": "sglang", "request_rate": "2"}},
	"trtllm_bench/trtllm-bench_throughput_pytorch_multimodal_sample.txt": {count: 1, format: "trtllm-bench",
		metrics: map[string]float64{"request_throughput": 1.4439, "output_throughput": 185.8351, "total_token_throughput": 780.1607, "duration": 6.9254963, "mean_e2el_ms": 3671.8441, "median_e2el_ms": 3936.3022, "min_e2el_ms": 2397.1047, "completed": 10},
		labels:  map[string]string{"tp": "1", "dataset": "mm_data.json"}},
	"trtllm_bench/trtllm-bench_throughput_v0.17_engine_log.txt": {count: 1, format: "trtllm-bench",
		metrics: map[string]float64{"output_throughput": 28390.4265, "request_throughput": 221.8002, "duration": 13.5256862, "completed": 3000},
		labels:  map[string]string{"model": "meta-llama/Llama-3.1-8B", "engine_version": "0.17.0", "quantization": "FP8"}},
	"vllm_ascend_benchmarks/issue776_benchmark_results_excerpt.md": {count: 4, idx: 3, format: "vllm-table",
		metrics: map[string]float64{"request_throughput": 5.11639, "output_throughput": 557.508, "median_ttft_ms": 17186.9, "median_tpot_ms": 195.048, "median_itl_ms": 64.0484},
		labels:  map[string]string{"request_rate": "inf"}},
	"vllm_ascend_benchmarks/performance_benchmark.md@182b75ea.md": {count: 4, idx: 1, format: "vllm-throughput"},
	"vllm_ascend_benchmarks/performance_benchmark.md@90aabaeb.md": {count: 6, format: "vllm",
		metrics: map[string]float64{"mean_ttft_ms": 104.14, "request_throughput": 0.94, "completed": 200}},
	"vllm_nightly_results_table/llm-k8s_tp8_pp1_benchmark_results.json": {count: 4, format: "vllm-json",
		metrics: map[string]float64{"completed": 200, "mean_ttft_ms": 65.25777634499718}},
	"vllm_nightly_results_table/llm-k8s_tp8_pp1_benchmark_results.md": {count: 4, format: "vllm-table",
		metrics: map[string]float64{"completed": 200, "mean_ttft_ms": 65.2578, "p99_itl_ms": 42.9578, "total_token_throughput": 416.047}},
	"vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json": {count: 1, format: "vllm-json",
		metrics: map[string]float64{"mean_ttft_ms": 50.32546663501307, "completed": 200}, labels: map[string]string{"request_rate": "4", "model": "meta-llama/Llama-3.3-70B-Instruct"}},
	"vllm_serve_text/dennislee22_vLLM-benchmarking_README.md": {count: 81, format: "vllm",
		metrics: map[string]float64{"mean_ttft_ms": 2111.51, "completed": 10}, labels: map[string]string{"model": "Qwen2-7B-Instruct"}},
	"vllm_serve_text/llm-k8s_tp8_pp1_benchmark-script-run.log": {count: 4, format: "vllm",
		metrics: map[string]float64{"mean_ttft_ms": 65.26, "duration": 205.22}, labels: map[string]string{"request_rate": "1", "dataset": "sharegpt"}},
	"vllm_serve_text/vllm-ascend_issue4110_v0.11_serve.txt": {count: 1, format: "vllm",
		metrics: map[string]float64{"completed": 200, "total_token_throughput": 323.84, "max_concurrent_requests": 10, "p99_itl_ms": 49.27}, labels: map[string]string{"request_rate": "1"}},
	"vllm_serve_text/vllm_issue12845_v0.7_serve.txt": {count: 1, format: "vllm",
		metrics: map[string]float64{"completed": 772, "mean_ttft_ms": 249.49, "total_token_throughput": 925.72}},
	"vllm_serve_text/vllm_issue359_v0.1_benchmark_serving.txt": {count: 1, format: "vllm",
		metrics: map[string]float64{"duration": 166.88, "request_throughput": 5.99, "mean_e2el_ms": 67590}},
	"../seeds/vllm-ascend-multimodal-optimizations.md": {count: 10, format: "vllm",
		metrics: map[string]float64{"mean_ttft_ms": 945.18, "total_token_throughput": 460.70, "completed": 500, "failed": 0, "duration": 206.06}, labels: map[string]string{"max_concurrency": "16"}},
	"../seeds/mindie-tuning-qwq32b.md": {count: 6, format: "mindie",
		metrics: map[string]float64{"mean_ttft_ms": 64.7768, "mean_queue_wait_time_ms": 0.8934933, "duration": 10714.4325, "completed": 8792}, labels: map[string]string{"model": "QwQ-32B", "dataset": "gsm8k"}},
}

// TestFixtureResults checks every file fixtureWant lists: result count,
// format, and spot values.
func TestFixtureResults(t *testing.T) {
	if _, err := os.Stat(fixturesDir); err != nil {
		t.Skip("../shared/fixtures absent")
	}
	for rel, want := range fixtureWant {
		t.Run(rel, func(t *testing.T) {
			data := readFixture(t, rel)
			res := mustParse(t, string(data), rel, "")
			if len(res) != want.count {
				t.Fatalf("%d results, want %d", len(res), want.count)
			}
			r := res[want.idx]
			if r.Format != want.format {
				t.Errorf("result %d has format %s, want %s", want.idx, r.Format, want.format)
			}
			for k, v := range want.metrics {
				wantMetric(t, r, k, v)
			}
			for k, v := range want.labels {
				if r.Labels[k] != v {
					t.Errorf("label %s = %q, want %q (labels %v)", k, r.Labels[k], v, r.Labels)
				}
			}
			for _, x := range res {
				for _, w := range x.Warnings {
					t.Logf("warning: %s:%d: %s", x.File, x.Line, w)
				}
			}
		})
	}
}

// TestSeeds parses every file of ../shared/seeds.
func TestSeeds(t *testing.T) {
	dir := filepath.Join(fixturesDir, "..", "seeds")
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) == 0 {
		t.Skip("../shared/seeds absent")
	}
	for _, f := range files {
		rel := "../seeds/" + filepath.Base(f)
		if _, ok := fixtureWant[rel]; !ok {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parseString(t, string(data), rel, ""); err != nil {
				t.Errorf("%s: %v", rel, err)
			}
		}
	}
}

// TestEveryFixture parses every file under ../shared/fixtures in auto mode:
// a result file must give at least one result with metrics; a file that
// holds none must fail with ErrUnrecognized, never panic or half-parse.
// Per-format tests assert counts and values; this one guards the whole.
func TestEveryFixture(t *testing.T) {
	if _, err := os.Stat(fixturesDir); err != nil {
		t.Skip("../shared/fixtures absent")
	}
	err := filepath.WalkDir(fixturesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fixturesDir, path)
		rel = filepath.ToSlash(rel)
		if d.Name() == "PROVENANCE.txt" || d.Name() == "INDEX.md" {
			return nil
		}
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, perr := parseString(t, string(data), rel, "")
			if notResults[rel] {
				if perr == nil && len(res) > 0 {
					t.Errorf("holds no benchmark result, but parsed %d (first: %s %v)", len(res), res[0].Format, res[0].Metrics)
				}
				return
			}
			if perr != nil {
				if errors.Is(perr, ErrUnrecognized) && knownUnsupported(rel) {
					t.Skipf("format not supported yet: %v", perr)
				}
				t.Fatalf("parse: %v", perr)
			}
			if len(res) == 0 {
				t.Fatal("no results")
			}
			for _, r := range res {
				if len(r.Metrics) == 0 {
					t.Errorf("%s:%d: %s result without metrics", r.File, r.Line, r.Format)
				}
			}
			if _, listed := fixtureWant[rel]; !listed {
				t.Logf("not in fixtureWant (counts unchecked): %d results, first %s with %d metrics", len(res), res[0].Format, len(res[0].Metrics))
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// knownUnsupported lists fixtures perfgate does not read: lmdeploy's 2023
// profile_generation.py output (lmdeploy's current benchmark prints the
// SGLang block, which is read) and a wrapper script's digest of llmperf
// results (not llmperf's own file).
func knownUnsupported(rel string) bool {
	for _, p := range []string{"lmdeploy/", "llmperf/01-ai_Yi-1.5-34B-Chat_cur_1.json"} {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}
