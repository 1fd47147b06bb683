package gate

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/perfgate/perfgate/internal/robust"
)

func TestChangePoints(t *testing.T) {
	flat := noisy(9, 20, 100, 0.03)
	step := append([]float64(nil), flat...)
	for i := 12; i < 20; i++ {
		step[i] *= 1.2
	}
	two := append([]float64(nil), flat...)
	for i := 6; i < 20; i++ {
		two[i] *= 0.8
	}
	for i := 15; i < 20; i++ {
		two[i] *= 1.4
	}
	tests := []struct {
		name string
		x    []float64
		want []int
	}{
		{"flat", flat, []int{0}},
		{"one step", step, []int{0, 12}},
		{"two steps", two, []int{0, 6, 15}},
		{"constant", []float64{5, 5, 5, 5, 5, 5}, []int{0}},
	}
	for _, tt := range tests {
		got := changePoints(logs(tt.x))
		if len(got) != len(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

func TestPooledScaleCalibration(t *testing.T) {
	// The median estimate of a unit noise is within 5% of 1 at every
	// window size gate uses.
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{5, 8, 12, 20, 40} {
		est := make([]float64, 2000)
		for i := range est {
			x := make([]float64, n)
			for j := range x {
				x[j] = rng.NormFloat64()
			}
			est[i] = pooledScale([][]float64{x})
		}
		if m := robust.Median(est); math.Abs(m-1) > 0.05 {
			t.Errorf("n=%d: median estimate %.3f of a unit noise", n, m)
		}
	}
	// An outlier does not inflate it.
	x := logs(noisy(4, 20, 100, 0.02))
	clean := pooledScale([][]float64{x})
	x[7] += 1 // one run 2.7x slower
	if got := pooledScale([][]float64{x}); got > clean*1.3 {
		t.Errorf("one outlier moved the noise from %.4f to %.4f", clean, got)
	}
}

// segmentWithSorting is segmentWith as it was first written, sorting
// every candidate part: the reference the running-sort version must
// match bit for bit.
func segmentWithSorting(x []float64, sigma float64) []int {
	absDev := func(xs []float64) float64 {
		m := robust.Median(xs)
		s := 0.0
		for _, v := range xs {
			s += math.Abs(v - m)
		}
		return s
	}
	var cuts []int
	var split func(a, b int)
	split = func(a, b int) {
		if b-a < 2*minSegment || len(cuts) >= maxCutsPerWin {
			return
		}
		bestCost, bestK := math.Inf(1), -1
		for k := a + minSegment; k <= b-minSegment; k++ {
			if c := absDev(x[a:k]) + absDev(x[k:b]); c < bestCost {
				bestCost, bestK = c, k
			}
		}
		l, r := x[a:bestK], x[bestK:b]
		se := sigma * math.Sqrt(robust.MedianVar(len(l))+robust.MedianVar(len(r)))
		if math.Abs(robust.Median(l)-robust.Median(r))/se <= cpThreshold {
			return
		}
		cuts = append(cuts, bestK)
		split(a, bestK)
		split(bestK, b)
	}
	split(0, len(x))
	sort.Ints(cuts)
	return append([]int{0}, cuts...)
}

func TestSegmentWithMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 20000 {
		n := 4 + rng.IntN(40)
		x := make([]float64, n)
		level := 0.0
		for j := range x {
			if rng.IntN(8) == 0 {
				level += 0.2 * rng.NormFloat64()
			}
			x[j] = level + 0.03*rng.NormFloat64()
			switch rng.IntN(30) {
			case 0:
				x[j] = math.Round(x[j]*10) / 10 // ties
			case 1:
				x[j] = math.Copysign(0, -1)
			case 2:
				x[j] = 0
			case 3:
				x[j] = 1e300
			}
		}
		sigma := 0.03 + 0.1*rng.Float64()
		want := segmentWithSorting(x, sigma)
		got := segmentWith(x, sigma)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: segmentWith(%v, %v) = %v, the sorting version %v", i, x, sigma, got, want)
		}
	}
}

// TestNoiseBandMatchesReference: noiseBand, which reuses the scale
// changePoints computed, equals the band computed from scratch as it first
// was (sorting segmentation, pooledScale of the final segments).
func TestNoiseBandMatchesReference(t *testing.T) {
	reference := func(x []float64) band {
		starts := []int{0}
		if sigma := diffSigma(x); sigma != 0 {
			starts = segmentWithSorting(x, sigma)
			if s := pooledScale(segments(x, starts)); s > 0 {
				starts = segmentWithSorting(x, s)
			}
		}
		last := starts[len(starts)-1]
		return band{ref: robust.Median(x[last:]), sigma: pooledScale(segments(x, starts)), segN: len(x) - last, segStart: last}
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 20000 {
		n := 1 + rng.IntN(40)
		x := make([]float64, n)
		level := 0.0
		for j := range x {
			if rng.IntN(6) == 0 {
				level += 0.15 * rng.NormFloat64()
			}
			x[j] = level + 0.03*rng.NormFloat64()
			if rng.IntN(10) == 0 {
				x[j] = math.Round(x[j]*20) / 20
			}
		}
		got, want := noiseBand(x), reference(x)
		if math.Float64bits(got.ref) != math.Float64bits(want.ref) || math.Float64bits(got.sigma) != math.Float64bits(want.sigma) || got.segN != want.segN || got.segStart != want.segStart {
			t.Fatalf("case %d: noiseBand(%v) = %+v, reference %+v", i, x, got, want)
		}
	}
}

// TestIdentityKey: the series key, built without an intermediate map, is
// the benchmark, a NUL and labelString of the identity labels.
func TestIdentityKey(t *testing.T) {
	id := newIdentity([]string{"extra"})
	rng := rand.New(rand.NewPCG(3, 3))
	names := []string{"model", "gpu", "hardware", "date", "host", "extra", "a", "b=c", "d,e", "", "z", "y", "x", "w", "v"}
	for range 2000 {
		var labels map[string]string
		if rng.IntN(5) > 0 {
			labels = map[string]string{}
			for range rng.IntN(len(names)) {
				labels[names[rng.IntN(len(names))]] = names[rng.IntN(len(names))]
			}
		}
		s := &Sample{Benchmark: names[rng.IntN(len(names))], Labels: labels}
		if got, want := id.key(s), s.Benchmark+"\x00"+labelString(id.labels(s.Labels)); got != want {
			t.Fatalf("key(%q, %v) = %q, want %q", s.Benchmark, labels, got, want)
		}
	}
}
