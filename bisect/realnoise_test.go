package bisect

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/perfgate/perfgate/internal/robust"
)

// realSeries is one history of ../shared/realnoise/series/<id>.json: a
// metric's values in commit order and the indices where a lasting level
// shift starts.
type realSeries struct {
	Values []float64 `json:"values"`
	Steps  []int     `json:"steps"`
	Noise  struct {
		PointSigma float64 `json:"point_sigma"`
	} `json:"noise"`
}

// residuals returns the series' own run-to-run noise: every value's log
// distance from the median of its step-free stretch (stretches of 10
// values or more), or nil when the series has values <= 0.
func (rs realSeries) residuals() []float64 {
	bounds := append([]int{0}, rs.Steps...)
	bounds = append(bounds, len(rs.Values))
	sort.Ints(bounds)
	var res []float64
	for j := 1; j < len(bounds); j++ {
		seg := rs.Values[bounds[j-1]:bounds[j]]
		if len(seg) < 10 {
			continue
		}
		ls := make([]float64, len(seg))
		for i, v := range seg {
			if v <= 0 {
				return nil
			}
			ls[i] = math.Log(v)
		}
		m := robust.Median(ls)
		for _, l := range ls {
			res = append(res, l-m)
		}
	}
	return res
}

// realNoiseMeasurer resamples a series' residuals around two levels: the
// good level before the culprit, the good level plus step from it on.
type realNoiseMeasurer struct {
	res     []float64
	culprit int
	step    float64
	rng     *rand.Rand
	runs    int
}

func (m *realNoiseMeasurer) Measure(_ context.Context, i int) ([]float64, error) {
	m.runs++
	level := math.Log(100)
	if i >= m.culprit {
		level += m.step
	}
	return []float64{math.Exp(level + m.res[m.rng.IntN(len(m.res))])}, nil
}

// realNoiseTrials bisects 48 commits with noise resampled from each real
// history in ../shared/realnoise (tb skips when absent): the series' own
// residuals around two levels, a step of each of steps times the series'
// noise scale at a random commit, trialsPer trials each. It returns the
// reliability table, the answers given as found and the wrong ones.
func realNoiseTrials(tb testing.TB, steps []float64, trialsPer int) (rl *reliability, series, found, wrong int) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "realnoise", "series", "*.json"))
	if len(files) == 0 {
		tb.Skip("../shared/realnoise is absent")
	}
	rl = newReliability()
	for fi, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var rs realSeries
		if err := json.Unmarshal(b, &rs); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		res := rs.residuals()
		if len(res) < 20 {
			continue
		}
		scale := madToSigma * medianAbs(res)
		if scale <= 0 {
			continue
		}
		series++
		for _, k := range steps {
			for tr := range trialsPer {
				rng := rand.New(rand.NewPCG(uint64(fi), uint64(tr)*10+uint64(k)))
				m := &realNoiseMeasurer{res: res, culprit: 1 + rng.IntN(48), step: k * scale, rng: rng}
				r, err := Search(context.Background(), 48, nil, m, Options{})
				if err != nil {
					tb.Fatalf("%s: %v", f, err)
				}
				o := outcomeOf(r, m.culprit)
				rl.addOutcome(o)
				if o.verdict == Found {
					found++
					if !o.right {
						wrong++
					}
				}
			}
		}
	}
	return rl, series, found, wrong
}

// TestRealNoiseCalibration runs one trial per real series at a step of 6
// noise scales (skipped with -short, and when ../shared/realnoise is
// absent) and asserts that at most 8% of the answers given as found are
// wrong: what the search holds now, a guard against regressions. The
// issue's target is 5%; BenchmarkRealNoiseCalibration prints the full
// reliability table (docs/bisect.md has it).
func TestRealNoiseCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	rl, series, found, wrong := realNoiseTrials(t, []float64{6}, 1)
	t.Logf("%d real series, a step of 6 noise scales: %d found, %d wrong\n%s", series, found, wrong, rl)
	if float64(wrong) > math.Max(0.08*float64(found), 1) {
		t.Errorf("%d of %d answers given as found are wrong, want at most 8%%", wrong, found)
	}
}

// BenchmarkRealNoiseCalibration prints the reliability table on real
// noise: every series of ../shared/realnoise, steps of 3 and 6 of the
// series' noise scales, two seeded trials each (292 searches). It ignores
// b.N:
//
//	go test ./bisect -run '^$' -bench RealNoiseCalibration -benchtime 1x -v
func BenchmarkRealNoiseCalibration(b *testing.B) {
	rl, series, found, wrong := realNoiseTrials(b, []float64{3, 6}, 2)
	b.Logf("%d real series, steps of 3 and 6 noise scales, 2 trials each: %d found at 95%%, %d wrong\n%s", series, found, wrong, rl)
}

func medianAbs(xs []float64) float64 {
	abs := make([]float64, len(xs))
	for i, x := range xs {
		abs[i] = math.Abs(x)
	}
	return robust.Median(abs)
}
