// Package robust holds the order statistics that both the gate's verdicts
// and bisect's posterior are built on: medians and the sampling variance of
// a median. It owns nothing else; each caller keeps its own model.
package robust

import (
	"math"
	"slices"
)

// Median returns the median of xs (the mean of the middle two for an even
// count) and NaN for none. xs is not modified.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	var buf [32]float64 // small inputs (most windows) stay on the stack
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
// returns it: a median or a quantile without sorting (Hoare's selection).
func SelectKth(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		pivot := xs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}
