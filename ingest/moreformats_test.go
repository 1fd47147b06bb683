package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// formatCase is one testdata file and what it must parse to: count
// results, result idx of format with the metrics and labels given, or an
// error (at errLine, containing errText).
type formatCase struct {
	file, format string // format "" = auto
	count, idx   int
	resFormat    string
	name         string
	metrics      map[string]float64
	absent       []string
	labels       map[string]string
	errLine      int
	errText      string
	unrecognized bool
	warn         string // a warning of result idx must contain it; "" = no warnings
}

func runFormatCases(t *testing.T, cases []formatCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.file+"/"+tc.format, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := parseString(t, string(data), tc.file, tc.format)
			if tc.errText != "" || tc.unrecognized {
				if err == nil {
					t.Fatalf("want error, got %d results", len(res))
				}
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("error %T is not *Error: %v", err, err)
				}
				if tc.errLine != 0 && pe.Line != tc.errLine {
					t.Errorf("error at line %d, want %d: %v", pe.Line, tc.errLine, err)
				}
				if !strings.Contains(err.Error(), tc.errText) {
					t.Errorf("error %q does not contain %q", err, tc.errText)
				}
				if tc.unrecognized && !errors.Is(err, ErrUnrecognized) {
					t.Errorf("error is not ErrUnrecognized: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != tc.count {
				t.Fatalf("%d results, want %d", len(res), tc.count)
			}
			r := res[tc.idx]
			if r.Format != tc.resFormat {
				t.Errorf("format %s, want %s", r.Format, tc.resFormat)
			}
			if tc.name != "" && r.Name != tc.name {
				t.Errorf("name %q, want %q", r.Name, tc.name)
			}
			for k, v := range tc.metrics {
				wantMetric(t, r, k, v)
			}
			for _, k := range tc.absent {
				if v, ok := r.Metrics[k]; ok {
					t.Errorf("%s = %v, want absent", k, v)
				}
			}
			for k, v := range tc.labels {
				if r.Labels[k] != v {
					t.Errorf("label %s = %q, want %q (labels %v)", k, r.Labels[k], v, r.Labels)
				}
			}
			checkWarn(t, r, tc.warn)
		})
	}
}

func TestProfileConsoleTables(t *testing.T) {
	runFormatCases(t, []formatCase{
		// genai-perf 24.06: title "LLM Metrics", nanoseconds with thousands
		// separators, throughputs printed as lines after the table.
		{file: "genai-perf-console/v24.06_ns.txt", count: 1, resFormat: "genai-perf",
			metrics: map[string]float64{"mean_ttft_ms": 13.266974, "p99_e2el_ms": 527.13704, "min_itl_ms": 0.428021,
				"mean_num_output_token": 243, "output_throughput": 485.21, "request_throughput": 1.99}},
		{file: "genai-perf-console/v24.06_ns.txt", format: "genai-perf", count: 1, resFormat: "genai-perf",
			metrics: map[string]float64{"request_throughput": 1.99}},
		// aiperf with BOM, CRLF, a wrapped label, p50 (median), goodput,
		// duration, zeros kept, and a telemetry table that is no result.
		{file: "genai-perf-console/aiperf_bom_crlf_telemetry.txt", count: 1, resFormat: "aiperf",
			metrics: map[string]float64{"mean_ttft_ms": 1018.26, "median_ttft_ms": 16.62, "std_e2el_ms": 79.6, "mean_itl_ms": 0,
				"mean_output_token_throughput_per_user": 89.23, "output_throughput": 10944.03, "completed": 711,
				"request_goodput": 200.1, "duration": 2.78},
			absent: []string{"min_output_throughput", "mean_gpu_power_usage"}},
		{file: "genai-perf-console/aiperf_bom_crlf_telemetry.txt", format: "aiperf", count: 1, resFormat: "aiperf"},
		{file: "genai-perf-console/aiperf_bom_crlf_telemetry.txt", format: "genai-perf", unrecognized: true, errText: "tried formats: genai-perf"},
		{file: "genai-perf-console/aiperf_ascii.txt", count: 1, resFormat: "aiperf",
			metrics: map[string]float64{"mean_ttft_ms": 50.04, "p99_e2el_ms": 5707.95, "request_throughput": 0.27}},
		// Issue 12, item 5: a narrow terminal; rich wraps every label and
		// cuts "(tokens/sec/user)" to "(tokens/sec/u…", which resolves to
		// the full label, so the series keeps its wide-terminal name.
		{file: "genai-perf-console/aiperf_narrow.txt", count: 1, resFormat: "aiperf",
			metrics: map[string]float64{"mean_ttft_ms": 215.07, "p75_e2el_ms": 2400.13, "std_itl_ms": 1.7,
				"mean_output_token_throughput_per_user": 70.38, "p99_output_token_throughput_per_user": 88.91,
				"mean_output_sequence_length": 128, "output_throughput": 2241.61, "request_throughput": 17.51, "completed": 1000},
			absent: []string{"mean_output_token_throughput_per_user_tokens_per_sec_per_u", "mean_output_token_throughput_per_u"}},
		{file: "genai-perf-console/truncated.txt", errLine: 6, errText: "cut off"},
		{file: "genai-perf-console/bad_cell.txt", errLine: 5, errText: `"fast" is not a number`},
	})
}

// TestProfileResolveLabel: a label cut with "…" resolves only to a single
// label it is the start of.
func TestProfileResolveLabel(t *testing.T) {
	rows := []profileRow{{label: "Custom Latency (ms)"}, {label: "Custom Lat… (ms)"}}
	for _, tc := range []struct{ in, want string }{
		{"Output Token Throughput Per User (tokens/sec/u…", "Output Token Throughput Per User (tokens/sec/user)"},
		{"Output Token Throughput  Per…", "Output Token Throughput Per User (tokens/sec/user)"},
		{"Request Throughput (requests/s…", "Request Throughput (requests/sec)"},
		{"Time to First Token (m…", "Time to First Token (ms)"},
		{"Custom Lat…", "Custom Latency (ms)"}, // the table's own uncut label
		{"Output Token Thro…", ""},             // Output Token Throughput, and Per User
		{"Request…", ""},
		{"…", ""},
		{"Unknown Metric (m…", ""},
	} {
		got, ok := profileResolveLabel(tc.in, rows)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("profileResolveLabel(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestLLMPerf(t *testing.T) {
	runFormatCases(t, []formatCase{
		{file: "llmperf/summary_strings.json", count: 1, resFormat: "llmperf", name: "meta-llama-Llama-2-7b-chat-hf_550_150_summary",
			metrics: map[string]float64{"mean_ttft_ms": 300, "median_ttft_ms": 250, "p99_ttft_ms": 1500, "mean_itl_ms": 21,
				"median_itl_ms": 20, "mean_e2el_ms": 3500, "max_e2el_ms": 9250, "completed": 98, "failed": 2,
				"output_throughput": 330, "request_throughput": 2.5, "min_number_output_tokens": 120,
				"mean_request_output_throughput_token_per_s": 45.5},
			absent: []string{"std_ttft_ms", "error_code_frequency", "timestamp"},
			labels: map[string]string{"model": "meta-llama/Llama-2-7b-chat-hf", "max_concurrency": "8", "input_len": "550", "output_len": "150"}},
		{file: "llmperf/summary_strings.json", format: "llmperf", count: 1, resFormat: "llmperf"},
		{file: "llmperf/individual_responses.json", unrecognized: true, errText: "_summary.json"},
	})
}

func TestTRTLLMBench(t *testing.T) {
	runFormatCases(t, []formatCase{
		{file: "trtllm-bench/v0.17_engine.log", count: 1, resFormat: "trtllm-bench",
			metrics: map[string]float64{"completed": 3000, "output_throughput": 28390.4265, "request_throughput": 221.8002, "duration": 13.5256862},
			absent:  []string{"issue_rate", "total_token_throughput"},
			labels:  map[string]string{"tp": "2", "engine_version": "0.17.0", "kv_cache_dtype": "FP8", "scheduling_policy": "Guaranteed No Evict"}},
		{file: "trtllm-bench/pytorch_streaming_two_runs.txt", count: 2, resFormat: "trtllm-bench",
			metrics: map[string]float64{"completed": 512, "concurrency": 63.8806, "mean_ttft_ms": 310.5521, "p99_ttft_ms": 1150.9988,
				"median_tpot_ms": 11.8101, "mean_tpot_ms": 11.8832, "min_e2el_ms": 11000.5, "mean_e2el_ms": 12467.305,
				"median_gtps": 84.67, "per_user_output_throughput": 82.1302, "total_token_throughput": 10492.7222, "duration": 99.9340012},
			labels: map[string]string{"backend": "pytorch", "dataset": "synthetic_1024_1024.jsonl", "model": "Qwen/Qwen3-8B"}},
		{file: "trtllm-bench/pytorch_streaming_two_runs.txt", format: "trtllm-bench", count: 2, idx: 1, resFormat: "trtllm-bench",
			metrics: map[string]float64{"request_throughput": 5.5, "p99_e2el_ms": 12900}},
		{file: "trtllm-bench/truncated.txt", errLine: 52, errText: "cut off"},
		// 0.12 (issue 12, item 3): a STATISTICS section, Token Throughput,
		// Total Latency (seconds), tab-separated, after a log prefix line.
		{file: "trtllm-bench/v0.12_statistics.log", count: 1, resFormat: "trtllm-bench",
			metrics: map[string]float64{"completed": 3000, "output_throughput": 7416.232531486508, "request_throughput": 57.93931665223834,
				"duration": 51.778842861, "average_input_length": 128, "average_output_length": 128},
			absent: []string{"issue_rate", "kv_memory_percentage", "max_input_length"},
			labels: map[string]string{"model": "meta-llama/Llama-2-7b-hf", "engine_version": "0.12.0", "dtype": "float16", "tp": "1", "pp": "1",
				"max_batch_size": "4096", "max_num_tokens": "8192", "scheduling_policy": "Guaranteed No Evict"}},
		{file: "trtllm-bench/v0.12_statistics.log", format: "trtllm-bench", count: 1, resFormat: "trtllm-bench",
			metrics: map[string]float64{"duration": 51.778842861}},
		// 1.1+: "TensorRT LLM Version", a MACHINE DETAILS line without a
		// colon, DECODING STATISTICS (Eagle3), the DATASET DETAILS table.
		{file: "trtllm-bench/v1.2_pytorch_eagle3_machine.txt", count: 1, resFormat: "trtllm-bench",
			metrics: map[string]float64{"completed": 1000, "request_throughput": 17.4012, "duration": 57.467231, "p99_ttft_ms": 480.1,
				"max_e2el_ms": 2800.9, "mean_spec_decode_acceptance_length": 2.9, "median_spec_decode_acceptance_rate": 0.67,
				"p99_spec_decode_draft_tokens": 3, "min_spec_decode_accepted_tokens": 0},
			labels: map[string]string{"engine_version": "1.2.0rc1", "gpu": "NVIDIA H100 80GB HBM3", "spec_decode": "Eagle3",
				"model": "meta-llama/Llama-3.1-8B-Instruct", "backend": "pytorch", "dataset": "synthetic_1k_1k.jsonl", "quantization": "FP8"}},
	})
}

func TestVLLMTable(t *testing.T) {
	runFormatCases(t, []formatCase{
		{file: "vllm-table/nightly_three_tables.md", count: 5, resFormat: "vllm-table", name: "latency_llama8B_tp1",
			metrics: map[string]float64{"mean_e2el_ms": 1062.35, "p99_e2el_ms": 1065.52}, labels: map[string]string{"gpu": "8xH100"}},
		{file: "vllm-table/nightly_three_tables.md", count: 5, idx: 2, resFormat: "vllm-table",
			metrics: map[string]float64{"request_throughput": 22.7417}},
		{file: "vllm-table/nightly_three_tables.md", count: 5, idx: 4, resFormat: "vllm-table", name: "serving_llama8B_tp1_sharegpt_qps_inf",
			metrics: map[string]float64{"completed": 200, "median_ttft_ms": 1523.4, "mean_itl_ms": 0, "total_token_throughput": 11953.2},
			absent:  []string{"mean_ttft_ms"}},
		{file: "vllm-table/nightly_three_tables.md", format: "vllm-table", count: 5, resFormat: "vllm-table"},
		{file: "vllm-table/ascend_crlf.md", count: 2, idx: 1, resFormat: "vllm-table",
			metrics: map[string]float64{"median_ttft_ms": 4120.7, "median_tpot_ms": 40.9, "median_itl_ms": 29.1, "request_throughput": 9.8},
			labels:  map[string]string{"request_rate": "inf"}},
		{file: "vllm-table/bad_row.md", errLine: 4, errText: "2 cells but its header (line 1) has 3"},
		{file: "vllm-table/bad_value.md", errLine: 3, errText: `"fast" is not a number`},
	})
}

// TestVLLMTableAfterBlocks: a benchmark script's log prints the blocks of
// its runs and then a table of the same runs; each run is one result.
func TestVLLMTableAfterBlocks(t *testing.T) {
	block, err := os.ReadFile(filepath.Join("testdata", "vllm", "v0.7_goodput_e2el.txt"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join("testdata", "vllm-table", "ascend_crlf.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(mustParse(t, string(block), "b.txt", ""))
	res := mustParse(t, string(block)+"\n"+string(table), "log.txt", "")
	if len(res) != n {
		t.Errorf("%d results, want the %d of the blocks only", len(res), n)
	}
	res = mustParse(t, string(table)+"\n"+string(block), "log.txt", "")
	if len(res) != n+2 {
		t.Errorf("table before blocks: %d results, want %d", len(res), n+2)
	}
}

func TestGuidellmConsole(t *testing.T) {
	runFormatCases(t, []formatCase{
		{file: "guidellm-console/sweep.txt", count: 3, idx: 1, resFormat: "guidellm", name: "throughput",
			metrics: map[string]float64{"request_throughput": 20, "concurrency": 62.1, "output_throughput": 5120, "total_token_throughput": 15360,
				"mean_e2el_ms": 3100, "p99_e2el_ms": 4200, "median_ttft_ms": 120.4, "p99_itl_ms": 14.9, "mean_tpot_ms": 11.4,
				"completed": 600, "failed": 2, "duration": 30, "total_input_tokens": 307200, "total_output_tokens": 153600},
			labels: map[string]string{"model": "Qwen/Qwen3-8B", "strategy": "throughput", "profile": "sweep", "data": "prompt_tokens=512,output_tokens=256"}},
		{file: "guidellm-console/sweep.txt", format: "guidellm", count: 3, idx: 2, resFormat: "guidellm", name: "constant@3.25",
			metrics: map[string]float64{"completed": 97, "duration": 30.1, "mean_ttft_ms": 22},
			labels:  map[string]string{"strategy": "constant", "rate": "3.25"}},
		{file: "guidellm-console/truncated.txt", errLine: 24, errText: "cut off"},
		// Issue 12, item 10: one truncation rule. The Stats table lacks its
		// closing rule but has a row for each benchmark of the Info table:
		// kept with a warning; with a row missing it is cut off: an error.
		{file: "guidellm-console/v0.3_no_closing_rule.txt", count: 3, idx: 2, resFormat: "guidellm", name: "constant@3.25",
			metrics: map[string]float64{"completed": 97, "duration": 30.1, "mean_ttft_ms": 22},
			warn:    `guidellm Benchmarks Stats table that starts at line 22 has no closing "=====" rule after line 29; it has a row for each of the 3 benchmarks of the Info table and was kept`},
		{file: "guidellm-console/v0.3_cut_rows.txt", errLine: 28, errText: "after 2 of its 3 rows: the report is cut off"},
		// v0.4+: titled tables with three header rows and merged cells; the
		// console names a benchmark by its strategy type only.
		{file: "guidellm-console/v0.4_console.txt", count: 4, idx: 1, resFormat: "guidellm", name: "throughput",
			metrics: map[string]float64{"duration": 30, "total_input_tokens": 307200, "total_output_tokens": 153600,
				"median_e2el_ms": 3000, "p95_e2el_ms": 4100, "median_ttft_ms": 120.4, "p95_ttft_ms": 580.2, "p95_itl_ms": 14.1, "median_tpot_ms": 11.1,
				"concurrency": 62.1, "request_throughput": 20, "input_throughput": 10240, "output_throughput": 5120, "total_token_throughput": 15360},
			absent: []string{"mean_ttft_ms", "completed", "median_request_concurrency"},
			labels: map[string]string{"strategy": "throughput"}},
		{file: "guidellm-console/v0.4_console.txt", format: "guidellm", count: 4, idx: 3, resFormat: "guidellm", name: "constant#2",
			metrics: map[string]float64{"duration": 30, "p95_tpot_ms": 6.5, "input_throughput": 3310.9, "median_e2el_ms": 1600},
			labels:  map[string]string{"strategy": "constant"}},
		{file: "guidellm-console/v0.4_truncated.txt", errLine: 34, errText: "cut off before its closing"},
		{file: "guidellm-console/v0.4_bad_cell.txt", errLine: 33, errText: `"12x.4" is not a number`},
		// v0.4/v0.5 (issue 12, items 1 and 2): the Text Metrics table stacks
		// its Input and Output halves under one title, separated by a
		// "|===|" rule; "Server Throughput Statistics" has no qualifier;
		// Requests Per Sec and Concurrency print Mdn and Mean.
		{file: "guidellm-console/v0.5_text_stacked.txt", count: 2, idx: 1, resFormat: "guidellm", name: "throughput",
			metrics: map[string]float64{"duration": 30, "total_input_tokens": 98304, "total_output_tokens": 49152,
				"median_e2el_ms": 2900, "p95_ttft_ms": 498.3, "median_itl_ms": 10.8, "p95_tpot_ms": 13.5,
				"request_throughput": 6.4, "concurrency": 61.8, "input_throughput": 3270.1, "output_throughput": 1635, "total_token_throughput": 4905.1},
			absent: []string{"mean_ttft_ms", "request_concurrency"},
			labels: map[string]string{"strategy": "throughput"}},
		// Issue 12, item 10: the last table lacks its closing rule but has a
		// row for each benchmark: kept, with a warning naming the line.
		{file: "guidellm-console/v0.5_no_closing_rule.txt", count: 2, idx: 0, resFormat: "guidellm", name: "synchronous",
			metrics: map[string]float64{"request_throughput": 0.8, "total_token_throughput": 614.4, "median_ttft_ms": 18.4},
			warn:    `"Server Throughput Statistics" that starts at line 55 has no closing "=====" rule after line 62; it has a row for each of the report's 2 benchmarks and was kept`},
	})
}

func FuzzGuidellmConsole(f *testing.F) {
	fuzzFormat(f, "guidellm", docSeeds(f, "guidellm-console")...)
}

func FuzzGenAIPerfConsole(f *testing.F) {
	fuzzFormat(f, "genai-perf", docSeeds(f, "genai-perf-console")...)
}

func FuzzAIPerfConsole(f *testing.F) {
	fuzzFormat(f, "aiperf", docSeeds(f, "genai-perf-console")...)
}

func FuzzLLMPerf(f *testing.F) {
	fuzzFormat(f, "llmperf", docSeeds(f, "llmperf")...)
}

func FuzzTRTLLMBench(f *testing.F) {
	fuzzFormat(f, "trtllm-bench", docSeeds(f, "trtllm-bench")...)
}

func FuzzVLLMTable(f *testing.F) {
	fuzzFormat(f, "vllm-table", docSeeds(f, "vllm-table")...)
}
