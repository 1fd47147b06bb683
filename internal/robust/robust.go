// Package robust holds the order statistics that both the gate's verdicts
// and bisect's posterior are built on: medians and the sampling variance of
// a median, and the quantiles of Student's t. It owns nothing else; each
// caller keeps its own model.
package robust

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// Median returns the median of xs (the mean of the middle two for an even
// count) and NaN for none. xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	var buf [64]float64 // small inputs (most windows, the site's 40) stay on the stack
	s := append(buf[:0], xs...)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianVar is the variance of the median of n values of unit variance:
// exact for n <= 2, the asymptotic pi/2n beyond.
func MedianVar(n int) float64 {
	switch {
	case n <= 1:
		return 1
	case n == 2:
		return 0.5
	}
	return math.Pi / (2 * float64(n))
}

// SelectKth reorders xs so that xs[k] is its k-th smallest value
// (0-based), nothing larger comes before it and nothing smaller after, and
// returns it: a median or a quantile without sorting (quickselect). Each
// pass moves the values below a pivot (the median of three) to the front
// of the range, without a branch per value (a branch that goes either
// way at random costs several times the comparison), then, when k is not
// among them, the values equal to the pivot.
func SelectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs) // the range holding k: xs[lo:hi]
	for hi-lo > 1 {
		s := xs[lo:hi]
		pivot := median3(s[0], s[len(s)/2], s[len(s)-1])
		n := below(s, pivot)
		if k < lo+n {
			hi = lo + n
			continue
		}
		lo += n
		n = atMost(xs[lo:hi], pivot)
		if n == 0 { // a NaN pivot: nothing compares with it
			slices.Sort(xs[lo:hi])
			return xs[k]
		}
		if k < lo+n {
			return xs[k]
		}
		lo += n
	}
	return xs[k]
}

// below and atMost move the values of xs under (at most) pivot to its
// front, in one pass without a branch on the comparison, and return how
// many.
func below(xs []float64, pivot float64) int {
	i := 0
	for j, v := range xs {
		xs[j] = xs[i]
		xs[i] = v
		i += b2i(v < pivot)
	}
	return i
}

func atMost(xs []float64, pivot float64) int {
	i := 0
	for j, v := range xs {
		xs[j] = xs[i]
		xs[i] = v
		i += b2i(v <= pivot)
	}
	return i
}

// b2i compiles to a flag move, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func median3(a, b, c float64) float64 {
	if a > b {
		a, b = b, a
	}
	if b > c {
		b = max(a, c)
	}
	return b
}

// TQuantile returns the q quantile (0.5 < q < 1) of Student's t with df
// degrees of freedom, by bisection on its CDF (go-moremath has no
// inverse); 1e6 or more when it lies that far out.
func TQuantile(q, df float64) float64 {
	d := stats.TDist{V: df}
	lo, hi := 0.0, 1.0
	for d.CDF(hi) < q {
		hi *= 2
		if hi > 1e6 {
			return hi
		}
	}
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if d.CDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
