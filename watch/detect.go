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
	// Threshold is the CUSUM statistic (mean difference in units of the
	// noise of a level, times sqrt(nL*nR/n)) beyond which binary
	// segmentation splits, per sqrt(log n).
	Threshold float64
	// MinZ is the smallest difference of the medians of the two levels
	// around a change, in units of its standard error (at the noise of a
	// level, which persistent noise inflates), that survives pruning; it
	// is also the evidence a suspected change in the last points and a
	// jump inside a drift need.
	MinZ float64
	// MinMagnitude is the smallest relative change (0.02 = 2%) worth
	// reporting: a change that noise alone cannot explain (MinZ) but
	// smaller than this is still a level of its own (its neighbours'
	// levels stay right) and is returned marked Minor.
	MinMagnitude float64
	// Clip bounds each point's distance from the running median, in noise
	// units, before segmentation (heavy tails).
	Clip float64
}

// DefaultParams are the settings measured on ../shared/realnoise and the
// simulated corpus (see the package comment and quality_test.go).
func DefaultParams() Params {
	return Params{MinSegment: 5, Threshold: 1.8, MinZ: 4.5, MinMagnitude: 0.01, Clip: 3}
}

// Step is a change of level found in one series.
type Step struct {
	At         int     // index of the first point of the new level
	From       int     // for a drift: index of the first point of the drift; else At
	Before     float64 // level (median) of the segment before, in the input's units
	After      float64 // level of the segment after
	NoiseUnits float64 // difference of the levels in noise units of one point
	Z          float64 // difference of the medians over its standard error (at the noise of a level)
	Sigma      float64 // noise of one point (log scale when the values are compared on a log scale)
	NBefore    int     // points in the level before
	NAfter     int     // points in the level after
	Drift      bool    // several same-direction steps over a drifting stretch, reported once
	// Suspected marks a change not yet confirmed: fewer than MinSegment
	// points at the new level (a change in the last points), or fewer
	// than twice that with weak evidence (Z under 1.5 MinZ).
	Suspected bool
	// Minor marks a change beyond the noise (Z at least MinZ) but smaller
	// than MinMagnitude: real, below the threshold worth an alert.
	Minor bool
	// Moving marks a drift still under way at the last point: no level
	// holds after it yet, At is the last point and After the drift's
	// line there (its size so far).
	Moving bool
}

// Detect finds the changes of level of x (oldest first). Values are
// compared on a log scale when all are positive (a 5% change is the same
// at any level), else as they are. See the package comment for the
// method.
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
	y, _ = deseason(y)
	sd := noise(y)
	st, nm := detectLevels(y, sd, p, useLog)
	st, nm = withoutTrend(y, sd, st, nm, p, useLog)
	if nm.level >= 2*nm.point {
		st = jumps(y, st, p, useLog)
	}
	// A step under 0.75 point noises with evidence under 1.5 MinZ is a
	// noise-sized jump, no change (a level that shifts a little at
	// irregular times between long flat stretches).
	st = slices.DeleteFunc(st, func(s Step) bool { return !s.Drift && s.NoiseUnits < NoiseSized && s.Z < 1.5*p.MinZ })
	// A trend is no change of level, unless it moves the level by more
	// than the rule: then it is a creep (creep), or a rise that turns
	// into a fall (turn), which also explains a change suspected at the
	// tip.
	if len(st) == 0 {
		if c, ok := creep(y, sd, p, useLog); ok {
			st = []Step{c}
		}
	}
	if !slices.ContainsFunc(st, func(s Step) bool { return !s.Suspected || s.Drift }) {
		if t := turn(y, sd, p, useLog); t != nil {
			st = t
		}
	}
	return markMoving(y, runInto(y, turns(y, st)), p, useLog)
}

// turns places the turn between two drifts the opposite way (a long rise
// that turns into a fall) where their lines meet, when that lies in the
// stretch between them, which the drifts' hinges read as a level, and
// the stretch fits those lines carried on no worse than a level of its
// own by more than chance (squared error, 2·log n point noises squared):
// a peak has no level, and the hinges placed its ends either side of it.
// The first drift then ends, and the second starts, at the turn.
func turns(y []float64, st []Step) []Step {
	for k := 0; k+1 < len(st); k++ {
		a, b := &st[k], &st[k+1]
		if !a.Drift || !b.Drift || (a.After-a.Before)*(b.After-b.Before) >= 0 || b.From <= a.At {
			continue
		}
		end := b.At
		if b.Moving {
			end = len(y)
		}
		if a.At-a.From < 3 || end-b.From < 3 {
			continue
		}
		l1, s1 := lineOf(y[a.From:a.At], float64(a.From))
		l2, s2 := lineOf(y[b.From:end], float64(b.From))
		if s1 == s2 {
			continue
		}
		x := (l2 - l1) / (s1 - s2) // where l1 + s1·t = l2 + s2·t
		turn := int(math.Round(x))
		if turn < a.At || turn > b.From {
			continue
		}
		flat := level(y, a.At, b.From, make([]float64, 0, b.From-a.At))
		var onLines, onFlat float64
		for t := a.At; t < b.From; t++ {
			l, s := l1, s1
			if t >= turn {
				l, s = l2, s2
			}
			onLines += sq(y[t] - l - s*float64(t))
			onFlat += sq(y[t] - flat)
		}
		if onLines >= onFlat+2*math.Log(float64(len(y)))*sq(a.Sigma) {
			continue
		}
		a.At, b.From = turn, turn
		a.NAfter, b.NBefore = 0, 0
	}
	return st
}

// runInto ends a drift at the step that follows it (a creep ended by a
// fix) when one line through the drift and the stretch up to the step,
// which the drift's hinge read as a level, fits no worse than the
// drift's line and that level by more than chance (squared error,
// 2·log n point noises squared): the level moved until the step.
func runInto(y []float64, st []Step) []Step {
	for k := 0; k+1 < len(st); k++ {
		a, b := &st[k], &st[k+1]
		if !a.Drift || b.Drift || b.At <= a.At || a.At-a.From < 3 {
			continue
		}
		buf := make([]float64, 0, b.At-a.From)
		onLine := sumSq(lineResiduals(y[a.From:b.At], buf))
		onBent := sumSq(lineResiduals(y[a.From:a.At], buf))
		flat := level(y, a.At, b.At, buf)
		for _, v := range y[a.At:b.At] {
			onBent += sq(v - flat)
		}
		if onLine < onBent+2*math.Log(float64(len(y)))*sq(a.Sigma) {
			a.At = b.At
		}
	}
	return st
}

func sumSq(xs []float64) float64 {
	s := 0.0
	for _, v := range xs {
		s += v * v
	}
	return s
}

// lineOf is the least-squares line through y, whose first point is at
// t0: its value at 0 and its slope.
func lineOf(y []float64, t0 float64) (at0, slope float64) {
	v0, _ := lineAt(y, t0, t0)
	v1, _ := lineAt(y, t0, t0+1)
	return v0 - t0*(v1-v0), v1 - v0
}

// NoiseSized is the size, in noises of one point, under which a step
// with weak evidence (Z under 1.5 MinZ) is no change (Detect).
const NoiseSized = 0.75

// CreepZ is how many standard errors the move of a creep (creep) must
// span: twice MinZ's evidence, since a trend through a whole series is
// what slow wander looks like too.
const CreepZ = 2

// creep finds a change of level that a trend hides: a series that, from
// a level (or from its first point), moves along a line by at least
// MinMagnitude and by CreepZ·MinZ standard errors, still moving at the
// last point or stopped at a level that holds at least MinSegment
// points. The fit is a level (from the best flat-then-line bend, when
// it leaves MinSegment points), a line, and a level (kept only where it
// fits better than the line by more than chance over the choice of the
// bend, 2·log n point noises squared); its residuals
// must be white at the point noise sd (at most 1.5 sd around the fit),
// so a random walk, a cycle or a rise that turns into a fall is never a
// creep. It is reported as a drift.
func creep(y []float64, sd float64, p Params, useLog bool) (Step, bool) {
	n, m := len(y), p.MinSegment
	if n < 4*m || !(sd > 0) {
		return Step{}, false
	}
	y = clipped(y, sd, p) // a spike weighs like an ordinary point
	crit := 2 * math.Log(float64(n)) * sd * sd
	from, _ := hinge(y, true) // where the move began, the best bend
	if from < m {
		from = 0
	}
	end := n
	if k, ga := hinge(y[from:], false); ga >= crit && n-(from+k) >= m && k >= 2*m {
		end = from + k
	}
	if end-from < 4*m {
		return Step{}, false
	}
	line := y[from:end]
	last := float64(end-from) - 1
	b0, v0 := lineAt(line, 0, 0)
	b1, v1 := lineAt(line, 0, last)
	before, after := b0, b1
	var res []float64
	buf := make([]float64, 0, n)
	if from > 0 {
		before = level(y, 0, from, buf)
		for _, v := range y[:from] {
			res = append(res, v-before)
		}
		v0 = robust.MedianVar(from)
	}
	res = lineResiduals(line, res)
	if end < n {
		after = level(y, end, n, buf)
		for _, v := range y[end:] {
			res = append(res, v-after)
		}
		v1 = robust.MedianVar(n - end)
	}
	for i, v := range res {
		res[i] = math.Abs(v)
	}
	if 1.4826*medianOf(res) > 1.5*sd {
		return Step{}, false
	}
	z := math.Abs(after-before) / (sd * math.Sqrt(v0+v1))
	if z < CreepZ*p.MinZ || magnitude(before, after, useLog) < p.MinMagnitude {
		return Step{}, false
	}
	st := Step{
		From: max(1, from), At: end, Drift: true, Moving: end == n,
		Before: unscale(before, useLog), After: unscale(after, useLog),
		NoiseUnits: math.Abs(after-before) / sd, Z: z, Sigma: sd,
		NBefore: from, NAfter: n - end,
	}
	if st.Moving {
		st.At, st.NAfter = n-1, 1
	}
	return st, true
}

// turn finds a long rise that turns into a fall (or a fall into a
// rise) with no level anywhere, which segmentation reads as wander and a
// line through it cannot fit: the best continuous two-piece line (every
// bend tried, O(1) each from suffix sums), each
// piece at least 4·MinSegment points, the two slopes opposite, the
// residuals white at the point noise sd (robust scale at most 1.5 sd),
// and each piece's move at least MinMagnitude and CreepZ·MinZ standard
// errors (sd·sqrt(12/len) for a line's end-to-end move). It returns the
// two drifts, the second still moving, or nil.
func turn(y []float64, sd float64, p Params, useLog bool) []Step {
	n, m := len(y), 4*p.MinSegment
	if n < 2*m || !(sd > 0) {
		return nil
	}
	y = clipped(y, sd, p)
	bl := newBent(y)
	best, bk := math.Inf(1), -1
	for k := m; k <= n-m; k++ {
		if sse, _ := bl.fit(k); sse < best {
			best, bk = sse, k
		}
	}
	if bk < 0 {
		return nil
	}
	_, c := bl.fit(bk)
	at := func(t float64) float64 { return c[0] + c[1]*t + c[2]*max(0, t-float64(bk)) }
	s1, s2 := c[1], c[1]+c[2]
	if s1*s2 >= 0 {
		return nil
	}
	res := make([]float64, n)
	for t, v := range y {
		res[t] = math.Abs(v - at(float64(t)))
	}
	if 1.4826*medianOf(res) > 1.5*sd {
		return nil
	}
	v0, vk, vn := at(0), at(float64(bk)), at(float64(n-1))
	for _, leg := range [][3]float64{{v0, vk, float64(bk)}, {vk, vn, float64(n - bk)}} {
		z := math.Abs(leg[1]-leg[0]) / (sd * math.Sqrt(12/leg[2]))
		if z < CreepZ*p.MinZ || magnitude(leg[0], leg[1], useLog) < p.MinMagnitude {
			return nil
		}
	}
	return []Step{
		{From: 1, At: bk, Drift: true, Before: unscale(v0, useLog), After: unscale(vk, useLog),
			NoiseUnits: math.Abs(vk-v0) / sd, Z: math.Abs(vk-v0) / (sd * math.Sqrt(12/float64(bk))), Sigma: sd, NBefore: 0, NAfter: 0},
		{From: bk, At: n - 1, Drift: true, Moving: true, Before: unscale(vk, useLog), After: unscale(vn, useLog),
			NoiseUnits: math.Abs(vn-vk) / sd, Z: math.Abs(vn-vk) / (sd * math.Sqrt(12/float64(n-bk))), Sigma: sd, NBefore: 0, NAfter: 1},
	}
}

// bent holds the sums that fit a continuous two-piece line to y at any
// bend in O(1): totals, and suffix sums from each t on.
type bent struct {
	n                float64
	st, stt, sy, syy float64
	sty              float64
	s1, s2, sY, stY  []float64 // suffix sums of t, t², y, t·y from index k on
}

func newBent(y []float64) *bent {
	n := len(y)
	b := &bent{n: float64(n), s1: make([]float64, n+1), s2: make([]float64, n+1), sY: make([]float64, n+1), stY: make([]float64, n+1)}
	for t := n - 1; t >= 0; t-- {
		ft, v := float64(t), y[t]
		b.s1[t] = b.s1[t+1] + ft
		b.s2[t] = b.s2[t+1] + ft*ft
		b.sY[t] = b.sY[t+1] + v
		b.stY[t] = b.stY[t+1] + ft*v
		b.syy += v * v
	}
	b.st, b.stt, b.sy, b.sty = b.s1[0], b.s2[0], b.sY[0], b.stY[0]
	return b
}

// fit is the least-squares fit c0 + c1·t + c2·max(0, t-k): its squared
// error and c.
func (b *bent) fit(k int) (float64, [3]float64) {
	fk, cnt := float64(k), b.n-float64(k)
	su := b.s1[k] - fk*cnt
	suu := b.s2[k] - 2*fk*b.s1[k] + fk*fk*cnt
	stu := b.s2[k] - fk*b.s1[k]
	suy := b.stY[k] - fk*b.sY[k]
	a := [3][3]float64{{b.n, b.st, su}, {b.st, b.stt, stu}, {su, stu, suu}}
	r := [3]float64{b.sy, b.sty, suy}
	c, ok := solve3(a, r)
	if !ok {
		return math.Inf(1), c
	}
	return b.syy - (c[0]*r[0] + c[1]*r[1] + c[2]*r[2]), c
}

// solve3 solves a·c = b by Cramer's rule.
func solve3(a [3][3]float64, b [3]float64) ([3]float64, bool) {
	det := func(m [3][3]float64) float64 {
		return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	}
	d := det(a)
	var c [3]float64
	if d == 0 || math.IsNaN(d) {
		return c, false
	}
	for i := range 3 {
		m := a
		for r := range 3 {
			m[r][i] = b[r]
		}
		c[i] = det(m) / d
	}
	return c, true
}

// markMoving marks the last change of st, a drift, as still moving when
// the points after its end are too few to be a level (under
// 2·MinSegment) or do not lie closer to their own level than to the
// drift's line carried on by more than chance (squared error, less
// 4·log n point noises squared): its end is then the last point and
// its new level the drift's line there.
func markMoving(y []float64, st []Step, p Params, useLog bool) []Step {
	if len(st) == 0 {
		return st
	}
	s := &st[len(st)-1]
	n := len(y)
	if !s.Drift || s.Moving {
		return st
	}
	if n-s.At < 2*p.MinSegment {
		// No level holds after it yet.
		moved(y, s, useLog)
		return st
	}
	drift := y[s.From:s.At]
	x0 := float64(len(drift))
	v0, _ := lineAt(drift, 0, x0)
	v1, _ := lineAt(drift, 0, x0+1)
	flat := level(y, s.At, n, make([]float64, 0, n-s.At))
	var onLine, onFlat float64
	for t, v := range y[s.At:] {
		onLine += sq(v - v0 - (v1-v0)*float64(t))
		onFlat += sq(v - flat)
	}
	// A stop is a bend of its own: it must fit better by more than
	// chance over the bend's choice (4·log n point noises squared).
	if onLine < onFlat+4*math.Log(float64(n))*sq(s.Sigma) {
		moved(y, s, useLog)
	}
	return st
}

func sq(v float64) float64 { return v * v }

// moved marks the drift s as still moving: its end is the last point of
// y and its new level the line through its points from From there.
func moved(y []float64, s *Step, useLog bool) {
	n := len(y)
	v, _ := lineAt(y[s.From:], 0, float64(n-1-s.From))
	s.Moving, s.At, s.NAfter, s.Suspected = true, n-1, 1, false
	s.After = unscale(v, useLog)
}

// withoutTrend segments y again without a trend through the whole
// series (detrend), and returns those changes (levels with the trend put
// back) and their noise when they explain y better than st: with fewer
// changes, and some (growth around one step is the step, not a drift
// either side of it; a whole-series trend alone is already no change,
// see steps; when taking a trend out leaves no change at all, what was
// found was a drift over part of the series), or, where nothing was
// found, with changes at under half the noise (a trend that hid a step
// by swelling the noise), unless those changes take the trend back (a
// sawtooth's resets). Otherwise it returns st and nm. sd is the noise
// of y's successive differences (noise).
func withoutTrend(y []float64, sd float64, st []Step, nm noiseModel, p Params, useLog bool) ([]Step, noiseModel) {
	n := len(y)
	yd, slope := detrend(y, 2*p.MinSegment, sd, 2*p.MinZ)
	if slope == 0 {
		return st, nm
	}
	alt, nd := detectLevels(yd, noise(yd), p, useLog)
	// The slope again, now from within the levels found (a common slope,
	// a level each): the first one, from slopes that straddle no step, is
	// rougher, and what it leaves tilts long levels apart.
	if b := commonSlope(y, stepBounds(alt, n)); b != 0 && len(alt) > 0 {
		yb := sloped(y, b)
		alt, nd = detectLevels(yb, noise(yb), p, useLog)
		slope = b
	}
	better := len(alt) > 0 && len(alt) < len(st)
	if len(st) == 0 && len(alt) > 0 && nd.point < nm.point/2 && !takesBack(alt, slope*float64(n), useLog) {
		better = true
	}
	if !better {
		return st, nm
	}
	retrend(alt, slope, n, useLog)
	return alt, nd
}

// JumpZ is how many noises of one point-to-point move a single move must
// span to be a change on its own (jumps).
const JumpZ = 15

// jumps adds to st (sorted by At) the abrupt changes that persistent
// noise hides from segmentation: on a random walk (a price, a slowly
// wandering runner) the noise of a level is many times that of one
// move, so a crash of twenty moves' worth can hide in the wander, yet no
// one would miss it. Detect looks for them only where the noise of a
// level is at least twice that of a point (elsewhere segmentation sees
// such a jump). A jump is one successive difference of at least
// JumpZ noises of a difference (their robust scale, which one jump does
// not move), at least MinSegment points from either end and from every
// change found, whose new level holds: the medians of MinSegment and of
// 2·MinSegment points after it stay at least half the jump from those
// before it, the same way (a spike, or a block of slow runners shorter
// than a level, falls back).
func jumps(y []float64, st []Step, p Params, useLog bool) []Step {
	n, m := len(y), p.MinSegment
	if n < 2*m+1 {
		return st
	}
	d := make([]float64, n-1)
	for i := range d {
		d[i] = math.Abs(y[i+1] - y[i])
	}
	sdd := 1.4826 * medianOf(d) // noise of one difference
	if !(sdd > 0) {
		return st
	}
	buf := make([]float64, 0, 2*m)
	var added []Step
	for i := m; i <= n-m; i++ {
		jump := y[i] - y[i-1]
		if math.Abs(jump) < JumpZ*sdd || nearStep(st, i, m) {
			continue
		}
		before := level(y, max(0, i-2*m), i, buf)
		holds := true
		for _, w := range []int{m, 2 * m} {
			after := level(y, i, min(n, i+w), buf)
			holds = holds && (after-before)*jump > 0 && math.Abs(after-before) >= math.Abs(jump)/2
		}
		if !holds {
			continue
		}
		after := level(y, i, min(n, i+2*m), buf)
		sd := sdd / math.Sqrt2
		added = append(added, Step{At: i, From: i, Before: unscale(before, useLog), After: unscale(after, useLog),
			NoiseUnits: math.Abs(after-before) / sd, Z: math.Abs(jump) / sdd, Sigma: sd,
			NBefore: i - max(0, i-2*m), NAfter: min(n, i+2*m) - i,
			Minor: magnitude(before, after, useLog) < p.MinMagnitude})
		i += m // the next jump is another level's
	}
	if len(added) == 0 {
		return st
	}
	out := append(st, added...)
	sort.Slice(out, func(a, b int) bool { return out[a].At < out[b].At })
	return out
}

// nearStep reports whether a change of st starts or ends within m points
// of i.
func nearStep(st []Step, i, m int) bool {
	for _, s := range st {
		if i > s.From-m && i < s.At+m {
			return true
		}
	}
	return false
}

// detectLevels finds the changes of level of y (log values when
// useLog), as Detect describes, and the noise model they leave; sd is
// the noise of y's successive differences (noise).
func detectLevels(y []float64, sd float64, p Params, useLog bool) ([]Step, noiseModel) {
	if !(sd > 0) || math.IsInf(sd, 0) {
		return nil, noiseModel{}
	}
	yc := clipped(y, sd, p)
	cuts, nm := segmentation(y, yc, sd, p)
	st := steps(y, cuts, nm, p, useLog)
	if t, ok := tail(y, cuts, nm, p, useLog); ok {
		st = append(st, t)
	}
	return st, nm
}

// takesBack reports whether steps (found without a trend that moves
// the level by move over the series) take back more than half of it: a
// sawtooth's slow rises agree on a slope, and its resets undo it.
func takesBack(steps []Step, move float64, useLog bool) bool {
	sum := 0.0
	for _, st := range steps {
		if useLog {
			sum += math.Log(st.After / st.Before)
		} else {
			sum += st.After - st.Before
		}
	}
	return sum*move < 0 && math.Abs(sum) > math.Abs(move)/2
}

// stepBounds are the bounds of the levels between steps (0 and n
// included); a drift's stretch is left out of both neighbours.
func stepBounds(st []Step, n int) [][2]int {
	var out [][2]int
	a := 0
	for _, s := range st {
		out = append(out, [2]int{a, s.From})
		a = s.At
	}
	return append(out, [2]int{a, n})
}

// commonSlope is the least-squares slope of y shared by the stretches
// (each with a level of its own); 0 when they hold too few points.
func commonSlope(y []float64, stretches [][2]int) float64 {
	var sty, stt float64
	for _, r := range stretches {
		a, b := r[0], r[1]
		if b-a < 3 {
			continue
		}
		tm := float64(a+b-1) / 2
		ym := 0.0
		for _, v := range y[a:b] {
			ym += v
		}
		ym /= float64(b - a)
		for i := a; i < b; i++ {
			sty += (float64(i) - tm) * (y[i] - ym)
			stt += (float64(i) - tm) * (float64(i) - tm)
		}
	}
	if !(stt > 0) {
		return 0
	}
	return sty / stt
}

// sloped is y less a line of slope b through its middle.
func sloped(y []float64, b float64) []float64 {
	out := make([]float64, len(y))
	c := float64(len(y)-1) / 2
	for i, v := range y {
		out[i] = v - b*(float64(i)-c)
	}
	return out
}

// retrend puts the trend detrend removed back into the steps' levels, at
// each step's first point at the new level: the levels either side of a
// step on a trending series as they are there.
func retrend(st []Step, slope float64, n int, useLog bool) {
	c := float64(n-1) / 2
	for i := range st {
		shift := slope * (float64(st[i].At) - c)
		if useLog {
			st[i].Before *= math.Exp(shift)
			st[i].After *= math.Exp(shift)
		} else {
			st[i].Before += shift
			st[i].After += shift
		}
	}
}

// segmentation segments y under a noise model fitted to its own
// residuals: it starts from the noise of successive differences, which
// persistent noise (a random walk, a thermal cycle, blocks of slow
// runners) hides, fits the noise model to the residuals around the
// segmentation found, and segments again until the cuts or the noise
// hold (at most three rounds; the noise of a level never shrinks between
// rounds). The rounds place cuts roughly (binary segmentation and
// pruning); the cuts of the last are then refined and pruned again.
func segmentation(y, yc []float64, sd float64, p Params) ([]int, noiseModel) {
	nm := noiseModel{point: sd, level: sd}
	var cuts []int
	for round := 0; round < 3; round++ {
		c := prune(y, yc, binseg(yc, nm.level, p), nm.level, p)
		if round > 0 && slices.Equal(c, cuts) {
			break
		}
		cuts = c
		next := fitNoise(yc, cuts, sd, 2*p.MinSegment)
		if next.level <= nm.level*1.02 {
			// The noise holds: another round would cut the same.
			break
		}
		nm = next.atLeast(nm)
	}
	cuts = refine(yc, cuts, p)
	return prune(y, yc, cuts, nm.level, p), nm
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

// noiseModel is the noise of a series: of one point, and of a level
// (the noise that the mean of a stretch of points averages down to as
// if the points were independent: the point noise inflated by the
// residuals' persistence).
type noiseModel struct {
	point float64 // noise of one point
	rho   float64 // lag-1 autocorrelation of the residuals, in [0, maxRho]
	// level is the long-run noise: point·sqrt(f), f the smaller of the
	// AR(1) factor (1+rho)/(1-rho) and the Newey-West factor of the
	// residuals' autocorrelations up to 2·MinSegment lags (longRun).
	level float64
}

// maxRho bounds the residuals' autocorrelation (a noise of a level at
// most 6.2 times the point's).
const maxRho = 0.95

func (m noiseModel) atLeast(o noiseModel) noiseModel {
	if o.level > m.level {
		m.level = o.level
	}
	if o.point > m.point {
		m.point = o.point
	}
	return m
}

// fitNoise fits the noise model to the residuals of yc around the level
// (median) of each segment between cuts: the point noise is the larger
// of sd (from successive differences) and the residuals' robust scale,
// the persistence their autocorrelations pooled within segments, up to
// lags. A random walk, a
// cycle or a sawtooth, which segmentation at the noise of successive
// differences cuts into many levels, leaves persistent residuals around
// them; white noise around real levels does not. (A drift that fills
// most of a series does too: it is then read as wander; a drift in a
// stretch of a longer series is still found, see steps.)
func fitNoise(yc []float64, cuts []int, sd float64, lags int) noiseModel {
	bounds := append(append([]int{0}, cuts...), len(yc))
	res := make([]float64, 0, len(yc))
	buf := make([]float64, 0, len(yc))
	acov := make([]float64, lags+1) // pooled within segments, lag 0..lags
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]
		if b-a < 3 {
			continue
		}
		k := len(res)
		med := level(yc, a, b, buf)
		for _, v := range yc[a:b] {
			res = append(res, v-med)
		}
		e := res[k:]
		for t := range e {
			for l := 0; l <= min(lags, t); l++ {
				acov[l] += e[t] * e[t-l]
			}
		}
	}
	m := noiseModel{point: sd}
	if len(res) > 0 {
		abs := make([]float64, len(res))
		for i, v := range res {
			abs[i] = math.Abs(v)
		}
		m.point = math.Max(sd, 1.4826*medianOf(abs))
	}
	if acov[0] > 0 {
		m.rho = min(max(acov[1]/acov[0], 0), maxRho)
	}
	m.level = m.point * math.Sqrt(min((1+m.rho)/(1-m.rho), longRun(acov)))
	return m
}

// longRun is the ratio of the long-run variance of residuals to their
// variance, from their autocovariances acov (lag 0 first) with
// Bartlett weights (Newey-West), at least 1. It is low where the AR(1)
// factor of the lag-1 autocorrelation is not: for a short cycle (a
// 12-point season), whose autocorrelations turn negative within a few
// lags and whose mean over a level averages it out.
func longRun(acov []float64) float64 {
	if !(acov[0] > 0) {
		return 1
	}
	k := len(acov) - 1
	f := 1.0
	for l := 1; l <= k; l++ {
		f += 2 * (1 - float64(l)/float64(k+1)) * acov[l] / acov[0]
	}
	return max(f, 1)
}

// lineResiduals appends to out the residuals of y around its
// least-squares line.
func lineResiduals(y, out []float64) []float64 {
	n := float64(len(y))
	tm := (n - 1) / 2
	var sy, sty, stt float64
	for _, v := range y {
		sy += v
	}
	ym := sy / n
	for i, v := range y {
		t := float64(i) - tm
		sty += t * (v - ym)
		stt += t * t
	}
	b := sty / stt
	for i, v := range y {
		out = append(out, v-ym-b*(float64(i)-tm))
	}
	return out
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
// last points is confirmed only once MinSegment points hold it (tail
// reports it as suspected before).
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
// differ by less than MinZ standard errors, until every cut passes: the
// segments around a removed cut merge, and the cuts next to it are
// judged again on the merged level. The standard error is at the noise
// of a level floor (the series') inflated by the persistence of the
// residuals of the two segments around the cut (resid.levelNoise). The
// size of the change does not prune: a change below MinMagnitude stays
// a level of its own and is marked Minor (steps).
func prune(y, yc []float64, cuts []int, floor float64, p Params) []int {
	buf := make([]float64, 0, len(y))
	bounds := append(append([]int{0}, cuts...), len(y))
	lv := make([]float64, len(bounds)-1)
	rs := make([]resid, len(bounds)-1)
	for i := range lv {
		lv[i] = level(y, bounds[i], bounds[i+1], buf)
		rs[i] = residOf(yc[bounds[i]:bounds[i+1]], buf)
	}
	for len(bounds) > 2 {
		worst, wi := math.Inf(1), -1
		for i := 1; i < len(bounds)-1; i++ {
			sigma := rs[i-1].add(rs[i]).levelNoise(floor)
			z := medianZ(lv[i-1], lv[i], bounds[i]-bounds[i-1], bounds[i+1]-bounds[i], sigma)
			score := z / p.MinZ
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
		rs = slices.Delete(rs, wi, wi+1)
		lv[wi-1] = level(y, bounds[wi-1], bounds[wi], buf)
		rs[wi-1] = residOf(yc[bounds[wi-1]:bounds[wi]], buf)
	}
	return bounds[1 : len(bounds)-1]
}

// resid sums the residuals of a stretch around its least-squares line:
// their number less the line's two parameters, their squares and their
// lag-1 products.
type resid struct {
	dof    int
	s2, s1 float64
}

func residOf(y, buf []float64) resid {
	if len(y) < 3 {
		return resid{}
	}
	e := lineResiduals(y, buf[:0])
	r := resid{dof: len(e) - 2}
	for t, v := range e {
		r.s2 += v * v
		if t > 0 {
			r.s1 += v * e[t-1]
		}
	}
	return r
}

func (r resid) add(o resid) resid { return resid{r.dof + o.dof, r.s2 + o.s2, r.s1 + o.s1} }

// levelNoise is the noise of a level from the residuals r: their scale
// (at least floor, the noise of successive differences) inflated by
// their persistence, sqrt((1+rho)/(1-rho)) for a lag-1 autocorrelation
// rho (at most maxRho).
func (r resid) levelNoise(floor float64) float64 {
	if r.dof <= 0 || r.s2 <= 0 {
		return floor
	}
	rho := min(max(r.s1/r.s2, 0), maxRho)
	return floor * math.Sqrt((1+rho)/(1-rho))
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
// same-direction cuts over drifting stretches into one, and telling an
// abrupt change inside a drift from the drift.
func steps(y []float64, cuts []int, nm noiseModel, p Params, useLog bool) []Step {
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
	for _, r := range runs(y, bounds, lv, 0, len(cuts)-1, nm, p, useLog) {
		st, trend := newStep(y, bounds, lv, r[0], r[1], nm, p, useLog)
		if trend {
			continue
		}
		out = append(out, st)
	}
	return out
}

// runs groups the cuts i..j (indices into bounds[1:]) into changes: a run
// of same-direction cuts is one drift when the levels between them keep
// moving that way (driftZ), unless one of its cuts is a jump off the
// drift's line (jumpIn), which is a change of its own between the
// stretches on either side.
func runs(y []float64, bounds []int, lv []float64, i, j int, nm noiseModel, p Params, useLog bool) [][2]int {
	var out [][2]int
	for i <= j {
		dir := math.Copysign(1, lv[i+1]-lv[i])
		k := i
		for k+1 <= j && math.Copysign(1, lv[k+2]-lv[k+1]) == dir {
			k++
		}
		switch {
		case k == i || driftZ(y, bounds[i+1:k+2], nm.point, dir) <= 1.64:
			out = append(out, [2]int{i, i})
			k = i
		default:
			if c, ok := jumpIn(y, bounds, i, k, nm, p, useLog); ok {
				out = append(out, runs(y, bounds, lv, i, c-1, nm, p, useLog)...)
				out = append(out, [2]int{c, c})
				out = append(out, runs(y, bounds, lv, c+1, k, nm, p, useLog)...)
			} else {
				out = append(out, [2]int{i, k})
			}
		}
		i = k + 1
	}
	return out
}

// jumpIn finds, among the cuts i..k of a drift, the one where the level
// jumps off the drift's line: fitting a line to each side of the cut
// (up to 2·MinSegment points of the segments either side, so that the
// bend where a drift starts or ends weighs little), their values at the
// cut differ by MinZ standard errors (at the point noise: around a line
// the drift's residuals are white) and by MinMagnitude or more. It
// returns the strongest such cut.
func jumpIn(y []float64, bounds []int, i, k int, nm noiseModel, p Params, useLog bool) (int, bool) {
	best, bc := 0.0, -1
	w := 2 * p.MinSegment
	for c := i; c <= k; c++ {
		at := bounds[c+1]
		a, b := max(bounds[c], at-w), min(bounds[c+2], at+w)
		d, se := stepOnLine(y[a:b], at-a)
		z := math.Abs(d) / (nm.point * se)
		if z >= p.MinZ && magnitude(0, d, useLog) >= p.MinMagnitude && z > best {
			best, bc = z, c
		}
	}
	return bc, bc >= 0
}

// stepOnLine fits a line to each of y[:at] and y[at:] and returns the
// difference d of their values midway between at-1 and at, and its
// standard error for unit noise: a drift that bends there has none, a
// jump does.
func stepOnLine(y []float64, at int) (d, se float64) {
	x0 := float64(at) - 0.5
	l, vl := lineAt(y[:at], 0, x0)
	r, vr := lineAt(y[at:], float64(at), x0)
	return r - l, math.Sqrt(vl + vr)
}

// lineAt is the value at x0 of the least-squares line through y (the
// first at x = t0) and its variance for unit noise.
func lineAt(y []float64, t0, x0 float64) (v, variance float64) {
	n := float64(len(y))
	tm := t0 + (n-1)/2
	var sy, sty, stt float64
	for _, v := range y {
		sy += v
	}
	ym := sy / n
	for i, v := range y {
		t := t0 + float64(i) - tm
		sty += t * (v - ym)
		stt += t * t
	}
	if stt == 0 {
		return ym, 1 / n
	}
	return ym + sty/stt*(x0-tm), 1/n + (x0-tm)*(x0-tm)/stt
}

// newStep is the change of the run of cuts i..j.
//
// A drift over the whole series with no level either side (its hinges
// fit no better than a line: runner drift or a slow wander) is a trend,
// not a change of level; newStep says so.
func newStep(y []float64, bounds []int, lv []float64, i, j int, nm noiseModel, p Params, useLog bool) (st Step, trend bool) {
	before, after := lv[i], lv[j+1]
	nb, na := bounds[i+1]-bounds[i], bounds[j+2]-bounds[j+1]
	st = Step{
		At: bounds[j+1], From: bounds[i+1], Drift: j > i,
		NoiseUnits: math.Abs(after-before) / nm.point,
		Z:          medianZ(before, after, nb, na, nm.level),
		Sigma:      nm.point, NBefore: nb, NAfter: na,
	}
	if st.Drift {
		var gf, ga float64
		st.From, st.At, gf, ga = driftEnds(y, bounds[i], (bounds[i+1]+bounds[j+1])/2, bounds[j+2])
		// A level bends into the line by more than chance over the
		// bend's choice (2·log n, BIC-like, in point noises squared).
		crit := 2 * math.Log(float64(len(y))) * nm.point * nm.point
		trend = bounds[i] == 0 && bounds[j+2] == len(y) && gf < crit && ga < crit
	}
	st.Suspected = suspected(st, len(y), p)
	st.Minor = magnitude(before, after, useLog) < p.MinMagnitude
	st.Before, st.After = unscale(before, useLog), unscale(after, useLog)
	return st, trend
}

// driftEnds places the ends of a drift whose staircase spans a..b (mid
// in its middle): where the level before bends into a line (the
// least-squares flat-then-line hinge over a..mid) and where a line
// flattens into the level after (line-then-flat over mid..b). The
// staircase's first and last cuts lie inside the drift, halfway up its
// first and last stairs. gainFrom and gainAt are how much better each
// hinge fits than a straight line (in squared units of y): next to
// nothing when there is no level on that side.
func driftEnds(y []float64, a, mid, b int) (from, at int, gainFrom, gainAt float64) {
	kf, gf := hinge(y[a:mid], true)
	ka, ga := hinge(y[mid:b], false)
	return a + kf, mid + ka, gf, ga
}

// hinge is the bend of the least-squares fit to w of a level then a
// line from the bend on (start), or of a line up to the bend then a
// level (!start): the index of the bend, the first point of the line
// or of the level, and how much less its squared error is than a
// straight line's. It uses prefix sums, O(len(w)).
func hinge(w []float64, start bool) (int, float64) {
	n := len(w)
	p0, p1 := make([]float64, n+1), make([]float64, n+1)
	for t, v := range w {
		p0[t+1] = p0[t] + v
		p1[t+1] = p1[t] + float64(t)*v
	}
	fn, sy := float64(n), p0[n]
	best, bk := math.Inf(-1), 1
	for k := 1; k < n-1; k++ {
		// The hinge's regressor: u = t-k for t >= k (start), u = k-t for
		// t < k (end); m values 0..m-1 or 1..m.
		var sh, shh, shy float64
		if start {
			m := float64(n - k)
			sh, shh = m*(m-1)/2, (m-1)*m*(2*m-1)/6
			shy = (p1[n] - p1[k]) - float64(k)*(p0[n]-p0[k])
		} else {
			m := float64(k)
			sh, shh = m*(m+1)/2, m*(m+1)*(2*m+1)/6
			shy = m*p0[k] - p1[k]
		}
		det := fn*shh - sh*sh
		if det <= 0 {
			continue
		}
		c := (shh*sy - sh*shy) / det
		beta := (fn*shy - sh*sy) / det
		if fit := c*sy + beta*shy; fit > best {
			best, bk = fit, k
		}
	}
	tm := (fn - 1) / 2
	sty := p1[n] - tm*sy
	line := sy*sy/fn + sty*sty/(fn*(fn*fn-1)/12)
	return bk, best - line
}

// suspected says whether a change is not yet confirmed: fewer than
// MinSegment points hold the new level (for a drift, follow its end),
// or fewer than twice that and the evidence is under 1.5 MinZ.
func suspected(st Step, n int, p Params) bool {
	after := min(st.NAfter, n-st.At)
	return after < p.MinSegment || (after < 2*p.MinSegment && st.Z < 1.5*p.MinZ)
}

func unscale(v float64, useLog bool) float64 {
	if useLog {
		return math.Exp(v)
	}
	return v
}

// tail finds a change in the last points, fewer than MinSegment, which
// segmentation cannot confirm: the last points all lie more than 3 point
// noises beyond the level of the last segment, on one side, there are
// at least 2 of them, and their median differs from the level by MinZ
// standard errors (at the level's noise) and MinMagnitude. It is
// reported as suspected.
func tail(y []float64, cuts []int, nm noiseModel, p Params, useLog bool) (Step, bool) {
	n, m := len(y), p.MinSegment
	b := 0
	if len(cuts) > 0 {
		b = cuts[len(cuts)-1]
	}
	first := n - m + 1 // the earliest point of a tail shorter than m
	if first-b < m || first < 1 {
		return Step{}, false
	}
	buf := make([]float64, 0, n-b)
	lvl := level(y, b, first, buf)
	dir := math.Copysign(1, y[n-1]-lvl)
	k := n
	for k > first && (y[k-1]-lvl)*dir > 3*nm.point {
		k--
	}
	if n-k < 2 {
		return Step{}, false
	}
	lvl = level(y, b, k, buf)
	after := level(y, k, n, buf)
	z := medianZ(lvl, after, k-b, n-k, nm.level)
	if z < p.MinZ {
		return Step{}, false
	}
	return Step{
		Minor: magnitude(lvl, after, useLog) < p.MinMagnitude,
		At:    k, From: k, Before: unscale(lvl, useLog), After: unscale(after, useLog),
		NoiseUnits: math.Abs(after-lvl) / nm.point, Z: z, Sigma: nm.point,
		NBefore: k - b, NAfter: n - k, Suspected: true,
	}, true
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
