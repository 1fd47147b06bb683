package ingest

import (
	"bufio"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVLLMJSON(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "vllm-json/v0.10_bench_serve_append.jsonl", format: "vllm-json", results: 2, want: []docWant{
			{i: 0, nMetric: 34,
				metrics: map[string]float64{
					// per-position rates (fractions) in percent, as the text prints them
					"spec_decode_acceptance_rate_pos0": 90, "spec_decode_acceptance_rate_pos1": 70, "spec_decode_acceptance_rate_pos2": 50,
					"completed": 198, "failed": 2, "duration": 41.53, "mean_ttft_ms": 120.5, "p99.9_itl_ms": 95.3,
					"p99.9_e2el_ms": 9480.2, "max_output_tokens_per_s": 1472, "max_concurrent_requests": 64,
					"total_token_throughput": 2025.29, "spec_decode_acceptance_rate": 71.5,
				},
				labels: map[string]string{"model": "Qwen/Qwen3-8B", "backend": "vllm", "request_rate": "inf",
					"max_concurrency": "64", "num_prompts": "200", "burstiness": "1", "gpu": "H100",
					"tokenizer_id": "Qwen/Qwen3-8B", "date": "20250912-101500"},
				// request_goodput is null, rtfx 0 means "not ASR": both absent.
				absent: []string{"request_goodput", "rtfx", "spec_decode_per_position_acceptance_rates"}},
			{i: 1, metrics: map[string]float64{"request_goodput": 3.9, "failed": 0, "mean_e2el_ms": 4500},
				labels: map[string]string{"request_rate": "4"}},
		}},
		// Issue 12, item 6: `vllm bench sweep serve` summary.json, runs with
		// run_number and server settings added: settings are labels.
		{file: "vllm-json/sweep_serve_summary.json", format: "vllm-json", results: 2, want: []docWant{
			// Its per-request lists are short: left out, not a partial summary.
			{i: 1, nMetric: 26, warn: `its per-request lists are left out (no request summary, no goodput for --slo): "itls" has 1 values but "ttfts" has 2`, metrics: map[string]float64{"completed": 400, "request_throughput": 7.5294, "mean_ttft_ms": 90.17, "max_concurrent_requests": 64},
				labels: map[string]string{"run_number": "1", "max_num_seqs": "128", "max_num_batched_tokens": "8192", "enable_chunked_prefill": "true",
					"max_concurrency": "64", "request_rate": "8", "model": "Qwen/Qwen3-8B"},
				absent: []string{"run_number", "max_num_seqs", "max_num_batched_tokens"}},
		}},
		// Issue 12, item 4: every request failed; vLLM saves 0.0 for every
		// latency statistic, which are absent, not zero.
		{file: "vllm-json/v0.11_all_failed.json", format: "vllm-json", results: 1, want: []docWant{
			{nMetric: 10, warn: "no request completed: its 16 latency statistics (mean_e2el_ms, mean_itl_ms, mean_tpot_ms, mean_ttft_ms and 12 more) are absent, not 0",
				metrics: map[string]float64{"completed": 0, "failed": 200, "duration": 1.8734519481658936,
					"request_throughput": 0, "output_throughput": 0, "total_token_throughput": 0, "max_concurrent_requests": 32},
				labels: map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "max_concurrency": "32"},
				absent: []string{"mean_ttft_ms", "median_ttft_ms", "p99_tpot_ms", "std_itl_ms", "mean_e2el_ms", "p99_e2el_ms", "request_goodput"}},
		}},
		{file: "vllm-json/v0.8_save_result_goodput_colon.json", format: "vllm-json", results: 1, want: []docWant{
			{nMetric: 20, metrics: map[string]float64{"request_goodput": 2.1, "mean_ttft_ms": 36.6, "completed": 3},
				labels: map[string]string{"model": "meta-llama/Llama-3.3-70B-Instruct", "request_rate": "4"},
				absent: []string{"ttfts", "itls", "input_lens", "output_lens", "errors", "generated_texts"}},
		}},
		{file: "vllm-json/v0.4_bare_infinity.json", format: "vllm-json", results: 1, want: []docWant{
			{nMetric: 13, warn: `its per-request lists are left out (no request summary, no goodput for --slo): "ttfts"[1] is "NaN", not a duration in seconds`,
				metrics: map[string]float64{"input_throughput": 1807.1, "p99_tpot_ms": 1507.2},
				labels:  map[string]string{"request_rate": "inf", "best_of": "1", "model": "meta-llama/Llama-2-7b-hf"}},
		}},
		{file: "vllm-json/nightly_benchmark_results.json", format: "vllm-json", results: 3, want: []docWant{
			{i: 0, name: "latency_llama8B_tp1", nMetric: 3,
				metrics: map[string]float64{"mean_e2el_ms": 1253.1, "median_e2el_ms": 1252, "p99_e2el_ms": 1260.4},
				labels:  map[string]string{"gpu": "2xH100"}},
			{i: 1, name: "throughput_llama8B_tp1", metrics: map[string]float64{
				"completed": 1000, "duration": 55.1, "request_throughput": 18.1, "total_token_throughput": 8166.9, "total_num_tokens": 450000}},
			{i: 2, name: "serving_llama8B_tp1_sharegpt_qps_1", nMetric: 15, metrics: map[string]float64{
				"completed": 200, "median_tpot_ms": 9.0, "p99_tpot_ms": 10.5, "total_token_throughput": 405.2,
				"p99_itl_ms": 20.1, "mean_ttft_ms": 25.1, "total_input_tokens": 42659}},
		}},
		{file: "vllm-json/ascend_nightly_columns.json", format: "vllm-json", results: 5, want: []docWant{
			{i: 0, name: "latency_qwen3_8B_tp1", metrics: map[string]float64{"mean_e2el_ms": 1500.2}},
			{i: 1, name: "throughput_qwen3_8B_tp1", metrics: map[string]float64{"completed": 200, "total_token_throughput": 2950.8}},
			{i: 2, name: "serving_qwen3_8B_tp1_qps_1", nMetric: 5,
				metrics: map[string]float64{"median_ttft_ms": 61.2, "median_tpot_ms": 18.1, "median_itl_ms": 18, "request_throughput": 0.99},
				labels:  map[string]string{"request_rate": "1"}},
			{i: 3, name: "serving_qwen3_8B_tp1_qps_16"}, // rows in numeric order: 0, 1, 10
			{i: 4, name: "serving_qwen3_8B_tp1_qps_inf", labels: map[string]string{"request_rate": "inf"}},
		}},
		{file: "vllm-json/ascend_raw_columns.json", format: "vllm-json", results: 3, want: []docWant{
			// The converter rewrote avg_latency and P50 in ms; the
			// percentiles object stays in seconds.
			{i: 0, name: "latency_qwen3_8B_tp1", nMetric: 7,
				metrics: map[string]float64{"mean_e2el_ms": 1500.2, "median_e2el_ms": 1500, "p99_e2el_ms": 1511},
				labels:  map[string]string{"model": "Qwen/Qwen3-8B"}},
			{i: 1, name: "throughput_qwen3_8B_tp1", metrics: map[string]float64{"duration": 30.5, "completed": 200}},
			{i: 2, name: "serving_qwen3_8B_tp1_qps_1", metrics: map[string]float64{"median_ttft_ms": 61.2, "completed": 200},
				absent: []string{"p99_ttft_ms"}}, // NaN in the pandas dump: absent
		}},
		{file: "vllm-json/bad_completed_type.json", format: "vllm-json",
			err: `vllm-json: "completed" is "many", not a number`, errLine: 1},
		{file: "vllm-json/truncated.json", format: "vllm-json", err: "truncated", errLine: 3},
		// Elements of a top-level array are positioned at the array.
		{file: "vllm-json/not_a_result_serving_tests.json", err: "matches no known format", errLine: 1, unrecog: true, autoOnly: true},
		{file: "vllm-json/not_a_result_serving_tests.json", format: "vllm-json", err: "not a vLLM serving result", errLine: 1, forcedOnly: true},
	})
}

func TestSGLangJSONL(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "sglang-jsonl/v0.3_trimmed.jsonl", format: "sglang-jsonl", results: 2, want: []docWant{
			{i: 0, nMetric: 10, metrics: map[string]float64{
				"mean_e2el_ms": 7840.616212638561, "median_e2el_ms": 7819.046192569658, "median_ttft_ms": 85.74514742940664,
				"output_throughput": 537.4142851849319, "completed": 300, "total_output_tokens_retokenized": 160192},
				labels: map[string]string{"backend": "sglang", "dataset": "random", "request_rate": "1", "random_input_len": "1024"}},
			{i: 1, labels: map[string]string{"request_rate": "inf"}, metrics: map[string]float64{"completed": 3000}},
		}},
		{file: "sglang-jsonl/v0.5_full.jsonl", format: "sglang-jsonl", results: 1, want: []docWant{
			{nMetric: 29, metrics: map[string]float64{
				"total_token_throughput": 3341.3, "input_throughput": 1762.4, "p90_e2el_ms": 6100, "std_e2el_ms": 900.2,
				"p95_itl_ms": 40.2, "max_itl_ms": 250, "concurrency": 39.9},
				labels: map[string]string{"tag": "baseline", "max_concurrency": "64", "backend": "sglang-oai"},
				absent: []string{"accept_length", "total_throughput"}},
		}},
		{file: "sglang-jsonl/percentile_map_visual_gen.json", format: "sglang-jsonl", results: 1, want: []docWant{
			{metrics: map[string]float64{"median_e2el_ms": 1190, "p90_e2el_ms": 1260.3, "p99_e2el_ms": 1340, "min_e2el_ms": 1100.2,
				"request_throughput": 0.83},
				labels: map[string]string{"model": "stabilityai/sd3", "num_prompts": "50", "num_gpus": "1"},
				absent: []string{"e2e_latencies", "steps"}},
		}},
	})
}

func TestVLLMThroughputLatencyJSON(t *testing.T) {
	runDocCases(t, []docCase{
		{file: "vllm-throughput/bench_throughput_output.json", format: "vllm-throughput", results: 1, want: []docWant{
			{nMetric: 5, metrics: map[string]float64{"duration": 30.51, "completed": 200, "total_num_tokens": 90214,
				"request_throughput": 6.555, "total_token_throughput": 2956.8},
				labels: map[string]string{"num_prompts": "200"}},
		}},
		{file: "vllm-throughput/ascend_with_model_name.json", format: "vllm-throughput", results: 1, want: []docWant{
			{labels: map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct"}, metrics: map[string]float64{"request_throughput": 4.6422}},
		}},
		{file: "vllm-latency/bench_latency_output.json", format: "vllm-latency", results: 1, want: []docWant{
			{nMetric: 7, metrics: map[string]float64{"mean_e2el_ms": 4944, "p10_e2el_ms": 4916, "median_e2el_ms": 4940, "p99_e2el_ms": 4979.2}},
		}},
		{file: "vllm-latency/v0.10_with_std.json", format: "vllm-latency", results: 1, want: []docWant{
			{nMetric: 8, metrics: map[string]float64{"mean_e2el_ms": 1250.1, "std_e2el_ms": 12.3, "p99_e2el_ms": 1259.8},
				labels: map[string]string{"model": "Qwen/Qwen3-8B"}},
		}},
		{file: "vllm-latency/bad_percentile.json", format: "vllm-latency", err: `"percentiles.10" is "fast", not a number`, errLine: 1},
		{file: "vllm-latency/not_a_result_latency_tests.json", err: "matches no known format", errLine: 1, unrecog: true},
	})
}

// TestForcedTextNameOnJSON: vllm-throughput and vllm-latency name a
// console format and a JSON format; forcing the name on JSON input must
// read the JSON.
func TestForcedTextNameOnJSON(t *testing.T) {
	for _, f := range []string{"vllm-throughput", "vllm-latency"} {
		files, _ := filepath.Glob(filepath.Join("testdata", f, "*.json"))
		for _, file := range files {
			if strings.Contains(file, "bad_") || strings.Contains(file, "not_a_result") {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			res := mustParse(t, string(data), file, f)
			if len(res) != 1 || res[0].Format != f {
				t.Errorf("%s --format %s: got %+v", file, f, res)
			}
		}
	}
}

func TestVLLMJSONFixtures(t *testing.T) {
	t.Run("vllm_serve_json", func(t *testing.T) {
		const rel = "vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json"
		res := mustParse(t, string(readFixture(t, rel)), rel, "")
		if len(res) != 1 {
			t.Fatalf("got %d results, want 1", len(res))
		}
		r := res[0]
		if r.Format != "vllm-json" {
			t.Errorf("format %q", r.Format)
		}
		for k, v := range map[string]float64{
			"completed": 200, "duration": 62.98832992400003, "mean_ttft_ms": 50.32546663501307,
			"p99_itl_ms": 29.629998059913305, "total_token_throughput": 1351.170924879084, "total_input_tokens": 42659,
		} {
			wantMetric(t, r, k, v)
		}
		if len(r.Metrics) != 19 {
			t.Errorf("%d metrics, want the 19 summary values: %v", len(r.Metrics), keys(r.Metrics))
		}
		if _, ok := r.Metrics["request_goodput"]; ok {
			t.Error(`"request_goodput:" is null and must be absent`)
		}
		if r.Labels["model"] != "meta-llama/Llama-3.3-70B-Instruct" || r.Labels["request_rate"] != "4" {
			t.Errorf("labels %v", r.Labels)
		}
	})
	t.Run("nightly_results_table", func(t *testing.T) {
		const rel = "vllm_nightly_results_table/llm-k8s_tp8_pp1_benchmark_results.json"
		res := mustParse(t, string(readFixture(t, rel)), rel, "")
		if len(res) != 4 {
			t.Fatalf("got %d results, want 4", len(res))
		}
		if res[3].Name != "tp8_pp1_qps_inf" {
			t.Errorf("last result %q", res[3].Name)
		}
		wantMetric(t, res[1], "mean_ttft_ms", 50.32546663501307)
		wantMetric(t, res[1], "completed", 200)
		wantMetric(t, res[3], "p99_tpot_ms", 75.76524432244929)
	})
	t.Run("nightly_markdown_json", func(t *testing.T) {
		// The column-oriented JSON the converter embeds in the markdown.
		const rel = "vllm_nightly_results_table/llm-k8s_tp8_pp1_benchmark_results.md"
		var doc string
		sc := bufio.NewScanner(strings.NewReader(string(readFixture(t, rel))))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), `{"latency"`) {
				doc = sc.Text()
				break
			}
		}
		if doc == "" {
			t.Fatal("no embedded JSON in the fixture")
		}
		res := mustParse(t, doc, "embedded.json", "")
		if len(res) != 4 || res[0].Name != "tp8_pp1_qps_inf" || res[0].Format != "vllm-json" {
			t.Fatalf("got %d results: %+v", len(res), res)
		}
		wantMetric(t, res[2], "mean_ttft_ms", 50.32546663501307)
	})
	t.Run("sglang_jsonl", func(t *testing.T) {
		for _, c := range []struct {
			rel      string
			n        int
			rate     string
			mean0    float64
			complete float64
		}{
			{"sglang_bench_serving_jsonl/h200-benchmarks_llama_3_3_70b_offline_output.jsonl", 7, "inf", 224918.79882259612, 3000},
			{"sglang_bench_serving_jsonl/h200-benchmarks_llama_3_3_70b_online_output.jsonl", 7, "1", 7840.616212638561, 300},
		} {
			data := readFixture(t, c.rel)
			res := mustParse(t, string(data), c.rel, "")
			if len(res) != c.n {
				t.Fatalf("%s: got %d results, want %d", c.rel, len(res), c.n)
			}
			for i, r := range res {
				if r.Format != "sglang-jsonl" || r.Line != i+1 {
					t.Errorf("%s: result %d is %s at line %d", c.rel, i, r.Format, r.Line)
				}
			}
			wantMetric(t, res[0], "mean_e2el_ms", c.mean0)
			wantMetric(t, res[0], "completed", c.complete)
			if res[0].Labels["request_rate"] != c.rate {
				t.Errorf("%s: request_rate %q, want %q", c.rel, res[0].Labels["request_rate"], c.rate)
			}
		}
	})
	t.Run("configs_are_not_results", func(t *testing.T) {
		for _, rel := range []string{
			"vllm_ascend_benchmarks/serving-tests.json",
			"vllm_ascend_benchmarks/latency-tests.json",
			"vllm_ascend_benchmarks/throughput-tests.json",
			"vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.commands",
		} {
			res, err := parseString(t, string(readFixture(t, rel)), rel, "")
			if !errors.Is(err, ErrUnrecognized) {
				t.Errorf("%s: got %d results, err %v; want ErrUnrecognized", rel, len(res), err)
			}
		}
	})
}

// TestServeNonFinite: Infinity in a metric is dropped with a warning, not
// stored (nor turned into a label), and a throughput of NaN is absent.
func TestServeNonFinite(t *testing.T) {
	in := `{"backend":"vllm","label":"nightly-a","completed":5,"duration":1,"request_throughput":Infinity,"output_throughput":NaN,"mean_ttft_ms":-Infinity,"mean_itl_ms":3,"spec_decode_acceptance_rate":Infinity}`
	res := mustParse(t, in, "x.json", "")
	if len(res) != 1 {
		t.Fatalf("got %d results", len(res))
	}
	if res[0].Name != "nightly-a" {
		t.Errorf("name %q, want the --label", res[0].Name)
	}
	if v, ok := res[0].Labels["spec_decode_acceptance_rate"]; ok {
		t.Errorf("a bare Infinity became the label %q", v)
	}
	for k, v := range res[0].Metrics {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("%s = %v stored", k, v)
		}
	}
	if len(res[0].Warnings) != 3 {
		t.Errorf("warnings %v, want 3 (request_throughput, mean_ttft_ms, spec_decode_acceptance_rate)", res[0].Warnings)
	}
}

func FuzzJSONServe(f *testing.F) {
	fuzzFormat(f, "vllm-json", docSeeds(f, "vllm-json", "sglang-jsonl", "vllm-throughput", "vllm-latency")...)
}

func FuzzJSONSGLang(f *testing.F) {
	fuzzFormat(f, "sglang-jsonl", docSeeds(f, "sglang-jsonl")...)
}

// docSeeds returns the contents of the testdata folders as fuzz seeds.
// Files over 16 KiB are left out: mutating and minimizing them is slow,
// and small documents of the same shape explore the same code.
func docSeeds(f *testing.F, dirs ...string) []string {
	var seeds []string
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join("testdata", d, "*"))
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			if len(data) <= 16<<10 {
				seeds = append(seeds, string(data))
			}
		}
	}
	return seeds
}
