package ingest

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// vsWant is what a test expects of one result; zero fields are not checked.
type vsWant struct {
	format   string
	name     string
	line     int
	metrics  map[string]float64
	labels   map[string]string
	absent   []string // metrics and labels ("label:key") that must be missing
	warnings int      // number of warnings (-1: any)
	nmetrics int      // exact number of metrics, when > 0
}

type vsCase struct {
	file    string // under testdata/vllm
	format  string // forced format, "" for auto
	want    []vsWant
	err     string // substring of the expected error
	errLine int
}

var vsCases = []vsCase{
	// Byte-order mark, CRLF line ends and tabs between label and value.
	{file: "sglang_tabs_crlf_bom.txt", want: []vsWant{{
		format: "sglang", line: 1, nmetrics: 20,
		metrics: map[string]float64{"completed": 100, "duration": 10.5, "total_input_text_tokens": 1000, "concurrency": 60.1, "spec_decode_acceptance_length": 2.5,
			"mean_e2el_ms": 1000.5, "p95_itl_ms": 8, "max_itl_ms": 30.3, "total_token_throughput": 285.7},
		labels: map[string]string{"backend": "sglang", "request_rate": "inf", "max_concurrency": "64"},
	}}},
	{file: "v0.5_input_throughput.txt", want: []vsWant{{
		format: "vllm", line: 6, nmetrics: 23,
		metrics: map[string]float64{"completed": 1000, "duration": 31.70, "input_throughput": 6789.03, "output_throughput": 6243.60,
			"total_token_throughput": 13032.63, "p90_ttft_ms": 3799.40, "p95_tpot_ms": 128.36, "p99_itl_ms": 210},
		labels: map[string]string{"backend": "vllm", "model": "meta-llama/Meta-Llama-3-8B-Instruct", "dataset": "sharegpt", "num_prompts": "1000", "request_rate": "inf"},
		absent: []string{"failed", "label:max_concurrency", "label:input_len"},
	}}},
	{file: "v0.7_goodput_e2el.txt", want: []vsWant{{
		format: "vllm", metrics: map[string]float64{"request_goodput": 4.12, "request_throughput": 4.88, "mean_e2el_ms": 3280.55, "p50_ttft_ms": 298.11,
			"median_ttft_ms": 298.11, "p90_e2el_ms": 3420.70, "p99_tpot_ms": 12.44},
		labels: map[string]string{"backend": "openai-chat", "max_concurrency": "16", "input_len": "2048", "output_len": "256", "burstiness": "1", "request_rate": "inf"},
	}}},
	{file: "v0.11_failed_peak_p99.9.txt", want: []vsWant{{
		format: "vllm", line: 14,
		metrics: map[string]float64{"completed": 398, "failed": 2, "max_output_tokens_per_s": 2804, "max_concurrent_requests": 131,
			"total_token_throughput": 8422.66, "p99.9_ttft_ms": 3998.04, "p99_ttft_ms": 2710.95, "p99.9_itl_ms": 402.61},
		labels: map[string]string{"request_rate": "2", "model": "deepseek-ai/DeepSeek-V3", "input_len": "3500", "num_prompts": "400"},
		absent: []string{"label:max_concurrency"},
	}}},
	{file: "latest_spec_decode_probe.txt", want: []vsWant{{
		format: "vllm", metrics: map[string]float64{"spec_decode_acceptance_rate": 71.35, "spec_decode_acceptance_length": 3.14, "spec_decode_num_drafts": 8153,
			"spec_decode_draft_tokens": 24459, "spec_decode_accepted_tokens": 17452, "spec_decode_acceptance_rate_pos0": 85.10,
			"spec_decode_acceptance_rate_pos2": 58.93, "probe_completed": 40, "probe_failed": 0, "probe_median_e2el_ms": 31.20,
			"probe_p99_e2el_ms": 44.87, "probe_max_e2el_ms": 47.01, "mean_client_queue_time_ms": 1.52, "p99_client_queue_time_ms": 6.33,
			"mean_ttft_ms": 120.55},
		labels: map[string]string{"max_concurrency": "8", "num_prompts": "100"},
		absent: []string{"mean_e2el_ms", "median_e2el_ms"},
	}}},
	{file: "log_prefixes_ansi.log", want: []vsWant{{format: "vllm", line: 4, nmetrics: 16,
		metrics: map[string]float64{"completed": 200, "mean_ttft_ms": 65.26, "total_token_throughput": 416.05, "p99_itl_ms": 42.96}}}},
	{file: "comment_and_quote.md", want: []vsWant{
		{line: 5, nmetrics: 16, metrics: map[string]float64{"mean_ttft_ms": 65.26, "p99_itl_ms": 42.96}},
		{line: 29, nmetrics: 16, metrics: map[string]float64{"mean_ttft_ms": 65.26, "p99_itl_ms": 42.96}},
	}},
	{file: "indented_padded_notes.txt", want: []vsWant{{nmetrics: 16,
		metrics: map[string]float64{"mean_ttft_ms": 65.26, "total_token_throughput": 416.05, "p99_itl_ms": 42.96, "completed": 200}}}},
	{file: "collapsed.md", want: []vsWant{
		{line: 1, nmetrics: 16, metrics: map[string]float64{"mean_ttft_ms": 65.26, "p99_itl_ms": 42.96, "completed": 200}},
		{line: 5, metrics: map[string]float64{"spec_decode_acceptance_rate_pos1": 70.02, "probe_max_e2el_ms": 47.01, "median_client_queue_time_ms": 0.91},
			labels: map[string]string{"max_concurrency": "8"}},
		{line: 5, nmetrics: 16, metrics: map[string]float64{"mean_ttft_ms": 65.26, "total_token_throughput": 416.05}, absent: []string{"label:max_concurrency"}},
	}},
	{file: "absent_odd_values.txt", want: []vsWant{{
		metrics: map[string]float64{"median_tpot_ms": 0, "mean_itl_ms": 0, "p99_itl_ms": 0, "mean_tpot_ms": 1.77,
			"max_output_tokens_per_s": 200, "output_throughput": 250},
		absent: []string{"failed", "request_goodput", "max_concurrent_requests", "p99_tpot_ms", "label:max_concurrency"},
	}}},
	{file: "latency_units.txt", want: []vsWant{{
		metrics: map[string]float64{"mean_ttft_ms": 250, "median_ttft_ms": 200, "p99_ttft_ms": 1500, "mean_tpot_ms": 1.25,
			"median_tpot_ms": 1, "p99_tpot_ms": 2.5, "mean_e2el_ms": 1500, "median_e2el_ms": 1200, "p99_e2el_ms": 2.25},
	}}},
	{file: "legacy_2023.txt", want: []vsWant{
		{format: "vllm", line: 2, nmetrics: 5, metrics: map[string]float64{"duration": 260.53, "request_throughput": 3.84, "mean_e2el_ms": 12870,
			"mean_latency_per_token_ms": 40, "mean_latency_per_output_token_ms": 190},
			labels: map[string]string{"backend": "vllm", "request_rate": "4", "num_prompts": "1000", "dataset": "ShareGPT_V3_unfiltered_cleaned_split.json"}},
		{format: "vllm", line: 9, metrics: map[string]float64{"duration": 301.20, "mean_e2el_ms": 25000, "mean_latency_per_output_token_ms": 410},
			labels: map[string]string{"backend": "tgi"}},
	}},
	{file: "sglang_current.txt", want: []vsWant{
		{format: "sglang", line: 9,
			metrics: map[string]float64{"completed": 160, "total_output_tokens_retokenized": 654700, "total_input_text_tokens": 655360,
				"total_input_vision_tokens": 0, "concurrency": 31.99, "spec_decode_acceptance_length": 3.65, "total_token_throughput": 2339.01,
				"mean_e2el_ms": 112055.69, "p90_e2el_ms": 112712.63, "p95_itl_ms": 30.22, "max_itl_ms": 1200.05, "max_concurrent_requests": 64},
			labels: map[string]string{"backend": "sglang", "request_rate": "inf", "max_concurrency": "32", "input_len": "4096"}},
		{format: "sglang", metrics: map[string]float64{"mean_e2el_ms": 112055.69},
			labels: map[string]string{"backend": "vllm", "request_rate": "4"}, absent: []string{"label:max_concurrency", "p90_e2el_ms"}},
	}},
	{file: "sglang_current.txt", format: "vllm", err: "no result block found"},
	{file: "sglang_2024.txt", want: []vsWant{{format: "sglang", metrics: map[string]float64{"total_token_throughput": 3136.96, "input_throughput": 1634.12, "mean_e2el_ms": 5120.33, "median_e2el_ms": 4210.98, "p99_itl_ms": 91.77},
		labels: map[string]string{"backend": "sglang", "request_rate": "8"}}}},
	{file: "sglang_2024.txt", format: "sglang", want: []vsWant{{format: "sglang"}}},
	{file: "throughput.txt", want: []vsWant{
		{format: "vllm-throughput", line: 4, nmetrics: 5,
			metrics: map[string]float64{"request_throughput": 70.77, "total_token_throughput": 54350.30, "output_throughput": 18116.77,
				"total_input_tokens": 512000, "total_output_tokens": 256000},
			labels: map[string]string{"tp": "2", "input_len": "512", "output_len": "256", "num_prompts": "1000"}},
		{format: "vllm-throughput", line: 9, nmetrics: 2,
			metrics: map[string]float64{"request_throughput": 12.34, "total_token_throughput": 14215.68},
			labels:  map[string]string{"tp": "1", "input_len": "1024", "output_len": "128", "num_prompts": "200"}},
		{format: "vllm-throughput", line: 11, nmetrics: 3},
	}},
	{file: "throughput.txt", format: "vllm-throughput", want: []vsWant{{line: 4}, {line: 9}, {line: 11}}},
	// A fork's run tag in front of the Throughput line is the label run.
	{file: "throughput_run_tag.txt", want: []vsWant{
		{format: "vllm-throughput", line: 3, nmetrics: 5, metrics: map[string]float64{"request_throughput": 5.21, "total_input_tokens": 1024},
			labels: map[string]string{"run": "bs_8_input_128_output_128"}},
		{format: "vllm-throughput", line: 7, nmetrics: 5, metrics: map[string]float64{"output_throughput": 2534.40, "total_output_tokens": 8192},
			labels: map[string]string{"run": "bs_64_input_128_output_128"}},
	}},
	{file: "latency.txt", want: []vsWant{
		{format: "vllm-latency", line: 5, nmetrics: 8,
			metrics: map[string]float64{"mean_e2el_ms": 1213.7415283333334, "std_e2el_ms": 4.130101547436432, "p10_e2el_ms": 1208.9861154556274,
				"p50_e2el_ms": 1213.2964730262756, "p99_e2el_ms": 1226.5218925476073},
			labels: map[string]string{"batch_size": "8", "input_len": "32", "output_len": "128", "tp": "1"}},
		{format: "vllm-latency", line: 15, nmetrics: 1, metrics: map[string]float64{"mean_e2el_ms": 250.1},
			labels: map[string]string{"batch_size": "1"}},
	}},
	{file: "all_formats.log", want: []vsWant{
		{format: "vllm", line: 2},
		{format: "sglang", line: 24, labels: map[string]string{"backend": "sglang"}, absent: []string{"label:model"}},
		{format: "vllm-throughput", line: 64, absent: []string{"label:model"}},
		{format: "vllm-latency", line: 68, metrics: map[string]float64{"mean_e2el_ms": 1500, "std_e2el_ms": 100, "p99_e2el_ms": 1900}},
		{format: "vllm", line: 72, metrics: map[string]float64{"duration": 166.88}},
	}},
	{file: "all_formats.log", format: "vllm", want: []vsWant{{line: 2}, {line: 72}}},
	{file: "all_formats.log", format: "vllm-latency", want: []vsWant{{line: 68}}},
	{file: "unclosed_complete.txt", want: []vsWant{{nmetrics: 16, warnings: 1, metrics: map[string]float64{"p99_itl_ms": 42.96}}}},
	// Issue 12, item 8: GPUStack's report prints a "Latency" section of
	// "Mean Latency(s)" lines (seconds, no space before the unit): request
	// latency, *_e2el_ms in milliseconds. Indented in a docs admonition.
	{file: "gpustack_latency_section.md", want: []vsWant{{
		format: "vllm", line: 11, nmetrics: 25,
		metrics: map[string]float64{"mean_e2el_ms": 4710, "median_e2el_ms": 4120, "p95_e2el_ms": 11020, "p99_e2el_ms": 14860,
			"mean_ttft_ms": 59.27, "p99_itl_ms": 44.07, "completed": 1000, "max_concurrent_requests": 64},
		absent: []string{"mean_latency_s", "mean_latency_ms", "p99_latency_s"},
		labels: map[string]string{"max_concurrency": "64"},
	}}},
	{file: "interleaved_server_log.log", want: []vsWant{{nmetrics: 16, metrics: map[string]float64{"mean_ttft_ms": 65.26, "p99_itl_ms": 42.96}}}},
	{file: "truncated.txt", err: `is cut off: the input ends before its closing "=====" line and it lacks part of the "inter-token latency" section`, errLine: 18},
	{file: "cut_then_other_output.log", err: "is cut off: other output follows", errLine: 7},
	{file: "bad_value.txt", err: `"Mean TTFT (ms): 12,3.4.5" has a value that is not a number`, errLine: 10},
	{file: "quoted_banner.md", err: "no result block found"},
}

func TestVLLMText(t *testing.T) {
	for _, tc := range vsCases {
		name := tc.file
		if tc.format != "" {
			name += "/" + tc.format
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "vllm", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := parseString(t, string(data), tc.file, tc.format)
			vsCheck(t, res, err, tc)
		})
	}
}

func vsCheck(t *testing.T, res []Result, err error, tc vsCase) {
	t.Helper()
	if tc.err != "" {
		if err == nil {
			t.Fatalf("parsed %d results, want error %q", len(res), tc.err)
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %T is not *ingest.Error: %v", err, err)
		}
		if !strings.Contains(err.Error(), tc.err) || pe.Line != tc.errLine {
			t.Fatalf("error %q (line %d), want %q at line %d", err, pe.Line, tc.err, tc.errLine)
		}
		return
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(res) != len(tc.want) {
		for _, r := range res {
			t.Logf("got %s %q line %d: %v", r.Format, r.Name, r.Line, r.Metrics)
		}
		t.Fatalf("%d results, want %d", len(res), len(tc.want))
	}
	for i, w := range tc.want {
		vsCheckResult(t, res[i], w)
	}
}

func vsCheckResult(t *testing.T, r Result, w vsWant) {
	t.Helper()
	if w.format != "" && r.Format != w.format {
		t.Errorf("%s:%d: format %q, want %q", r.File, r.Line, r.Format, w.format)
	}
	if w.name != "" && r.Name != w.name {
		t.Errorf("%s:%d: name %q, want %q", r.File, r.Line, r.Name, w.name)
	}
	if w.line != 0 && r.Line != w.line {
		t.Errorf("%s: result at line %d, want %d", r.File, r.Line, w.line)
	}
	for k, v := range w.metrics {
		wantMetric(t, r, k, v)
	}
	for k, v := range w.labels {
		if r.Labels[k] != v {
			t.Errorf("%s:%d: label %s = %q, want %q (labels %v)", r.File, r.Line, k, r.Labels[k], v, r.Labels)
		}
	}
	for _, k := range w.absent {
		if l, ok := strings.CutPrefix(k, "label:"); ok {
			if v, has := r.Labels[l]; has {
				t.Errorf("%s:%d: label %s = %q, want it absent", r.File, r.Line, l, v)
			}
		} else if v, has := r.Metrics[k]; has {
			t.Errorf("%s:%d: metric %s = %v, want it absent", r.File, r.Line, k, v)
		}
	}
	if w.nmetrics > 0 && len(r.Metrics) != w.nmetrics {
		got := keys(r.Metrics)
		sort.Strings(got)
		t.Errorf("%s:%d: %d metrics %v, want %d", r.File, r.Line, len(r.Metrics), got, w.nmetrics)
	}
	if w.warnings >= 0 && len(r.Warnings) != w.warnings {
		t.Errorf("%s:%d: warnings %q, want %d", r.File, r.Line, r.Warnings, w.warnings)
	}
}

// TestVLLMTextCollapsed joins every line of a file into one, as a web page
// copied without its line breaks shows it: the metrics must not change.
func TestVLLMTextCollapsed(t *testing.T) {
	for _, file := range []string{"v0.5_input_throughput.txt", "v0.7_goodput_e2el.txt", "v0.11_failed_peak_p99.9.txt",
		"latest_spec_decode_probe.txt", "absent_odd_values.txt", "sglang_current.txt", "sglang_2024.txt", "latency_units.txt"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "vllm", file))
			if err != nil {
				t.Fatal(err)
			}
			want := mustParse(t, string(data), file, "")
			one := strings.Join(strings.Fields(string(data)), " ")
			got := mustParse(t, one, file, "")
			if len(got) != len(want) {
				t.Fatalf("collapsed: %d results, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Format != want[i].Format || !reflect.DeepEqual(got[i].Metrics, want[i].Metrics) {
					t.Errorf("result %d collapsed: %s %v\nwant %s %v", i, got[i].Format, got[i].Metrics, want[i].Format, want[i].Metrics)
				}
			}
		})
	}
}

// TestVLLMTextCutAnywhere cuts a file after every line: before the banner
// there is no result; inside the block either a positioned error or, when
// the block is complete, a result with a warning; after it, the result.
func TestVLLMTextCutAnywhere(t *testing.T) {
	for _, file := range []string{"v0.11_failed_peak_p99.9.txt", "sglang_2024.txt", "latest_spec_decode_probe.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "vllm", file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		full := mustParse(t, string(data), file, "")
		banner, closing := 0, 0
		for i, l := range lines {
			if strings.Contains(l, vsBannerTitle) {
				banner = i + 1
			}
			if strings.HasPrefix(l, strings.Repeat("=", 50)) && !strings.Contains(l, vsBannerTitle) {
				closing = i + 1
			}
		}
		for k := 1; k <= len(lines); k++ {
			res, err := parseString(t, strings.Join(lines[:k], ""), file, "")
			switch {
			case k < banner:
				if !errors.Is(err, ErrUnrecognized) {
					t.Errorf("%s cut after line %d (before the banner): %d results, err %v", file, k, len(res), err)
				}
			case k < closing:
				var pe *Error
				if err != nil {
					if !errors.As(err, &pe) || pe.Line != k || !strings.Contains(err.Error(), "cut off") {
						t.Errorf("%s cut after line %d: error %v, want a cut-off error at line %d", file, k, err, k)
					}
					if k == closing-1 {
						t.Errorf("%s cut right before its closing line: %v, want the complete block kept", file, err)
					}
					continue
				}
				if len(res) != 1 || len(res[0].Warnings) != 1 {
					t.Errorf("%s cut after line %d: %d results, warnings %v, and no error", file, k, len(res), res)
					continue
				}
				// A block kept without its closing line has all of its
				// last default section.
				for name := range full[0].Metrics {
					if _, ok := res[0].Metrics[name]; !ok && strings.HasSuffix(name, "_itl_ms") {
						t.Errorf("%s cut after line %d: kept as complete without %s", file, k, name)
					}
				}
			default:
				if err != nil || len(res) != 1 || !reflect.DeepEqual(res[0].Metrics, full[0].Metrics) || len(res[0].Warnings) != 0 {
					t.Errorf("%s cut after line %d (after the block): %d results, err %v", file, k, len(res), err)
				}
			}
		}
	}
}

func TestVSStrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Mean TTFT (ms):   945.18   ", "Mean TTFT (ms):   945.18"},
		{"INFO 09-02 13:08:10 [x.py:1] Mean TTFT (ms): 1", "Mean TTFT (ms): 1"},
		{"(APIServer pid=158) INFO 09-02 13:08:10 [loggers.py:123] Engine 000: x", "Engine 000: x"},
		{"# Mean TTFT (ms): 1", "Mean TTFT (ms): 1"},
		{">> > Mean TTFT (ms): 1", "Mean TTFT (ms): 1"},
		{"     Successful requests:   10", "Successful requests:   10"},
		{"2025-04-14T14:11:28.123456789Z stdout F Successful requests: 1", "Successful requests: 1"},
		{"2025-01-01 12:00:00,123 - INFO - Successful requests: 1", "Successful requests: 1"},
		{"[2025-03-18 11:42:57] [INFO] Successful requests: 1", "Successful requests: 1"},
		{"vllm-bench-1  | Successful requests: 1", "Successful requests: 1"},
		{"[rank0]: Successful requests: 1", "Successful requests: 1"},
		{"[rank0]:Successful requests: 1", "Successful requests: 1"},
		{"2026-11-25 08:00:00 | Successful requests: 1", "Successful requests: 1"},
		{"2026-11-25 08:00:00.123 | INFO     | __main__:main:42 - Successful requests: 1", "Successful requests: 1"},
		{"| Mean TTFT (ms) | 945.18 |", "Mean TTFT (ms) | 945.18 |"},
		{"WARNING: Successful requests: 1", "Successful requests: 1"},
		{"- P99 TTFT (ms): 3", "P99 TTFT (ms): 3"},
		{"---------------Time to First Token----------------", "---------------Time to First Token----------------"},
		{"P99 TTFT (ms): 3", "P99 TTFT (ms): 3"},
		{"100%|███| 200/200", "100%|███| 200/200"},
		{"", ""},
	} {
		if got := vsStrip(tc.in); got != tc.want {
			t.Errorf("vsStrip(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestVSNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		v    float64
		unit string
		ok   bool
	}{
		{"945.18", 945.18, "", true},
		{"-0.00", 0, "", true},
		{"1,234.5", 1234.5, "", true},
		{"2.5e3", 2500, "", true},
		{"4651ms", 4651, "ms", true},
		{"12%", 12, "%", true},
		{"inf", math.Inf(1), "", true},
		{"-", 0, "", false},
		{"N/A", 0, "", false},
		{"12,3.4.5", 0, "", false},
		{"abc", 0, "", false},
		{"1e", 1, "e", true},
		{"", 0, "", false},
	} {
		v, unit, ok := vsNumber(tc.in)
		if ok != tc.ok || ok && (v != tc.v || unit != tc.unit) || math.Signbit(v) {
			t.Errorf("vsNumber(%q) = %v, %q, %v; want %v, %q, %v", tc.in, v, unit, ok, tc.v, tc.unit, tc.ok)
		}
	}
}

func TestVSContext(t *testing.T) {
	var c benchContext
	c.line(`Namespace(backend='vllm', model='org/m', dataset_name='random', random_input_len=1024, random_output_len=128, num_prompts=50, request_rate=inf, max_concurrency=None, goodput=['ttft:5', 'tpot:1'], header={'a': 'b,c'}, tokenizer=None)`)
	got := c.take()
	want := map[string]string{"backend": "vllm", "model": "org/m", "dataset": "random", "input_len": "1024", "output_len": "128",
		"num_prompts": "50", "request_rate": "inf", "max_concurrency": ""}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("namespace labels %v, want %v", got, want)
	}
	c.line(`python benchmarks/benchmark_serving.py --backend vllm \`)
	c.line(`  --model=Qwen/Qwen2-7B --dataset-name sharegpt --dataset-path /d/sg.json --num-prompts 10 \`)
	c.line(`  --request-rate 4 --save-result`)
	c.line(`--max-concurrency 8 (not part of the command)`)
	got = c.take()
	want = map[string]string{"backend": "vllm", "model": "Qwen/Qwen2-7B", "dataset": "sharegpt", "num_prompts": "10", "request_rate": "4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("command labels %v, want %v", got, want)
	}
}

// TestVLLMFixtures checks the real outputs in ../shared/fixtures.
func TestVLLMFixtures(t *testing.T) {
	for _, tc := range []struct {
		file  string
		count int
		check func(t *testing.T, res []Result, warnings []string) // warnings: the reader's, said once
	}{
		{"vllm_serve_text/dennislee22_vLLM-benchmarking_README.md", 81, func(t *testing.T, res []Result, warnings []string) {
			vsCheckResult(t, res[0], vsWant{format: "vllm", nmetrics: 16,
				metrics: map[string]float64{"completed": 10, "duration": 46.96, "total_token_throughput": 436.07, "mean_ttft_ms": 2111.51, "p99_itl_ms": 51.04},
				labels:  map[string]string{"backend": "vllm", "num_prompts": "10", "input_len": "1024", "output_len": "1024"}})
			last := res[80]
			vsCheckResult(t, last, vsWant{metrics: map[string]float64{"completed": 500, "mean_ttft_ms": 91005.74, "p99_itl_ms": 5664.75},
				labels: map[string]string{"num_prompts": "500", "input_len": "1024"}, absent: []string{"label:output_len"}})
			// Issue 26, item 15: the README repeats runs of one identity
			// under the headings of its tests: 37 of them, said once.
			for _, r := range res {
				vsCheckResult(t, r, vsWant{format: "vllm", nmetrics: 16})
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "37 blocks repeat") || !strings.Contains(warnings[0], "--section-label NAME") {
				t.Errorf("warnings %q, want one on the 37 blocks", warnings)
			}
		}},
		{"vllm_serve_text/llm-k8s_tp8_pp1_benchmark-script-run.log", 4, func(t *testing.T, res []Result, _ []string) {
			for i, rate := range []string{"1", "4", "16", "inf"} {
				vsCheckResult(t, res[i], vsWant{format: "vllm", nmetrics: 16,
					labels: map[string]string{"request_rate": rate, "backend": "vllm", "num_prompts": "200"}, absent: []string{"label:max_concurrency", "failed"}})
			}
			vsCheckResult(t, res[0], vsWant{line: 21, metrics: map[string]float64{"mean_ttft_ms": 65.26, "total_token_throughput": 416.05}})
			vsCheckResult(t, res[3], vsWant{metrics: map[string]float64{"mean_ttft_ms": 360.36, "p99_tpot_ms": 75.77, "duration": 23.81}})
		}},
		{"vllm_serve_text/vllm_issue359_v0.1_benchmark_serving.txt", 1, func(t *testing.T, res []Result, warnings []string) {
			vsCheckResult(t, res[0], vsWant{format: "vllm", line: 3, nmetrics: 5,
				metrics: map[string]float64{"duration": 166.88, "request_throughput": 5.99, "mean_e2el_ms": 67590, "mean_latency_per_token_ms": 210, "mean_latency_per_output_token_ms": 1100},
				labels:  map[string]string{"backend": "vllm", "request_rate": "200", "num_prompts": "1000"}})
		}},
		{"vllm_serve_text/vllm_issue12845_v0.7_serve.txt", 1, func(t *testing.T, res []Result, warnings []string) {
			vsCheckResult(t, res[0], vsWant{format: "vllm", nmetrics: 16,
				metrics: map[string]float64{"total_token_throughput": 925.72, "mean_itl_ms": 105.85, "completed": 772}})
		}},
		{"vllm_serve_text/vllm-ascend_issue4110_v0.11_serve.txt", 1, func(t *testing.T, res []Result, warnings []string) {
			vsCheckResult(t, res[0], vsWant{format: "vllm", nmetrics: 18,
				metrics: map[string]float64{"max_output_tokens_per_s": 393, "max_concurrent_requests": 10, "total_token_throughput": 323.84, "p99_itl_ms": 49.27},
				labels:  map[string]string{"request_rate": "1"}, absent: []string{"failed"}})
		}},
		{"sglang_bench_serving_text/SGLang-dLoRA_sglang_results.md", 6, func(t *testing.T, res []Result, _ []string) {
			for i, r := range res {
				vsCheckResult(t, r, vsWant{format: "sglang", metrics: map[string]float64{"median_tpot_ms": 0, "mean_itl_ms": 0, "completed": 996},
					labels: map[string]string{"backend": "sglang", "request_rate": []string{"2", "4", "8", "16", "32", "64"}[i]}})
				if _, ok := r.Labels["num_prompts"]; ok != (i < 5) {
					t.Errorf("result %d: labels %v; only the first five follow a Namespace dump", i, r.Labels)
				}
			}
			vsCheckResult(t, res[0], vsWant{line: 23, labels: map[string]string{"request_rate": "2"},
				metrics: map[string]float64{"total_token_throughput": 2137.04, "mean_e2el_ms": 1979.33, "total_output_tokens_retokenized": 100838, "p99_tpot_ms": 27.26}})
			vsCheckResult(t, res[1], vsWant{labels: map[string]string{"request_rate": "4"}})
		}},
		{"../seeds/vllm-ascend-multimodal-optimizations.md", 10, func(t *testing.T, res []Result, warnings []string) {
			vsCheckResult(t, res[0], vsWant{format: "vllm", nmetrics: 19,
				metrics: map[string]float64{"mean_ttft_ms": 945.18, "total_token_throughput": 460.70, "completed": 500, "failed": 0},
				labels:  map[string]string{"max_concurrency": "16"}, absent: []string{"label:request_rate"}})
			vsCheckResult(t, res[1], vsWant{labels: map[string]string{"request_rate": "10"}, absent: []string{"label:max_concurrency"},
				metrics: map[string]float64{"mean_ttft_ms": 10365.81, "max_concurrent_requests": 407}})
			// Issue 26, item 15: five sections (one per change), each with
			// a concurrency and a rate run: every run after the first two
			// repeats an identity under another heading.
			for i, r := range res {
				key := map[bool]string{true: "max_concurrency", false: "request_rate"}[i%2 == 0]
				if r.Labels[key] == "" || len(r.Warnings) > 0 {
					t.Errorf("result %d (line %d): labels %v, warnings %v", i, r.Line, r.Labels, r.Warnings)
				}
			}
			if len(warnings) != 1 || !strings.Contains(warnings[0], "8 blocks repeat") || !strings.Contains(warnings[0], `under "Baseline")`) {
				t.Errorf("warnings %q, want one on the 8 blocks", warnings)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var data []byte
			if rel, ok := strings.CutPrefix(tc.file, "../seeds/"); ok {
				var err error
				if data, err = os.ReadFile(filepath.Join(seedsDir, rel)); err != nil {
					t.Skipf("seed %s absent: %v", rel, err)
				}
			} else {
				data = readFixture(t, tc.file)
			}
			rd := NewReader(strings.NewReader(string(data)), tc.file, Options{})
			var res []Result
			for rd.Scan() {
				res = append(res, rd.Result())
			}
			if err := rd.Err(); err != nil {
				t.Fatal(err)
			}
			if len(res) != tc.count {
				t.Fatalf("%d results, want %d", len(res), tc.count)
			}
			tc.check(t, res, rd.Warnings())
			// Forcing the format of the results gives the same results.
			forced := mustParse(t, string(data), tc.file, res[0].Format)
			if len(forced) != len(res) {
				t.Errorf("--format %s: %d results, want %d", res[0].Format, len(forced), len(res))
			}
		})
	}
}

// vsSeeds returns the testdata files as fuzz seeds.
func vsSeeds(f *testing.F) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "vllm", "*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	var seeds []string
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(data))
	}
	return seeds
}

func FuzzVLLMText(f *testing.F)       { fuzzFormat(f, "vllm", vsSeeds(f)...) }
func FuzzSGLangText(f *testing.F)     { fuzzFormat(f, "sglang", vsSeeds(f)...) }
func FuzzVLLMThroughput(f *testing.F) { fuzzFormat(f, "vllm-throughput", vsSeeds(f)...) }
func FuzzVLLMLatency(f *testing.F)    { fuzzFormat(f, "vllm-latency", vsSeeds(f)...) }

// Example of the mapping, for the package documentation.
func ExampleNewReader_vllm() {
	out := "============ Serving Benchmark Result ============\n" +
		"Successful requests:                     500\n" +
		"Maximum request concurrency:             16\n" +
		"Total token throughput (tok/s):          460.70\n" +
		"---------------Time to First Token----------------\n" +
		"Mean TTFT (ms):                          945.18\n" +
		"P99.9 TTFT (ms):                         6001.00\n" +
		"==================================================\n"
	r := NewReader(strings.NewReader(out), "bench.log", Options{})
	for r.Scan() {
		res := r.Result()
		fmt.Println(res.Format, res.Metrics["mean_ttft_ms"], res.Metrics["p99.9_ttft_ms"], res.Metrics["total_token_throughput"], res.Labels["max_concurrency"])
	}
	// Output: vllm 945.18 6001 460.7 16
}

// TestLongLinesCut: a line far longer than MaxLineBytes (a progress bar
// redrawn for hours) is cut, not held whole, and the line numbers and the
// result after it stay right.
func TestLongLinesCut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "vllm", "interleaved_server_log.log"))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("\r 50%|#####     | 500/1000", 3*MaxLineBytes/25) + "\n"
	var got []string
	r := NewReader(strings.NewReader("first\n"+long+"third\n"), "x", Options{})
	r.parsers = []LineParser{lineRecorder(func(n int, line string) { got = append(got, fmt.Sprintf("%d:%d", n, len(line))) })}
	r.family, r.start = "text", true
	for r.Scan() {
	}
	if want := fmt.Sprintf("1:5 2:%d 3:5", MaxLineBytes); strings.Join(got, " ") != want {
		t.Errorf("lines seen %q, want %q", strings.Join(got, " "), want)
	}
	res := mustParse(t, "first\n"+long+string(data), "x", "")
	if len(res) != 1 || res[0].Metrics["mean_ttft_ms"] != 65.26 {
		t.Errorf("after a long line: %+v", res)
	}
}

type lineRecorder func(int, string)

func (f lineRecorder) Line(n int, line string, emit Emit) error { f(n, line); return nil }
func (f lineRecorder) End(int, Emit) error                      { return nil }
