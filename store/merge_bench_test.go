package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkMerge100k stores 100,000 runs of 12 metrics with Merge, in
// batches of 2,000 (as a sync's pull does).
func BenchmarkMerge100k(b *testing.B) {
	runs := make([]Run, 100000)
	for i := range runs {
		c, r := i/100, i%100
		runs[i] = Run{
			Commit: fmt.Sprintf("%040x", c*7919+1), Benchmark: fmt.Sprintf("serving-%d", r/10),
			Time: time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC),
			Metrics: map[string]float64{"mean_ttft_ms": 120 + float64(i%97), "p99_ttft_ms": 400, "mean_tpot_ms": 20.5, "p99_tpot_ms": 40, "mean_itl_ms": 19,
				"p99_itl_ms": 60, "request_throughput": 9.5, "output_throughput": 2400, "total_token_throughput": 4800, "completed": 1000, "failed": 0, "median_ttft_ms": 110},
			Labels: map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct", "hardware": "910B3", "tp": "1"},
			Source: Source{Format: "vllm-serve-json", File: fmt.Sprintf("results/serving-%d.json", r)},
		}
		runs[i].ID = ContentID(runs[i])
	}
	for i := 0; b.Loop(); i++ {
		s, err := Open(filepath.Join(b.TempDir(), fmt.Sprint(i, ".db")), Options{})
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < len(runs); j += 2000 {
			batch := append([]Run(nil), runs[j:j+2000]...)
			if _, err := s.Merge(batch, func(int, error) {}); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
	}
}
