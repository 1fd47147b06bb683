package gate

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfgate/perfgate/internal/robust"
)

// Statistical constants (see the package comment and gate_quality_test.go,
// which measures the false-alarm and detection rates they give).
const (
	alpha         = 0.01 // one-sided significance level of the shift test of repeated runs
	minRepeats    = 3    // runs needed on each side for the shift test
	minRefSegment = 5    // a last segment shorter than this is not trusted alone as main's level
	minLevelRun   = 10   // nor one shorter than this when head is back at the level before it
	minWindow     = 5    // measured commits needed for a noise band
	zCritical     = 2.75 // robust z beyond which a change is outside the noise band (tuned on the quality experiment)
	zFailOne      = 3.0  // robust z beyond which one or two runs at head fail (see bandCheck)
	cpThreshold   = 3.5  // median-shift statistic beyond which the window is cut
	minSegment    = 2    // shortest segment a change point may leave
	madToSigma    = 1.4826
	maxCutsPerWin = 4 // at most this many change points in a window
)

// diffSigma estimates the noise of a series from its successive
// differences, which a level shift disturbs only once.
func diffSigma(x []float64) float64 {
	if len(x) < 3 {
		return 0
	}
	var buf [64]float64 // windows up to 65 values need no allocation
	d := buf[:0]
	if len(x)-1 > len(buf) {
		d = make([]float64, 0, len(x)-1)
	}
	d = d[:len(x)-1]
	for i := range d {
		d[i] = math.Abs(x[i+1] - x[i])
	}
	return madToSigma * robust.Median(d) / math.Sqrt2
}

// changePoints cuts x (oldest first) into segments of constant level by
// binary segmentation: a segment is split where the two sides fit their
// own medians best (least absolute deviation), if the difference of those
// medians, in units of its standard error, exceeds cpThreshold. The noise
// is first estimated from successive differences (which a level shift
// disturbs only once), then again within the segments found, and the
// segmentation repeated with it. It returns the start index of every
// segment (the first is 0).
func changePoints(x []float64) []int {
	starts, _, _ := changePointsScale(x)
	return starts
}

// changePointsScale is changePoints that also returns pooledScale of the
// segments found, when it computed that on the way (known).
func changePointsScale(x []float64) (starts []int, scale float64, known bool) {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			// No level or scale to compare with; values() keeps such
			// values out of every series, this keeps the search safe.
			return []int{0}, 0, false
		}
	}
	sigma := diffSigma(x)
	if sigma == 0 || math.IsNaN(sigma) || math.IsInf(sigma, 0) {
		return []int{0}, 0, false
	}
	var memo splitMemo
	starts = memo.segment(x, sigma)
	s := pooledScale(segments(x, starts))
	if s <= 0 {
		return starts, s, true
	}
	again := memo.segment(x, s)
	if slices.Equal(again, starts) {
		return starts, s, true
	}
	return again, 0, false
}

// segments splits x at the given starts.
func segments(x []float64, starts []int) [][]float64 {
	out := make([][]float64, len(starts))
	for i, a := range starts {
		b := len(x)
		if i+1 < len(starts) {
			b = starts[i+1]
		}
		out[i] = x[a:b]
	}
	return out
}

func segmentWith(x []float64, sigma float64) []int {
	var memo splitMemo
	return memo.segment(x, sigma)
}

// splitMemo remembers, for one x, the best split of each range and the
// shift statistic there, which do not depend on the noise: the second
// segmentation of changePointsScale (with the noise measured within the
// segments) only compares them with the new threshold.
type splitMemo struct {
	x     []float64
	known []split
}

// split is the best split k of x[a:b]: the difference of the two sides'
// medians and the root of their variances' factors.
type split struct {
	a, b, k  int
	diff, sd float64
}

// segment is segmentWith.
func (m *splitMemo) segment(x []float64, sigma float64) []int {
	if len(m.x) != len(x) || (len(x) > 0 && &m.x[0] != &x[0]) {
		m.x, m.known = x, m.known[:0]
	}
	var cuts []int
	var rec func(a, b int)
	rec = func(a, b int) {
		if b-a < 2*minSegment || len(cuts) >= maxCutsPerWin {
			return
		}
		sp := m.best(a, b)
		se := sigma * sp.sd
		if sp.diff/se <= cpThreshold {
			return
		}
		cuts = append(cuts, sp.k)
		rec(a, sp.k)
		rec(sp.k, b)
	}
	rec(0, len(x))
	sort.Ints(cuts)
	return append([]int{0}, cuts...)
}

// best returns the best split of x[a:b], computed once.
func (m *splitMemo) best(a, b int) split {
	for _, sp := range m.known {
		if sp.a == a && sp.b == b {
			return sp
		}
	}
	x := m.x
	// The cost of every split point comes from two running sorted copies
	// (the left part growing, the right part growing from the end), not a
	// sort per candidate: the same medians and sums as absDev, O(n²) in all.
	var buf [2*64 + 1]float64 // windows up to 64 values need no allocation
	scratch := buf[:]
	if len(scratch) < 2*len(x)+1 {
		scratch = make([]float64, 2*len(x)+1)
	}
	sorted, costR := scratch[:0:len(x)], scratch[len(x):]
	for k := b - 1; k >= a+minSegment; k-- {
		sorted = insertSorted(sorted, x[k])
		if k <= b-minSegment {
			costR[k] = absDevFrom(x[k:b], sorted)
		}
	}
	sorted = sorted[:0]
	bestCost, bestK := math.Inf(1), -1
	for k := a + 1; k <= b-minSegment; k++ {
		sorted = insertSorted(sorted, x[k-1])
		if k < a+minSegment {
			continue
		}
		if c := absDevFrom(x[a:k], sorted) + costR[k]; c < bestCost {
			bestCost, bestK = c, k
		}
	}
	l, r := x[a:bestK], x[bestK:b]
	sp := split{a: a, b: b, k: bestK,
		diff: math.Abs(robust.Median(l) - robust.Median(r)),
		sd:   math.Sqrt(robust.MedianVar(len(l)) + robust.MedianVar(len(r)))}
	m.known = append(m.known, sp)
	return sp
}

// insertSorted inserts v into s, kept in slices.Sort's order.
func insertSorted(s []float64, v float64) []float64 {
	i := len(s)
	for i > 0 && cmp.Less(v, s[i-1]) {
		i--
	}
	return slices.Insert(s, i, v)
}

// absDevFrom is the sum of absolute deviations of xs from its median,
// given xs sorted: the median robust.Median computes, and the deviations
// summed in xs's order.
func absDevFrom(xs, sorted []float64) float64 {
	n := len(sorted)
	m := sorted[n/2]
	if n%2 == 0 {
		m = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	s := 0.0
	for _, v := range xs {
		s += math.Abs(v - m)
	}
	return s
}

// band is the noise model of a window.
type band struct {
	ref      float64 // log reference level: median of the last segment
	sigma    float64 // log noise of one value
	segN     int     // values in the last segment
	segStart int     // index in x where the last segment starts
	starts   []int   // the start of every segment (the first is 0)
}

// noiseBand computes the reference level and the noise of a window of log
// values, oldest first (the baseline commit last).
func noiseBand(x []float64) band {
	starts, sigma, known := changePointsScale(x)
	if !known {
		sigma = pooledScale(segments(x, starts))
	}
	last := starts[len(starts)-1]
	return band{
		ref:      robust.Median(x[last:]),
		sigma:    sigma,
		segN:     len(x) - last,
		segStart: last,
		starts:   starts,
	}
}

// cutAt is the band of x with a change point at i: the level and the
// noise of the values from i on, pooled with those before it.
func (b band) cutAt(x []float64, i int) band {
	b.starts = []int{0, i}
	b.sigma = pooledScale(segments(x, b.starts))
	b.ref = robust.Median(x[i:])
	b.segStart, b.segN = i, len(x)-i
	return b
}

// pooledScale estimates the standard deviation of the noise from the
// values of segments of constant level: Rousseeuw and Croux's Qn over the
// pairs within each segment, the first quartile of their distances times
// 2.2219. Like the MAD it ignores up to half of the values as outliers,
// but it is more than twice as efficient (82% against 37% on normal
// noise), which is what lets one run be judged against 20.
func pooledScale(segs [][]float64) float64 {
	pairs := 0
	for _, s := range segs {
		pairs += len(s) * (len(s) - 1) / 2
	}
	var buf [1024]float64 // the pairs of a window of 40 (the site's change-point windows) fit
	d := buf[:0]
	if pairs > len(buf) {
		d = make([]float64, 0, pairs)
	}
	n := 0
	for _, s := range segs {
		for i := range s {
			for j := i + 1; j < len(s); j++ {
				d = append(d, math.Abs(s[i]-s[j]))
			}
		}
		if len(s) > 1 {
			n += len(s) - 1
		}
	}
	if len(d) == 0 {
		return 0
	}
	pos := 0.25 * float64(len(d)-1)
	i := int(pos)
	q := robust.SelectKth(d, i)
	if i+1 < len(d) {
		next := d[i+1]
		for _, v := range d[i+2:] {
			if v < next { // distances: no NaN, no -0, so math.Min's result
				next = v
			}
		}
		q += (pos - float64(i)) * (next - q)
	}
	return qnConst * q * qnCorrection(n)
}

// Qn's consistency constant for normal noise, and a small-sample
// correction measured by simulation (n is the degrees of freedom: values
// minus segments).
const qnConst = 2.2219

func qnCorrection(n int) float64 {
	if n < 1 {
		return 1
	}
	df := float64(n)
	return 1 / (1 + 0.5/df + 1.5/(df*df))
}

// mwu runs a one-sided Mann-Whitney U test of "head tends to be greater
// than base" (greater true) or "less". Identical samples give p = 1.
func mwu(head, base []float64, greater bool) float64 {
	alt := stats.LocationLess
	if greater {
		alt = stats.LocationGreater
	}
	r, err := stats.MannWhitneyUTest(head, base, alt)
	if err != nil {
		// stats.ErrSamplesEqual (all values equal) or ErrSampleSize
		// (an empty side, which callers rule out): no evidence.
		return 1
	}
	return r.P
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = math.Log(v)
	}
	return out
}

func allPositive(xs []float64) bool {
	for _, v := range xs {
		if !(v > 0) {
			return false
		}
	}
	return true
}
