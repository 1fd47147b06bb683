package watch

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// The detector's quality on real histories: ../shared/realnoise holds 73
// series of CI benchmark results with their real level shifts marked
// (steps). A detected change within stepMargin points of a marked step
// is a hit (each step matched once); any other is a false alarm. Binary
// segmentation and PELT with the R changepoint package's defaults
// (cpt.mean, normal likelihood, MBIC penalty 3·log n, minimum segment 1;
// BinSeg at most Q=5 changes), run on the same log values scaled by the
// noise of successive differences, are the yardsticks, with E-divisive
// means as Apache Otava runs it (edivisive_test.go).
//
//	go test ./watch -run TestRealNoise -v

const stepMargin = 5

type realSeries struct {
	ID     string    `json:"id"`
	Values []float64 `json:"values"`
	Steps  []int     `json:"steps"`
}

func loadRealNoise(t testing.TB) []realSeries {
	t.Helper()
	dir := "../../shared/realnoise/series"
	if _, err := os.Stat(dir); err != nil {
		dir = "../shared/realnoise/series"
		if _, err := os.Stat(dir); err != nil {
			t.Skip("../shared/realnoise is absent")
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Skip("../shared/realnoise has no series")
	}
	var out []realSeries
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s realSeries
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s)
	}
	return out
}

type score struct {
	hits, alarms, steps, points int
}

func (s score) precision() float64 { return float64(s.hits) / math.Max(1, float64(s.hits+s.alarms)) }
func (s score) recall() float64    { return float64(s.hits) / math.Max(1, float64(s.steps)) }
func (s score) f1() float64 {
	p, r := s.precision(), s.recall()
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}
func (s score) alarmsPer100() float64 { return 100 * float64(s.alarms) / float64(s.points) }

// match scores detections against marked steps, each step matched to at
// most one detection (the nearest within the margin).
func match(found, steps []int) (hits, alarms int) {
	used := make([]bool, len(steps))
	sort.Ints(found)
	for _, f := range found {
		best, bi := stepMargin+1, -1
		for i, s := range steps {
			if d := abs(f - s); !used[i] && d <= stepMargin && d < best {
				best, bi = d, i
			}
		}
		if bi >= 0 {
			used[bi] = true
			hits++
		} else {
			alarms++
		}
	}
	return hits, alarms
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func evaluate(series []realSeries, detect func([]float64) []int) score {
	var s score
	for _, sr := range series {
		h, a := match(detect(sr.Values), sr.Steps)
		s.hits += h
		s.alarms += a
		s.steps += len(sr.Steps)
		s.points += len(sr.Values)
	}
	return s
}

func watchDetect(p Params) func([]float64) []int {
	return func(x []float64) []int {
		var at []int
		for _, st := range Detect(x, p) {
			for _, i := range reportedAt(st, len(x), p) {
				// A commit named twice (a drift's end where the next
				// starts, at a turn) is one change point.
				if len(at) == 0 || at[len(at)-1] != i {
					at = append(at, i)
				}
			}
		}
		return at
	}
}

// reportedAt are the points where watch reports a step: its first point
// at the new level (first_bad); for a drift, its first point off the old
// level (first_bad) and, when the level has stopped moving before the
// last MinSegment points, its first at the new one (drift_end).
func reportedAt(st Step, n int, p Params) []int {
	if !st.Drift {
		return []int{st.At}
	}
	if st.At <= n-p.MinSegment {
		return []int{st.From, st.At}
	}
	return []int{st.From}
}

// scaled returns the values (log values when all are positive, as watch
// takes them) in units of their successive-difference noise.
func scaled(x []float64) []float64 {
	y := make([]float64, len(x))
	pos := allPositive(x)
	for i, v := range x {
		y[i] = v
		if pos {
			y[i] = math.Log(v)
		}
	}
	s := noise(y)
	if !(s > 0) {
		s = 1
	}
	for i := range y {
		y[i] /= s
	}
	return y
}

// segCost is the normal-likelihood cost (unit variance) of y[a:b] about its
// mean: sum of squares minus n·mean².
func segCost(cum, cum2 []float64, a, b int) float64 {
	n := float64(b - a)
	s := cum[b] - cum[a]
	return cum2[b] - cum2[a] - s*s/n
}

func sums(y []float64) (cum, cum2 []float64) {
	cum = make([]float64, len(y)+1)
	cum2 = make([]float64, len(y)+1)
	for i, v := range y {
		cum[i+1] = cum[i] + v
		cum2[i+1] = cum2[i] + v*v
	}
	return cum, cum2
}

// pelt is PELT (Killick et al. 2012) for changes in mean with penalty
// 3·log n (MBIC) and minimum segment 1.
func pelt(x []float64) []int {
	y := scaled(x)
	n := len(y)
	if n < 2 {
		return nil
	}
	cum, cum2 := sums(y)
	pen := 3 * math.Log(float64(n))
	f := make([]float64, n+1)
	last := make([]int, n+1)
	f[0] = -pen
	cand := []int{0}
	for t := 1; t <= n; t++ {
		best, bs := math.Inf(1), 0
		vals := make([]float64, len(cand))
		for i, s := range cand {
			v := f[s] + segCost(cum, cum2, s, t) + pen
			vals[i] = v
			if v < best {
				best, bs = v, s
			}
		}
		f[t], last[t] = best, bs
		keep := cand[:0]
		for i, s := range cand {
			if vals[i]-pen <= best {
				keep = append(keep, s)
			}
		}
		cand = append(keep, t)
	}
	var cps []int
	for t := n; last[t] > 0; t = last[t] {
		cps = append(cps, last[t])
	}
	sort.Ints(cps)
	return cps
}

// binSegDefault is binary segmentation (changepoint's BinSeg) for changes
// in mean: split where the cost drops most, if by more than 3·log n, at
// most Q=5 changes.
func binSegDefault(x []float64) []int {
	y := scaled(x)
	n := len(y)
	cum, cum2 := sums(y)
	pen := 3 * math.Log(float64(n))
	type seg struct{ a, b int }
	segs := []seg{{0, n}}
	var cps []int
	for len(cps) < 5 {
		bestGain, bk, bi := 0.0, -1, -1
		for si, sg := range segs {
			whole := segCost(cum, cum2, sg.a, sg.b)
			for k := sg.a + 1; k < sg.b; k++ {
				g := whole - segCost(cum, cum2, sg.a, k) - segCost(cum, cum2, k, sg.b)
				if g > bestGain {
					bestGain, bk, bi = g, k, si
				}
			}
		}
		if bk < 0 || bestGain <= pen {
			break
		}
		sg := segs[bi]
		segs = append(segs[:bi], append([]seg{{sg.a, bk}, {bk, sg.b}}, segs[bi+1:]...)...)
		cps = append(cps, bk)
	}
	sort.Ints(cps)
	return cps
}

func TestRealNoise(t *testing.T) {
	series := loadRealNoise(t)
	results := []struct {
		name string
		s    score
	}{
		{"watch (default params)", evaluate(series, watchDetect(DefaultParams()))},
		{"binary segmentation (BinSeg, MBIC, Q=5)", evaluate(series, binSegDefault)},
		{"PELT (MBIC)", evaluate(series, pelt)},
		{"E-divisive means (Otava defaults: t-test p<0.001)", evaluate(series, eDivisive)},
	}
	for _, r := range results {
		t.Logf("%-50s precision %.3f recall %.3f F1 %.3f false alarms/100 points %.2f (%d hits, %d alarms, %d steps, %d points)",
			r.name, r.s.precision(), r.s.recall(), r.s.f1(), r.s.alarmsPer100(), r.s.hits, r.s.alarms, r.s.steps, r.s.points)
	}
	w := results[0].s
	for _, r := range results[1:] {
		if w.f1() < r.s.f1() {
			t.Errorf("watch F1 %.3f is below %s's %.3f", w.f1(), r.name, r.s.f1())
		}
	}
	if w.alarmsPer100() > 1 {
		t.Errorf("watch raises %.2f false alarms per 100 points; the budget is 1", w.alarmsPer100())
	}
}
