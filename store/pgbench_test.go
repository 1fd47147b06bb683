package store

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// The import benchmark of issue 28: 10 benchmarks x COMMITS commits x 10
// repetitions (each run 11 metrics and 2 labels) imported from JSONL into
// bbolt and into PostgreSQL (COPY into a temporary table, then one
// INSERT ... ON CONFLICT DO NOTHING, in one transaction). COMMITS is
// PERFGATE_IMPORT_BENCH_COMMITS, 100 (10,000 runs, for CI's run of every
// benchmark once) unless set; the
// target is 1,000,000 runs (10,000 commits) under 60 s and 200 MiB:
//
//	PERFGATE_TEST_POSTGRES=postgres://... PERFGATE_IMPORT_BENCH_COMMITS=10000 \
//	  go test ./store -run '^$' -bench ImportRepetitions -benchtime 1x
//
// maxRSS-MiB is the peak resident set of the test process (VmHWM), which
// holds nothing else then.
var repBench struct {
	once sync.Once
	file string
	runs int
	err  error
}

func repBenchFile(b *testing.B) (string, int) {
	repBench.once.Do(func() {
		commits := 100
		if v := os.Getenv("PERFGATE_IMPORT_BENCH_COMMITS"); v != "" {
			if _, err := fmt.Sscan(v, &commits); err != nil || commits <= 0 {
				repBench.err = fmt.Errorf("PERFGATE_IMPORT_BENCH_COMMITS %q is not a positive number", v)
				return
			}
		}
		repBench.file = filepath.Join(benchDir(b), fmt.Sprintf("reps-%d.jsonl", commits))
		repBench.runs, repBench.err = writeRepetitions(repBench.file, commits)
	})
	if repBench.err != nil {
		b.Fatal(repBench.err)
	}
	return repBench.file, repBench.runs
}

// writeRepetitions writes 10 benchmarks x commits x 10 repetitions.
func writeRepetitions(path string, commits int) (int, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	t0 := time.Unix(1700000000, 0).UTC()
	var buf []byte
	n := 0
	for c := range commits {
		for bench := range 10 {
			for rep := range 10 {
				wob := 1 + 0.02*float64((c*7+bench*3+rep*5)%11-5)/5
				r := Run{
					Commit: fmt.Sprintf("%040x", c+1), Benchmark: fmt.Sprintf("serving-%d", bench),
					Time: t0.Add(time.Duration(c)*time.Minute + time.Duration(bench*10+rep)*time.Second),
					Metrics: map[string]float64{
						"mean_ttft_ms": 100 * wob, "p99_ttft_ms": 300 * wob, "mean_tpot_ms": 20 * wob, "p99_tpot_ms": 40 * wob,
						"mean_itl_ms": 20 * wob, "p99_itl_ms": 60 * wob, "request_throughput": 2 / wob, "output_throughput": 300 / wob,
						"total_token_throughput": 460 / wob, "completed": 500, "failed": 0,
					},
					Labels: map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct", "hardware": "910B3"},
					Source: Source{Format: "vllm", File: fmt.Sprintf("rep-%d.txt", rep), Line: 1},
				}
				r.ID = ContentID(r)
				buf = append(AppendJSON(buf[:0], &r), '\n')
				if _, err := w.Write(buf); err != nil {
					return 0, err
				}
				n++
			}
		}
	}
	return n, w.Flush()
}

func BenchmarkImportRepetitions(b *testing.B) {
	file, runs := repBenchFile(b)
	// postgres-writer imports as a writer role granted the repository
	// (row-level security checks every row; the owner bypasses it).
	for _, backend := range []string{"bbolt", "postgres", "postgres-writer"} {
		b.Run(backend, func(b *testing.B) {
			var elapsed time.Duration
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				path := filepath.Join(benchDir(b), fmt.Sprintf("reps-%d.db", i))
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
				start := time.Now()
				s, err := Open(path, Options{Repository: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				added, _, err := s.Import(f, ImportOptions{File: file})
				if err == nil {
					err = s.Close()
				}
				elapsed += time.Since(start)
				f.Close()
				if err != nil {
					b.Fatal(err)
				}
				if added != runs {
					b.Fatalf("imported %d runs, want %d", added, runs)
				}
				os.Remove(path)
			}
			b.ReportMetric(float64(runs)*float64(b.N)/elapsed.Seconds(), "runs/s")
			b.ReportMetric(elapsed.Seconds()/float64(b.N), "s/import")
			if hwm := vmHWM(); hwm > 0 {
				b.ReportMetric(hwm, "maxRSS-MiB")
			}
		})
	}
}

// benchWriter returns the URL of a writer role, granted repository
// "bench", of a fresh schema.
func benchWriter(b *testing.B) string {
	owner := pgtest.URL(b)
	if _, _, err := Migrate(owner, Options{}); err != nil {
		b.Fatal(err)
	}
	w := pgtest.Role(b, owner, writerGrants(b, owner)...)
	if _, err := GrantWriter(owner, Options{}, roleOf(b, w), "bench"); err != nil {
		b.Fatal(err)
	}
	return w
}

// vmHWM is this process's peak resident set in MiB (Linux), 0 elsewhere.
func vmHWM() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb / 1024
		}
	}
	return 0
}
