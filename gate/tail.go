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

	// Head's runs, and the share of the window's noise that moves a
	// session's runs together (tau^2/sigma^2). With several runs, an
	// outlier of the window is a session's (all of head's runs move)
	// with probability session (at least sessionFloor), else a run's,
	// and then the median of head's runs is that far off only if most
	// of them are.
	runs    int
	session float64
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
	// sessionFloor is the least share of an outlier the window shows that
	// is taken to move a whole session (all of head's runs): the share
	// estimated from a few runs is noisy; on the real-noise experiment
	// trusting it fully (0) breaks the 1% false-alarm ceiling of five runs
	// against the window, while 0.25 keeps the detection.
	sessionFloor = 0.25
)

func newTailModel(rc *relCheck, residuals []float64, unit, edge float64) tailModel {
	t := tailModel{u: edge * unit, n: len(residuals), sum: tailPrior * unit, max: math.Inf(-1)}
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
	p := eps * math.Pow(t.sum/(t.sum+d-t.u), float64(t.m+1))
	if t.runs < 2 {
		return p
	}
	s := math.Max(t.session, sessionFloor)
	return s*p + (1-s)*medianBeyond(p, t.runs)
}

// medianBeyond is the probability that the median of n independent runs
// is beyond a point each run passes with probability p: that more than
// half of them do (for even n, half: the median is their mean).
func medianBeyond(p float64, n int) float64 {
	q := 0.0
	for j := (n + 1) / 2; j <= n; j++ {
		q += binom(n, j) * math.Pow(p, float64(j)) * math.Pow(1-p, float64(n-j))
	}
	return q
}

func binom(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// reason says why one run beyond the band did not fail.
func (t tailModel) reason(d float64, runs int) string {
	held := fmt.Sprintf("the base branch's own window holds %s beyond its noise band in the same direction (the largest %s)",
		plural(t.m, "single result", "single results"), fmtChange(num(100*math.Expm1(t.max))))
	if runs >= minRepeats {
		return fmt.Sprintf("%s, so a session this far off happens about %s of the time without any change; more runs of one session cannot tell, compare both commits on one machine (perfgate ab)", held, fmtProb(t.p(d)))
	}
	return fmt.Sprintf("%s, so one run this far off happens about %s of the time without any change; three runs decide (perfgate run --repeat 3)", held, fmtProb(t.p(d)))
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

// lightTailed tests the window's residuals for a tail heavier than
// normal noise's, in noise units unit (the band's: the scale of one
// value and of the level's median). It accepts (true) unless the largest
// residual, either way, is beyond lightMax(n) units, or lightCount(n) or
// more residuals are beyond tailEdge units: each a quantile of what
// windows of n normal values show (measured with the band's own scale
// and segmentation), the two together accepting about 95% of normal
// windows of 20 (TestLightTailedNormalWindows). A window of normal noise
// often holds a residual beyond tailEdge (a third of windows of 20 do);
// one that passes the test is judged as normal noise, and a window that
// fails it keeps the tail model's caution.
func lightTailed(residuals []float64, unit float64) bool {
	n := len(residuals)
	if n == 0 || !(unit > 0) {
		return false
	}
	beyond := 0
	for _, r := range residuals {
		a := math.Abs(r) / unit
		if a > lightMax(n) {
			return false
		}
		if a > tailEdge {
			beyond++
		}
	}
	return beyond < lightCount(n)
}

// lightMax is the largest residual, in noise units, that a window of n
// normal values shows in about 97.5% of windows (at n = 20: 3.65; the
// scale estimated from few values widens it at small n).
func lightMax(n int) float64 {
	return lightMaxBase + lightMaxSmall/float64(n)
}

// lightCount is the fewest residuals beyond tailEdge units that flag a
// window of n values: the least k with P(Binomial(n, 5%) >= k) under
// 2.5% (a normal window's residual is beyond tailEdge units about 4% of
// the time, counting both directions; the estimated scale adds a little).
func lightCount(n int) int {
	const p = lightP
	tail := 1.0 // P(X >= k)
	for k := 0; k <= n; k++ {
		if tail < 0.025 {
			return k
		}
		tail -= binom(n, k) * math.Pow(p, float64(k)) * math.Pow(1-p, float64(n-k))
	}
	return n + 1
}

// The tail test's constants, and how a window that passes it is judged:
// head fails at zLight (the band's zCritical, for any number of runs),
// and the tail model counts only residuals beyond lightEdge noise units
// as outliers (tailEdge on a window that fails the test). Tuned on the
// synthetic experiment (lognormal noise: 91% of 15% regressions caught
// against 85.6% before) within the real-noise ceilings (one run: a
// lightEdge of 2.75 caught 91.8% but made 1.42% false alarms on the real
// histories weighed per series; 2.5 makes 1.35%).
const (
	lightMaxBase  = 3.25
	lightMaxSmall = 8.0
	lightP        = 0.05
	zLight        = zCritical
	lightEdge     = 2.5
)
