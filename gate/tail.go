package gate

import (
	"fmt"
	"math"
)

// tailModel is what the window says of single runs far off the band in
// the bad direction: real CI histories have heavy tails (a run 10-40%
// slow now and then) that a normal band ignores.
//
// The model: an unchanged run lands beyond the band's edge u (zCritical
// noise units past the level) with probability eps, and its excess past
// u is exponential with an unknown scale. From the m of the window's n
// residuals beyond u: eps = (m + 1/2)/(n + 1), and with the scale's
// posterior under a prior worth tailPrior noise units of excess, the
// predictive probability that an unchanged run's excess is x or more is
// eps * (S/(S+x))^(m+1), S the sum of the excesses plus the prior's: a
// Lomax tail, heavier the larger the outliers seen. One or two runs at
// head fail only when that probability is under tailAlpha; short of that
// the check is inconclusive and three runs (their median) decide. A
// window with no outlier at all (m = 0) says nothing of a tail: the band
// alone decides there, as on normal noise.
type tailModel struct {
	u    float64 // the band's edge, log
	n, m int     // residuals, and those beyond u
	sum  float64 // the excesses beyond u, plus the prior's
	max  float64 // the largest residual in the bad direction, log
}

// tailAlpha is the predictive probability of so large an excess under
// which one or two runs fail, and tailPrior the prior's excess in noise
// units (both tuned on the real-noise and synthetic experiments: against
// the earlier rule, one run fails only eight times as far off as the
// largest outlier, they catch more regressions with fewer false alarms on
// both).
const (
	tailAlpha = 0.008
	tailPrior = 0.5
	tailEdge  = 2.0
)

func newTailModel(rc *relCheck, residuals []float64, unit float64) tailModel {
	t := tailModel{u: tailEdge * unit, n: len(residuals), sum: tailPrior * unit, max: math.Inf(-1)}
	for _, r := range residuals {
		w := rc.worseBy(r)
		t.max = math.Max(t.max, w)
		if w > t.u {
			t.m++
			t.sum += w - t.u
		}
	}
	return t
}

// p is the predictive probability that an unchanged run is d or more
// worse than the level (d in log units); 0 when the window shows no
// outlier in the bad direction.
func (t tailModel) p(d float64) float64 {
	if t.m == 0 {
		return 0
	}
	if d <= t.u {
		return 1
	}
	eps := (float64(t.m) + 0.5) / (float64(t.n) + 1)
	return eps * math.Pow(t.sum/(t.sum+d-t.u), float64(t.m+1))
}

// reason says why one run beyond the band did not fail.
func (t tailModel) reason(d float64) string {
	return fmt.Sprintf("the base branch's own window holds %s beyond its noise band in the same direction (the largest %s), so one run this far off happens about %s of the time without any change; three runs decide (perfgate run --repeat 3)",
		plural(t.m, "single result", "single results"), fmtChange(num(100*math.Expm1(t.max))), fmtProb(t.p(d)))
}

func fmtProb(p float64) string {
	switch {
	case p >= 0.1:
		return fmt.Sprintf("%.0f%%", 100*p)
	case p >= 0.01:
		return fmt.Sprintf("%.1f%%", 100*p)
	}
	return fmt.Sprintf("%.2f%%", 100*p)
}
