package ingest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/slo"
)

// sweepFile returns a `vllm bench serve --save-result --save-detailed`
// JSON of n requests of 128 output tokens at one load.
func sweepFile(n int, rate float64, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	ttfts, e2els := make([]float64, n), make([]float64, n)
	itls, outs, errs := make([][]float64, n), make([]int, n), make([]string, n)
	for i := range n {
		ttfts[i] = 0.02 + rng.ExpFloat64()*0.01*rate
		itl := make([]float64, 127)
		sum := 0.0
		for j := range itl {
			itl[j] = 0.015 + rng.Float64()*0.01
			sum += itl[j]
		}
		itls[i], outs[i], e2els[i] = itl, 128, ttfts[i]+sum
	}
	b, _ := json.Marshal(map[string]any{
		"backend": "vllm", "model_id": "m", "request_rate": rate, "duration": float64(n) / rate,
		"completed": n, "failed": 0, "request_throughput": rate, "mean_ttft_ms": 30.0,
		"ttfts": ttfts, "itls": itls, "e2els": e2els, "output_lens": outs, "errors": errs,
	})
	return string(b)
}

// BenchmarkSweepIngest parses a sweep of 6 loads x 2,000 requests (one
// commit's results, 128 tokens a request) with --slo: per-request lists
// to summaries and exact goodput. Issue 35 asks under 1 s a sweep:
//
//	go test ./ingest -run '^$' -bench SweepIngest -benchtime 5x
func BenchmarkSweepIngest(b *testing.B) {
	files := make([]string, 6)
	size := 0
	for i := range files {
		files[i] = sweepFile(2000, float64(2+2*i), uint64(i))
		size += len(files[i])
	}
	o := slo.Objective{TTFTms: 100, TPOTms: 25, E2ELms: 4000}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		for i, f := range files {
			r := NewReader(strings.NewReader(f), fmt.Sprintf("load%d.json", i), Options{SLO: &o})
			n := 0
			for r.Scan() {
				if r.Result().Requests == nil {
					b.Fatal("no request summary")
				}
				n++
			}
			if r.Err() != nil || n != 1 {
				b.Fatal(n, r.Err())
			}
		}
	}
}
