package store

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The benchmark history: 100,000 runs of 30 metrics, as a CI would make
// them: 10,000 commits, 5 benchmarks each, 2 repetitions (the first
// ingested from a result file, the second run by perfgate with a command),
// 4 identity labels.
const (
	benchRuns    = 100_000
	benchCommits = 10_000
	benchBenches = 5
)

var benchMetricNames = []string{
	"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
	"request_throughput", "output_throughput", "total_token_throughput", "max_output_tokens_per_s", "max_concurrent_requests",
	"mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p90_ttft_ms", "p99_ttft_ms",
	"mean_tpot_ms", "median_tpot_ms", "std_tpot_ms", "p90_tpot_ms", "p99_tpot_ms",
	"mean_itl_ms", "median_itl_ms", "std_itl_ms", "p90_itl_ms", "p99_itl_ms",
	"mean_e2el_ms", "median_e2el_ms", "std_e2el_ms", "p90_e2el_ms", "p99_e2el_ms",
}

// benchData generates the benchmark history. With decimals > 0 the
// non-integer metrics are rounded to that many decimals (as the vLLM text
// output prints them); with 0 they keep full float64 precision (as its
// --save-result JSON does), the worst case for the store's size.
func benchData(decimals int) []Run {
	rng := rand.New(rand.NewPCG(42, uint64(decimals)))
	models := []string{"Qwen/Qwen2.5-7B-Instruct", "deepseek-ai/DeepSeek-V3"}
	scale := math.Pow(10, float64(decimals))
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := make([]Run, 0, benchRuns)
	for i := range benchRuns {
		c := i / (benchBenches * 2)
		bench := (i / 2) % benchBenches
		rep := i % 2
		model := models[bench%2]
		r := Run{
			Commit:    fmt.Sprintf("%040x", uint64(c)*0x9e3779b97f4a7c15),
			Benchmark: fmt.Sprintf("serving-%d", bench),
			Time:      t0.Add(time.Duration(i) * 7 * time.Second),
			Metrics:   make(map[string]float64, len(benchMetricNames)),
			Labels: map[string]string{"model": model, "hardware": "Atlas 800I A2",
				"engine_version": "0.9.1", "config": fmt.Sprintf("tp=4,max_num_seqs=%d", 64<<(bench%3))},
			Source: Source{Format: "vllm-serve-json", File: fmt.Sprintf("results/serving-%d.json", bench), Line: 1},
		}
		if rep == 1 {
			r.Source = Source{Format: "vllm-serve-text", File: "-"}
			r.Command = []string{"vllm", "bench", "serve", "--model", model, "--num-prompts", "1000"}
		}
		for k, name := range benchMetricNames {
			var v float64
			switch {
			case k < 5 || k == 9: // counts
				v = math.Round(1000 + 50*rng.NormFloat64())
			default:
				v = float64(10+k*7) * (1 + 0.03*rng.NormFloat64())
				if decimals > 0 {
					v = math.Round(v*scale) / scale
				}
			}
			r.Metrics[name] = v
		}
		runs = append(runs, r)
	}
	return runs
}

var bench struct {
	once sync.Once
	dir  string
	err  error

	dataOnce sync.Once
	data     []Run
	jsonl    string

	storeOnce sync.Once
	store     string
	storeErr  error
}

// benchDir returns a directory shared by the benchmarks of this process,
// removed by TestMain.
func benchDir(b *testing.B) string {
	bench.once.Do(func() { bench.dir, bench.err = os.MkdirTemp("", "perfgate-store-bench-") })
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench.dir
}

func removeBenchDir() {
	if bench.dir != "" {
		os.RemoveAll(bench.dir)
	}
}

// benchJSONL returns the full-precision benchmark history and its JSONL
// file, made once.
func benchJSONL(b *testing.B) ([]Run, string) {
	dir := benchDir(b)
	bench.dataOnce.Do(func() {
		bench.data = benchData(0)
		bench.jsonl = filepath.Join(dir, "runs.jsonl")
		f, err := os.Create(bench.jsonl)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriter(f)
		var buf []byte
		for i := range bench.data {
			r := bench.data[i]
			if err := prepare(&r, time.Now()); err != nil {
				b.Fatal(err)
			}
			buf = append(AppendJSON(buf[:0], &r), '\n')
			w.Write(buf)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		// Written back now, so the writeback is not charged to a benchmark.
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	})
	return bench.data, bench.jsonl
}

// benchStore returns a history holding the full-precision benchmark runs,
// made once.
func benchStore(b *testing.B) string {
	runs, _ := benchJSONL(b)
	bench.storeOnce.Do(func() {
		bench.store = filepath.Join(benchDir(b), "lookup.db")
		bench.storeErr = putAll(bench.store, runs)
	})
	if bench.storeErr != nil {
		b.Fatal(bench.storeErr)
	}
	return bench.store
}

// putAll stores runs in Puts of 5,000.
func putAll(path string, runs []Run) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	runs = append([]Run(nil), runs...)
	for i := 0; i < len(runs); i += 5000 {
		if _, err := s.Put(runs[i:min(i+5000, len(runs))]); err != nil {
			s.Close()
			return err
		}
	}
	return s.Close()
}

func mib(path string, b *testing.B) float64 {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return float64(fi.Size()) / (1 << 20)
}

// BenchmarkImport100k imports the 100,000-run JSONL file (130 MiB) into a
// new history, with the default batch size.
func BenchmarkImport100k(b *testing.B) {
	_, file := benchJSONL(b)
	var size float64
	var elapsed time.Duration
	for i := 0; b.Loop(); i++ {
		path := filepath.Join(benchDir(b), fmt.Sprintf("import-%d.db", i))
		start := time.Now()
		s, err := Open(path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		f, err := os.Open(file)
		if err != nil {
			b.Fatal(err)
		}
		added, _, err := s.Import(f, ImportOptions{File: file})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		if added != benchRuns {
			b.Fatalf("imported %d runs, want %d", added, benchRuns)
		}
		size = mib(path, b)
		os.Remove(path)
	}
	b.ReportMetric(float64(benchRuns)*float64(b.N)/elapsed.Seconds(), "runs/s")
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/import")
	b.ReportMetric(size, "MiB")
}

// BenchmarkStoreSize stores 100,000 runs of 30 metrics (Put, 5,000 runs a
// transaction) and reports the file size: with full-precision values
// (the worst case) and with values of 2 decimals (vLLM text output).
func BenchmarkStoreSize(b *testing.B) {
	for _, decimals := range []int{0, 2} {
		name := "full-precision"
		if decimals > 0 {
			name = fmt.Sprintf("%d-decimals", decimals)
		}
		b.Run(name, func(b *testing.B) {
			var runs []Run
			if decimals == 0 {
				runs, _ = benchJSONL(b)
			} else {
				runs = benchData(decimals)
			}
			var size float64
			for i := 0; b.Loop(); i++ {
				path := filepath.Join(benchDir(b), fmt.Sprintf("size-%s-%d.db", name, i))
				if err := putAll(path, runs); err != nil {
					b.Fatal(err)
				}
				size = mib(path, b)
				os.Remove(path)
			}
			b.ReportMetric(size, "MiB")
			b.ReportMetric(size*(1<<20)/benchRuns, "B/run")
		})
	}
}

// BenchmarkOpenLookup opens the 100,000-run history read-only, reads the
// runs of one commit and closes it: what gate and compare do.
func BenchmarkOpenLookup(b *testing.B) {
	path := benchStore(b)
	runs, _ := benchJSONL(b)
	for i := 0; b.Loop(); i++ {
		commit := runs[(i*7919*10)%benchRuns].Commit
		s, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		got, err := s.ByCommit(commit)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) != benchBenches*2 {
			b.Fatalf("ByCommit found %d runs, want %d", len(got), benchBenches*2)
		}
		s.Close()
	}
}

// BenchmarkMeasured50 asks which of 50 commits have results for one
// benchmark (the gate's walk over first-parent ancestors), store open.
func BenchmarkMeasured50(b *testing.B) {
	path := benchStore(b)
	runs, _ := benchJSONL(b)
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var commits []string
	for i := range 50 {
		commits = append(commits, runs[i*2000].Commit)
	}
	for b.Loop() {
		m, err := s.Measured("serving-3", commits)
		if err != nil || len(m) != 50 {
			b.Fatalf("Measured = %d commits, %v", len(m), err)
		}
	}
}

// BenchmarkExport100k exports the 100,000-run history as JSONL.
func BenchmarkExport100k(b *testing.B) {
	path := benchStore(b)
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		s, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		n, err := s.Export(io.Discard, Filter{})
		s.Close()
		if err != nil || n != benchRuns {
			b.Fatalf("exported %d runs, %v", n, err)
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(benchRuns)*float64(b.N)/elapsed.Seconds(), "runs/s")
}
