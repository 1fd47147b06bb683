package watch

import (
	"math"
)

// maxPeriod is the longest season deseason looks for: a year of months
// (12), a week of days (7), a day of hours (24), a year of weeks (52).
const maxPeriod = 60

// seasonWindow is how many of the latest successive differences the
// period is looked for in.
const seasonWindow = 2048

// deseason removes a strong season from y (oldest first) and reports the
// period removed (0: none, y returned as it is). A season is a profile
// that repeats every P points (2 <= P <= maxPeriod, at least four cycles
// in y): monthly figures, a weekly cycle of daily counts, a daily cycle
// of hourly traffic. Left in, it is persistent noise around every level
// (fitNoise prices it in), which hides a change of level as large as the
// season's swing.
//
// The period is the lag at which successive differences (which a change
// of level or a trend disturbs only once) correlate most, when that
// correlation is clearly not chance (at least 0.3 and 4/sqrt(n)) and
// holds at twice the lag (the mean of the two scores a lag). The profile is the median, per phase, of
// the points' distances from a centred moving average over one period
// (which a season averages out), centred on zero. It is removed only
// when that lowers the successive differences' variance by a third: a
// profile estimated from noise adds variance rather than removing it.
// A thermal cycle or a sawtooth of a benchmark history, whose swing
// moves little from one point to the next, does not pass: persistence
// handles those.
func deseason(y []float64) ([]float64, int) {
	n := len(y)
	if n < 8 {
		return y, 0
	}
	d := make([]float64, n-1)
	for i := range d {
		d[i] = y[i+1] - y[i]
	}
	// The period from the latest differences: seasonWindow holds 34
	// cycles of the longest period, and a long history costs no more.
	p := seasonPeriod(d[max(0, len(d)-seasonWindow):])
	if p == 0 {
		return y, 0
	}
	prof := seasonProfile(y, p)
	out := make([]float64, n)
	for i, v := range y {
		out[i] = v - prof[i%p]
	}
	before, after := diffVar(y), diffVar(out)
	if !(after < before*2/3) {
		return y, 0
	}
	return out, p
}

// seasonPeriod is the lag of d's strongest clear autocorrelation
// (0: none), d the successive differences.
func seasonPeriod(d []float64) int {
	n := len(d)
	mean := 0.0
	for _, v := range d {
		mean += v
	}
	mean /= float64(n)
	c0 := 0.0
	for _, v := range d {
		c0 += (v - mean) * (v - mean)
	}
	if !(c0 > 0) {
		return 0
	}
	acf := func(lag int) float64 {
		s := 0.0
		for i := lag; i < n; i++ {
			s += (d[i] - mean) * (d[i-lag] - mean)
		}
		return s / c0
	}
	// A lag's score is the mean correlation at it and at twice it: one
	// lag next to the period correlates almost as well as the period,
	// two cycles apart much less. A multiple of the period scores like
	// it; the shortest wins unless a longer one scores 5% more.
	floor := math.Max(0.3, 4/math.Sqrt(float64(n)))
	best, bestP := 0.0, 0
	for p := 2; p <= min(maxPeriod, n/4); p++ {
		r1 := acf(p)
		if r1 < floor {
			continue
		}
		r2 := acf(2 * p)
		if r2 < floor/2 {
			continue
		}
		if score := (r1 + r2) / 2; score > best*1.05 {
			best, bestP = score, p
		}
	}
	return bestP
}

// seasonProfile is the season of period p in y: per phase, the median
// distance of the points from a centred moving average over one period,
// centred on zero.
func seasonProfile(y []float64, p int) []float64 {
	n := len(y)
	cum := make([]float64, n+1)
	for i, v := range y {
		cum[i+1] = cum[i] + v
	}
	// The centred average over one period: for an even period, the mean
	// of the two windows of p points around i (a 2xp average).
	ma := func(i int) (float64, bool) {
		lo, hi := i-p/2, i-p/2+p
		if lo < 0 || hi > n {
			return 0, false
		}
		m := (cum[hi] - cum[lo]) / float64(p)
		if p%2 == 0 {
			if hi+1 > n {
				return 0, false
			}
			m = (m + (cum[hi+1]-cum[lo+1])/float64(p)) / 2
		}
		return m, true
	}
	byPhase := make([][]float64, p)
	for i, v := range y {
		if m, ok := ma(i); ok {
			byPhase[i%p] = append(byPhase[i%p], v-m)
		}
	}
	prof := make([]float64, p)
	mean := 0.0
	for k, xs := range byPhase {
		if len(xs) > 0 {
			prof[k] = medianOf(xs)
		}
		mean += prof[k]
	}
	mean /= float64(p)
	for k := range prof {
		prof[k] -= mean
	}
	return prof
}

// diffVar is the mean square of y's successive differences.
func diffVar(y []float64) float64 {
	s := 0.0
	for i := 1; i < len(y); i++ {
		s += (y[i] - y[i-1]) * (y[i] - y[i-1])
	}
	return s / float64(len(y)-1)
}

// detrend removes a trend that runs through the whole of y (oldest
// first) and returns its slope per point (0: none, y returned as it
// is). Growth, inflation or a runner that slowly wears keep moving the
// level; left in, such a trend is cut into a staircase of changes, or,
// around a step, read as drifts either side of it. A whole-series trend
// alone is no change (see steps), and neither is it beside a step.
//
// The slope is the median of the slopes over lag points, at least a
// fifteenth of the series (which a change of level disturbs for lag
// points only); the trend is taken to run
// through the whole series when the medians of the three thirds of the
// series agree with it (same sign, within a factor of two), each is
// beyond its standard error, and it moves the level by more than
// minMove point noises over the series. A drift
// over part of the series leaves the other thirds flat and is kept.
func detrend(y []float64, lag int, sd, minMove float64) ([]float64, float64) {
	n := len(y)
	if n < 6*lag || !(sd > 0) {
		return y, 0
	}
	// A longer lag measures a slope better, and more of its windows
	// straddle a step: a fifth of a third's at most.
	lag = max(lag, n/15)
	slopes := make([]float64, n-lag)
	for i := range slopes {
		slopes[i] = (y[i+lag] - y[i]) / float64(lag)
	}
	m := medianOf(append([]float64(nil), slopes...))
	if !(math.Abs(m)*float64(n) > minMove*sd) || !(math.Abs(m) > 2*medianSE(slopes, m, lag)) {
		return y, 0
	}
	for k := 0; k < 3; k++ {
		part := append([]float64(nil), slopes[k*len(slopes)/3:(k+1)*len(slopes)/3]...)
		mk := medianOf(part)
		if mk/m < 0.5 || mk/m > 2 {
			return y, 0
		}
	}

	return sloped(y, m), m
}

// medianSE is the standard error of m, the median of slopes over lag
// points: the scale of the slopes from their own spread (which a season
// or persistent noise widens), over the square root of the number of
// slopes that share no point.
func medianSE(slopes []float64, m float64, lag int) float64 {
	d := make([]float64, len(slopes))
	for i, v := range slopes {
		d[i] = math.Abs(v - m)
	}
	return 1.2533 * 1.4826 * medianOf(d) / math.Sqrt(float64(len(slopes))/float64(lag))
}
