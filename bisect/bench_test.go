package bisect

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkSearch simulates the search over N = 64, 256 and 1024 commits
// with a step of 2, 4 and 8 noise standard deviations at a random commit,
// next to classic bisection with one run per step. Each iteration is one
// seeded trial; the metrics are the fraction of trials that named the
// right commit and the mean number of benchmark runs. Trials are seeded
// by their index, so -benchtime Nx replays the same N trials:
//
//	go test -run '^$' -bench Search -benchtime 300x ./bisect
//
// The search gets a budget of 200 runs, so that accuracy is measured
// without the default budget's cut; "found" counts the trials that reached
// the 95% confidence and "wrong" those among them that named a wrong
// commit (the calibration of the stated confidence).
func BenchmarkSearch(b *testing.B) {
	const sigma = 0.015
	for _, n := range []int{64, 256, 1024} {
		for _, step := range []float64{2, 4, 8} {
			b.Run(fmt.Sprintf("N=%d/step=%gsigma/posterior", n, step), func(b *testing.B) {
				right, runs, found, wrong := 0, 0, 0, 0
				for i := 0; i < b.N; i++ {
					sm := newSimulation(n, 0, sigma, step, uint64(i))
					sm.culprit = 1 + sm.rng.IntN(n)
					res, err := Search(context.Background(), n, nil, sm, Options{MaxRuns: 200})
					if err != nil {
						b.Fatal(err)
					}
					if res.Culprit == sm.culprit {
						right++
					}
					if res.Verdict == Found {
						found++
						if res.Culprit != sm.culprit {
							wrong++
						}
					}
					runs += res.Runs
				}
				b.ReportMetric(float64(right)/float64(b.N), "accuracy")
				b.ReportMetric(float64(runs)/float64(b.N), "runs/search")
				b.ReportMetric(float64(found)/float64(b.N), "found")
				b.ReportMetric(float64(wrong)/float64(max(found, 1)), "wrong/found")
			})
			b.Run(fmt.Sprintf("N=%d/step=%gsigma/classic", n, step), func(b *testing.B) {
				right, runs := 0, 0
				for i := 0; i < b.N; i++ {
					sm := newSimulation(n, 0, sigma, step, uint64(i))
					sm.culprit = 1 + sm.rng.IntN(n)
					c, r := sm.classic()
					if c == sm.culprit {
						right++
					}
					runs += r
				}
				b.ReportMetric(float64(right)/float64(b.N), "accuracy")
				b.ReportMetric(float64(runs)/float64(b.N), "runs/search")
			})
		}
	}
}
