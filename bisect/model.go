package bisect

import (
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfgate/perfgate/internal/robust"
)

// The model: commits 0..n along the first-parent chain, 0 the good end
// and n the bad end. The culprit k (1 <= k <= n) is the first commit at
// the bad level: every commit before k measures around the good level,
// every commit from k on around the bad one. Values are compared on a log
// scale (a change is relative) unless some value is zero or negative.
//
// The two levels are measured at the ends, then refined with the commits
// that other commits settle on either side (medians throughout), first
// with a cheap posterior that plugs them in (a value counts with the
// learned noise shape, see noise.go, around either level, its scale
// widened by the uncertainty of the level's median). The posterior
// the search acts on then integrates both levels out (marginalRow): the
// likelihood of culprit k is the integral, over a flat prior on each level,
// of the shape's densities of every value before k around the good level and
// from k on around the bad one. A plugged-in level that is off by its
// standard error moves every commit's evidence the same way, which the
// widened scale cannot express. The shape's wild component means that one
// run far from both levels carries little evidence, and the commit is measured
// again instead of deciding the search.
//
// The noise is not plugged in but averaged over (see build), so that a
// few runs that happen to agree closely do not make the search
// overconfident. Its centre comes from the repeated runs of a commit (the
// ends at least) or, in a stored history of one run per commit, from the
// differences between successive measured commits.
//
// Commits between two measured commits split the values the same way, so
// the posterior is kept per gap between measured commits: a gap of g
// commits holds g hypotheses of equal likelihood.

const (
	maxNu       = 4    // degrees of freedom of the Student-t likelihood
	minRelNoise = 1e-4 // noise floor on the log scale (0.01%), so identical values do not divide by zero
	madToSigma  = 1.4826
)

// sample is the data the model sees: values per commit index.
type sample struct {
	n       int
	values  [][]float64 // per index 0..n, raw
	skipped []bool      // untestable commits: never measured again
	// stops tells that a search chooses from these values when to stop
	// measuring (it has a Measurer): the noise's prior then takes
	// noiseDFDiscount degrees of freedom off.
	stops bool
	// history holds runs of the same series outside the range, one slice
	// per commit: their spread around each commit's median teaches the
	// noise's shape.
	history [][]float64
	// tiltCap is Options.variant's (0: the tilt applies everywhere).
	tiltCap float64
}

// scale maps raw values to the model's scale.
type scale struct{ log bool }

func scaleOf(values [][]float64) scale {
	seen := false
	for _, vs := range values {
		for _, v := range vs {
			seen = true
			if v <= 0 {
				return scale{}
			}
		}
	}
	return scale{log: seen}
}

func (s scale) to(v float64) float64 {
	if s.log {
		return math.Log(v)
	}
	return v
}

func (s scale) from(v float64) float64 {
	if s.log {
		return math.Exp(v)
	}
	return v
}

// noise is the estimated standard deviation of one run (on the model's
// scale) and the degrees of freedom behind it.
type noise struct {
	sigma float64
	df    int
	from  string // "repeats", "neighbours" or "" (no estimate)
}

// estimateNoise pools the variance of repeated runs of the same commit;
// without enough repeats it falls back to the successive differences of
// the measured commits' means (a level shift disturbs only one of them),
// as in a stored history of one run per nightly commit.
func estimateNoise(ys [][]float64, floor float64) noise {
	ss, df := 0.0, 0
	var means []float64
	var counts []int
	for _, y := range ys {
		if len(y) == 0 {
			continue
		}
		m := mean(y)
		for _, v := range y {
			ss += (v - m) * (v - m)
		}
		df += len(y) - 1
		means = append(means, m)
		counts = append(counts, len(y))
	}
	if df >= 2 {
		return noise{sigma: math.Max(math.Sqrt(ss/float64(df)), floor), df: df, from: "repeats"}
	}
	if len(means) >= 4 {
		d := make([]float64, len(means)-1)
		for i := range d {
			d[i] = math.Abs(means[i+1]-means[i]) / math.Sqrt(1/float64(counts[i])+1/float64(counts[i+1]))
		}
		// The MAD is about 37% efficient: count its df accordingly.
		return noise{sigma: math.Max(madToSigma*robust.Median(d), floor), df: max(1, int(0.37*float64(len(d)-1))), from: "neighbours"}
	}
	if df == 1 {
		return noise{sigma: math.Max(math.Sqrt(ss), floor), df: 1, from: "repeats"}
	}
	return noise{}
}

// levelsNoise is the noise's starting point when the ends have one value
// each and no commit has repeats yet: every value's distance from the
// nearer of the two ends, with one degree of freedom per value beyond
// the two levels. The posterior averages over a wide grid around it.
func levelsNoise(ys [][]float64, floor float64) noise {
	n := len(ys) - 1
	if len(ys[0]) == 0 || len(ys[n]) == 0 {
		return noise{}
	}
	g, b := robust.Median(ys[0]), robust.Median(ys[n])
	ss, count := 0.0, 0
	for _, y := range ys {
		for _, v := range y {
			d := math.Min(math.Abs(v-g), math.Abs(v-b))
			ss += d * d
			count++
		}
	}
	if count <= 2 {
		return noise{}
	}
	return noise{sigma: math.Max(math.Sqrt(ss/float64(count-2)), floor), df: count - 2, from: "levels"}
}

// gap is the set of hypotheses k in (lo, hi]: the culprit lies after
// measured commit lo and at or before measured commit hi.
type gap struct {
	lo, hi int
	logL   float64 // log-likelihood of any one k in the gap
	mass   float64 // posterior probability of the whole gap
}

// posterior is the distribution of the culprit given the sample.
type posterior struct {
	n     int
	sc    scale
	noise noise
	nu    float64
	sigma float64 // the noise the posterior settled on
	// discount is the degrees of freedom the noise's prior takes off;
	// tiltCap stops the tilt at that multiple of the noise estimate.
	discount, tiltCap float64
	good              float64 // the good level
	bad               float64 // the bad level
	goodN             int     // values behind the good level
	badN              int     // values behind the bad level
	gaps              []gap
	// atSigma are the gaps at the noise sigma alone, not averaged over
	// the noise: where the next run splits the mass in half (see pick).
	atSigma []gap
	// shape is the noise's form around a level: core, second mode, wild runs.
	shape shape
	ys    [][]float64 // values on the model's scale, outliers dropped
	// ignored[i][j] tells that value j of commit i is an outlier.
	ignored [][]bool
}

// outlierZ is how many robust standard deviations from its commit's
// median a run must lie to be ignored as an outlier (a GPU that
// throttled, a benchmark that hit a cold cache). Only commits with three
// runs or more can tell an outlier from the rest.
const outlierZ = 12

// dropOutliers removes the runs of commits with three runs or more that
// lie far from their commit's median, in units of a robust noise scale:
// the median of the absolute differences between two runs of one commit.
func dropOutliers(ys [][]float64) ([][]float64, [][]bool) {
	var pairs []float64
	for _, y := range ys {
		for a := range y {
			for b := a + 1; b < len(y); b++ {
				pairs = append(pairs, math.Abs(y[a]-y[b])/math.Sqrt2)
			}
		}
	}
	ignored := make([][]bool, len(ys))
	if len(pairs) < 3 {
		return ys, ignored
	}
	sigma := madToSigma * robust.Median(pairs)
	if sigma <= 0 {
		return ys, ignored
	}
	out := make([][]float64, len(ys))
	for i, y := range ys {
		out[i] = y
		if len(y) < 3 {
			continue
		}
		m := robust.Median(y)
		var kept []float64
		for j, v := range y {
			if math.Abs(v-m) > outlierZ*sigma {
				if ignored[i] == nil {
					ignored[i] = make([]bool, len(y))
				}
				ignored[i][j] = true
				continue
			}
			kept = append(kept, v)
		}
		out[i] = kept
	}
	return out, ignored
}

// floorFor returns the noise floor on the model's scale.
func floorFor(sc scale, ys [][]float64) float64 {
	if sc.log {
		return minRelNoise
	}
	var all []float64
	for _, y := range ys {
		all = append(all, y...)
	}
	m := math.Abs(robust.Median(all))
	if m == 0 || math.IsNaN(m) {
		return 1e-12
	}
	return minRelNoise * m
}

// posterior returns the posterior of the culprit. ok is false while an
// end has no values or the noise cannot be estimated.
func (s *sample) posterior() (*posterior, bool) {
	sc := scaleOf(s.values)
	ys := make([][]float64, len(s.values))
	for i, vs := range s.values {
		if len(vs) == 0 {
			continue
		}
		ys[i] = make([]float64, len(vs))
		for j, v := range vs {
			ys[i][j] = sc.to(v)
		}
	}
	p := &posterior{n: s.n, sc: sc}
	if s.stops {
		p.discount = noiseDFDiscount
		p.tiltCap = s.tiltCap
	}
	p.shape = defaultShape()
	ys, p.ignored = dropOutliers(ys)
	p.ys = ys
	floor := floorFor(sc, ys)
	p.noise = estimateNoise(ys, floor)
	if p.noise.df == 0 {
		p.noise = levelsNoise(ys, floor)
	}
	if p.noise.df == 0 || len(ys[0]) == 0 || len(ys[s.n]) == 0 {
		return p, false
	}
	p.goodN, p.badN = len(ys[0]), len(ys[s.n])
	p.good, p.bad = level(ys[0]), level(ys[s.n])
	p.build(false)
	// Refine the levels with the commits that are settled on one side by
	// another commit: one before a commit that is good with 99% is good,
	// one after a commit that is bad with 99% is bad. The commits next to
	// the step, whose own values decide their side, are left out, so the
	// levels are not pulled apart by the values that were sorted by them.
	for range 2 {
		good, bad := p.settled()
		if len(good) == len(ys[0]) && len(bad) == len(ys[s.n]) {
			break
		}
		p.goodN, p.badN = len(good), len(bad)
		p.good, p.bad = level(good), level(bad)
		p.build(false)
	}
	// Learn the noise's shape from the runs whose level is known, and
	// judge the commits by it.
	var hist [][]float64
	for _, h := range s.history {
		var hy []float64
		for _, v := range h {
			if !sc.log || v > 0 {
				hy = append(hy, sc.to(v))
			}
		}
		hist = append(hist, hy)
	}
	res := p.residuals(hist)
	p.shape = fitShape(res, p.noise.sigma)
	p.shape.countHidden(p.ys, p.good, p.bad, p.noise.sigma, len(res))
	p.shape.span = span(p.ys, p.noise.sigma)
	p.build(false)
	p.build(true)
	return p, true
}

// span returns the width of the range the values cover, widened by two
// noise standard deviations either side.
func span(ys [][]float64, sigma float64) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range ys {
		for _, v := range y {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if hi < lo {
		return 0
	}
	return hi - lo + 4*sigma
}

// residuals returns the deviations of the runs whose level is known from
// that level: the ends' and the settled commits' from the level of their
// side, and the stored history's repeats from their commit's median.
func (p *posterior) residuals(history [][]float64) []float64 {
	var res []float64
	lastGood, firstBad := p.settledBounds()
	// Each side's level from every run settled on it, the commits next to
	// the step included (with few runs a side's median sits between its
	// modes, and a run of the second mode would not stand out).
	var gs, bs []float64
	for i, y := range p.ys {
		switch {
		case i == 0 || (i <= lastGood && i < p.n):
			gs = append(gs, y...)
		case i == p.n || i >= firstBad:
			bs = append(bs, y...)
		}
	}
	good, bad := level(gs), level(bs)
	for i, y := range p.ys {
		switch {
		case len(y) == 0:
		case i == 0 || i <= lastGood:
			for _, v := range y {
				res = append(res, v-good)
			}
		case i == p.n || i >= firstBad:
			for _, v := range y {
				res = append(res, v-bad)
			}
		default:
			// An unsettled commit: from the nearer level. A slow run of a
			// good commit may pass for a bad one, but a slow run of a bad
			// commit lies beyond both levels and shows the second mode.
			for _, v := range y {
				if math.Abs(v-p.good) < math.Abs(v-p.bad) {
					res = append(res, v-p.good)
				} else {
					res = append(res, v-p.bad)
				}
			}
		}
	}
	for _, h := range history {
		if len(h) < 2 {
			continue
		}
		m := robust.Median(h)
		for _, v := range h {
			res = append(res, v-m)
		}
	}
	return res
}

// innerValues counts the values of commits between the ends that are
// not settled on either side.
func (p *posterior) innerValues() int {
	c := 0
	for i, y := range p.ys {
		if i == 0 || i == p.n {
			continue
		}
		if q := p.pBad(i); q > 0.01 && q < 0.99 {
			c += len(y)
		}
	}
	return c
}

// settled returns the values of the ends and of the commits settled on
// either side.
func (p *posterior) settled() (good, bad []float64) {
	lastGood, firstBad := p.settledBounds()
	for i, y := range p.ys {
		switch {
		case len(y) == 0:
		case i == 0 || i < lastGood:
			good = append(good, y...)
		case i == p.n || i > firstBad:
			bad = append(bad, y...)
		}
	}
	return good, bad
}

// settledBounds returns the last commit that is good with 99% and the
// first that is bad with 99% (0 and n when none is).
func (p *posterior) settledBounds() (lastGood, firstBad int) {
	lastGood, firstBad = 0, p.n
	for i, y := range p.ys {
		if len(y) == 0 || i == 0 || i == p.n {
			continue
		}
		if p.pBad(i) <= 0.01 {
			lastGood = i
		}
		if p.pBad(i) >= 0.99 && firstBad == p.n {
			firstBad = i
		}
	}
	return lastGood, firstBad
}

// The noise is not known, so the posterior averages over it: a grid of
// noise levels around the estimate, each weighted by how well it explains
// the spread of the ends' own runs and by the prior below, and each
// judging the intermediate values with its own likelihood, so that those
// values inform the noise too. A plug-in noise estimate would be
// overconfident whenever the few runs happen to agree closely.
//
// When a search measures (it has a Measurer), the prior of the noise is
// p(sigma) ∝ sigma^(noiseDFDiscount-1), not the scale-free 1/sigma: the
// posterior of the noise is the one the scale-free prior gives with
// noiseDFDiscount degrees of freedom fewer. The reason is optional
// stopping: the search decides when to stop from the same runs that
// measure the noise, at the ends (they stop once their step is four
// standard errors, soonest when their runs agree closely) and in the
// search (it stops once a commit holds Confidence, soonest when the noise
// looks small). So the runs it stops at are more often than not those
// that underestimate the noise, and the posterior, exact for a noise drawn
// from the prior, is optimistic at the one noise a benchmark has: at a
// step of 2 noise standard deviations, 5.9-6.2% of the commits named at
// 95% were wrong, and with the true noise plugged in only 0.6%. Two
// degrees of freedom fewer bring that to 2.7-3.8% for about one run more
// at 4 standard deviations (docs/bisect.md has the measurements). Stored
// values alone (no Measurer) involve no stopping and keep the scale-free
// prior.
const (
	// noiseDFDiscount is how many degrees of freedom the noise's prior
	// takes off: 0 is the scale-free prior 1/sigma.
	noiseDFDiscount = 2

	// The grid spans the estimate times e^-w .. e^w, w = 2 + 1.5/sqrt(df)
	// (df of the ends' spread): two runs per end may underestimate the
	// noise tenfold, one time in a hundred.
	gridHalfWidth = 2.0
	gridPoints    = 41
)

// build computes the gaps' masses from the levels and the noise: with
// the levels integrated out (marginal, see marginalRow), or, cheaper and
// used to find the levels that settled commits give, with the levels
// plugged in.
func (p *posterior) build(marginal bool) {
	p.nu = maxNu
	var measured []int
	for i, y := range p.ys {
		if len(y) > 0 {
			measured = append(measured, i)
		}
	}
	ss, df := 0.0, 0
	for _, y := range [][]float64{p.ys[0], p.ys[p.n]} {
		m := mean(y)
		for _, v := range y {
			ss += (v - m) * (v - m)
		}
		df += len(y) - 1
	}
	vg, vb := 1+robust.MedianVar(p.goodN), 1+robust.MedianVar(p.badN)
	nGaps := len(measured) - 1
	points := gridPoints
	if marginal {
		points = marginalGridPoints
	}
	// logL[g][j]: log-likelihood of gap j under grid noise g.
	logL := make([][]float64, points)
	sigmas := make([]float64, points)
	w := gridHalfWidth + 1.5/math.Sqrt(float64(max(df, 1)))
	for g := range logL {
		u := -w + 2*w*float64(g)/float64(points-1)
		sigma := p.noise.sigma * math.Exp(u)
		sigmas[g] = sigma
		// The grid is uniform in log sigma, which is the prior 1/sigma;
		// p.discount tilts it to sigma^(p.discount-1).
		logPrior := p.logTilt(sigma)
		if marginal {
			logL[g] = p.marginalRow(measured, sigma)
			for j := range logL[g] {
				logL[g][j] += logPrior
			}
			continue
		}
		sg, sb := sigma*math.Sqrt(vg), sigma*math.Sqrt(vb)
		base := logPrior - float64(df)*math.Log(sigma) - ss/(2*sigma*sigma)
		llr := make([]float64, len(measured))
		for j, i := range measured {
			if i == 0 || i == p.n {
				continue
			}
			for _, v := range p.ys[i] {
				lg := p.shape.logDensity(v-p.good, sg)
				base += lg
				llr[j] += p.shape.logDensity(v-p.bad, sb) - lg
			}
		}
		row := make([]float64, nGaps)
		suffix := 0.0
		for j := nGaps; j >= 1; j-- {
			suffix += llr[j]
			row[j-1] = base + suffix
		}
		logL[g] = row
	}
	gaps := make([]gap, nGaps)
	for j := range gaps {
		gaps[j] = gap{lo: measured[j], hi: measured[j+1]}
		col := make([]float64, points)
		for g := range col {
			col[g] = logL[g][j]
		}
		gaps[j].logL = logSumExp(col)
	}
	maxLog := math.Inf(-1)
	for _, g := range gaps {
		maxLog = math.Max(maxLog, g.logL+math.Log(float64(g.hi-g.lo)))
	}
	total := 0.0
	for i := range gaps {
		g := &gaps[i]
		g.mass = float64(g.hi-g.lo) * math.Exp(g.logL-maxLog)
		total += g.mass
	}
	for i := range gaps {
		gaps[i].mass /= total
	}
	p.gaps = gaps
	// The noise the posterior settled on: the geometric mean over the
	// grid, weighted as the scale-free prior would (the report shows the
	// noise the runs measure, not the conservative prior's).
	sum, wsum := 0.0, 0.0
	for g := range logL {
		w := 0.0
		for j, gp := range gaps {
			w += float64(gp.hi-gp.lo) * math.Exp(logL[g][j]-maxLog)
		}
		w *= math.Exp(p.logTilt(sigmas[0]) - p.logTilt(sigmas[g]))
		sum += w * math.Log(sigmas[g])
		wsum += w
	}
	if wsum > 0 {
		p.sigma = math.Exp(sum / wsum)
	}
	// The gaps' masses at the one noise level nearest p.sigma, for the
	// choice of the next commit.
	gs := 0
	for g := range sigmas {
		if math.Abs(math.Log(sigmas[g]/p.sigma)) < math.Abs(math.Log(sigmas[gs]/p.sigma)) {
			gs = g
		}
	}
	p.atSigma = make([]gap, len(gaps))
	copy(p.atSigma, gaps)
	lmax := math.Inf(-1)
	for j := range gaps {
		lmax = math.Max(lmax, logL[gs][j])
	}
	tot := 0.0
	for j := range p.atSigma {
		g := &p.atSigma[j]
		g.mass = float64(g.hi-g.lo) * math.Exp(logL[gs][j]-lmax)
		tot += g.mass
	}
	for j := range p.atSigma {
		p.atSigma[j].mass /= tot
	}
}

// logTilt is the log of the noise prior's tilt at sigma,
// sigma^p.discount, which turns the grid's scale-free prior into
// sigma^(p.discount-1); with a tiltCap (a variant) it stops growing at
// tiltCap times the noise estimate.
func (p *posterior) logTilt(sigma float64) float64 {
	if p.tiltCap > 0 {
		sigma = math.Min(sigma, p.tiltCap*p.noise.sigma)
	}
	return p.discount * math.Log(sigma)
}

const (
	marginalGridPoints = 17 // noise grid of the marginal posterior
	levelPoints        = 17 // grid of each level, +-6 standard errors of its end's median
)

// marginalRow returns the log-likelihood of each gap under noise sigma,
// the two levels integrated out (flat priors) on grids around the
// estimated levels.
func (p *posterior) marginalRow(measured []int, sigma float64) []float64 {
	nm := len(measured)
	side := func(centre float64, nEnd int) (acc [][]float64, step float64) {
		hw := 6 * sigma * math.Sqrt(robust.MedianVar(nEnd))
		step = 2 * hw / float64(levelPoints-1)
		acc = make([][]float64, levelPoints)
		for a := range acc {
			mu := centre - hw + step*float64(a)
			row := make([]float64, nm)
			for j, i := range measured {
				sum := 0.0
				for _, v := range p.ys[i] {
					sum += p.shape.logDensity(v-mu, sigma)
				}
				row[j] = sum
			}
			acc[a] = row
		}
		return acc, step
	}
	ga, gstep := side(p.good, len(p.ys[0]))
	ba, bstep := side(p.bad, len(p.ys[p.n]))
	for a := range ga {
		for j := 1; j < nm; j++ {
			ga[a][j] += ga[a][j-1]
		}
		for j := nm - 2; j >= 0; j-- {
			ba[a][j] += ba[a][j+1]
		}
	}
	row := make([]float64, nm-1)
	col := make([]float64, levelPoints)
	for j := range row {
		for a := range col {
			col[a] = ga[a][j]
		}
		lg := logSumExp(col)
		for a := range col {
			col[a] = ba[a][j+1]
		}
		row[j] = lg + logSumExp(col) + math.Log(gstep) + math.Log(bstep)
	}
	return row
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// logT is the log-density of a t distribution with p.nu degrees of
// freedom and scale s at x, up to a constant.
func (p *posterior) logT(x, s float64) float64 {
	z := x / s
	return -math.Log(s) - (p.nu+1)/2*math.Log1p(z*z/p.nu)
}

// gapOf returns the gap holding hypothesis k.
func (p *posterior) gapOf(k int) *gap {
	i := sort.Search(len(p.gaps), func(i int) bool { return p.gaps[i].hi >= k })
	return &p.gaps[i]
}

// prob returns P(culprit = k).
func (p *posterior) prob(k int) float64 {
	if k < 1 || k > p.n {
		return 0
	}
	g := p.gapOf(k)
	return g.mass / float64(g.hi-g.lo)
}

// pBad returns P(commit i is at the bad level) = P(culprit <= i).
func (p *posterior) pBad(i int) float64 { return pBadIn(p.gaps, i, p.n) }

func pBadIn(gaps []gap, i, n int) float64 {
	if i <= 0 {
		return 0
	}
	if i >= n {
		return 1
	}
	s := 0.0
	for _, g := range gaps {
		if g.hi <= i {
			s += g.mass
			continue
		}
		if g.lo < i {
			s += g.mass * float64(i-g.lo) / float64(g.hi-g.lo)
		}
		break
	}
	return math.Min(1, s)
}

// best returns the most probable culprit and its probability; among
// equally probable commits, the oldest.
func (p *posterior) best() (int, float64) {
	k, pk := 0, -1.0
	for _, g := range p.gaps {
		if d := g.mass / float64(g.hi-g.lo); d > pk+1e-12 {
			k, pk = g.lo+1, d
		}
	}
	return k, pk
}

// credibleRange returns the shortest run of commits first..last whose
// total probability reaches conf (the oldest of equally short ones), and
// that probability.
func (p *posterior) credibleRange(conf float64) (first, last int, mass float64) {
	probs := make([]float64, p.n+1)
	for k := 1; k <= p.n; k++ {
		probs[k] = p.prob(k)
	}
	first, last, mass = 1, p.n, 1
	lo, sum := 1, 0.0
	for hi := 1; hi <= p.n; hi++ {
		sum += probs[hi]
		for lo < hi && sum-probs[lo] >= conf {
			sum -= probs[lo]
			lo++
		}
		if sum >= conf && hi-lo < last-first {
			first, last, mass = lo, hi, sum
		}
	}
	return first, last, math.Min(mass, 1)
}

// bestGap returns the gap of highest mass.
func (p *posterior) bestGap() gap {
	var b gap
	for _, g := range p.gaps {
		if g.mass > b.mass {
			b = g
		}
	}
	return b
}

// sides returns the values on the good and bad side of the split after
// commit lo (measured commits <= lo, and > lo).
func (p *posterior) sides(lo int) (good, bad []float64, nGood, nBad int) {
	for i, y := range p.ys {
		if len(y) == 0 {
			continue
		}
		if i <= lo {
			good = append(good, y...)
			nGood++
		} else {
			bad = append(bad, y...)
			nBad++
		}
	}
	return good, bad, nGood, nBad
}

// stepTest tests whether the levels of two groups of values differ, with
// the noise estimate s (df degrees of freedom): a two-sided t test. It
// returns the difference of means (bad - good), its standard error and
// the p-value.
func stepTest(good, bad []float64, nz noise) (diff, se, p float64) {
	diff = mean(bad) - mean(good)
	se = nz.sigma * math.Sqrt(1/float64(len(good))+1/float64(len(bad)))
	if nz.df == 0 || se == 0 {
		return diff, se, 1
	}
	t := math.Abs(diff) / se
	p = 2 * (1 - stats.TDist{V: float64(nz.df)}.CDF(t))
	return diff, se, p
}

// sidesNoise is the noise of a two-sample t test between the two sides
// of a split: their pooled variance, which also holds any variation
// between commits on one side. It keeps nz when that has more degrees of
// freedom.
func sidesNoise(good, bad []float64, nz noise) noise {
	df := len(good) + len(bad) - 2
	if df <= nz.df {
		return nz
	}
	mg, mb := mean(good), mean(bad)
	ss := 0.0
	for _, v := range good {
		ss += (v - mg) * (v - mg)
	}
	for _, v := range bad {
		ss += (v - mb) * (v - mb)
	}
	return noise{sigma: math.Max(math.Sqrt(ss/float64(df)), nz.sigma*1e-3), df: df, from: nz.from}
}

// tQuantile returns the q quantile of Student's t with df degrees of
// freedom.
func tQuantile(q float64, df int) float64 { return robust.TQuantile(q, float64(df)) }

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
