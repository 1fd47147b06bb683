package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocuments covers issue 26, items 1-4, 7 and 8: documents that were
// refused whole or read wrong (samples and their provenance in
// testdata/README.md).
func TestDocuments(t *testing.T) {
	runFormatCases(t, []formatCase{
		// Item 1: a Docusaurus page (front matter) read by the text
		// readers. Item 3: SGLang's diffusion bench_serving blocks in it,
		// "Successful requests: 1/1", latencies in seconds.
		{file: "docs/sgl-cookbook_qwen-image_front_matter.md", count: 2, resFormat: "sglang",
			metrics: map[string]float64{"completed": 1, "failed": 0, "duration": 29.04, "request_throughput": 0.03,
				"mean_e2el_ms": 29037.8, "median_e2el_ms": 29037.8, "p99_e2el_ms": 29037.8, "peak_memory_max_mb": 48018.83},
			labels: map[string]string{"task": "text-to-image", "model": "Qwen/Qwen-Image", "dataset": "vbench", "request_rate": "inf",
				"max_concurrency": "1", "backend": "sglang-image", "num_prompts": "1"}},
		{file: "docs/sgl-cookbook_qwen-image_front_matter.md", count: 2, idx: 1, resFormat: "sglang",
			metrics: map[string]float64{"completed": 14, "failed": 6, "mean_e2el_ms": 154536.8, "median_e2el_ms": 154836.3, "p99_e2el_ms": 285460.3},
			labels:  map[string]string{"max_concurrency": "20", "num_prompts": "20"}},
		{file: "docs/sgl-cookbook_qwen-image_front_matter.md", format: "sglang", count: 2, resFormat: "sglang"},
		// Item 2: a vLLM recipe keeps its guide, with the `vllm bench
		// serve` output, in a YAML block scalar; its JSON form in a string.
		{file: "docs/vllm-recipes_ministral-3_guide.yaml", count: 1, resFormat: "vllm",
			metrics: map[string]float64{"completed": 100, "failed": 0, "total_token_throughput": 3881.58, "mean_ttft_ms": 1228.72, "p99_itl_ms": 13.66},
			labels:  map[string]string{"max_concurrency": "32"}},
		{file: "docs/vllm-recipes_ministral-3_guide.json", count: 1, resFormat: "vllm",
			metrics: map[string]float64{"completed": 100, "mean_ttft_ms": 1228.72, "p99_itl_ms": 13.66}},
		// The guide as a quoted YAML string ("\n" escapes): found by the
		// string search after the line-by-line reading found nothing.
		{file: "docs/vllm-recipes_ministral-3_guide_quoted.yaml", count: 1, resFormat: "vllm",
			metrics: map[string]float64{"completed": 100, "mean_ttft_ms": 1228.72, "p99_itl_ms": 13.66}},
		// A document of neither kind still fails as before.
		{file: "docs/front_matter_no_results.md", unrecognized: true, errText: "keys [sidebar_position, title]"},
		// Item 4: the overview alone, with the newer labels and the older,
		// is kept with one warning.
		{file: "trtllm-bench/blog_deepseek_r1_overview_only.md", count: 3, resFormat: "trtllm-bench",
			metrics: map[string]float64{"request_throughput": 17.7657, "output_throughput": 36384.0838, "total_token_throughput": 54576.1257,
				"duration": 2766.6849197, "mean_e2el_ms": 172321.7206, "per_user_output_throughput": 11.9263, "per_gpu_output_throughput": 4548.0105},
			warn: "it holds the overview without a latency breakdown, as documents paste it, and was kept"},
		{file: "trtllm-bench/blog_deepseek_r1_overview_only.md", count: 3, idx: 1, resFormat: "trtllm-bench",
			metrics: map[string]float64{"request_throughput": 0.0772, "output_throughput": 158.0669, "mean_e2el_ms": 12945.9379},
			absent:  []string{"total_token_throughput"},
			warn:    "it holds the overview without a latency breakdown"},
		// Item 7: a block cut inside its last value, without a newline.
		{file: "vllm/cut_inside_last_value.txt", errLine: 24, errText: "its last line has no line break and no closing"},
		{file: "trtllm-bench/cut_inside_last_value.txt", errLine: 10, errText: "line 10 has no line break: the input ends inside it"},
		// Item 5: LLMPerf summaries collected by concurrency.
		{file: "llmperf/by_concurrency.json", count: 2, resFormat: "llmperf", name: "01-ai-Yi-1-5-34B-Chat_550_150_summary",
			metrics: map[string]float64{"mean_ttft_ms": 586.9289812874854, "completed": 80},
			labels:  map[string]string{"max_concurrency": "1", "model": "01-ai/Yi-1.5-34B-Chat"}},
		{file: "llmperf/by_concurrency.json", count: 2, idx: 1, resFormat: "llmperf",
			metrics: map[string]float64{"mean_ttft_ms": 5367.653323758857, "completed": 112, "output_throughput": 124.29275563556878},
			labels:  map[string]string{"max_concurrency": "16", "input_len": "550"}},
		{file: "llmperf/by_concurrency.json", format: "llmperf", count: 2, idx: 1, resFormat: "llmperf"},
		// Item 8: unexpanded shell variables are no labels.
		{file: "vllm/shell_variables_command.md", count: 1, resFormat: "vllm",
			labels: map[string]string{"num_prompts": "100", "max_concurrency": "32", "dataset": "random", "input_len": "", "output_len": ""},
			warn:   `label input_len is the unexpanded shell variable "$input_len"`},
	})
}

// TestCutLastLine cuts a complete block inside its last line: with the
// line's newline it was kept with a warning, without it is an error.
func TestCutLastLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "vllm", "unclosed_complete.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// The block's last line, then other output.
	end := strings.Index(string(data), "42.96") + len("42.96")
	text := string(data[:end])
	if res, err := parseString(t, text+"\n", "f", ""); err != nil || len(res) != 1 {
		t.Fatalf("with its newline: %d results, %v", len(res), err)
	}
	if res, err := parseString(t, string(data), "f", ""); err != nil || len(res) != 1 {
		t.Fatalf("followed by other output: %d results, %v", len(res), err)
	}
	for _, cut := range []string{text, text[:len(text)-1], text[:len(text)-3]} {
		_, err := parseString(t, cut, "f", "")
		if err == nil || !strings.Contains(err.Error(), "no line break") {
			t.Errorf("cut to %q: error %v", cut[len(cut)-20:], err)
		}
	}
}

func TestShellVar(t *testing.T) {
	for s, want := range map[string]bool{
		"$input_len": true, "${ISL}": true, "$1": true, "${x:-3}": true,
		"$": false, "${}": false, "4096": false, "a$b": false, "$x y": false, "${a}b": false, "$5.00": false,
	} {
		if got := isShellVar(s); got != want {
			t.Errorf("isShellVar(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzDocuments(f *testing.F) {
	fuzzFormat(f, "sglang", docSeeds(f, "docs")...)
}

// TestLLMPerfSweepKeyMismatch: a summary filed under another concurrency
// than its own is an error, never a silently relabelled result.
func TestLLMPerfSweepKeyMismatch(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "llmperf", "by_concurrency.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"16": {`, `"32": {`, 1)
	_, err = parseString(t, bad, "sweep.json", "")
	if err == nil || !strings.Contains(err.Error(), `under key "32" says num_concurrent_requests "16"`) {
		t.Fatalf("error %v", err)
	}
}

// TestHeadings: what counts as a section heading, and how it is made
// inert (issue 26, item 15).
func TestHeadings(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string // heading in force after the lines
	}{
		{[]string{"## Baseline"}, "Baseline"},
		{[]string{"### Merge rope q/k ###"}, "Merge rope q/k"},
		{[]string{"   # indented three"}, "indented three"},
		{[]string{"    # indented four: code"}, ""},
		{[]string{"#hashtag"}, ""},
		{[]string{"####### seven"}, ""},
		{[]string{"## A", "```", "# comment in a fence", "```"}, "A"},
		{[]string{"## A", "~~~", "## not a heading", "```", "~~~", "## B"}, "B"},
		{[]string{"## A", "# ==================================================", "# Mean TTFT (ms):   12.5"}, "A"},
		{[]string{"## A", "# Successful requests: N/A"}, "A"},
		{[]string{"## tab\tand  spaces\x1b[31m red\x07"}, "tab and spaces[31m red"},
		{[]string{"# " + strings.Repeat("é", 100)}, strings.Repeat("é", MaxHeadingBytes/2)},
		{[]string{"## 测试2：4卡，\"npuMemSize\": 35"}, "测试2：4卡，\"npuMemSize\": 35"},
	} {
		var h headingTracker
		for i, l := range tc.lines {
			h.line(i+1, l)
		}
		if got := h.at(len(tc.lines) + 1); got != tc.want {
			t.Errorf("%q: heading %q, want %q", tc.lines, got, tc.want)
		}
	}
}

// TestSectionLabelOption: Options.SectionLabel labels each result with its
// heading; a label the block states itself wins, with a warning.
func TestSectionLabelOption(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "docs", "sgl-cookbook_qwen-image_front_matter.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		want []string
		warn string
	}{
		{"section", []string{"5.1.1 Generate an image", "5.1.2 Generate images with high concurrency"}, ""},
		{"task", []string{"text-to-image", "text-to-image"}, "the block states label task=\"text-to-image\" itself"},
	} {
		r := NewReader(strings.NewReader(string(data)), "doc.md", Options{SectionLabel: tc.key})
		var got []string
		var warns []string
		for r.Scan() {
			got = append(got, r.Result().Labels[tc.key])
			warns = append(warns, r.Result().Warnings...)
		}
		if r.Err() != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("--section-label %s: %q, %v", tc.key, got, r.Err())
		}
		if tc.warn == "" && len(warns) > 0 || tc.warn != "" && (len(warns) == 0 || !strings.Contains(warns[0], tc.warn)) {
			t.Errorf("--section-label %s: warnings %q", tc.key, warns)
		}
	}
}
