package store

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// The history of issue 37's import timings: 10 benchmarks on 20,001
// commits (200,010 runs), 40 metrics at full float64 precision and 4
// labels each, the shape of `vllm bench serve --save-result` runs, as
// `perfgate export` writes them. It is written only when asked, to the
// file PERFGATE_ISSUE37_HISTORY names, then imported by the perfgate
// binary as its own process (docs/postgres.md):
//
//	PERFGATE_ISSUE37_HISTORY=/tmp/history.jsonl go test ./store -run TestWriteIssue37History
func TestWriteIssue37History(t *testing.T) {
	path := os.Getenv("PERFGATE_ISSUE37_HISTORY")
	if path == "" {
		t.Skip("PERFGATE_ISSUE37_HISTORY not set: no file to write")
	}
	n, err := writeIssue37History(path, 20_001)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d runs", path, n)
}

// issue37Metrics are the 40 metrics of a run: vllm bench serve's
// counts, throughputs and latency statistics.
var issue37Metrics = func() []string {
	names := []string{"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "output_throughput", "total_token_throughput",
		"max_output_tokens_per_s", "max_concurrent_requests", "num_prompts", "request_rate", "burstiness", "max_concurrency"}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el", "queue"} {
		for _, s := range []string{"mean", "median", "std", "p99", "p90"} {
			names = append(names, s+"_"+m+"_ms")
		}
	}
	return names
}()

func writeIssue37History(path string, commits int) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(37, 37))
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	models := []string{"Qwen/Qwen2.5-7B-Instruct", "deepseek-ai/DeepSeek-V3", "meta-llama/Llama-3.1-8B-Instruct"}
	var buf []byte
	n := 0
	for c := range commits {
		commit := fmt.Sprintf("%040x", uint64(c+1)*0x9e3779b97f4a7c15)
		for bench := range 10 {
			model := models[bench%len(models)]
			r := Run{
				Commit: commit, Benchmark: fmt.Sprintf("serving-%d", bench),
				Time:    t0.Add(time.Duration(c)*time.Hour + time.Duration(bench)*time.Minute),
				Metrics: make(map[string]float64, len(issue37Metrics)),
				Labels: map[string]string{"model": model, "hardware": "Atlas 800I A2",
					"engine_version": "0.9.1", "config": fmt.Sprintf("tp=4,max_num_seqs=%d", 64<<(bench%3))},
				Source: Source{Format: "vllm-serve-json", File: fmt.Sprintf("results/serving-%d.json", bench), Line: 1},
			}
			for k, name := range issue37Metrics {
				v := float64(10+k*7) * (1 + 0.03*rng.NormFloat64())
				if k < 5 || k == 10 || k == 11 {
					v = math.Round(1000 + 50*rng.NormFloat64())
				}
				r.Metrics[name] = v
			}
			r.ID = ContentID(r)
			buf = append(AppendJSON(buf[:0], &r), '\n')
			if _, err := w.Write(buf); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, w.Flush()
}

// BenchmarkImportIssue37 imports the file PERFGATE_ISSUE37_HISTORY names
// (TestWriteIssue37History) in this process, for a CPU profile of the
// import; the timings of docs/postgres.md are of the binary.
func BenchmarkImportIssue37(b *testing.B) {
	file := os.Getenv("PERFGATE_ISSUE37_HISTORY")
	if file == "" {
		b.Skip("PERFGATE_ISSUE37_HISTORY not set")
	}
	// postgres-writer imports as a granted writer role, under row-level
	// security: through the temporary table, never straight into the
	// table.
	for _, backend := range []string{"bbolt", "postgres", "postgres-writer"} {
		b.Run(backend, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				path := fmt.Sprintf("%s/issue37-%d.db", benchDir(b), i)
				switch backend {
				case "postgres":
					path = pgtest.URL(b)
				case "postgres-writer":
					path = benchWriter(b)
				}
				f, err := os.Open(file)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				s, err := Open(path, Options{Repository: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				_, _, err = s.Import(f, ImportOptions{File: file})
				if err == nil {
					err = s.Close()
				}
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				os.Remove(path)
			}
		})
	}
}
