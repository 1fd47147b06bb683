package gate

import (
	"math"
	"testing"
)

// Non-finite values never reach the statistics from values(), but the
// change-point search and the noise band must not panic on them either.
func TestNonFiniteWindow(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, x := range [][]float64{
		{1, 2, 3, inf, 2, 1, 2, 3, 2, 1},
		{1, 2, 3, nan, 2, 1, 2, 3, 2, 1},
		{inf, inf, inf, inf, inf, inf},
		{1, 1, 1, math.Inf(-1), 1, 1, 1, 1},
	} {
		if got := changePoints(x); len(got) != 1 || got[0] != 0 {
			t.Errorf("changePoints(%v) = %v, want one segment", x, got)
		}
		_ = noiseBand(x)
	}
	runs := []Sample{{Metrics: map[string]float64{"m": 1}}, {Metrics: map[string]float64{"m": inf}}, {Metrics: map[string]float64{"m": nan}}, {Metrics: map[string]float64{}}}
	if got := values(runs, "m"); len(got) != 1 || got[0] != 1 {
		t.Errorf("values = %v, want [1]", got)
	}
}
