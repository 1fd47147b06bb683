package watch

import (
	"math"
	"slices"
	"sort"

	"github.com/perfgate/perfgate/internal/robust"
)

// Params are the detector's settings. The zero value is not useful; start
// from DefaultParams.
type Params struct {
	// MinSegment is the fewest points a level must hold: a change point
	// leaves at least this many on each side, so a spike shorter than it
	// is never a level of its own, and a change at the tip is reported
	// only once this many points confirm the new level.
	MinSegment int
	// Threshold is the CUSUM statistic (mean difference in noise units
	// times sqrt(nL*nR/n)) beyond which binary segmentation splits, per
	// sqrt(log n).
	Threshold float64
	// MinZ is the smallest difference of the medians of the two levels
	// around a change, in units of its standard error, that survives
	// pruning.
	MinZ float64
	// MinMagnitude is the smallest relative change (0.02 = 2%) reported.
	MinMagnitude float64
	// Clip bounds each point's distance from the running median, in noise
	// units, before segmentation (heavy tails).
	Clip float64
}

// DefaultParams are the settings measured on ../shared/realnoise (see the
// package comment and realnoise_test.go).
func DefaultParams() Params {
	return Params{MinSegment: 5, Threshold: 2.4, MinZ: 6, MinMagnitude: 0.01, Clip: 3}
}

// Step is a change of level found in one series.
type Step struct {
	At         int     // index of the first point of the new level
	From       int     // for a drift: index of the first point of the drift; else At
	Before     float64 // level (median) of the segment before, in the input's units
	After      float64 // level of the segment after
	NoiseUnits float64 // difference of the levels in noise units of one point
	Z          float64 // difference of the medians over its standard error
	Sigma      float64 // noise of one point (log scale when Log)
	NBefore    int     // points in the level before
	NAfter     int     // points in the level after
	Drift      bool    // several same-direction steps over a drifting stretch, reported once
}

// Detect finds the changes of level of x (oldest first). Values are
// compared on a log scale when all are positive (a 5% change is the same
// at any level), else as they are.
func Detect(x []float64, p Params) []Step {
	n := len(x)
	if n < 2*p.MinSegment {
		return nil
	}
	useLog := allPositive(x)
	y := make([]float64, n)
	for i, v := range x {
		if useLog {
			y[i] = math.Log(v)
		} else {
			y[i] = v
		}
	}
	sigma := noise(y)
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return nil
	}
	yc := clipped(y, sigma, p)
	cuts := binseg(yc, sigma, p)
	cuts = prune(y, cuts, sigma, p, useLog)
	cuts = refine(yc, cuts, p)
	cuts = prune(y, cuts, sigma, p, useLog)
	return steps(y, cuts, sigma, p, useLog)
}

func allPositive(xs []float64) bool {
	for _, v := range xs {
		if !(v > 0) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// noise estimates the noise of one point from successive differences,
// which a level shift disturbs only once: the MAD of the differences, or,
// for quantised values whose differences are mostly 0, their mean
// absolute value.
func noise(y []float64) float64 {
	if len(y) < 3 {
		return 0
	}
	d := make([]float64, len(y)-1)
	for i := range d {
		d[i] = math.Abs(y[i+1] - y[i])
	}
	s := 1.4826 * medianOf(d) / math.Sqrt2
	if s > 0 {
		return s
	}
	sum := 0.0
	for _, v := range d {
		sum += v
	}
	// E|X-Y| = 2σ/√π for normal noise.
	return sum / float64(len(d)) * math.Sqrt(math.Pi) / 2
}

// clipped bounds every point to Clip noise units around the median of the
// MinSegment points either side, so one wild value cannot pull a level.
func clipped(y []float64, sigma float64, p Params) []float64 {
	h := p.MinSegment
	out := make([]float64, len(y))
	win := make([]float64, 0, 2*h+1) // y[a:b] sorted
	lim := p.Clip * sigma
	a, b := 0, 0
	for i := range y {
		na, nb := max(0, i-h), min(len(y), i+h+1)
		for ; b < nb; b++ {
			k, _ := slices.BinarySearch(win, y[b])
			win = slices.Insert(win, k, y[b])
		}
		for ; a < na; a++ {
			k, _ := slices.BinarySearch(win, y[a])
			win = slices.Delete(win, k, k+1)
		}
		m := win[len(win)/2]
		if len(win)%2 == 0 {
			m = (win[len(win)/2-1] + win[len(win)/2]) / 2
		}
		out[i] = min(max(y[i], m-lim), m+lim)
	}
	return out
}

// binseg is binary segmentation with the CUSUM statistic of a change in
// mean: a segment is split at its largest statistic when that exceeds
// Threshold*sqrt(log n). It returns the cut indices, sorted.
func binseg(y []float64, sigma float64, p Params) []int {
	n := len(y)
	cum := make([]float64, n+1)
	for i, v := range y {
		cum[i+1] = cum[i] + v
	}
	crit := p.Threshold * math.Sqrt(math.Log(float64(n)))
	var cuts []int
	var split func(a, b int)
	split = func(a, b int) {
		if b-a < 2*p.MinSegment {
			return
		}
		best, bk := 0.0, -1
		tot := cum[b] - cum[a]
		nn := float64(b - a)
		for k := a + p.MinSegment; k <= b-p.MinSegment; k++ {
			nl := float64(k - a)
			nr := nn - nl
			sl := cum[k] - cum[a]
			d := sl/nl - (tot-sl)/nr
			stat := math.Abs(d) * math.Sqrt(nl*nr/nn)
			if stat > best {
				best, bk = stat, k
			}
		}
		if bk < 0 || best/sigma <= crit {
			return
		}
		cuts = append(cuts, bk)
		split(a, bk)
		split(bk, b)
	}
	split(0, n)
	sort.Ints(cuts)
	return cuts
}

// refine moves each cut to the point, within MinSegment of where binary
// segmentation put it, that best splits the nearby values into two
// levels (least absolute deviation from each side's median; the CUSUM's
// mean is pulled by the old level's last points), and drops a cut that
// then leaves fewer than MinSegment points on a side: a change in the
// last points is reported only once MinSegment points confirm it.
func refine(y []float64, cuts []int, p Params) []int {
	m := p.MinSegment
	buf := make([]float64, 0, 4*m)
	out := cuts[:0]
	for i, c := range cuts {
		prev, next := 0, len(y)
		if len(out) > 0 {
			prev = out[len(out)-1]
		}
		if i+1 < len(cuts) {
			next = cuts[i+1]
		}
		a, b := max(prev, c-2*m), min(next, c+2*m)
		best, bk := math.Inf(1), c
		for k := max(a+1, c-m); k <= min(b-1, c+m); k++ {
			cost := absDev(y[a:k], buf) + absDev(y[k:b], buf)
			if cost < best {
				best, bk = cost, k
			}
		}
		if bk-prev < m || next-bk < m {
			continue
		}
		out = append(out, bk)
	}
	return out
}

// absDev is the sum of absolute deviations of xs from its median.
func absDev(xs, buf []float64) float64 {
	med := level(xs, 0, len(xs), buf)
	s := 0.0
	for _, v := range xs {
		s += math.Abs(v - med)
	}
	return s
}

// level is the median of y[a:b].
func level(y []float64, a, b int, buf []float64) float64 {
	buf = append(buf[:0], y[a:b]...)
	return medianOf(buf)
}

// medianOf is the median of xs, which it reorders.
func medianOf(xs []float64) float64 {
	m := len(xs)
	hi := robust.SelectKth(xs, m/2)
	if m%2 == 1 {
		return hi
	}
	// The largest of the lower half, which selectKth left before m/2.
	lo := xs[0]
	for _, v := range xs[1 : m/2] {
		lo = max(lo, v)
	}
	return (lo + hi) / 2
}

// prune removes, one at a time, the weakest cut whose neighbouring levels
// differ by less than MinZ standard errors or MinMagnitude, until every
// cut passes: the segments around a removed cut merge, and the cuts next
// to it are judged again on the merged level.
func prune(y []float64, cuts []int, sigma float64, p Params, useLog bool) []int {
	buf := make([]float64, 0, len(y))
	bounds := append(append([]int{0}, cuts...), len(y))
	lv := make([]float64, len(bounds)-1)
	for i := range lv {
		lv[i] = level(y, bounds[i], bounds[i+1], buf)
	}
	for len(bounds) > 2 {
		worst, wi := math.Inf(1), -1
		for i := 1; i < len(bounds)-1; i++ {
			z := medianZ(lv[i-1], lv[i], bounds[i]-bounds[i-1], bounds[i+1]-bounds[i], sigma)
			mag := magnitude(lv[i-1], lv[i], useLog)
			score := math.Min(z/p.MinZ, mag/math.Max(p.MinMagnitude, 1e-12))
			if score < 1 && score < worst {
				worst, wi = score, i
			}
		}
		if wi < 0 {
			break
		}
		// Segments wi-1 and wi merge.
		bounds = slices.Delete(bounds, wi, wi+1)
		lv = slices.Delete(lv, wi, wi+1)
		lv[wi-1] = level(y, bounds[wi-1], bounds[wi], buf)
	}
	return bounds[1 : len(bounds)-1]
}

func medianZ(a, b float64, na, nb int, sigma float64) float64 {
	se := sigma * math.Sqrt(robust.MedianVar(na)+robust.MedianVar(nb))
	return math.Abs(b-a) / se
}

// magnitude is the relative change from level a to b.
func magnitude(a, b float64, useLog bool) float64 {
	if useLog {
		return math.Abs(math.Expm1(b - a))
	}
	if a == 0 {
		return math.Inf(1)
	}
	return math.Abs((b - a) / a)
}

// steps turns the surviving cuts into Steps, merging runs of
// same-direction cuts over drifting stretches into one.
func steps(y []float64, cuts []int, sigma float64, p Params, useLog bool) []Step {
	if len(cuts) == 0 {
		return nil
	}
	buf := make([]float64, 0, len(y))
	bounds := append(append([]int{0}, cuts...), len(y))
	lv := make([]float64, len(bounds)-1)
	for i := range lv {
		lv[i] = level(y, bounds[i], bounds[i+1], buf)
	}
	var out []Step
	for i := 0; i < len(cuts); {
		// The run of same-direction cuts starting at i is one drift when
		// the levels between them keep moving that way (driftZ).
		dir := math.Copysign(1, lv[i+1]-lv[i])
		j := i
		for j+1 < len(cuts) && math.Copysign(1, lv[j+2]-lv[j+1]) == dir {
			j++
		}
		if j > i && driftZ(y, bounds[i+1:j+2], sigma, dir) <= 1.64 {
			j = i
		}
		before, after := lv[i], lv[j+1]
		nb, na := bounds[i+1]-bounds[i], bounds[j+2]-bounds[j+1]
		st := Step{
			At: bounds[j+1], From: bounds[i+1], Drift: j > i,
			NoiseUnits: math.Abs(after-before) / sigma,
			Z:          medianZ(before, after, nb, na, sigma),
			Sigma:      sigma, NBefore: nb, NAfter: na,
		}
		if useLog {
			st.Before, st.After = math.Exp(before), math.Exp(after)
		} else {
			st.Before, st.After = before, after
		}
		out = append(out, st)
		i = j + 1
	}
	return out
}

// driftZ pools the evidence that the segments between consecutive bounds
// (the levels between a run of same-direction steps) themselves move in
// direction dir: the sum of their slope statistics over the square root
// of their number, a standard normal when they are flat. Between the
// steps of a slow drift the level keeps moving; between real steps it
// holds.
func driftZ(y []float64, bounds []int, sigma, dir float64) float64 {
	sum := 0.0
	k := 0
	for i := 0; i+1 < len(bounds); i++ {
		if t, ok := slopeT(y, bounds[i], bounds[i+1], sigma); ok {
			sum += t * dir
			k++
		}
	}
	if k == 0 {
		return 0
	}
	return sum / math.Sqrt(float64(k))
}

// slopeT is the least-squares slope of y[a:b] over its standard error.
func slopeT(y []float64, a, b int, sigma float64) (float64, bool) {
	n := b - a
	if n < 3 {
		return 0, false
	}
	tm := float64(n-1) / 2
	var sy, sty, stt float64
	for i := a; i < b; i++ {
		sy += y[i]
	}
	ym := sy / float64(n)
	for i := a; i < b; i++ {
		t := float64(i-a) - tm
		sty += t * (y[i] - ym)
		stt += t * t
	}
	return sty / stt / (sigma / math.Sqrt(stt)), true
}
