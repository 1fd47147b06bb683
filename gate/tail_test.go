package gate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/realnoise"
	"github.com/perfgate/perfgate/internal/robust"
)

// TestTailModel: the predictive probability of one run's excess.
func TestTailModel(t *testing.T) {
	const unit = 0.01 // 1% noise a run
	rc := &relCheck{lower: true}
	flat := make([]float64, 19)
	for _, tt := range []struct {
		name      string
		residuals []float64 // besides 19 at the level
		d         float64   // head's log change
		fails     bool
	}{
		{"no outlier: the band alone decides", nil, 0.04, true},
		{"one mild outlier, head far beyond it", []float64{0.035}, 0.19, true},
		{"one mild outlier, head just past the band", []float64{0.035}, 0.04, false},
		{"outliers as large as head", []float64{0.15, 0.2, 0.18}, 0.19, false},
		{"outliers in the good direction say nothing", []float64{-0.2, -0.3}, 0.04, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tm := newTailModel(rc, append(append([]float64(nil), flat...), tt.residuals...), unit, tailEdge)
			p := tm.p(tt.d)
			if got := p < tailAlpha; got != tt.fails {
				t.Errorf("p(%.2f) = %.4g (m = %d of %d), fails %v, want %v", tt.d, p, tm.m, tm.n, got, tt.fails)
			}
		})
	}
	// More and larger outliers never make a head more surprising.
	tm1 := newTailModel(rc, append(append([]float64(nil), flat...), 0.05), unit, tailEdge)
	tm2 := newTailModel(rc, append(append([]float64(nil), flat...), 0.05, 0.08), unit, tailEdge)
	for _, d := range []float64{0.04, 0.1, 0.3} {
		if tm2.p(d) < tm1.p(d) {
			t.Errorf("p(%.2f): %.4g with two outliers < %.4g with one", d, tm2.p(d), tm1.p(d))
		}
	}
	if p := tm1.p(0.02); p != 1 {
		t.Errorf("within the band p = %v, want 1", p)
	}
	if p := tm1.p(math.Log(100)); p <= 0 || p >= 1e-3 {
		t.Errorf("a 100x regression: p = %v, want tiny but positive", p)
	}
}

// TestCheckOneRunHeavyTail: one run against a window whose outliers are
// the head's kind stays inconclusive, also when the outliers came two in a
// row (an excursion of two commits that returned is no level of its own,
// so its results count as outliers); far beyond the outliers it fails.
func TestCheckOneRunHeavyTail(t *testing.T) {
	base := []float64{100, 101, 99, 100, 100.5, 99.5, 100, 101, 99, 100, 100.5, 99.5, 100, 101, 99, 100, 100.5, 99.5}
	with := func(at int, vs ...float64) []float64 {
		w := append([]float64(nil), base...)
		return append(w[:at], append(vs, w[at:]...)...)
	}
	// A quiet window (from a real history) cut at the excursion: the two results are a segment
	// of their own, and no residual of it is off its median.
	excursion := []float64{89.3, 99.9, 119.8, 119.7, 100.1, 100.6, 100.3, 100, 100.3}
	if starts := changePoints(logs(excursion)); len(starts) < 2 {
		t.Fatalf("the excursion window is not cut (%v): the test no longer tests a returned excursion", starts)
	}
	for _, tt := range []struct {
		name   string
		window []float64
		head   float64
		want   Verdict
	}{
		{"clean window, 20% worse", base, 120, Fail},
		{"one outlier of +4%, 20% worse", with(8, 104), 120, Fail},
		{"outliers of +19% and +22%, 20% worse", with(6, 119, 100, 100, 122), 120, Inconclusive},
		{"a two-commit excursion of +19% that returned, 20% worse", excursion, 120, Inconclusive},
		{"a two-commit excursion of +19% that returned, 3x worse", excursion, 300, Fail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr := realTrial{head: []float64{tt.head}}
			for _, v := range tt.window {
				tr.history = append(tr.history, []float64{v})
			}
			cfg := DefaultConfig()
			rule, err := ParseRuleFlag("value:5%:lower")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Rules = []Rule{rule}
			c := verdictOf(t, realSeries{realnoise.Series{ID: tt.name}}, tr, cfg)
			if c.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s: %s", c.Verdict, tt.want, c.Reason)
			}
			if c.Verdict == Inconclusive && (!strings.Contains(c.Reason, "of the time without any change") || c.RunsToDecide != 3) {
				t.Errorf("reason %q (runs to decide %d): want the outliers' probability and three runs", c.Reason, c.RunsToDecide)
			}
		})
	}
}

// windowLight runs the tail test as bandCheck does on a window of log
// values of one run a commit.
func windowLight(lx []float64) bool {
	b := noiseBand(lx)
	unit := b.sigma * math.Sqrt(1+robust.MedianVar(b.segN))
	return lightTailed(tailResiduals(lx, longSegments(b.starts, len(lx))), unit)
}

// TestLightTailedNormalWindows: the tail test accepts about 95% of windows
// of 20 normal values (a third of which hold a residual beyond the tail
// model's 2 noise units), and flags most windows of heavy-tailed noise:
// 10% of runs 20% slow, or Student's t with two degrees of freedom.
func TestLightTailedNormalWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 1))
	const n, trials = 20, 4000
	for _, tt := range []struct {
		name     string
		draw     func() float64
		min, max float64 // share accepted
	}{
		{"normal", func() float64 { return 0.03 * rng.NormFloat64() }, 0.93, 0.985},
		{"10% of runs 20% slow", func() float64 {
			v := 0.03 * rng.NormFloat64()
			if rng.Float64() < 0.1 {
				v += math.Log(1.2)
			}
			return v
		}, 0, 0.35},
		{"Student t, 2 df", func() float64 {
			c := 0.0
			for range 2 {
				z := rng.NormFloat64()
				c += z * z
			}
			return 0.03 * rng.NormFloat64() / math.Sqrt(c/2)
		}, 0, 0.6},
	} {
		acc := 0
		for range trials {
			lx := make([]float64, n)
			for i := range lx {
				lx[i] = tt.draw()
			}
			acc += b2i(windowLight(lx))
		}
		share := float64(acc) / trials
		t.Logf("%-22s windows of %d accepted as light-tailed: %.1f%%", tt.name, n, 100*share)
		if share < tt.min || share > tt.max {
			t.Errorf("%s: %.1f%% of windows accepted, want %.0f%%-%.0f%%", tt.name, 100*share, 100*tt.min, 100*tt.max)
		}
	}
}

// TestLightTailedRealWindows: on the real histories (skipped when
// ../shared/realnoise is absent), windows of 20 one-run commits of the
// two-level series (heavy tails) are flagged far more often than those
// of the one-level ones.
func TestLightTailedRealWindows(t *testing.T) {
	series := loadRealNoise(t)
	acc := map[string][2]int{}
	for _, s := range series {
		for _, kp := range s.pick(perStretch, oneRun) {
			k, start := kp[0], kp[1]
			lx := logs(s.Values[max(start, k-20):k])
			a := acc[s.Regime()]
			a[0] += b2i(windowLight(lx))
			a[1]++
			acc[s.Regime()] = a
		}
	}
	share := func(r string) float64 { return float64(acc[r][0]) / float64(acc[r][1]) }
	for _, r := range []string{"one-level", "two-level"} {
		t.Logf("%s: %.1f%% of %d windows accepted as light-tailed", r, 100*share(r), acc[r][1])
	}
	if share("two-level") > 0.5 || share("two-level") > share("one-level")-0.1 {
		t.Errorf("two-level windows accepted %.1f%%, one-level %.1f%%: want the heavy-tailed ones flagged", 100*share("two-level"), 100*share("one-level"))
	}
}
