package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAISBench(t *testing.T) {
	// The values every generated table starts from (stage total, scale 1).
	total := map[string]float64{
		"mean_e2el_ms": 8200.4, "min_e2el_ms": 6101.2, "max_e2el_ms": 11020.7, "median_e2el_ms": 8154.9,
		"p75_e2el_ms": 8801.3, "p90_e2el_ms": 9420.6, "p99_e2el_ms": 10700.1,
		"mean_ttft_ms": 310.55, "p99_ttft_ms": 1520.4, "mean_tpot_ms": 15.2831, "p90_tpot_ms": 17.2,
		"mean_itl_ms": 15.2716, "max_itl_ms": 288.1092,
		"mean_input_tokens": 1024, "min_output_tokens": 480, "mean_output_token_throughput": 62.4337,
		"p99_prefill_token_throughput": 9944.2,
		"duration":                     82.0314407, "total_requests": 100, "failed": 0, "completed": 100, "concurrency": 9.9713,
		"request_throughput": 1.219, "total_input_tokens": 102400, "total_output_tokens": 51000,
		"prefill_token_throughput": 3297.2, "input_throughput": 1248.2976, "output_throughput": 621.7002,
		"total_token_throughput": 1869.9978,
	}
	notStored := []string{"n_ttft_ms", "max_concurrency", "mean_ttft", "n_input_tokens"}
	with := func(extra map[string]float64) map[string]float64 {
		m := map[string]float64{}
		for k, v := range total {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	labels := func(dataset, stage string) map[string]string {
		return map[string]string{"dataset": dataset, "stage": stage, "max_concurrency": "10", "model": ""}
	}
	runGridCases(t, "aisbench", "aisbench", []gridCase{
		{file: "single_task.txt", want: []gridWant{{
			name: "qwen3-8b-rate-4/syntheticdataset", line: 12, metrics: total, absent: notStored,
			labels: labels("syntheticdataset", "total"),
		}}},
		{file: "multi_task.txt", want: []gridWant{
			{name: "vllm-api-stream-chat/sharegpt", line: 1, metrics: with(map[string]float64{"completed": 200, "total_requests": 200,
				"total_input_tokens": 204800, "total_output_tokens": 102000}), labels: labels("sharegpt", "total")},
			{name: "vllm-api-stream-chat-rate-8/sharegpt", line: 54, metrics: map[string]float64{"mean_ttft_ms": 465.825, "p99_e2el_ms": 16050.15,
				"completed": 198, "failed": 2, "duration": 54.6876271, "output_throughput": 932.5503}},
		}},
		{file: "stable_stage.txt", want: []gridWant{{
			name: "vllm-api-stream-chat/gsm8kdataset:stable", line: 1,
			metrics: with(map[string]float64{"completed": 37, "total_requests": 37, "total_output_tokens": 18870, "total_input_tokens": 37888}),
			labels:  labels("gsm8kdataset", "stable"),
		}}},
		{file: "multi_stage.txt", want: []gridWant{
			{name: "mindie-stream/sharegpt", line: 1, metrics: total, labels: labels("sharegpt", "total")},
			{name: "mindie-stream/sharegpt:stable", line: 1, metrics: map[string]float64{"mean_ttft_ms": 326.0775, "p99_e2el_ms": 11235.105,
				"median_e2el_ms": 8562.645, "duration": 78.1251816, "output_throughput": 652.7852, "completed": 100}, labels: labels("sharegpt", "stable")},
		}},
		{file: "custom_stats.txt", want: []gridWant{{
			name: "vllm-api-general/gsm8k", line: 1,
			// P50 is the median; N/A is absent; a non-streaming run has no TTFT rows.
			metrics: map[string]float64{"mean_e2el_ms": 8200.4, "median_e2el_ms": 9420.6, "p95_e2el_ms": 9420.6, "p99_e2el_ms": 10700.1,
				"mean_input_tokens": 1024, "p95_input_tokens": 1024, "total_output_tokens": 51000, "output_throughput": 621.7002},
			absent: []string{"median_input_tokens", "mean_ttft_ms", "p50_e2el_ms", "min_e2el_ms"},
			labels: labels("gsm8k", "total"),
		}}},
		{file: "ascii_grid.txt", want: []gridWant{{name: "qwen-ascii/gsm8k", line: 1, metrics: total, labels: labels("gsm8k", "total")}}},
		{file: "markdown.md", want: []gridWant{{name: "qwen2.5-7b/sharegpt", line: 1, metrics: total, labels: labels("sharegpt", "total")}}},
		{file: "perf_only.txt", want: []gridWant{
			{name: "a/ds1", line: 1, metrics: map[string]float64{"mean_ttft_ms": 310.55, "p99_e2el_ms": 10700.1},
				absent: []string{"completed", "duration"}, labels: map[string]string{"dataset": "ds1", "max_concurrency": ""},
				warning: "has no Common Metric table"},
			{name: "a/ds2", line: 22, metrics: map[string]float64{"mean_ttft_ms": 248.44, "completed": 100, "duration": 102.5393009}},
		}},
		{file: "truncated.txt", errLine: 43, errText: "file ends inside the AISBench table that starts at line 21"},
		{file: "bad_row.txt", errLine: 7, errText: "row has 9 cells but its header (line 3) has 10"},
		{file: "dashboard_only.txt", unrec: true},
	})
}

// TestAISBenchFixture reads AISBench's documented console output.
func TestAISBenchFixture(t *testing.T) {
	const file = "aisbench/aisbench_docs_console_perf.txt"
	res := mustParse(t, string(readFixture(t, file)), file, "")
	if len(res) != 1 {
		t.Fatalf("%d results, want 1", len(res))
	}
	checkGridWant(t, res[0], gridWant{
		name: "vllm-api-stream-chat/demo_gsm8k", line: 1,
		metrics: map[string]float64{
			"mean_e2el_ms": 12300.2, "median_e2el_ms": 12300, "p99_e2el_ms": 12305.1,
			"mean_ttft_ms": 2006, "min_ttft_ms": 2005.1, "max_ttft_ms": 2007.4, "p75_ttft_ms": 2006.2, "p90_ttft_ms": 2006.6, "p99_ttft_ms": 2007.3,
			"mean_tpot_ms": 20.1, "max_tpot_ms": 20.2, "mean_itl_ms": 20.1, "max_itl_ms": 21.3,
			"mean_input_tokens": 1512.5, "p99_input_tokens": 1563.06, "mean_output_token_throughput": 41.6254,
			"duration": 98.4094916, "total_requests": 8, "failed": 0, "completed": 8, "concurrency": 0.9999,
			"request_throughput": 0.0813, "total_input_tokens": 12100, "prefill_token_throughput": 753.9843,
			"total_output_tokens": 4096, "input_throughput": 122.9556, "output_throughput": 41.622, "total_token_throughput": 164.5776,
		},
		labels: map[string]string{"dataset": "demo_gsm8k", "stage": "total", "max_concurrency": "1"},
	})
}

func TestGridClassify(t *testing.T) {
	g := gridScanner{ascii: true, box: true}
	tests := []struct {
		line  string
		kind  gridKind
		cells []string
		cut   bool
	}{
		{"+-----+-------+", gridRule, nil, false},
		{"+=====+=======+", gridRule, nil, false},
		{"2025-06-02T01:00:02Z stdout F +---+---+", gridRule, nil, false},
		{"|-----|:-----:|", gridRule, nil, false},
		{"╒═════╤═══════╕", gridRule, nil, false},
		{"╞═════╪═══════╡", gridRule, nil, false},
		{"├─────┼───────┤", gridRule, nil, false},
		{"╘═════╧═══════╛", gridBottom, nil, false},
		{"└─────┴───────┘", gridBottom, nil, false},
		{"| Metric | average |", gridRow, []string{"Metric", "average"}, false},
		{"[2025-03-17 17:32:16.757+08:00] [1] | TTFT |  1 ms |", gridRow, []string{"TTFT", "1 ms"}, false},
		{"│ E2EL │ total │ 12300.2 ms │", gridRow, []string{"E2EL", "total", "12300.2 ms"}, false},
		{"│     │       │", gridRow, []string{"", ""}, false},
		{"| - | - |", gridRow, []string{"-", "-"}, false},
		{"| FirstTokenTime | 64.7 ms | 848.", gridRow, []string{"FirstTokenTime", "64.7 ms", "848."}, true},
		{"INFO 03-17 [engine.py:310] Running: 32 reqs", gridOther, nil, false},
		{"Processing: 100%|█████| 5000/5000 [13:22<00:00]", gridRow, []string{"█████", "5000/5000 [13:22<00:00]"}, true},
		{"[2025-03-17 17:32:16.757+08:00] [benchmark] [INFO]", gridOther, nil, false},
	}
	for _, tt := range tests {
		gl := g.classify(tt.line)
		if gl.kind != tt.kind || fmt.Sprint(gl.cells) != fmt.Sprint(tt.cells) || gl.cut != tt.cut {
			t.Errorf("classify(%q) = kind %d cells %q cut %v; want kind %d cells %q cut %v", tt.line, gl.kind, gl.cells, gl.cut, tt.kind, tt.cells, tt.cut)
		}
	}
}

func TestAISBenchTaskLine(t *testing.T) {
	tests := []struct{ line, want string }{
		{"[2025-11-06 10:35:43,667] [ais_bench] [INFO] Performance Results of task: vllm-api-stream-chat/demo_gsm8k:", "vllm-api-stream-chat/demo_gsm8k"},
		{"[2025-12-05 12:10:44,147] [ais_bench] [INFO] Performance Results of task [demo/syntheticdataset]: ", "demo/syntheticdataset"},
		{"06/05 20:22:24 - AISBench - INFO - Performance Results of task: vllm-api-stream-chat/gsm8kdataset: ", "vllm-api-stream-chat/gsm8kdataset"},
	}
	for _, tt := range tests {
		if got, ok := aisTaskLine(tt.line); !ok || got != tt.want {
			t.Errorf("aisTaskLine(%q) = %q, %v; want %q", tt.line, got, ok, tt.want)
		}
	}
}

func TestAISBenchCutAnywhere(t *testing.T) {
	for _, file := range []string{"single_task.txt", "multi_task.txt", "multi_stage.txt", "stable_stage.txt"} {
		t.Run(file, func(t *testing.T) {
			checkGridCuts(t, filepath.Join("testdata", "aisbench", file), "aisbench")
		})
	}
}

// mixedLog is a serving log with MindIE and AISBench results in it, and
// lines of other tools (tqdm bars, server logs, pipe tables) around them.
func mixedLog(t testing.TB) string {
	read := func(p string) string {
		data, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	return strings.Join([]string{
		noiseLines(40),
		read("mindie/v2_output_generate_speed.txt"),
		noiseLines(40),
		read("aisbench/single_task.txt"),
		noiseLines(5),
		read("mindie/v1_generate_speed.txt"),
		read("aisbench/multi_stage.txt"),
		noiseLines(40),
	}, "")
}

// noiseLines imitates what surrounds benchmark results in a CI log.
func noiseLines(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "INFO 03-17 17:32:%02d [engine.py:310] Avg prompt throughput: %d.1 tokens/s, Avg generation throughput: 1530.4 tokens/s, Running: 32 reqs, Waiting: 0 reqs, GPU KV cache usage: 41.2%%\n", i%60, i)
		case 1:
			fmt.Fprintf(&b, "%3d%%|█████████▍                                   | %d/5000 [00:%02d<01:30, 40.21it/s]\n", i%100, i*10, i%60)
		case 2:
			fmt.Fprintf(&b, "[2025-03-17 17:32:16.757+08:00] [12089] [281473357974080] [llm_manager] [INFO] [model_runner.py:%d] warmup done | blocks: 4096 | dtype: bfloat16\n", i)
		case 3:
			b.WriteString("| Metric | Value |  <- a markdown table of some other tool\n")
		case 4:
			b.WriteString("INFO:     127.0.0.1:51234 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n")
		}
	}
	return b.String()
}

// TestConsoleTablesMixed checks that the MindIE and AISBench parsers work
// side by side on one log and give their results in file order.
func TestConsoleTablesMixed(t *testing.T) {
	res := mustParse(t, mixedLog(t), "mixed.log", "")
	type key struct{ format, name string }
	var got []key
	for _, r := range res {
		got = append(got, key{r.Format, r.Name})
	}
	want := []key{
		{"mindie", ""},
		{"aisbench", "qwen3-8b-rate-4/syntheticdataset"},
		{"mindie", ""},
		{"aisbench", "mindie-stream/sharegpt"},
		{"aisbench", "mindie-stream/sharegpt:stable"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("results\n%v\nwant\n%v", got, want)
	}
	for i := 1; i < len(res); i++ {
		if res[i].Line < res[i-1].Line {
			t.Errorf("result %d (line %d) comes after result %d (line %d)", i, res[i].Line, i-1, res[i-1].Line)
		}
	}
	for _, r := range res {
		if len(r.Warnings) > 0 {
			t.Errorf("%s %s:%d: warnings %v", r.Format, r.Name, r.Line, r.Warnings)
		}
	}
	// Forcing one format keeps only its results.
	if only := mustParse(t, mixedLog(t), "mixed.log", "aisbench"); len(only) != 3 {
		t.Errorf("--format aisbench: %d results, want 3", len(only))
	}
	if only := mustParse(t, mixedLog(t), "mixed.log", "mindie"); len(only) != 2 {
		t.Errorf("--format mindie: %d results, want 2", len(only))
	}
}

// BenchmarkConsoleTables measures the whole text reader (every registered
// text parser, in auto mode) and each console-table parser alone on a
// mixed serving log: mostly lines that are no table, some result blocks.
func BenchmarkConsoleTables(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 8<<20 {
		sb.WriteString(noiseLines(2000))
		sb.WriteString(mixedLog(b))
	}
	data := sb.String()
	for _, format := range []string{"auto", "mindie", "aisbench"} {
		b.Run(format, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				r := NewReader(strings.NewReader(data), "bench.log", Options{Format: format})
				n := 0
				for r.Scan() {
					n++
				}
				if err := r.Err(); err != nil || n == 0 {
					b.Fatalf("%d results, err %v", n, err)
				}
			}
		})
	}
}

// BenchmarkConsoleTablesIdleLine measures what a line that is not part of
// a table costs each console-table parser (server logs, tqdm bars with
// '|', a pipe table of another tool).
func BenchmarkConsoleTablesIdleLine(b *testing.B) {
	lines := strings.Split(strings.TrimSuffix(noiseLines(100), "\n"), "\n")
	size := 0
	for _, l := range lines {
		size += len(l) + 1
	}
	parsers := map[string]func() LineParser{
		"mindie":   func() LineParser { return newMindIEParser("bench.log") },
		"aisbench": func() LineParser { return newAISBenchParser("bench.log") },
	}
	for _, name := range []string{"mindie", "aisbench"} {
		b.Run(name, func(b *testing.B) {
			p := parsers[name]()
			emit := func(Result) { b.Fatal("noise gave a result") }
			b.SetBytes(int64(size))
			n := 0
			for i := 0; i < b.N; i++ {
				for _, l := range lines {
					n++
					if err := p.Line(n, l, emit); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/line")
		})
	}
}

func FuzzAISBench(f *testing.F) {
	var seeds []string
	for _, name := range []string{"single_task.txt", "multi_stage.txt", "ascii_grid.txt", "markdown.md", "bad_row.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "aisbench", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(data))
	}
	seeds = append(seeds,
		"Performance Results of task: m/d:\n╒═╤═╕\n│ Performance Parameters │ Stage │ Average │\n╞═╪═╡\n│ TTFT │ total │ 1 ms │\n╘═╧═╛\n",
		"│ Common Metric │ Value │\n│ Benchmark Duration │ 12 s │\n╘═╛\n",
		"| Common Metric | Stage | Value |\n|---|---|---|\n| Success Requests | total | N/A |\n")
	fuzzFormat(f, "aisbench", seeds...)
}
