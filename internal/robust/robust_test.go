package robust

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1}, 2},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{-0.0, 0, 1e300, -1e300, 7}, 0},
	}
	for _, tt := range tests {
		in := append([]float64(nil), tt.in...)
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", in, got, tt.want)
		}
		for i := range in {
			if math.Float64bits(in[i]) != math.Float64bits(tt.in[i]) {
				t.Errorf("Median modified its input: %v, was %v", tt.in, in)
			}
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
	big := make([]float64, 101)
	for i := range big {
		big[i] = float64(100 - i)
	}
	if got := Median(big); got != 50 {
		t.Errorf("Median of 0..100 = %v, want 50", got)
	}
}

func TestMedianVar(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want float64
	}{{0, 1}, {1, 1}, {2, 0.5}, {10, math.Pi / 20}} {
		if got := MedianVar(tt.n); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("MedianVar(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

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
			if got := SelectKth(work, k); got != sorted[k] {
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

// TestSelectKthNaN: a NaN (no caller passes one) ends the selection.
func TestSelectKthNaN(t *testing.T) {
	nan := math.NaN()
	for _, xs := range [][]float64{{nan, nan, nan}, {1, nan, 2, nan, 0}, {nan, 3, 1}} {
		for k := range xs {
			SelectKth(append([]float64(nil), xs...), k)
		}
	}
}
