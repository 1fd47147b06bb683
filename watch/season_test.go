package watch

import (
	"math"
	"math/rand/v2"
	"testing"
)

func logs(x []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = math.Log(v)
	}
	return y
}

// deseason removes a season that repeats from point to point (months,
// weekdays, hours) and leaves alone what persistence handles: white
// noise, a random walk, a slow thermal cycle, a sawtooth.
func TestDeseason(t *testing.T) {
	season := func(p int, amp float64) func(int) float64 {
		return func(i int) float64 { return 1 + amp*math.Sin(2*math.Pi*float64(i)/float64(p)) }
	}
	tests := []struct {
		name string
		y    []float64
		want int
	}{
		{"months", logs(synth(1, 200, 0.01, season(12, 0.05))), 12},
		{"weekdays", logs(synth(2, 200, 0.02, season(7, 0.2))), 7},
		{"hours", logs(synth(3, 500, 0.05, season(24, 0.4))), 24},
		{"hours with a level drop", logs(synth(4, 500, 0.05, func(i int) float64 {
			if i >= 300 {
				return 0.7 * season(24, 0.4)(i)
			}
			return season(24, 0.4)(i)
		})), 24},
		{"white noise", logs(synth(5, 300, 0.01, func(int) float64 { return 1 })), 0},
		{"short white noise", logs(synth(6, 40, 0.01, func(int) float64 { return 1 })), 0},
		{"random walk", logs(synthWalk(7, 300, 0.004, 0.002)), 0},
		{"thermal cycle, period 80", logs(synth(8, 300, 0.003, season(80, 0.03))), 0},
		{"sawtooth of exact period 50", logs(synth(9, 300, 0.003, func(i int) float64 { return math.Exp(0.04 * float64(i%50) / 50) })), 50},
		{"sawtooth, resets 30-80 points apart", logs(synth(10, 300, 0.003, irregularSawtooth(10, 300, 0.04))), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, p := deseason(tt.y)
			if p != tt.want {
				t.Fatalf("period %d, want %d", p, tt.want)
			}
			if p == 0 && &out[0] != &tt.y[0] {
				t.Errorf("no season, yet the series was copied")
			}
			if p > 0 && !(diffVar(out) < diffVar(tt.y)/2) {
				t.Errorf("the season's removal left %.3g of %.3g", diffVar(out), diffVar(tt.y))
			}
		})
	}
}

// A trend through the whole series is no change, beside a step too: the
// step is reported once, at its place, with the levels either side of it
// as they are there; a drift over part of a series stays a drift.
func TestDetectStepOnATrend(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		x := synth(seed, 240, 0.01, func(i int) float64 {
			l := math.Exp(0.3 * float64(i) / 240)
			if i >= 130 {
				l *= 0.85
			}
			return l
		})
		got := Detect(x, DefaultParams())
		if len(got) != 1 || got[0].At < 128 || got[0].At > 132 || got[0].Drift {
			t.Errorf("seed %d: %+v, want one step at 130", seed, got)
			continue
		}
		// The trend at 130 is exp(0.3·130/240) = 1.18: levels 118 -> 100.
		if b, a := got[0].Before, got[0].After; math.Abs(b/118-1) > 0.03 || math.Abs(a/100.3-1) > 0.03 {
			t.Errorf("seed %d: levels %.1f -> %.1f, want about 118 -> 100", seed, b, a)
		}
	}
	for seed := uint64(1); seed <= 20; seed++ {
		testDrift(t, seed)
	}
}

// irregularSawtooth rises by amp and resets at intervals of 30-80 points,
// as a thermal cycle or a filling cache does.
func irregularSawtooth(seed uint64, n int, amp float64) func(int) float64 {
	r := rand.New(rand.NewPCG(seed, 3))
	lv := make([]float64, n)
	for a := 0; a < n; {
		per := 30 + r.IntN(51)
		for i := a; i < min(n, a+per); i++ {
			lv[i] = math.Exp(amp * float64(i-a) / float64(per))
		}
		a += per
	}
	return func(i int) float64 { return lv[i] }
}

// A crash on a random walk (a price, a wandering runner) is one change at
// its point, though the wander's level noise is larger than the crash;
// the walk alone, and a spike on it, are none.
func TestDetectCrashOnARandomWalk(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		walk := func(crash, spike int) []float64 {
			w, x := 0.0, make([]float64, 500)
			for i := range x {
				w += 0.015 * r.NormFloat64()
				if i == crash {
					w -= 0.35
				}
				x[i] = 100 * math.Exp(w)
				if i == spike {
					x[i] *= 1.5
				}
			}
			return x
		}
		got := Detect(walk(300, -1), DefaultParams())
		found := false
		for _, st := range got {
			found = found || (st.At == 300 && st.After < st.Before)
		}
		if !found {
			t.Errorf("seed %d: %+v, want the crash at 300", seed, got)
		}
		if got := Detect(walk(-1, 200), DefaultParams()); len(got) != 0 {
			t.Errorf("seed %d: a walk with a spike: %+v, want no change", seed, got)
		}
	}
}

// Monthly figures that grow and swing with the seasons, then drop by a
// quarter: the drop is the one change, though growth and season together
// swell the noise that segmentation sees.
func TestDetectDropInGrowingSeason(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		x := synth(seed, 180, 0.02, func(i int) float64 {
			l := math.Exp(0.006*float64(i)) * (1 + 0.15*math.Sin(2*math.Pi*float64(i)/12))
			if i >= 100 {
				l *= 0.75
			}
			return l
		})
		got := Detect(x, DefaultParams())
		if len(got) != 1 || got[0].At < 98 || got[0].At > 102 || got[0].After > got[0].Before {
			t.Errorf("seed %d: %+v, want one drop at 100", seed, got)
		}
	}
}
