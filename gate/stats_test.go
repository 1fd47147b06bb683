package gate

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/perfgate/perfgate/internal/robust"
)

func TestSelectKth(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for n := 1; n < 60; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(rng.IntN(10)) // ties on purpose
		}
		sorted := append([]float64(nil), xs...)
		sort.Float64s(sorted)
		for k := 0; k < n; k++ {
			work := append([]float64(nil), xs...)
			if got := selectKth(work, k); got != sorted[k] {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, got, sorted[k])
			}
			for i := 0; i < k; i++ {
				if work[i] > work[k] {
					t.Fatalf("n=%d k=%d: larger value before k", n, k)
				}
			}
			for i := k + 1; i < n; i++ {
				if work[i] < work[k] {
					t.Fatalf("n=%d k=%d: smaller value after k", n, k)
				}
			}
		}
	}
}

func TestHolm(t *testing.T) {
	got := holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("holm = %v, want %v", got, want)
			break
		}
	}
}

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
