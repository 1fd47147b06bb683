package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfgate/perfgate/internal/robust"
	"github.com/perfgate/perfgate/metric"
)

// relCheck is the state of one relative (max_regression) check while its
// method decides it.
type relCheck struct {
	cr    *CheckResult
	r     Rule
	lower bool        // lower values are better
	hv    []float64   // head's runs
	bv    []float64   // the baseline commit's runs
	cur   float64     // median of hv
	xs    []float64   // the window: a median per measured commit, oldest first
	ks    []int       // runs behind each xs value
	runs  [][]float64 // the runs behind each xs value
	pts   []Point
}

// worseBy returns d (a log change of head against a level) signed so that
// positive is worse.
func (rc *relCheck) worseBy(d float64) float64 {
	if rc.lower {
		return d
	}
	return -d
}

// judge sets Baseline and Change against base and the worse/better flags
// of the threshold; it returns cur/base (NaN when base is 0).
func (rc *relCheck) judge(base float64) float64 {
	cr := rc.cr
	cr.Baseline = num(base)
	if base == 0 {
		return math.NaN()
	}
	ratio := rc.cur / base
	cr.Change = num(100 * (ratio - 1))
	cr.worse, cr.better = rc.beyond(ratio)
	return ratio
}

// beyond reports whether a ratio is past the threshold in the bad and the
// good direction.
func (rc *relCheck) beyond(ratio float64) (worse, better bool) {
	up, down := ratio > 1+rc.r.Limit/100, ratio < 1-rc.r.Limit/100
	if rc.lower {
		return up, down
	}
	return down, up
}

// relative applies a max_regression rule with the statistics the data
// allows.
func (c *checker) relative(cr *CheckResult, r Rule, sr *series, hv, bv []float64) {
	rc := &relCheck{cr: cr, r: r, lower: r.Direction != metric.HigherIsBetter, hv: hv, bv: bv, cur: robust.Median(hv)}
	// The window, oldest first: the noise band's data, and the history a
	// report charts for a failing check.
	rc.pts = make([]Point, 0, len(sr.window)+1)
	for j := len(sr.window) - 1; j >= 0; j-- {
		p := sr.window[j]
		if v := pvalues(p.runs, r.Metric); len(v) > 0 {
			m := robust.Median(v)
			rc.xs = append(rc.xs, m)
			rc.ks = append(rc.ks, len(v))
			rc.runs = append(rc.runs, v)
			rc.pts = append(rc.pts, Point{Commit: c.w.commits[p.idx].SHA, Value: m})
		}
	}
	if len(rc.pts) > 1 {
		cr.History = append(rc.pts, Point{Commit: c.headSHA, Value: rc.cur})
	}
	positive := allPositive(hv) && allPositive(bv)
	windowOK := len(rc.xs) >= minWindow && c.cfg.Baseline.Window >= minWindow && allPositive(rc.xs) && rc.cur > 0
	switch {
	case len(hv) >= minRepeats && len(bv) >= minRepeats && positive && !(windowOK && repeatedWindow(rc.ks, len(hv))):
		c.shiftCheck(rc, windowOK)
	case windowOK:
		c.bandCheck(rc)
	case len(bv) >= minRepeats && positive:
		c.repeatsCheck(rc)
	default:
		c.thresholdCheck(rc)
	}
}

// runResiduals are the log deviations of the window's single runs from
// the level (the median of the commits' medians) of their segment.
func runResiduals(lx []float64, runs [][]float64, starts []int) []float64 {
	var out []float64
	for i, a := range starts {
		b := len(lx)
		if i+1 < len(starts) {
			b = starts[i+1]
		}
		level := robust.Median(lx[a:b])
		for _, rs := range runs[a:b] {
			for _, v := range rs {
				out = append(out, math.Log(v)-level)
			}
		}
	}
	return out
}

// repeatedWindow reports whether every commit of the window was measured
// with about as many runs as head (minRepeats or more, and no fewer than
// half of head's): each of its values is then a session's median like
// head's, and head's median is judged against the window's level and
// spread (bandCheck), which 20 such sessions tell far better than the
// baseline commit's runs alone (the shift test).
func repeatedWindow(ks []int, headRuns int) bool {
	for _, k := range ks {
		if k < minRepeats || 2*k < headRuns {
			return false
		}
	}
	return len(ks) > 0
}

// shiftCheck decides repeated runs on both sides: the Hodges-Lehmann shift
// of the log values against a t reference whose standard error holds the
// runs' own spread and, when the window shows one, the base branch's
// commit-to-commit (session) noise.
func (c *checker) shiftCheck(rc *relCheck, windowOK bool) {
	cr := rc.cr
	cr.Method = MethodShift
	lh, lb := logs(rc.hv), logs(rc.bv)
	within := withinScale(lh, lb)
	tau, tauDF := 0.0, 0
	if windowOK {
		tau, tauDF = sessionNoise(rc, within)
	}
	s := estimateShift(lh, lb, math.Max(within, quantum(rc.hv, rc.bv)), tau, tauDF)
	base := rc.cur / math.Exp(s.delta) // the level the shift is measured against
	rc.judge(base)
	cr.Baseline = num(robust.Median(rc.bv))
	cr.Noise = num(100 * math.Expm1(s.within))
	cr.Resolution = shiftResolution(rc.r.Limit, s)
	worse := rc.worseBy(s.delta)
	p := s.pWorse(worse)
	pImp := s.pWorse(-worse)
	cr.P = num(p)
	if se := s.se; se > 0 {
		cr.Z = num(worse / se)
	}
	desc := fmt.Sprintf("shift %s over %d vs %d runs", fmtChange(cr.Change), len(rc.hv), len(rc.bv))
	noise := fmt.Sprintf("noise %s a run", fmtPct(cr.Noise))
	if tau > 0 {
		noise += fmt.Sprintf(", %s between sessions", fmtPct(num(100*math.Expm1(tau))))
	}
	switch {
	case cr.worse && p < alpha:
		cr.Verdict = Fail
		cr.Reason = fmt.Sprintf("%s, beyond the %s%% limit and significant (p = %.2g < %g; %s)", desc, fmtNum(rc.r.Limit), p, alpha, noise)
	case cr.worse:
		cr.Verdict = Inconclusive
		n := s.runsToDecide(worse, alpha)
		cr.RunsToDecide = n
		next := "more runs a side cannot decide it: the base branch's own level moves that much between sessions; compare both commits on one machine (perfgate ab)"
		if n > len(rc.hv) || n > len(rc.bv) {
			next = fmt.Sprintf("about %d runs a side would decide a change of this size", n)
		} else if n > 0 {
			next = "more runs a side would decide it"
		}
		cr.Reason = fmt.Sprintf("%s is beyond the %s%% limit but not significant (p = %.2g, alpha %g; %s); %s", desc, fmtNum(rc.r.Limit), p, alpha, noise, next)
	case cr.better && pImp < alpha:
		cr.Verdict = Improved
		cr.PImproved = num(pImp)
		cr.Reason = fmt.Sprintf("%s, significant (p = %.2g)", desc, pImp)
	default:
		cr.Verdict = Pass
	}
}

// sessionNoise estimates the between-session scale from the window: the
// spread of the commits' medians around the level of their segment, less
// what their runs' own spread explains. Only segments of minRefSegment
// commits or more count as levels: a short excursion that returns (a
// runner that was slow for a few jobs) is session noise, not a change.
// The spread is read at the 90th percentile of the deviations, not with a
// 50%-breakdown scale, so that a minority of slow sessions (two-level
// noise) is seen.
func sessionNoise(rc *relCheck, within float64) (float64, int) {
	lx := logs(rc.xs[:len(rc.xs)-1]) // the baseline commit's runs are the base sample
	if len(lx) < minWindow {
		return 0, 0
	}
	var dev []float64
	for _, seg := range segments(lx, longSegments(changePoints(lx), len(lx))) {
		m := robust.Median(seg)
		for _, v := range seg {
			dev = append(dev, math.Abs(v-m))
		}
	}
	slices.Sort(dev)
	s90 := dev[int(0.9*float64(len(dev)-1))] / 1.645
	inv := 0.0
	for _, k := range rc.ks[:len(rc.ks)-1] {
		inv += 1 / float64(k)
	}
	inv /= float64(len(rc.ks) - 1)
	t2 := s90*s90 - within*within*inv
	if t2 <= 0 {
		return 0, 0
	}
	return math.Sqrt(t2), len(lx) - 1
}

// longSegments drops the cuts that leave a segment shorter than
// minRefSegment, merging it into the one before.
func longSegments(starts []int, n int) []int {
	out := []int{0}
	for i := 1; i < len(starts); i++ {
		end := n
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		if starts[i]-out[len(out)-1] >= minRefSegment && end-starts[i] >= minRefSegment {
			out = append(out, starts[i])
		}
	}
	return out
}

// bandCheck decides head's run(s) against the base branch's window: the
// window is cut at change points, and head must be beyond the threshold
// and the noise band of every level the base branch may be at now, and
// beyond every single-run deviation the window has shown, to fail.
func (c *checker) bandCheck(rc *relCheck) {
	cr := rc.cr
	cr.Method = MethodNoiseBand
	cr.Window = len(rc.xs)
	lx := logs(rc.xs)
	b := noiseBand(lx)
	q := quantum(rc.xs, rc.hv)
	lead := 0
	if len(b.starts) == 1 {
		edge := zCritical * math.Max(b.sigma, q) * math.Sqrt(1+robust.MedianVar(b.segN))
		if lead = leadingLevel(lx, b.ref, edge); lead > 0 {
			b = b.cutAt(lx, lead)
		}
	}
	sigma := math.Max(b.sigma, q)
	starts := b.starts // the segmentation noiseBand made: not searched twice
	refs := c.references(rc, lx, b, starts, sigma, lead > 0)
	primary := refs[0]
	if b.segStart > 0 {
		cr.SegmentStart = rc.pts[b.segStart].Commit
	}
	rc.judge(primary.raw)
	cr.Samples.Baseline = primary.n
	cr.Noise = num(100 * math.Expm1(sigma))
	cr.Resolution = bandResolution(rc.r.Limit, sigma, primary.n)

	// Heavy tails: one or two runs at head are weighed against the
	// outliers the window itself shows in the bad direction (tailModel).
	unit := sigma * math.Sqrt(1+robust.MedianVar(b.segN))
	resid := tailResiduals(lx[lead:], shiftStarts(longSegments(starts, len(lx)), lead))
	// A window whose residuals show no tail heavier than normal noise's
	// (lightTailed) is judged as normal noise: head fails at zLight for
	// any number of runs, and only residuals beyond lightEdge units count
	// as outliers (a third of normal windows of 20 hold one beyond 2).
	light := lightTailed(resid, unit)
	edge := tailEdge
	if light {
		edge = lightEdge
	}
	tm := newTailModel(rc, resid, unit, edge)
	headVar, rho := rc.headVar(sigma, q)
	tm.runs, tm.session = len(rc.hv), rho
	// A window measured several times a commit also shows its single
	// runs: a slow mode a commit's median hides (a minority of its runs)
	// may hold most of head's runs. When they fail the tail test
	// themselves, their tail is weighed as well.
	var runTail *tailModel
	if len(rc.hv) >= minRepeats && repeatedWindow(rc.ks, len(rc.hv)) {
		rr := runResiduals(lx[lead:], rc.runs[lead:], shiftStarts(longSegments(starts, len(lx)), lead))
		ru := math.Max(pooledScale([][]float64{rr}), q)
		if !lightTailed(rr, ru) {
			rt := newTailModel(rc, rr, ru, tailEdge)
			rt.runs, rt.session = len(rc.hv), rho
			runTail = &rt
		}
	}

	lh := math.Log(rc.cur)
	type outcome struct {
		v      Verdict
		z      float64
		ref    reference
		reason string
	}
	var best, disagree *outcome
	for _, ref := range refs {
		d := rc.worseBy(lh - ref.level)
		se := math.Sqrt(headVar + sigma*sigma*robust.MedianVar(ref.n))
		z := zOf(d, se)
		worse, better := rc.beyond(rc.cur / ref.raw)
		o := outcome{z: z, ref: ref}
		switch {
		case worse && z > failZ(len(rc.hv), light) && tm.p(d) < tailAlpha && (runTail == nil || runTail.p(d) < tailAlpha):
			o.v = Fail
		case worse && z > zCritical:
			o.v = Inconclusive
			o.reason = tm.reason(d, len(rc.hv))
			if runTail != nil && tm.p(d) < tailAlpha && runTail.p(d) >= tailAlpha {
				o.reason = runTail.reason(d, len(rc.hv)) // the single runs held it back
			}
			if len(rc.hv) < minRepeats {
				cr.RunsToDecide = minRepeats
			}
		case worse:
			o.v = Inconclusive
			o.reason = fmt.Sprintf("repeat the run to decide (perfgate run --repeat %d, or perfgate ab)", minRepeats+2)
			cr.RunsToDecide = minRepeats + 2
		case better && z < -zCritical:
			o.v = Improved
		default:
			o.v = Pass
		}
		if best == nil {
			oo := o
			best = &oo
			continue
		}
		if severity(o.v) != severity(best.v) {
			// The levels disagree: the base branch moved at its tip (a
			// step or an outlier; one result cannot tell which).
			disagree = &o
		}
	}
	cr.Verdict = best.v
	cr.Z = num(best.z)
	if disagree != nil {
		cr.Verdict = Inconclusive
		cr.RunsToDecide = 0
		cr.Reason = fmt.Sprintf("%s against the reference (%s), but %s against %s: the base branch's newest results are off its earlier level (a step or an outlier, too few results to tell); measure the base branch's next commits, or compare both commits on one machine (perfgate ab)",
			fmtChange(cr.Change), primary.desc, fmtChange(num(100*(rc.cur/disagree.ref.raw-1))), disagree.ref.desc)
		return
	}
	if (best.v == Pass || best.v == Improved) && len(rc.hv) < minRepeats {
		if why := rc.fastMode(resid, lh-primary.level, tailEdge*unit); why != "" {
			cr.Verdict = Inconclusive
			cr.RunsToDecide = minRepeats
			cr.Reason = fmt.Sprintf("%s against the reference (%s), but %s", fmtChange(cr.Change), primary.desc, why)
			return
		}
	}
	zs := fmt.Sprintf("z = %.1f", best.z)
	if math.IsInf(best.z, 0) {
		zs = "no measured noise"
	}
	switch cr.Verdict {
	case Fail:
		cr.RunsToDecide = 0
		cr.Reason = fmt.Sprintf("%s against the reference (%s), beyond the %s%% limit and outside the noise band (%s, noise %s)",
			fmtChange(cr.Change), best.ref.desc, fmtNum(rc.r.Limit), zs, fmtPct(cr.Noise))
	case Inconclusive:
		cr.Reason = fmt.Sprintf("%s against the reference (%s) is beyond the %s%% limit but not clearly beyond the noise (%s, noise %s): %s",
			fmtChange(cr.Change), best.ref.desc, fmtNum(rc.r.Limit), zs, fmtPct(cr.Noise), best.reason)
	case Improved:
		cr.RunsToDecide = 0
		cr.Reason = fmt.Sprintf("%s against the reference (%s), outside the noise band (%s)", fmtChange(cr.Change), best.ref.desc, zs)
	default:
		cr.RunsToDecide = 0
	}
}

// references lists the levels the base branch may be at now: the median
// of the window's last segment first; the segment before it when the last
// is too short to be trusted as a new level (two outliers at the tip are
// not a level) unless it is the leading level the window caught the end
// of (leadingLevel), and also when the last is shorter than minLevelRun
// and head is back at the level of the one before (of minRefSegment
// results or more: a short excursion of main that ended, or a change that
// head undoes, which one run cannot tell); and the newest result itself
// when it is off the band (a step on main one commit ago, not yet a
// segment).
func (c *checker) references(rc *relCheck, lx []float64, b band, starts []int, sigma float64, leading bool) []reference {
	refs := []reference{{level: b.ref, raw: robust.Median(rc.xs[b.segStart:]), n: b.segN, desc: fmt.Sprintf("median of %d results", b.segN)}}
	if b.segStart > 0 {
		refs[0].desc = fmt.Sprintf("median of the %d results since the change point at %s", b.segN, shortSHA(rc.pts[b.segStart].Commit))
	}
	if len(starts) > 1 && !leading && b.segN < minLevelRun {
		prev := starts[len(starts)-2]
		seg := lx[prev:b.segStart]
		level := robust.Median(seg)
		back := len(seg) >= minRefSegment && math.Abs(math.Log(rc.cur)-level) <= zCritical*sigma*math.Sqrt(1+robust.MedianVar(len(seg)))
		if b.segN < minRefSegment || back {
			refs = append(refs, reference{level: level, raw: robust.Median(rc.xs[prev:b.segStart]), n: len(seg),
				desc: fmt.Sprintf("median of the %d results before the change point at %s", len(seg), shortSHA(rc.pts[b.segStart].Commit))})
		}
	}
	tip := lx[len(lx)-1]
	if band := zCritical * sigma * math.Sqrt(1+robust.MedianVar(b.segN)); math.Abs(tip-b.ref) > band {
		refs = append(refs, reference{level: tip, raw: rc.xs[len(rc.xs)-1], n: 1,
			desc: fmt.Sprintf("the newest result, at %s", shortSHA(rc.pts[len(rc.pts)-1].Commit))})
	}
	return refs
}

func severity(v Verdict) int {
	switch v {
	case Fail:
		return 2
	case Inconclusive:
		return 1
	}
	return 0
}

func zOf(d, se float64) float64 {
	switch {
	case se > 0:
		return d / se
	case d == 0:
		return 0
	case d < 0:
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// repeatsCheck decides one head run against the baseline commit's
// repeated runs when the window is too short for a band.
func (c *checker) repeatsCheck(rc *relCheck) {
	cr := rc.cr
	cr.Method = MethodRepeats
	lb := logs(rc.bv)
	sigma := math.Max(pooledScale([][]float64{lb}), quantum(rc.bv, rc.hv))
	ref := robust.Median(rc.bv)
	rc.judge(ref)
	cr.Noise = num(100 * math.Expm1(sigma))
	cr.Resolution = repeatsResolution(rc.r.Limit, sigma, len(rc.bv))
	se := sigma * math.Sqrt(robust.MedianVar(len(rc.hv))+robust.MedianVar(len(rc.bv)))
	z := zOf(rc.worseBy(math.Log(rc.cur)-math.Log(ref)), se)
	cr.Z = num(z)
	desc := fmt.Sprintf("median of the baseline's %d runs", len(rc.bv))
	switch {
	case cr.worse && z > zCritical:
		cr.Verdict = Fail
		cr.Reason = fmt.Sprintf("%s against the reference (%s), beyond the %s%% limit and outside the noise band (z = %.1f, noise %s)",
			fmtChange(cr.Change), desc, fmtNum(rc.r.Limit), z, fmtPct(cr.Noise))
	case cr.worse:
		cr.Verdict = Inconclusive
		cr.RunsToDecide = minRepeats
		cr.Reason = fmt.Sprintf("%s against the reference (%s) is beyond the %s%% limit but within the noise band (z = %.1f, noise %s); repeat the run at head too (perfgate run --repeat %d)",
			fmtChange(cr.Change), desc, fmtNum(rc.r.Limit), z, fmtPct(cr.Noise), len(rc.bv))
	case cr.better && z < -zCritical:
		cr.Verdict = Improved
		cr.Reason = fmt.Sprintf("%s against the reference (%s), outside the noise band (z = %.1f)", fmtChange(cr.Change), desc, z)
	default:
		cr.Verdict = Pass
	}
}

// thresholdCheck applies the literal threshold: no noise estimate, so the
// verdict is unqualified.
func (c *checker) thresholdCheck(rc *relCheck) {
	cr := rc.cr
	cr.Method = MethodThreshold
	cr.Unqualified = true
	ratio := rc.judge(robust.Median(rc.bv))
	why := fmt.Sprintf("only %d earlier result(s) and %d baseline run(s): no noise estimate, so the verdict is unqualified", len(rc.xs), len(rc.bv))
	if c.cfg.Baseline.Window < minWindow {
		why = fmt.Sprintf("the window is %d (under %d): no noise estimate, so the verdict is unqualified", c.cfg.Baseline.Window, minWindow)
	}
	switch {
	case math.IsNaN(ratio):
		// A zero baseline: any worsening is an infinite regression.
		if (rc.lower && rc.cur > 0) || (!rc.lower && rc.cur < 0) {
			cr.Verdict = Fail
			cr.Reason = fmt.Sprintf("the baseline is 0 and head is %s; %s", fmtNum(rc.cur), why)
		} else {
			cr.Verdict = Pass
		}
	case cr.worse:
		cr.Verdict = Fail
		cr.Reason = fmt.Sprintf("%s is beyond the %s%% limit; %s", fmtChange(cr.Change), fmtNum(rc.r.Limit), why)
	case cr.better:
		cr.Verdict = Improved
		cr.Reason = why
	default:
		cr.Verdict = Pass
	}
}

// leadingLevel returns how many of the window's oldest values are an
// earlier level rather than outliers: a run of values at its start, all
// beyond edge on the same side of ref, followed by a value within it,
// shorter than what follows, and with no value beyond edge on that side
// after it. An excursion that returned is bounded by
// values at the level on both sides; at the window's start only one side
// is seen, so an off-level start (main before an optimisation) is a level
// the window caught the end of, not a tail event the next run may repeat.
func leadingLevel(lx []float64, ref, edge float64) int {
	side := func(v float64) int {
		switch d := v - ref; {
		case d > edge:
			return 1
		case d < -edge:
			return -1
		}
		return 0
	}
	s := side(lx[0])
	if s == 0 {
		return 0
	}
	j := 1
	for j < len(lx) && side(lx[j]) == s {
		j++
	}
	if j >= len(lx)-j || side(lx[j]) != 0 {
		return 0
	}
	for _, v := range lx[j:] {
		if side(v) == s {
			return 0 // main shows such values later too: a tail, not a level
		}
	}
	return j
}

// shiftStarts drops the segment starts before lead and renumbers the rest
// from lead, for the window without its first lead values.
func shiftStarts(starts []int, lead int) []int {
	if lead == 0 {
		return starts
	}
	out := []int{0}
	for _, st := range starts {
		if st > lead {
			out = append(out, st-lead)
		}
	}
	return out
}

// failZ is the robust z beyond which head's n runs fail in the noise
// band: one or two runs need zFailOne, as a single run on real CI has
// heavier tails than the band's normal noise (see the package comment).
func failZ(n int, light bool) float64 {
	if light {
		return zLight
	}
	if n < 3 {
		return zFailOne
	}
	return zCritical
}

// headVar is the variance, in log units squared, of the median of head's
// runs as a draw of the window's noise. The window's values are one
// session each (a commit's median of k runs), so their noise sigma holds
// a session's own level (tau) and its runs' spread (w): sigma^2 = tau^2 +
// w^2 MedianVar(k). One run at head is one such value. Repeated runs at
// head are one session too: their median shrinks w's part, never tau's
// (taking them as independent draws of the window made --repeat 5 against
// one run a commit fail 4.9% of unchanged heads on the real histories).
// w is the spread of head's runs and the baseline commit's about their
// own medians, floored at the quantisation step q; tau what the window's
// noise leaves beyond it.
//
// It also returns the share of the window's variance that is the
// sessions' own (tau^2/sigma^2; 1 for one run): how likely an outlier the
// window shows is to move all of head's runs together.
func (rc *relCheck) headVar(sigma, q float64) (float64, float64) {
	n := len(rc.hv)
	if n < 2 || sigma <= 0 {
		return sigma * sigma * robust.MedianVar(n), 1
	}
	sides := [][]float64{centred(logs(rc.hv))}
	if len(rc.bv) > 1 {
		sides = append(sides, centred(logs(rc.bv)))
	}
	w := math.Max(pooledScale(sides), q)
	inv := 0.0
	for _, k := range rc.ks {
		inv += robust.MedianVar(k)
	}
	inv /= float64(len(rc.ks))
	tau2 := math.Max(0, sigma*sigma-w*w*inv)
	return tau2 + w*w*robust.MedianVar(n), tau2 / (sigma * sigma)
}

// fastMode says why one run better than main's level may still hide a
// regression: the window shows a second, better level (at least
// minFastMode results beyond edge in the good direction, a mode rather
// than an outlier), head is itself beyond edge on that side, and head is
// worse than that level by more than the limit. On multi-modal noise (a
// fast mode some runs land in) a run of the fast mode made 10% worse is
// still below main's usual level; one run cannot tell it from an
// unchanged run between the modes. dev is head's log deviation from the
// reference level; "" when none of this holds.
func (rc *relCheck) fastMode(resid []float64, dev, edge float64) string {
	if rc.worseBy(dev) >= -edge {
		return ""
	}
	var good []float64
	for _, r := range resid {
		if rc.worseBy(r) < -edge {
			good = append(good, r)
		}
	}
	if len(good) < minFastMode {
		return ""
	}
	mode := robust.Median(good)
	ratio := math.Exp(dev - mode)
	if worse, _ := rc.beyond(ratio); !worse {
		return ""
	}
	return fmt.Sprintf("%s against the better level the base branch also shows (%d of its %d results, %s from its level): one run cannot tell a regression of a run at that level from an unchanged run between the two; three runs decide (perfgate run --repeat 3)",
		fmtChange(num(100*(ratio-1))), len(good), len(resid), fmtChange(num(100*math.Expm1(mode))))
}

// minFastMode is how many results beyond the band on the good side make a
// second level rather than outliers.
const minFastMode = 2
