package gate

import (
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/realnoise"
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
			tm := newTailModel(rc, append(append([]float64(nil), flat...), tt.residuals...), unit)
			p := tm.p(tt.d)
			if got := p < tailAlpha; got != tt.fails {
				t.Errorf("p(%.2f) = %.4g (m = %d of %d), fails %v, want %v", tt.d, p, tm.m, tm.n, got, tt.fails)
			}
		})
	}
	// More and larger outliers never make a head more surprising.
	tm1 := newTailModel(rc, append(append([]float64(nil), flat...), 0.05), unit)
	tm2 := newTailModel(rc, append(append([]float64(nil), flat...), 0.05, 0.08), unit)
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
