package bisect

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/perfgate/perfgate/internal/robust"
	"github.com/perfgate/perfgate/internal/testlong"
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

// realNoiseConfig says which real-noise trials to run: a step of each of
// steps times the series' noise scale, trialsPer trials each, seeds from
// seed; with history > 0, Options.History holds that many commits of
// three stored runs each outside the range (the series' own residuals
// around levels of their own), as a nightly job's results would.
type realNoiseConfig struct {
	steps     []float64
	trialsPer int
	seed      uint64
	history   int
}

// realNoiseTrials bisects 48 commits with noise resampled from each real
// history in ../shared/realnoise (tb skips when absent): the series' own
// residuals around two levels, a step at a random commit, as cfg says. It
// returns the reliability table, the answers given as found and the wrong
// ones.
func realNoiseTrials(tb testing.TB, cfg realNoiseConfig) (rl *reliability, series, found, wrong int) {
	steps, trialsPer := cfg.steps, cfg.trialsPer
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
				rng := rand.New(rand.NewPCG(uint64(fi), cfg.seed+uint64(tr)*1000+uint64(k*10)))
				m := &realNoiseMeasurer{res: res, culprit: 1 + rng.IntN(48), step: k * scale, rng: rng}
				var opts Options
				for range cfg.history {
					level := 100 * math.Exp(0.05*rng.NormFloat64())
					h := make([]float64, 3)
					for j := range h {
						h[j] = level * math.Exp(res[rng.IntN(len(res))])
					}
					opts.History = append(opts.History, h)
				}
				r, err := Search(context.Background(), 48, nil, m, opts)
				if err != nil {
					tb.Fatalf("%s: %v", f, err)
				}
				o := outcomeOf(r, m.culprit)
				if *realNoiseVerbose && o.stated >= 0.99 && !o.right {
					var ev []string
					for _, e := range r.Evaluated {
						vs := ""
						for _, v := range e.Values {
							vs += fmt.Sprintf(" %.1f", 100*math.Log(v/100))
						}
						ev = append(ev, fmt.Sprintf("%d:[%s](%.2f)", e.Index, vs, e.PBad))
					}
					tb.Logf("%s step %g (%.2f%%): culprit %d named %d at %.4f, runs %d, noise %.4f: %v", filepath.Base(f)[:20], k, 100*k*scale, m.culprit, r.Culprit, r.Confidence, r.Runs, r.Noise, ev)
				}
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

// TestRealNoiseCalibration runs one trial per real series at steps of 4
// and 10 noise scales (skipped with -short, and when ../shared/realnoise
// is absent) and asserts issue 15's calibration on them: at most 5% of
// the answers given as found are wrong, and the answers stated at 0.95 or
// more are right at least 95% of the time. BenchmarkRealNoiseCalibration
// prints the full reliability table, with and without a stored history.
func TestRealNoiseCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	rl, series, found, wrong := realNoiseTrials(t, realNoiseConfig{steps: []float64{4, 10}, trialsPer: 1})
	t.Logf("%d real series, steps of 4 and 10 noise scales: %d found, %d wrong\n%s", series, found, wrong, rl)
	if float64(wrong) > math.Max(0.05*float64(found), 1) {
		t.Errorf("%d of %d answers given as found are wrong, want at most 5%%", wrong, found)
	}
	if n, right := rl.above(0.95); float64(right) < 0.95*float64(n) {
		t.Errorf("%d of %d answers stated at 0.95 or more are right, want at least 95%%", right, n)
	}
}

// realNoiseHistoryTable is the reliability table with a stored history
// that issue 27's target is stated on: BenchmarkRealNoiseCalibration's
// second table at seed 0.
var realNoiseHistoryTable = realNoiseConfig{steps: []float64{3, 4, 6, 10}, trialsPer: 3, history: 10}

// TestRealNoiseHistoryReliability asserts issue 27's target on real noise:
// in the reliability table with ten stored commits of history (438
// searches over every series of ../shared/realnoise), the answers stated
// at 0.99 or more are right at least 99% of the time. Skipped with -short
// and when ../shared/realnoise is absent.
func TestRealNoiseHistoryReliability(t *testing.T) {
	testlong.Skip(t)
	if testing.Short() {
		t.Skip("-short")
	}
	t.Parallel()
	rl, series, found, wrong := realNoiseTrials(t, realNoiseHistoryTable)
	t.Logf("%d real series, 10 stored history commits: %d found, %d wrong\n%s", series, found, wrong, rl)
	if err := checkTopBin(rl); err != nil {
		t.Error(err)
	}
}

// checkTopBin checks the 0.99+ bin of a reliability table against issue
// 27's target: at least 99% of its answers right.
func checkTopBin(rl *reliability) error {
	n, right := rl.above(0.99)
	if n == 0 || float64(right) < 0.99*float64(n) {
		return fmt.Errorf("%d of %d answers stated at 0.99 or more are right, want at least 99%%", right, n)
	}
	return nil
}

var realNoiseSeed = flag.Uint64("realnoise-seed", 0, "seed offset of BenchmarkRealNoiseCalibration's trials")

// BenchmarkRealNoiseCalibration prints the reliability table on real
// noise: every series of ../shared/realnoise, steps of 3, 4, 6 and 10 of
// the series' noise scales, three seeded trials each (876 searches), once
// without stored history and once with ten stored commits of three runs
// each; it fails when the second table's 0.99+ bin misses issue 27's
// target (99% right). It ignores b.N:
//
//	go test ./bisect -run '^$' -bench RealNoiseCalibration -benchtime 1x -v
//
// -args -realnoise-seed S replays other seeds; -realnoise-verbose lists
// the wrong answers stated at 0.99 or more.
func BenchmarkRealNoiseCalibration(b *testing.B) {
	for _, h := range []int{0, 10} {
		cfg := realNoiseHistoryTable
		cfg.seed, cfg.history = *realNoiseSeed, h
		rl, series, found, wrong := realNoiseTrials(b, cfg)
		if h > 0 {
			if err := checkTopBin(rl); err != nil {
				b.Errorf("with stored history: %v", err)
			}
		}
		b.Logf("%d real series, steps of 3, 4, 6 and 10 noise scales, 3 trials each, %d stored history commits: %d found at 95%%, %d wrong (%.1f%%)\n%s",
			series, h, found, wrong, 100*float64(wrong)/float64(max(found, 1)), rl)
	}
}

func medianAbs(xs []float64) float64 {
	abs := make([]float64, len(xs))
	for i, x := range xs {
		abs[i] = math.Abs(x)
	}
	return robust.Median(abs)
}

var realNoiseVerbose = flag.Bool("realnoise-verbose", false, "log every answer of the real-noise trials stated at 0.99 or more that is wrong")
