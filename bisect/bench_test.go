package bisect

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkSearch simulates the search over N = 64, 256 and 1024 commits
// with a step of 2, 4 and 8 noise standard deviations at a random commit,
// next to classic bisection with one run per step. Each iteration is one
// seeded trial; the metrics are the fraction of trials that named the
// right commit and the mean number of benchmark runs. Trials are seeded
// by their index, so -benchtime Nx replays the same N trials (the table
// in docs/bisect.md is 1000x):
//
//	go test ./bisect -run '^$' -bench Search -benchtime 1000x
//
// The search runs twice: with the default budget (DefaultBudget(N), what
// perfgate bisect uses; "posterior") and with a budget of 200 runs
// ("posterior-200"), which measures accuracy without the budget's cut.
// "found" counts the trials that reached the 95% confidence and
// "wrong/found" those among them that named a wrong commit (the
// calibration of the stated confidence); a trial that ran out of budget
// counts as right when its best guess is. "noise-found" and "noise-other"
// are the noise the search reported (Result.Noise) over the true one,
// geometric means over the trials that reached 95% and over the others
// that named a commit: a gap between them is the search stopping when the
// runs happen to agree closely (see noiseDFDiscount).
func BenchmarkSearch(b *testing.B) {
	const sigma = 0.015
	for _, n := range []int{64, 256, 1024} {
		for _, step := range []float64{2, 4, 8} {
			for _, budget := range []int{0, 200} {
				name := "posterior"
				if budget > 0 {
					name = fmt.Sprintf("posterior-%d", budget)
				}
				b.Run(fmt.Sprintf("N=%d/step=%gsigma/%s", n, step, name), func(b *testing.B) {
					searchTrials(b, n, sigma, step, budget)
				})
			}
			b.Run(fmt.Sprintf("N=%d/step=%gsigma/classic", n, step), func(b *testing.B) {
				right, runs := 0, 0
				for i := 0; i < b.N; i++ {
					sm := randomCulprit(n, sigma, step, uint64(i))
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

// searchTrials runs b.N seeded trials of Search with the given budget (0:
// the default).
func searchTrials(b *testing.B, n int, sigma, step float64, budget int) {
	var ty tally
	var logNoise [2]float64 // found, other
	var nNoise [2]int
	for i := 0; i < b.N; i++ {
		res := ty.trial(b, randomCulprit(n, sigma, step, uint64(i)), Options{MaxRuns: budget})
		if j := 1; res.Verdict != NoStep && res.Noise > 0 {
			if res.Verdict == Found {
				j = 0
			}
			logNoise[j] += math.Log(res.Noise / sigma)
			nNoise[j]++
		}
	}
	right, runs, found, wrong := ty.right, ty.runs, ty.found, ty.wrong
	b.ReportMetric(float64(right)/float64(b.N), "accuracy")
	b.ReportMetric(float64(runs)/float64(b.N), "runs/search")
	b.ReportMetric(float64(found)/float64(b.N), "found")
	b.ReportMetric(float64(wrong)/float64(max(found, 1)), "wrong/found")
	for j, unit := range []string{"noise-found", "noise-other"} {
		if nNoise[j] > 0 {
			b.ReportMetric(math.Exp(logNoise[j]/float64(nNoise[j])), unit)
		}
	}
}
