package watch

import (
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"
)

// eDivisive is E-divisive means as Apache Otava (formerly Hunter) uses
// it, with its defaults: the split of a segment that maximises the energy
// statistic (alpha = 1), kept when a two-sided Welch t-test between its
// sides gives p < 0.001 (Otava's max_pvalue; in place of the original's
// permutation test), and applied again to both sides; min_magnitude 0.
// On log values, like the others.
func eDivisive(x []float64) []int {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Log(v)
	}
	var cps []int
	var split func(a, b int)
	split = func(a, b int) {
		if b-a < 4 {
			return
		}
		k := energySplit(y[a:b])
		if k < 2 || k > b-a-2 {
			return
		}
		l, r := stats.Sample{Xs: y[a : a+k]}, stats.Sample{Xs: y[a+k : b]}
		res, err := stats.TwoSampleWelchTTest(l, r, stats.LocationDiffers)
		if err != nil || res.P >= 0.001 {
			return
		}
		cps = append(cps, a+k)
		split(a, a+k)
		split(a+k, b)
	}
	split(0, len(y))
	sort.Ints(cps)
	return cps
}

// energySplit returns the split t (2 <= t <= n-2) that maximises
// Q(t) = t(n-t)/n · (2/(t(n-t))·Σ|xi-yj| - Σ_{i<k}|xi-xk|/C(t,2) - Σ_{j<k}|yj-yk|/C(n-t,2)),
// the points before t being x and the rest y, in O(n²).
func energySplit(y []float64) int {
	n := len(y)
	// within[t] of the left part y[:t], grown one point at a time; the
	// right part's from the end; the cross sum from the total.
	left := make([]float64, n+1)
	for t := 1; t <= n; t++ {
		s := 0.0
		for i := 0; i < t-1; i++ {
			s += math.Abs(y[t-1] - y[i])
		}
		left[t] = left[t-1] + s
	}
	right := make([]float64, n+1) // within-sum of y[t:]
	for t := n - 1; t >= 0; t-- {
		s := 0.0
		for j := t + 1; j < n; j++ {
			s += math.Abs(y[t] - y[j])
		}
		right[t] = right[t+1] + s
	}
	total := left[n]
	best, bt := math.Inf(-1), -1
	for t := 2; t <= n-2; t++ {
		cross := total - left[t] - right[t]
		nl, nr := float64(t), float64(n-t)
		q := nl * nr / float64(n) * (2*cross/(nl*nr) - left[t]/(nl*(nl-1)/2) - right[t]/(nr*(nr-1)/2))
		if q > best {
			best, bt = q, t
		}
	}
	return bt
}
