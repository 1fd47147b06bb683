package ingest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// vsBenchChunks are the result files the mixed log repeats: vLLM and SGLang
// serving blocks in several shapes, throughput and latency output, and the
// MindIE, AISBench, genai-perf/aiperf, trtllm-bench and guidellm console
// samples of their parsers' testdata.
var vsBenchChunks = []string{
	"vllm/v0.5_input_throughput.txt",
	"vllm/v0.7_goodput_e2el.txt",
	"vllm/v0.11_failed_peak_p99.9.txt",
	"vllm/latest_spec_decode_probe.txt",
	"vllm/log_prefixes_ansi.log",
	"vllm/comment_and_quote.md",
	"vllm/collapsed.md",
	"vllm/sglang_current.txt",
	"vllm/sglang_2024.txt",
	"vllm/throughput.txt",
	"vllm/latency.txt",
	"vllm/legacy_2023.txt",
	"mindie/v1_generate_speed.txt",
	"mindie/v2_output_generate_speed.txt",
	"aisbench/single_task.txt",
	"aisbench/multi_stage.txt",
	"genai-perf-console/v24.06_ns.txt",
	"genai-perf-console/aiperf_ascii.txt",
	"trtllm-bench/v0.17_engine.log",
	"guidellm-console/sweep.txt",
}

// vsBenchNoise writes n lines of what surrounds results in a serving log:
// engine statistics, access logs, tqdm bars (several redrawn on one line),
// ANSI-coloured worker lines and warnings. i varies the numbers.
func vsBenchNoise(b *strings.Builder, n, i int) {
	for k := 0; k < n; k++ {
		j := i*n + k
		switch j % 8 {
		case 0:
			fmt.Fprintf(b, "(APIServer pid=158) INFO 09-02 13:%02d:%02d [loggers.py:123] Engine 000: Avg prompt throughput: %d.%d tokens/s, Avg generation throughput: %d.4 tokens/s, Running: %d reqs, Waiting: 0 reqs, GPU KV cache usage: %d.1%%, Prefix cache hit rate: 53.7%%\n", j/60%60, j%60, j%9000, j%10, 200+j%300, j%64, j%100)
		case 1:
			fmt.Fprintf(b, "\x1b[32mINFO\x1b[0m:     127.0.0.1:%d - \"POST /v1/completions HTTP/1.1\" 200 OK\n", 40000+j%20000)
		case 2:
			for s := 0; s < 4; s++ {
				p := (j + s*25) % 101
				fmt.Fprintf(b, "%3d%%|%s%s| %d/1000 [00:%02d<00:%02d, %d.%02dit/s]\r", p, strings.Repeat("█", p/10), strings.Repeat(" ", 10-p/10), p*10, j%60, (j+7)%60, 10+j%30, j%100)
			}
			b.WriteString("\n")
		case 3:
			fmt.Fprintf(b, "\x1b[36m(RayWorkerWrapper pid=%d, ip=10.0.%d.%d)\x1b[0m INFO 09-02 13:08:10 [custom_all_reduce.py:224] Registering %d cuda graph addresses\n", 2000+j%500, j%255, (j/255)%255, 1000+j%3000)
		case 4:
			fmt.Fprintf(b, "WARNING 09-02 13:08:%02d [scheduler.py:1560] Sequence group %d is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance.\n", j%60, j)
		case 5:
			fmt.Fprintf(b, "\x1b[1;33m[2025-09-02 13:08:%02d]\x1b[0m Decode batch. #running-req: %d, #token: %d, token usage: 0.%02d, cuda graph: True, gen throughput (token/s): %d.%02d, #queue-req: 0\n", j%60, j%256, j*7%100000, j%100, 1000+j%4000, j%100)
		case 6:
			fmt.Fprintf(b, "DEBUG 09-02 13:08:%02d [client.py:%d] Waiting for %d queued requests: time elapsed %d.%03d s\n", j%60, 100+j%50, j%17, j%600, j%1000)
		case 7:
			b.WriteString("\n")
		}
	}
}

// vsBenchLog builds a log of at least size bytes: noise with every chunk
// in turn. It returns the log and the number of results it holds.
func vsBenchLog(tb testing.TB, size int) (string, int) {
	var chunks []string
	var counts []int
	for _, rel := range vsBenchChunks {
		data, err := os.ReadFile(filepath.Join("testdata", rel))
		if errors.Is(err, os.ErrNotExist) {
			continue // another format's samples may be absent
		}
		if err != nil {
			tb.Fatal(err)
		}
		res, err := parseString(tb, string(data), rel, "")
		if err != nil || len(res) == 0 {
			tb.Logf("%s left out of the mixed log: %d results, %v", rel, len(res), err)
			continue
		}
		chunks = append(chunks, string(data))
		counts = append(counts, len(res))
	}
	if len(chunks) == 0 {
		tb.Fatal("no result chunks")
	}
	var b strings.Builder
	b.Grow(size + 1<<20)
	want := 0
	for i := 0; b.Len() < size; i++ {
		vsBenchNoise(&b, 400, i)
		c := i % len(chunks)
		b.WriteString(chunks[c])
		if !strings.HasSuffix(chunks[c], "\n") {
			b.WriteString("\n")
		}
		want += counts[c]
	}
	vsBenchNoise(&b, 50, -1)
	return b.String(), want
}

// BenchmarkParseMixedLog reads a ~40 MB serving log through the whole text
// reader in auto mode (every registered text parser sees every line):
//
//	go test ./ingest -run '^$' -bench ParseMixedLog -cpu 1 -benchtime 3x
func BenchmarkParseMixedLog(b *testing.B) {
	data, want := vsBenchLog(b, 40<<20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(strings.NewReader(data), "mixed.log", Options{})
		n := 0
		for r.Scan() {
			n++
		}
		if err := r.Err(); err != nil || n != want {
			b.Fatalf("%d results, want %d; err %v", n, want, err)
		}
	}
}

// TestMixedLogCounts checks the mixed log the benchmark reads, small.
func TestMixedLogCounts(t *testing.T) {
	data, want := vsBenchLog(t, 2<<20)
	res := mustParse(t, data, "mixed.log", "")
	if len(res) != want {
		t.Fatalf("%d results, want %d", len(res), want)
	}
	formats := map[string]int{}
	for i, r := range res {
		formats[r.Format]++
		if i > 0 && r.Line < res[i-1].Line {
			t.Errorf("result %d (line %d) after result %d (line %d)", i, r.Line, i-1, r.Line)
		}
	}
	for _, f := range []string{"vllm", "sglang", "vllm-throughput", "vllm-latency", "mindie", "aisbench", "genai-perf", "aiperf", "trtllm-bench", "guidellm"} {
		if formats[f] == 0 {
			t.Errorf("no %s results in the mixed log (formats %v)", f, formats)
		}
	}
}

// ansiRefRE is the regexp StripANSI implements by hand.
var ansiRefRE = regexp.MustCompile(`\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])`)

var ansiCases = []string{
	"", "plain", "\x1b[32mINFO\x1b[0m 09-02", "\x1b[1;33m[2025]\x1b[0m x", "a\x1b[?25lb\x1b[?25h", "\x1b[2K\x1b[1G100%",
	"\x1b]0;title\x07text", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1b]unterminated", "\x1b]a\x1bXb",
	"\x1b", "x\x1b", "\x1b[", "\x1b[31", "\x1b[<5m", "\x1b\x1b[31mA", "\x1bM\x1b\\\x1b_\x1b[", "\x1b[ q", "é\x1b[1mé\x1b]é\x07é",
	"\x1b\xff\x1b[\xff", "\x1b[0;1;\x1b[m", "\x1b^", "\x1b`",
}

func TestStripANSIMatchesRegexp(t *testing.T) {
	for _, s := range ansiCases {
		if got, want := StripANSI(s), ansiRefRE.ReplaceAllString(s, ""); got != want {
			t.Errorf("StripANSI(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzStripANSI(f *testing.F) {
	for _, s := range ansiCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := StripANSI(s), ansiRefRE.ReplaceAllString(s, ""); got != want {
			t.Fatalf("StripANSI(%q) = %q, want %q", s, got, want)
		}
	})
}
