package main

import (
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// The watch benchmark: the check benchmark's 10,000-commit repository
// with a history of 10 benchmarks x 30 metrics on every main commit
// (100,000 runs, 2% noise, one 15% TTFT step), watched as its own
// process, as a scheduled workflow runs it. The targets are under 2 s
// and under 200 MiB peak resident memory (which includes the pages of the
// history file bbolt maps while it reads every run).
//
//	go test ./cmd/perfgate -run '^$' -bench WatchProcess -benchtime 5x -count 3
var watchBench struct {
	once sync.Once
	db   string
	err  error
}

// watchMetrics are 30 metrics: 7 statistics of 4 latencies, and 2
// throughputs.
func watchMetrics() []string {
	var out []string
	for _, k := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, s := range []string{"mean", "median", "std", "min", "max", "p90", "p99"} {
			out = append(out, s+"_"+k+"_ms")
		}
	}
	return append(out, "request_throughput", "output_throughput")
}

func buildWatchBench(dir string) (string, error) {
	out, err := exec.Command("git", "-C", dir, "rev-list", "--first-parent", "main").Output()
	if err != nil {
		return "", err
	}
	shas := strings.Fields(string(out)) // newest first
	db := filepath.Join(filepath.Dir(dir), "watch-history.db")
	st, err := store.Open(db, store.Options{})
	if err != nil {
		return "", err
	}
	defer st.Close()
	names := watchMetrics()
	t0 := time.Unix(1700000000, 0)
	var batch []store.Run
	n := len(shas)
	for k := range shas {
		pos := n - 1 - k // 0 = oldest
		for bench := 0; bench < 10; bench++ {
			m := make(map[string]float64, len(names))
			for j, name := range names {
				// Deterministic noise of about 2% (a hash of the position).
				h := uint32(pos*2654435761) ^ uint32(bench*40503+j*9973)
				h ^= h >> 13
				h *= 0x5bd1e995
				h ^= h >> 15
				u := float64(h%10000)/10000 - 0.5
				v := float64(10+j) * (1 + 0.07*u)
				if bench == 0 && name == "mean_ttft_ms" && pos >= 6000 {
					v *= 1.15
				}
				m[name] = math.Round(v*1000) / 1000
			}
			batch = append(batch, store.Run{Commit: shas[k], Benchmark: fmt.Sprintf("serving-%d", bench), Time: t0.Add(time.Duration(pos) * time.Minute),
				Metrics: m, Labels: map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct", "hardware": "910B3"},
				Source: store.Source{Format: "vllm", File: "bench.txt", Line: 1}})
		}
		if len(batch) >= 2000 {
			if _, err := st.Put(batch); err != nil {
				return "", err
			}
			batch = batch[:0]
		}
	}
	if _, err := st.Put(batch); err != nil {
		return "", err
	}
	return db, nil
}

func BenchmarkWatch10kProcess(b *testing.B) {
	dir, _ := setupCheckBench(b)
	watchBench.once.Do(func() { watchBench.db, watchBench.err = buildWatchBench(dir) })
	if watchBench.err != nil {
		b.Fatal(watchBench.err)
	}
	benchProcess(b, "watch", []string{"perfgate", "--repo", dir, "--db", watchBench.db, "watch", "--branch", "main", "-o", "json", "--github=false"},
		1, "serving-0 regressed 15%", 200)
}
