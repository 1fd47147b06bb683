package gate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchWorld is a synthetic history of 10,000 first-parent commits holding
// 100,000 results: benchmarks results per measured commit, one measured
// commit in every `every`.
func benchWorld(b *testing.B, benchmarks, every int) (*fakeRepo, string, string) {
	rng := rand.New(rand.NewPCG(42, 42))
	repo := newFakeRepo()
	const commits = 10000
	chain := repo.chain(repo.commit("", "root"), commits-1, "main")
	metrics := func(j int) map[string]float64 {
		n := func(v float64) float64 { return v * math.Exp(0.03*rng.NormFloat64()) }
		return map[string]float64{
			"completed": 1000, "failed": 0, "duration": n(120),
			"request_throughput": n(8), "output_throughput": n(2400), "total_token_throughput": n(5000),
			"mean_ttft_ms": n(100 + float64(j)), "p99_ttft_ms": n(300), "mean_tpot_ms": n(20), "p99_tpot_ms": n(40),
			"mean_itl_ms": n(20), "p99_itl_ms": n(60),
		}
	}
	total := 0
	for i, c := range chain {
		if (len(chain)-1-i)%every != 0 {
			continue
		}
		for j := 0; j < benchmarks; j++ {
			repo.add(c, fmt.Sprintf("bench-%03d", j), map[string]string{"model": "m", "gpu": "H100", "date": "x"}, metrics(j))
			total++
		}
	}
	mb := chain[len(chain)-1]
	head := repo.commit(mb, "pr")
	for j := 0; j < benchmarks; j++ {
		repo.add(head, fmt.Sprintf("bench-%03d", j), map[string]string{"model": "m", "gpu": "H100"}, metrics(j))
	}
	if total < 99000 {
		b.Fatalf("only %d samples", total)
	}
	return repo, head, mb
}

// BenchmarkCheck runs Check with the default rules over 10,000 commits and
// 100,000 stored results, with a fake Graph and History (the CLI's go-git
// and bbolt adapters add their own costs on top).
func BenchmarkCheck(b *testing.B) {
	for _, c := range []struct {
		name              string
		benchmarks, every int
	}{
		{"dense-10bench-every-commit", 10, 1},
		{"sparse-100bench-every-10th-commit", 100, 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			repo, head, mb := benchWorld(b, c.benchmarks, c.every)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rep, err := Check(context.Background(), repo, repo, CheckOptions{Head: head, Base: mb, BaseRef: "main"})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Summary.Checks != c.benchmarks*10 {
					b.Fatalf("%d checks", rep.Summary.Checks)
				}
			}
		})
	}
}

// loadWorld is a history of 1,000 first-parent commits, each measured at
// six loads (max_concurrency 1 to 32), and a PR head measured the same way.
func loadWorld(b *testing.B) (*fakeRepo, string, string) {
	rng := rand.New(rand.NewPCG(35, 6))
	repo := newFakeRepo()
	chain := repo.chain(repo.commit("", "root"), 1000, "main")
	sweep := func(c string) {
		for _, conc := range []int{1, 2, 4, 8, 16, 32} {
			n := func(v float64) float64 { return v * math.Exp(0.02*rng.NormFloat64()) }
			tpot := n(10 + 0.5*float64(conc))
			rate := float64(conc) / (tpot / 10)
			repo.add(c, "serve", map[string]string{"model": "m", "max_concurrency": fmt.Sprint(conc), "num_prompts": fmt.Sprint(20 * conc)}, map[string]float64{
				"completed": float64(20 * conc), "failed": 0, "request_throughput": rate, "output_throughput": 100 * rate,
				"mean_ttft_ms": n(50), "p99_ttft_ms": n(80), "mean_tpot_ms": tpot, "p99_tpot_ms": tpot * 1.1,
			})
		}
	}
	for _, c := range chain {
		sweep(c)
	}
	mb := chain[len(chain)-1]
	head := repo.commit(mb, "pr")
	sweep(head)
	return repo, head, mb
}

// BenchmarkCheckLoadCurve checks a head of six loads against a history of
// 1,000 commits measured at six loads each: with the default rules (what
// check did before SLOs), and with an SLO and rules on capacity and
// mean TPOT (capacity derived for every commit read, the curves compared).
func BenchmarkCheckLoadCurve(b *testing.B) {
	for _, c := range []struct{ name, rules string }{
		{"default-rules", ""},
		{"slo-capacity", "slo: {tpot_ms: 20, ttft_ms: 200}\nrules:\n  - metric: capacity\n    max_regression: 5%\n  - metric: mean_tpot_ms\n    max_regression: 3%\n"},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg, err := ParseRules("rules.yml", []byte(c.rules))
			if err != nil {
				b.Skip(err) // a version of perfgate without SLOs
			}
			repo, head, mb := loadWorld(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Check(context.Background(), repo, repo, CheckOptions{Head: head, Base: mb, BaseRef: "main", Config: cfg}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
