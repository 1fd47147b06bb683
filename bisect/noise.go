package bisect

import (
	"math"
	"sort"

	"github.com/perfgate/perfgate/internal/robust"
)

// shape is the form of one run's deviation from its commit's level: a
// Gaussian core of standard deviation sigma (the noise grid's), a second
// mode (a share of the runs shifted by a learned amount: a GPU that
// throttles, a noisy neighbour on the machine, a cache that is cold one
// run in five) and a broad component of wild runs (a Cauchy density ten
// core standard deviations wide). Real benchmark noise has both: the
// histories in ../shared/realnoise have 5-30% of their points beyond four
// robust standard deviations, and some are bimodal.
//
// A single Gaussian (or t) likelihood judges a slow run of a good commit,
// 10% above the good level, as a run of the bad level 12% above it, and
// is sure of it; with the second mode learned, the run is ambiguous, the
// commit stays near one half and is measured again.
type shape struct {
	core, mode, wild float64 // weights, summing to 1
	shift            float64 // centre of the second mode, on the model's scale
	spread           float64 // its own spread, added to the core's in quadrature
	// span is the width of the range the sample's values cover: a run of
	// the anywhere component (weight anywhere, taken from the core) is
	// uniform over it.
	span float64
}

// anywhere is the weight of runs that may land anywhere in the range the
// values cover, at the other level too: real noise has second modes that
// sit where nothing before showed them (a series of ../shared/realnoise
// has a tenth of its runs 30% fast), and a run of such a mode at the
// other level is as likely as at any other place. Unlike the Cauchy's
// wild runs, whose density at the other level falls with the step, this
// caps what one run can say at about (1-anywhere)·core/(anywhere/span):
// a lone run next to the step counts for less the closer the levels are.
// On the real-noise trials (BenchmarkRealNoiseCalibration) 0.02 took the
// answers found wrong from 3.2% to 2.1% for 0.2-0.3 runs more on a clear
// step.
const anywhere = 0.02

// Weights of the wild runs: wildPrior pseudo-runs of the wild kind among
// wildPrior+wildPseudo, so a handful of clean runs leaves room for a wild
// one, and a long clean history little.
const (
	wildPrior  = 1.0
	wildPseudo = 24.0
	wildScale  = 10.0 // the Cauchy scale, in core standard deviations
	// modeZ is how far from its level, in robust standard deviations of
	// the residuals, a run must lie to count towards the second mode or
	// the wild runs.
	modeZ = 4.5
	// minShapeRuns is how many residuals the shape needs before it is
	// learned: fewer cannot tell a mode from the spread.
	minShapeRuns = 5
	// minModeRuns is how many residuals a single run beyond the bar needs
	// around it to count as a second mode rather than a wild run.
	minModeRuns = 12
)

// defaultShape is the shape before any residual is seen.
func defaultShape() shape {
	w := wildPrior / (wildPrior + wildPseudo)
	return shape{core: 1 - w, wild: w}
}

// fitShape learns the shape from residuals (runs minus their level, on
// the model's scale: the ends, the commits settled on one side, the
// stored history's repeats) with core noise sigma. The runs beyond modeZ
// standard deviations on the side that holds more of them form the
// second mode: its weight is their share (with half a run of prior), its
// shift their median. The others count as wild runs.
func fitShape(res []float64, sigma float64) shape {
	n := len(res)
	if n < minShapeRuns || sigma <= 0 {
		return defaultShape()
	}
	// The core: the shortest interval that holds half of the residuals
	// (the shorth), robust to a second mode that holds up to half of the
	// runs, where the median absolute deviation is not. Its centre is the
	// core's, its width the core's scale (a normal's shortest half spans
	// +-0.674 standard deviations). The zeros that a level which is the
	// median of an odd number of runs leaves are left out.
	var rs []float64
	for _, r := range res {
		if math.Abs(r) > 1e-12 {
			rs = append(rs, r)
		}
	}
	centre, scale := 0.0, sigma
	if len(rs) >= minShapeRuns {
		sort.Float64s(rs)
		h := (len(rs) + 1) / 2
		best := math.Inf(1)
		for i := 0; i+h-1 < len(rs); i++ {
			if w := rs[i+h-1] - rs[i]; w < best {
				best, centre = w, (rs[i+h-1]+rs[i])/2
			}
		}
		if best > 0 {
			scale = best / (2 * 0.6745)
		}
	}
	// A scale from few residuals is itself uncertain: the bar is higher
	// while they are few, so that a handful of Gaussian runs does not make
	// up a mode.
	bar := modeZ * scale * (1 + 2/math.Sqrt(float64(max(len(rs), 1))))
	var pos, neg []float64
	for _, r := range res {
		switch {
		case r-centre > bar:
			pos = append(pos, r)
		case r-centre < -bar:
			neg = append(neg, r)
		}
	}
	side, other := pos, neg
	if len(neg) > len(pos) {
		side, other = neg, pos
	}
	sh := shape{}
	sh.wild = (wildPrior + float64(len(other))) / (wildPseudo + wildPrior + float64(n))
	if len(side) == 1 && len(other) == 0 && n < minModeRuns {
		// One run beyond the bar among few: a wild run until another
		// shows the mode (a short sample's shorth can be narrow by chance).
		other, side = side, nil
	}
	if len(side) > 0 {
		sort.Float64s(side)
		sh.shift = robust.Median(side)
		sh.mode = (float64(len(side)) + 0.5) / (float64(n) + 1)
		if len(side) >= 2 {
			sh.spread = (side[len(side)-1] - side[0]) / 2
		} else {
			sh.spread = scale
		}
	} else {
		sh.wild = (wildPrior + float64(len(other))) / (wildPseudo + wildPrior + float64(n))
	}
	sh.mode = math.Min(sh.mode, 0.5)
	sh.core = 1 - sh.mode - sh.wild
	return sh
}

// logDensity returns the log-density of a deviation r from the level
// under core noise sigma.
func (sh shape) logDensity(r, sigma float64) float64 {
	z := r / sigma
	d := sh.core * math.Exp(-z*z/2) / sigma
	if sh.mode > 0 {
		s2 := math.Sqrt(sigma*sigma + sh.spread*sh.spread)
		z2 := (r - sh.shift) / s2
		d += sh.mode * math.Exp(-z2*z2/2) / s2
	}
	w := wildScale * sigma
	d += sh.wild * math.Sqrt(2*math.Pi) / (math.Pi * w * (1 + (r/w)*(r/w)))
	if sh.span > 0 {
		d = (1-anywhere)*d + anywhere*math.Sqrt(2*math.Pi)/sh.span
	}
	return math.Log(d)
}

// irregular tells whether the runs showed noise beyond the Gaussian core
// that a lone run can fall into: a second mode. (Counting wild runs too
// was measured: uniform noise with few residuals shows false wild runs,
// costing 0.1-0.3 runs a trial in the clear scenarios, for no fewer wrong
// answers on fresh seeds.)
func (sh shape) irregular() bool {
	return sh.mode > 0
}

// level is where a side's runs centre: the middle of their shortest half
// (the shorth) from five runs on, which a second mode holding a fifth or
// more of them does not drag towards itself as it drags the median;
// the median below that.
func level(ys []float64) float64 {
	if len(ys) < 5 {
		return robust.Median(ys)
	}
	s := append([]float64(nil), ys...)
	sort.Float64s(s)
	h := (len(s) + 1) / 2
	best, centre := math.Inf(1), robust.Median(s)
	for i := 0; i+h-1 < len(s); i++ {
		if w := s[i+h-1] - s[i]; w < best {
			best, centre = w, robust.Median(s[i:i+h])
		}
	}
	return centre
}

// countHidden adds to the second mode's weight the runs it may hide: a
// run of the good level in the second mode can sit where the bad level's
// runs do (a GPU that throttles by about the step), and then it counts as
// a bad run, not as a residual of the mode. Every run within two spreads
// of good+shift and of bad (or of bad+shift and good) counts half, over
// the n residuals the weight was learned from.
func (sh *shape) countHidden(ys [][]float64, good, bad, sigma float64, n int) {
	if sh.mode <= 0 || n == 0 {
		return
	}
	s2 := math.Sqrt(sigma*sigma + sh.spread*sh.spread)
	hidden := 0.0
	for _, y := range ys {
		for _, v := range y {
			near := func(a, b float64) bool { return math.Abs(v-a) < 2*s2 && math.Abs(v-b) < 2*s2 }
			if near(good+sh.shift, bad) || near(bad+sh.shift, good) {
				hidden += 0.5
			}
		}
	}
	seen := sh.mode*(float64(n)+1) - 0.5
	mode := math.Min((seen+hidden+0.5)/(float64(n)+1), 0.5)
	sh.core -= mode - sh.mode
	sh.mode = mode
}
