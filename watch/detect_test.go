package watch

import (
	"math"
	"math/rand/v2"
	"testing"
)

// synth builds a series of n points around 100 with lognormal noise of
// sigma (relative), and level(i) giving the relative level at point i.
func synth(seed uint64, n int, sigma float64, level func(i int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n)
	for i := range x {
		x[i] = 100 * level(i) * math.Exp(sigma*r.NormFloat64())
	}
	return x
}

func TestDetectSynthetic(t *testing.T) {
	flat := func(int) float64 { return 1 }
	tests := []struct {
		name  string
		x     []float64
		want  []int // change indices, exact
		drift []bool
	}{
		{"flat", synth(1, 300, 0.02, flat), nil, nil},
		{"single step +10% at 150", synth(2, 300, 0.02, func(i int) float64 {
			if i >= 150 {
				return 1.1
			}
			return 1
		}), []int{150}, []bool{false}},
		{"two steps: +8% at 100, -15% at 220", synth(3, 300, 0.02, func(i int) float64 {
			switch {
			case i >= 220:
				return 1.08 * 0.85
			case i >= 100:
				return 1.08
			}
			return 1
		}), []int{100, 220}, []bool{false, false}},
		{"spikes: single +60% points, no step", func() []float64 {
			x := synth(4, 300, 0.02, flat)
			for _, i := range []int{3, 50, 120, 121 + 40, 200, 296} {
				x[i] *= 1.6
			}
			return x
		}(), nil, nil},
		{"bimodal noise: two levels 6% apart at random, no step", func() []float64 {
			r := rand.New(rand.NewPCG(5, 9))
			return synth(5, 400, 0.01, func(int) float64 {
				if r.IntN(2) == 0 {
					return 1.06
				}
				return 1
			})
		}(), nil, nil},
		{"bimodal noise with a +12% step at 200", func() []float64 {
			r := rand.New(rand.NewPCG(6, 9))
			return synth(6, 400, 0.01, func(i int) float64 {
				l := 1.0
				if r.IntN(2) == 0 {
					l = 1.06
				}
				if i >= 200 {
					l *= 1.12
				}
				return l
			})
		}(), []int{200}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.x, DefaultParams())
			if len(got) != len(tt.want) {
				t.Fatalf("found %d changes %+v, want %d at %v", len(got), got, len(tt.want), tt.want)
			}
			for i, st := range got {
				if st.At != tt.want[i] {
					t.Errorf("change %d at %d, want %d (%+v)", i, st.At, tt.want[i], st)
				}
				if st.Drift != tt.drift[i] {
					t.Errorf("change %d drift %v, want %v", i, st.Drift, tt.drift[i])
				}
			}
		})
	}
}

// A slow drift (+15% over 200 points, 1.5% noise) is one change, reported
// as a drift that spans the stretch where the level moved, its ends
// placed where the level starts and stops moving.
func TestDetectDriftOnce(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		testDrift(t, seed)
	}
}

func testDrift(t *testing.T, seed uint64) {
	x := synth(seed, 400, 0.015, func(i int) float64 {
		switch {
		case i < 100:
			return 1
		case i < 300:
			return 1 + 0.15*float64(i-100)/200
		}
		return 1.15
	})
	got := Detect(x, DefaultParams())
	if len(got) != 1 {
		t.Errorf("seed %d: found %d changes %+v, want the drift once", seed, len(got), got)
		return
	}
	st := got[0]
	// The ends are where a line through the drift meets the levels
	// either side (driftEnds): within 15 points of 100 and 300 at this
	// slope (0.075% a point) and noise (1.5%).
	if st.From < 85 || st.From > 115 || st.At < 285 || st.At > 315 {
		t.Errorf("seed %d: drift spans %d..%d, want 100..300 within 15 points", seed, st.From, st.At)
	}
	if rel := st.After/st.Before - 1; rel < 0.08 {
		t.Errorf("seed %d: drift of %.1f%%, want most of the 15%%", seed, 100*rel)
	}
}

// A step in the last points is reported as suspected once two points
// hold the new level, and confirmed once MinSegment do; one point is an
// outlier, not a change.
func TestDetectConfirmation(t *testing.T) {
	p := DefaultParams()
	base := synth(8, 200, 0.02, func(i int) float64 {
		if i >= 190 {
			return 1.2
		}
		return 1
	})
	for n := 191; n <= 200; n++ {
		got := Detect(base[:n], p)
		after := n - 190
		switch {
		case after < 2:
			if len(got) > 0 {
				t.Errorf("%d point after the step: reported %+v", after, got)
			}
		case len(got) != 1 || got[0].At != 190:
			t.Errorf("%d points after the step: got %+v, want one change at 190", after, got)
		case got[0].Suspected != (after < p.MinSegment):
			t.Errorf("%d points after the step: suspected %v, want %v", after, got[0].Suspected, after < p.MinSegment)
		}
	}
}

// Quantised values (most successive differences 0) still have a noise.
func TestDetectQuantised(t *testing.T) {
	x := make([]float64, 120)
	for i := range x {
		x[i] = 10
		if i%7 == 0 {
			x[i] = 11
		}
		if i >= 60 {
			x[i] += 5
		}
	}
	got := Detect(x, DefaultParams())
	if len(got) != 1 || got[0].At != 60 {
		t.Fatalf("got %+v, want one change at 60", got)
	}
}

// Persistent noise is not a change, a step inside a drift is one of its
// own (the drift's stretches either side of it, each below 5%, are
// Minor or a drift: not compared here), a step below MinMagnitude but
// far beyond the noise is kept and marked Minor, and one wild point at
// the end is not a change.
func TestDetectShapes(t *testing.T) {
	p := DefaultParams()
	p.MinMagnitude = 0.05 // watch's default min_change
	tests := []struct {
		name string
		x    []float64
		want []int  // change indices, within 3 points
		mark []bool // Minor, per change
	}{
		{"random walk", synthWalk(11, 400, 0.004, 0.002), nil, nil},
		{"thermal cycle: 3% sine, period 60", synth(12, 400, 0.003, func(i int) float64 {
			return math.Exp(0.03 * math.Sin(2*math.Pi*float64(i)/60))
		}), nil, nil},
		{"sawtooth: 4% rise over 50, reset", synth(13, 400, 0.003, func(i int) float64 {
			return math.Exp(0.04 * float64(i%50) / 50)
		}), nil, nil},
		{"+10% step at 200 inside a +10% drift over 100..300", synth(14, 400, 0.01, func(i int) float64 {
			l := 1 + 0.1*math.Min(1, math.Max(0, float64(i-100)/200))
			if i >= 200 {
				l *= 1.1
			}
			return l
		}), []int{200}, nil},
		{"+2% step at 150, 0.2% noise: below 5%, 10 noise units", synth(15, 300, 0.002, func(i int) float64 {
			if i >= 150 {
				return 1.02
			}
			return 1
		}), []int{150}, []bool{true}},
		{"one wild point at the end", func() []float64 {
			x := synth(16, 200, 0.01, func(int) float64 { return 1 })
			x[199] *= 1.5
			return x
		}(), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Step
			for _, st := range Detect(tt.x, p) {
				if !st.Drift && (!st.Minor || tt.mark != nil) {
					got = append(got, st)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("found %d steps %+v, want %d at %v", len(got), got, len(tt.want), tt.want)
			}
			for i, st := range got {
				if d := st.At - tt.want[i]; d < -3 || d > 3 {
					t.Errorf("step %d at %d, want %d", i, st.At, tt.want[i])
				}
				if tt.mark != nil && st.Minor != tt.mark[i] {
					t.Errorf("step %d minor %v, want %v (%+v)", i, st.Minor, tt.mark[i], st)
				}
			}
		})
	}
}

// synthWalk is a random walk of step walk (relative) plus white noise of
// sigma, around 100.
func synthWalk(seed uint64, n int, walk, sigma float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n)
	w := 0.0
	for i := range x {
		w += walk * r.NormFloat64()
		x[i] = 100 * math.Exp(w+sigma*r.NormFloat64())
	}
	return x
}
