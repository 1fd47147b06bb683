package gate

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfgate/perfgate/internal/robust"
)

// The two decision procedures of a relative rule (see the package
// comment): the shift test of repeated runs, and the noise band of one
// run against the base branch's history. Both work on log values, so
// that a change is a ratio and the noise a relative spread.

// shift is the estimate of a location shift between two sets of runs.
type shift struct {
	delta  float64 // Hodges-Lehmann estimate of log(head) - log(base)
	within float64 // log scale of one run within a session (pooled Qn)
	tau    float64 // log scale of a session's level, from the window (0 when unknown)
	se     float64 // standard error of delta
	df     float64 // degrees of freedom of se
}

// hodgesLehmann is the median of all pairwise differences x_i - y_j: the
// two-sample shift estimate that goes with the rank test, robust to a
// minority of outlying runs on either side.
func hodgesLehmann(x, y []float64) float64 {
	d := make([]float64, 0, len(x)*len(y))
	for _, a := range x {
		for _, b := range y {
			d = append(d, a-b)
		}
	}
	return robust.Median(d)
}

// estimateShift compares head's and base's log values. within is the log
// scale of one run (withinScale, floored at the quantisation step); tau is
// the between-session noise (a level that moves from one CI job to the
// next), estimated from the window with tauDF degrees of freedom; it adds
// to both sides, since head and base are each one session.
func estimateShift(head, base []float64, within, tau float64, tauDF int) shift {
	s := shift{delta: hodgesLehmann(head, base), tau: tau, within: within}
	n, m := float64(len(head)), float64(len(base))
	a := s.within * s.within * (1/n + 1/m)
	b := 2 * tau * tau
	s.se = math.Sqrt(a + b)
	dfA := n + m - 2
	s.df = dfA
	if b > 0 && tauDF > 0 {
		// Welch-Satterthwaite: the two variance parts have their own
		// degrees of freedom.
		s.df = (a + b) * (a + b) / (a*a/dfA + b*b/float64(tauDF))
	}
	return s
}

// withinScale is the log scale of one run within a session: Qn over both
// sides' deviations from their own medians.
func withinScale(head, base []float64) float64 {
	return pooledScale([][]float64{centred(head), centred(base)})
}

func centred(xs []float64) []float64 {
	m := robust.Median(xs)
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = v - m
	}
	return out
}

// pWorse is the one-sided p-value of "head is worse by more than zero":
// worse is delta signed so that positive is worse.
func (s shift) pWorse(worse float64) float64 {
	if s.se <= 0 {
		if worse > 0 {
			return 0
		}
		return 1
	}
	return 1 - stats.TDist{V: math.Max(s.df, 1)}.CDF(worse/s.se)
}

// runsToDecide estimates how many runs a side would make a shift of the
// observed size significant, ignoring the between-session part; 0 when
// more runs cannot (the session noise alone is too large).
func (s shift) runsToDecide(worse float64, alpha float64) int {
	if worse <= 0 || s.within <= 0 {
		return 0
	}
	for n := 2; n <= 50; n++ {
		se := math.Sqrt(s.within*s.within*2/float64(n) + 2*s.tau*s.tau)
		df := float64(2*n - 2)
		if 1-(stats.TDist{V: df}).CDF(worse/se) < alpha {
			return n
		}
	}
	return 0
}

// quantum is the resolution of a metric's values as logs: the smallest
// positive gap between distinct values of one sample (a side's runs, or
// the window), relative to their level. Noise estimated below it is an
// artifact of rounding (a p95 printed in whole milliseconds is mostly
// exactly 31), not a measurement. Gaps are taken within each sample, never
// across two: the shift between head and base is no resolution.
func quantum(samples ...[]float64) float64 {
	q := 0.0
	for _, xs := range samples {
		q = math.Max(q, quantumOf(xs))
	}
	return q
}

func quantumOf(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	all := slices.Clone(xs)
	slices.Sort(all)
	gap := math.Inf(1)
	repeats := 0
	for i := 1; i < len(all); i++ {
		d := all[i] - all[i-1]
		if d == 0 {
			repeats++
		} else if d < gap {
			gap = d
		}
	}
	lvl := robust.Median(all)
	// Values that repeat are the mark of a grid; continuous values that
	// happen to lie close are not. A gap under 0.1% of the level is no
	// quantisation the gate could mistake for a change.
	if math.IsInf(gap, 1) || lvl <= 0 || repeats*4 < len(all) {
		return 0
	}
	if q := math.Log1p(gap / lvl); q >= 0.001 {
		return q
	}
	return 0
}

// reference is one level a head may be compared with in the noise band.
type reference struct {
	level float64 // log level
	raw   float64 // the level as a median of raw values, as reports show it
	n     int     // values behind it (its median's variance)
	desc  string
}

// tailResiduals returns the window's deviations from the median of their
// own segment, in log units: the one-run deviations the base branch has
// shown without any change.
func tailResiduals(x []float64, starts []int) []float64 {
	var out []float64
	for _, seg := range segments(x, starts) {
		m := robust.Median(seg)
		for _, v := range seg {
			out = append(out, v-m)
		}
	}
	return out
}
