package robust

import (
	"math"
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
