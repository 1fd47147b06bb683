package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// gridWant is what a console-table test expects of one result.
type gridWant struct {
	name    string
	line    int
	metrics map[string]float64
	absent  []string          // metrics that must not be there
	labels  map[string]string // "" means the label must be absent
	warning string            // substring of a warning; "" means no warning
}

func checkGridWant(t *testing.T, r Result, w gridWant) {
	t.Helper()
	if r.Name != w.name {
		t.Errorf("%s:%d: name = %q, want %q", r.File, r.Line, r.Name, w.name)
	}
	if w.line != 0 && r.Line != w.line {
		t.Errorf("%s: result %q starts at line %d, want %d", r.File, r.Name, r.Line, w.line)
	}
	for k, v := range w.metrics {
		wantMetric(t, r, k, v)
	}
	for _, k := range w.absent {
		if v, ok := r.Metrics[k]; ok {
			t.Errorf("%s:%d: metric %s = %v, want it absent", r.File, r.Line, k, v)
		}
	}
	for k, v := range w.labels {
		got, ok := r.Labels[k]
		switch {
		case v == "" && ok:
			t.Errorf("%s:%d: label %s = %q, want it absent", r.File, r.Line, k, got)
		case v != "" && got != v:
			t.Errorf("%s:%d: label %s = %q, want %q", r.File, r.Line, k, got, v)
		}
	}
	joined := strings.Join(r.Warnings, "\n")
	switch {
	case w.warning == "" && len(r.Warnings) > 0:
		t.Errorf("%s:%d: unexpected warnings: %s", r.File, r.Line, joined)
	case w.warning != "" && !strings.Contains(joined, w.warning):
		t.Errorf("%s:%d: warnings %q do not mention %q", r.File, r.Line, joined, w.warning)
	}
}

// gridCase is one testdata file of a console-table format.
type gridCase struct {
	file    string
	want    []gridWant
	errLine int    // > 0: parsing must fail at this line
	errText string // substring of that error
	unrec   bool   // parsing must fail with ErrUnrecognized
}

// runGridCases parses each file in auto mode and with the format forced.
func runGridCases(t *testing.T, dir, format string, cases []gridCase) {
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", dir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"", format} {
				res, err := parseString(t, string(data), tc.file, f)
				switch {
				case tc.unrec:
					if !errors.Is(err, ErrUnrecognized) {
						t.Fatalf("--format %q: want ErrUnrecognized, got %v (%d results)", f, err, len(res))
					}
					continue
				case tc.errLine > 0:
					var pe *Error
					if !errors.As(err, &pe) {
						t.Fatalf("--format %q: want a positioned error, got %v (%d results)", f, err, len(res))
					}
					if pe.Line != tc.errLine || !strings.Contains(pe.Error(), tc.errText) {
						t.Errorf("--format %q: error %q, want line %d mentioning %q", f, pe.Error(), tc.errLine, tc.errText)
					}
					continue
				case err != nil:
					t.Fatalf("--format %q: %v", f, err)
				}
				if len(res) != len(tc.want) {
					t.Fatalf("--format %q: %d results, want %d", f, len(res), len(tc.want))
				}
				for i, w := range tc.want {
					if res[i].Format != format {
						t.Errorf("result %d has format %q, want %q", i, res[i].Format, format)
					}
					checkGridWant(t, res[i], w)
				}
			}
		})
	}
}

func TestMindIE(t *testing.T) {
	v1 := gridWant{
		line: 7,
		metrics: map[string]float64{
			"mean_ttft_ms": 52.1836, "max_ttft_ms": 410.2203, "min_ttft_ms": 38.0072,
			"p75_ttft_ms": 55.3391, "p90_ttft_ms": 61.0218, "p99_ttft_ms": 97.5564,
			"mean_tpot_ms": 18.4417, "p99_tpot_ms": 31.7719, "slo_p90_tpot_ms": 18.9345,
			"mean_e2el_ms": 4861.0372, "p99_e2el_ms": 5402.6653,
			"mean_last_decode_time_ms": 18.9021, "p99_max_decode_time_ms": 90.0438,
			"mean_input_tokens": 243.514, "max_generated_tokens": 256,
			"mean_generated_token_speed": 52.4093, "mean_characters_per_token": 4.0099,
			"mean_queue_wait_time_ms": 1.5208816, "max_queue_wait_time_ms": 210.334, "p99_queue_wait_time_ms": 48.1229,
			"mean_tokenizer_ms": 0.7016, "mean_post_processing_time_ms": 0,
			"completed": 5000, "failed": 0, "total_requests": 5000, "duration": 802.4417,
			"request_throughput": 6.2329, "output_throughput": 1587.9932,
			"generate_speed_per_client": 49.6248, "lpct_ms": 0.2143,
		},
		// "/" cells are absent; SLO_P90 is kept only where it is not P90.
		absent: []string{"max_characters_per_token", "p99_characters_per_token", "slo_p90_ttft_ms", "slo_p90_decoder_batchsize",
			"slo_p90_queue_wait_time_ms", "accuracy", "n_ttft_ms", "current_time"},
		labels: map[string]string{"backend": "mindie", "model": "Qwen2.5-7B-Instruct", "dataset": "test.jsonl",
			"data_source": "/data/datasets/gsm8k/test.jsonl", "max_concurrency": "32"},
	}
	runGridCases(t, "mindie", "mindie", []gridCase{
		{file: "v1_generate_speed.txt", want: []gridWant{v1}},
		{file: "v2_output_generate_speed.txt", want: []gridWant{{
			line: 3,
			metrics: map[string]float64{"mean_ttft_ms": 57.402, "completed": 191, "failed": 9, "total_requests": 200,
				"duration": 121.0384, "request_throughput": 1.578, "output_throughput": 402.1148,
				"input_throughput": 383.0316, "total_token_throughput": 785.1464, "accuracy": 95.5},
			labels: map[string]string{"dataset": "ceval", "max_concurrency": "64", "model": "deepseek-r1-w8a8"},
		}}},
		{file: "units.txt", want: []gridWant{{
			line: 3,
			// FirstTokenTime in μs, GenerateTime in s, QueueWaitTime in ASCII us: all stored in ms.
			metrics: map[string]float64{"mean_ttft_ms": 52.1836, "max_ttft_ms": 410.2203, "mean_e2el_ms": 4861, "p99_e2el_ms": 5402.7,
				"mean_queue_wait_time_ms": 1.5208816, "duration": 160.49},
			labels: map[string]string{"dataset": "sharegpt.json", "data_source": `C:\data\sharegpt.json`},
		}}},
		{file: "markdown.md", want: []gridWant{
			{line: 5, metrics: map[string]float64{"mean_ttft_ms": 52.1836, "duration": 802.4417, "completed": 500}},
			{line: 48, metrics: map[string]float64{"mean_ttft_ms": 46.9652, "duration": 721.0112, "completed": 500}},
		}},
		{file: "prefixed_two_runs.log", want: []gridWant{
			{line: 3, metrics: map[string]float64{"mean_ttft_ms": 52.1836, "completed": 297, "failed": 3}},
			{line: 48, metrics: map[string]float64{"mean_ttft_ms": 62.6203, "completed": 300, "failed": 0}},
		}},
		{file: "perf_only.txt", want: []gridWant{{
			line: 3, metrics: map[string]float64{"mean_ttft_ms": 52.1836, "p99_e2el_ms": 5402.6653},
			absent: []string{"completed", "duration", "output_throughput"}, labels: map[string]string{"backend": "mindie", "model": ""},
			warning: "no common metric table",
		}}},
		{file: "common_only.txt", want: []gridWant{{
			line: 3, metrics: map[string]float64{"completed": 200, "output_throughput": 402.1148},
			absent: []string{"mean_ttft_ms"}, warning: "no performance metric table",
		}}},
		{file: "truncated.txt", errLine: 12, errText: "file ends inside the MindIE table that starts at line 3"},
		{file: "bad_row.txt", errLine: 9, errText: "row has 7 cells but its header (line 4) has 9"},
		{file: "not_mindie.md", unrec: true},
	})
}

// TestMindIESeed reads the user's own MindIE tuning notes: six runs, each
// a performance table and a common table inside markdown code fences,
// beside an npu-smi table that is not a result.
func TestMindIESeed(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(seedsDir, "mindie-tuning-qwq32b.md"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skip("seed testdata/mindie-tuning-qwq32b.md absent")
	}
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(strings.NewReader(string(data)), "mindie-tuning-qwq32b.md", Options{})
	var res []Result
	for r.Scan() {
		res = append(res, r.Result())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if w := r.Warnings(); len(w) != 1 || !strings.Contains(w[0], `mindie-tuning-qwq32b.md:283: 2 blocks repeat`) || !strings.Contains(w[0], "line 233's under") || !strings.Contains(w[0], "--section-label NAME") {
		t.Errorf("warnings %q, want one on the blocks at 283 and 328 repeating line 233's", w)
	}
	want := []gridWant{
		{line: 84, metrics: map[string]float64{
			"mean_ttft_ms": 64.7768, "p99_ttft_ms": 93.7642, "max_ttft_ms": 848.3901, "mean_tpot_ms": 27.0037,
			"slo_p90_tpot_ms": 27.6082, "p90_tpot_ms": 28.3229, "mean_e2el_ms": 12176.1428,
			"output_throughput": 368.6777, "request_throughput": 0.8206, "completed": 8792, "failed": 0,
			"duration": 10714.4325, "mean_queue_wait_time_ms": 0.8934933, "lpct_ms": 1.0815,
		}, labels: map[string]string{"model": "QwQ-32B", "dataset": "gsm8k", "max_concurrency": "10", "backend": "mindie"}},
		{line: 130, metrics: map[string]float64{"mean_ttft_ms": 72.0491, "output_throughput": 366.2485, "duration": 240.861, "completed": 200}},
		{line: 182, metrics: map[string]float64{"mean_ttft_ms": 88.1944, "output_throughput": 37.7808, "duration": 104279.0743, "completed": 8792}},
		{line: 233, metrics: map[string]float64{"mean_ttft_ms": 106.8642, "max_tpot_ms": 240991.5447, "output_throughput": 35.9032, "duration": 2502.9557}},
		// Issue 26, item 15: two tuning steps of one configuration under
		// their own headings would be repetitions of one series: said
		// once for the document (the reader's Warnings), not per block.
		{line: 283, metrics: map[string]float64{"mean_ttft_ms": 97.07, "output_throughput": 327.3233, "duration": 294.5528}},
		{line: 328, metrics: map[string]float64{"mean_ttft_ms": 106.62, "output_throughput": 321.7893, "duration": 299.7831, "request_throughput": 0.6671}},
	}
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, w := range want {
		if res[i].Format != "mindie" {
			t.Errorf("result %d: format %q", i, res[i].Format)
		}
		checkGridWant(t, res[i], w)
	}
}

// TestMindIEFixtures reads real MindIE logs (see their PROVENANCE.txt).
func TestMindIEFixtures(t *testing.T) {
	tests := []struct {
		file string
		want gridWant
	}{
		{"mindie_benchmark/mindie_qwq32b_gsm8k_log_excerpt.txt", gridWant{
			line: 3,
			metrics: map[string]float64{"mean_ttft_ms": 106.8642, "p99_ttft_ms": 678.2679, "max_tpot_ms": 240991.5447,
				"slo_p90_tpot_ms": 507.8787, "mean_queue_wait_time_ms": 246.1830655, "max_queue_wait_time_ms": 240956.11,
				"p99_queue_wait_time_ms": 0.09237, "p75_input_tokens": 71, "mean_characters_per_token": 3.3917,
				"duration": 2502.9557, "completed": 200, "failed": 0, "total_requests": 200,
				"request_throughput": 0.0799, "output_throughput": 35.9032, "lpct_ms": 1.755},
			absent: []string{"max_characters_per_token", "slo_p90_queue_wait_time_ms", "accuracy"},
			labels: map[string]string{"model": "QwQ-32B", "dataset": "gsm8k-200", "max_concurrency": "10"},
		}},
		{"mindie_benchmark/mindie_qwq32b_gsm8k_tuned_log_excerpt.txt", gridWant{
			line: 3,
			metrics: map[string]float64{"mean_ttft_ms": 97.07, "max_ttft_ms": 169, "mean_e2el_ms": 14356.007,
				"duration": 294.5528, "output_throughput": 327.3233, "p99_queue_wait_time_ms": 24.68283},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			res := mustParse(t, string(readFixture(t, tt.file)), tt.file, "")
			if len(res) != 1 {
				t.Fatalf("%d results, want 1", len(res))
			}
			checkGridWant(t, res[0], tt.want)
		})
	}
}

// TestMindIECutAnywhere cuts well-formed logs after every line: a cut
// inside a table must be a positioned error at or before the cut, and a
// cut elsewhere must parse (the results before it) or find nothing.
func TestMindIECutAnywhere(t *testing.T) {
	for _, file := range []string{"v1_generate_speed.txt", "v2_output_generate_speed.txt", "prefixed_two_runs.log"} {
		t.Run(file, func(t *testing.T) {
			checkGridCuts(t, filepath.Join("testdata", "mindie", file), "mindie")
		})
	}
}

// checkGridCuts parses every prefix of a file of bordered tables (ASCII
// prettytable or box drawing, whose end is always detectable).
func checkGridCuts(t *testing.T, path, format string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	group, first := gridTableLines(lines)
	full := mustParse(t, string(data), path, format)
	insides := 0
	for k := 1; k < len(lines); k++ {
		in := strings.Join(lines[:k], "\n") + "\n"
		res, err := parseString(t, in, "cut.txt", format)
		// Cut after line k (1-based) and before line k+1.
		inside := group[k-1] != 0 && group[k] == group[k-1] && !first[k-1]
		if inside {
			insides++
			var pe *Error
			if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > k {
				t.Errorf("cut after line %d (inside a table): want a positioned error at or before it, got %v", k, err)
			}
			continue
		}
		if err != nil && !errors.Is(err, ErrUnrecognized) {
			t.Errorf("cut after line %d (between tables): %v", k, err)
		}
		if len(res) > len(full) {
			t.Errorf("cut after line %d: %d results, more than the whole file's %d", k, len(res), len(full))
		}
	}
	if insides == 0 {
		t.Fatalf("%s: no line is inside a table; the test checked nothing", path)
	}
}

// gridTableLines numbers the result tables of a file: group[i] is the
// table (1, 2, ...) that line i (0-based) belongs to, or 0; first[i]
// reports that line i is the first line (the top border) of its table. A
// box table ends at its bottom border even when the next table follows at
// once. Tables without a MindIE or AISBench header (a progress dashboard)
// are not counted.
func gridTableLines(lines []string) (group []int, first []bool) {
	group = make([]int, len(lines)+1)
	first = make([]bool, len(lines)+1)
	table := 0
	ours := map[int]bool{}
	for i, l := range lines {
		if !gridTableText(l) {
			continue
		}
		if i == 0 || group[i-1] == 0 || strings.Contains(lines[i-1], "╘") {
			table++
			first[i] = true
		}
		group[i] = table
		if strings.Contains(l, " Metric ") || strings.Contains(l, " Performance Parameters ") {
			ours[table] = true
		}
	}
	for i, g := range group {
		if !ours[g] {
			group[i], first[i] = 0, false
		}
	}
	return group, first
}

func gridTableText(l string) bool {
	for _, m := range []string{"|", "+-", "│", "╒", "╞", "├", "╘"} {
		if strings.Contains(l, m) {
			return true
		}
	}
	return false
}

func FuzzMindIE(f *testing.F) {
	var seeds []string
	for _, name := range []string{"v2_output_generate_speed.txt", "markdown.md", "bad_row.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "mindie", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(data))
	}
	seeds = append(seeds,
		"+---+---+\n| Metric | average |\n+---+---+\n| FirstTokenTime | 1 ms |\n+---+---+\n",
		"| Common Metric | Value |\n|---|---|\n| Returned | 3( 100% ) |\n| TimeElapsed | 2 |\n",
		"| Metric | average | N |\n| DecodeTime | 5 μs | 1 |\n| GenerateTime | inf s | 1 |\n")
	fuzzFormat(f, "mindie", seeds...)
}
