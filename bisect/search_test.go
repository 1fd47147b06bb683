package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/testlong"
)

// The scenario of the issue: 48 commits, Mean TTFT 12% worse from commit
// 29 on, +-1.5% noise (a standard deviation), and commit 24, the first
// midpoint, exits 125.
const (
	issueN       = 48
	issueCulprit = 29
	issueSigma   = 0.015
)

var issueStep = math.Log(1.12) / issueSigma // 12%, in noise standard deviations

func issueSimulation(seed uint64) *simulation {
	sm := newSimulation(issueN, issueCulprit, issueSigma, issueStep, seed)
	sm.skip = map[int]bool{24: true}
	return sm
}

// TestSearchIssueTrials runs the issue's scenario over many seeded trials
// against the simulated benchmark (the git path is covered end to end by
// cmd/perfgate's TestBisectRunEndToEnd): the culprit must be right in at
// least 95% of them, and the mean number of runs, reported with -v, at
// most 12 (ceil(log2 48) = 6 is the noiseless floor).
func TestSearchIssueTrials(t *testing.T) {
	const trials = 300
	right, runs, found := 0, 0, 0
	for seed := uint64(0); seed < trials; seed++ {
		sm := issueSimulation(seed)
		res, err := Search(context.Background(), issueN, nil, sm, Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if res.Runs != sm.runs {
			t.Fatalf("seed %d: Result.Runs = %d, the measurer ran %d times", seed, res.Runs, sm.runs)
		}
		if res.Culprit == issueCulprit && res.Verdict == Found {
			right++
		}
		if res.Verdict == Found {
			found++
		}
		runs += res.Runs
	}
	acc := float64(right) / trials
	mean := float64(runs) / trials
	t.Logf("48 commits, 12%% step at commit 29, 1.5%% noise, commit 24 untestable: %d trials, culprit right in %.1f%%, %d found, mean runs %.2f (budget %d)",
		trials, 100*acc, found, mean, DefaultBudget(issueN))
	if acc < 0.95 {
		t.Errorf("culprit right in %.1f%% of trials, want at least 95%%", 100*acc)
	}
	if mean > 12 {
		t.Errorf("mean runs %.2f, want at most 12", mean)
	}
}

func TestSearchVerdicts(t *testing.T) {
	tests := []struct {
		name  string
		sim   func() *simulation
		opts  Options
		want  Verdict
		check func(t *testing.T, sm *simulation, res *Result)
	}{
		{
			name: "regression found",
			sim:  func() *simulation { return newSimulation(100, 61, 0.02, 6, 1) },
			want: Found,
			check: func(t *testing.T, sm *simulation, res *Result) {
				wantCulprit(t, res, 61)
				if math.Abs(res.Change-math.Expm1(0.12)) > 3*res.ChangeSE {
					t.Errorf("change %.4f ± %.4f, want about %.4f", res.Change, res.ChangeSE, math.Expm1(0.12))
				}
				if res.Noise < 0.01 || res.Noise > 0.04 {
					t.Errorf("noise %.4f, want about 0.02", res.Noise)
				}
			},
		},
		{
			name: "improvement found",
			sim:  func() *simulation { return newSimulation(30, 7, 0.01, -8, 2) },
			want: Found,
			check: func(t *testing.T, sm *simulation, res *Result) {
				wantCulprit(t, res, 7)
				if res.Change >= 0 {
					t.Errorf("change %.3f, want negative", res.Change)
				}
			},
		},
		{
			name: "no step",
			sim:  func() *simulation { return newSimulation(48, 10, 0.015, 0, 3) },
			want: NoStep,
			check: func(t *testing.T, sm *simulation, res *Result) {
				if res.Culprit != 0 || res.Confidence != 0 {
					t.Errorf("named commit %d with confidence %.3f; want none", res.Culprit, res.Confidence)
				}
				if !strings.Contains(res.Reason, "do not differ beyond the noise") {
					t.Errorf("reason %q", res.Reason)
				}
				if res.Runs > 2*DefaultMaxEndRuns*2 {
					t.Errorf("%d runs to find no step", res.Runs)
				}
			},
		},
		{
			name: "below the threshold",
			sim:  func() *simulation { return newSimulation(48, 10, 0.01, 3, 4) }, // a 3% step
			opts: Options{Threshold: 0.10},
			want: NoStep,
			check: func(t *testing.T, sm *simulation, res *Result) {
				if !strings.Contains(res.Reason, "below the threshold of 10%") {
					t.Errorf("reason %q", res.Reason)
				}
			},
		},
		{
			name: "culprit untestable",
			sim: func() *simulation {
				sm := newSimulation(40, 20, 0.01, 10, 5)
				sm.skip = map[int]bool{20: true}
				return sm
			},
			want: Untestable,
			check: func(t *testing.T, sm *simulation, res *Result) {
				if res.First != 20 || res.Last != 21 || res.RangeConfidence < 0.95 {
					t.Errorf("range %d..%d (%.3f), want 20..21 with >= 0.95", res.First, res.Last, res.RangeConfidence)
				}
			},
		},
		{
			name: "commit before the culprit untestable",
			sim: func() *simulation {
				sm := newSimulation(40, 20, 0.01, 10, 6)
				sm.skip = map[int]bool{19: true}
				return sm
			},
			want: Untestable,
			check: func(t *testing.T, sm *simulation, res *Result) {
				if res.First != 19 || res.Last != 20 {
					t.Errorf("range %d..%d, want 19..20", res.First, res.Last)
				}
				if !hasSkip(res, 19) {
					t.Errorf("commit 19 not reported as skipped: %+v", res.Evaluated)
				}
			},
		},
		{
			name: "budget",
			sim:  func() *simulation { return newSimulation(1000, 400, 0.01, 8, 7) },
			opts: Options{MaxRuns: 7},
			want: OutOfRuns,
			check: func(t *testing.T, sm *simulation, res *Result) {
				if res.Runs != 7 || sm.runs != 7 {
					t.Errorf("runs %d (measurer %d), want 7", res.Runs, sm.runs)
				}
				if res.Culprit == 0 || res.Confidence >= 0.95 {
					t.Errorf("best guess %d with %.3f, want a guess below the target", res.Culprit, res.Confidence)
				}
			},
		},
		{
			name: "one commit",
			sim:  func() *simulation { return newSimulation(1, 1, 0.01, 10, 8) },
			want: Found,
			check: func(t *testing.T, sm *simulation, res *Result) {
				wantCulprit(t, res, 1)
				// One run per end cannot measure the noise: the ends are
				// run again until the step is established.
				if res.Runs > 6 || res.Confidence != 1 {
					t.Errorf("runs %d confidence %v, want at most 6 and 1", res.Runs, res.Confidence)
				}
			},
		},
		{
			name: "wild runs",
			sim: func() *simulation {
				sm := newSimulation(48, 33, 0.015, 8, 9)
				sm.outliers = 0.1
				return sm
			},
			want:  Found,
			check: func(t *testing.T, sm *simulation, res *Result) { wantCulprit(t, res, 33) },
		},
		{
			name: "confidence 0.99",
			sim:  func() *simulation { return newSimulation(48, 12, 0.015, 5, 10) },
			opts: Options{Confidence: 0.99},
			want: Found,
			check: func(t *testing.T, sm *simulation, res *Result) {
				wantCulprit(t, res, 12)
				if res.Confidence < 0.99 {
					t.Errorf("confidence %.4f, want >= 0.99", res.Confidence)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := tt.sim()
			res, err := Search(context.Background(), sm.n, nil, sm, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Fatalf("verdict %s (%s), want %s; culprit %d at %.3f after %d runs", res.Verdict, res.Reason, tt.want, res.Culprit, res.Confidence, res.Runs)
			}
			if res.Runs != sm.runs {
				t.Errorf("Result.Runs = %d, the measurer ran %d times", res.Runs, sm.runs)
			}
			tt.check(t, sm, res)
		})
	}
}

func wantCulprit(t *testing.T, res *Result, k int) {
	t.Helper()
	if res.Culprit != k {
		t.Errorf("culprit %d (confidence %.3f, %s), want %d", res.Culprit, res.Confidence, res.Verdict, k)
	}
}

func hasSkip(res *Result, i int) bool {
	for _, e := range res.Evaluated {
		if e.Index == i && e.Skip != "" {
			return true
		}
	}
	return false
}

// TestSearchLinearScale checks metrics that are zero or negative, which
// cannot be compared on a log scale: a difference replaces the ratio.
func TestSearchLinearScale(t *testing.T) {
	sm := newSimulation(30, 11, 0, 0, 11)
	m := MeasureFunc(func(_ context.Context, i int) ([]float64, error) {
		level := -1.0
		if i >= 11 {
			level = 1
		}
		return []float64{level + 0.2*sm.rng.NormFloat64()}, nil
	})
	res, err := Search(context.Background(), 30, nil, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCulprit(t, res, 11)
	if res.Relative {
		t.Error("Relative is true for values around zero")
	}
	if math.Abs(res.Bad-res.Good-2) > 0.5 {
		t.Errorf("levels %.3f -> %.3f, want about -1 -> 1", res.Good, res.Bad)
	}
}

// TestSearchNoiseless checks a benchmark that gives the same number every
// time: the noise floor keeps the model finite and the search is plain
// bisection, plus the culprit's repeat (its lone run is always run again).
func TestSearchNoiseless(t *testing.T) {
	m := MeasureFunc(func(_ context.Context, i int) ([]float64, error) {
		if i >= 37 {
			return []float64{110}, nil
		}
		return []float64{100}, nil
	})
	res, err := Search(context.Background(), 64, nil, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCulprit(t, res, 37)
	if want := 2*DefaultEndRuns + 6 + 1; res.Runs != want {
		t.Errorf("%d runs, want %d (the ends, log2 64, the culprit's repeat)", res.Runs, want)
	}
}

func TestSearchStored(t *testing.T) {
	// A history measured by an earlier bisect: repeats at the ends.
	bisected := map[int][]float64{0: {100.2, 99.1, 100.8}, 24: {99.4}, 36: {112.5}, 30: {111.2}, 27: {100.9}, 28: {99.7}, 29: {111.9}, 48: {112.3, 111.1}}
	// A nightly job: one run at every fourth commit, no repeats.
	nightly := map[int][]float64{}
	sm := newSimulation(48, 29, 0.015, 8, 12)
	for i := 0; i <= 48; i += 4 {
		nightly[i] = []float64{sm.value(i)}
	}
	nightly[48] = []float64{sm.value(48)}
	tests := []struct {
		name  string
		known map[int][]float64
		want  Verdict
		check func(t *testing.T, res *Result)
	}{
		{"bisected", bisected, Found, func(t *testing.T, res *Result) { wantCulprit(t, res, 29) }},
		{"nightly", nightly, Untestable, func(t *testing.T, res *Result) {
			if res.First != 29 || res.Last != 32 {
				t.Errorf("range %d..%d, want 29..32 (28 measured good, 32 bad)", res.First, res.Last)
			}
			if res.NoiseFrom != "neighbours" {
				t.Errorf("noise from %q, want neighbours", res.NoiseFrom)
			}
		}},
		{"flat", map[int][]float64{0: {100, 101, 99.5}, 10: {100.4}, 20: {99.8}, 30: {100.9}, 48: {100.2, 99.6}}, NoStep, func(t *testing.T, res *Result) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Search(context.Background(), 48, tt.known, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Fatalf("verdict %s (%s), want %s", res.Verdict, res.Reason, tt.want)
			}
			if res.Runs != 0 {
				t.Errorf("%d runs without a measurer", res.Runs)
			}
			for _, e := range res.Evaluated {
				if e.Stored != len(tt.known[e.Index]) || e.Runs != 0 {
					t.Errorf("commit %d: stored %d runs %d, want %d and 0", e.Index, e.Stored, e.Runs, len(tt.known[e.Index]))
				}
			}
			tt.check(t, res)
		})
	}
}

// TestSearchReusesKnown checks that stored values are not measured again:
// with both ends and the commits around the step known, no run is made.
// (With two values per end the noise is credited with too few degrees of
// freedom for 95%, see noiseDFDiscount; with one value at 12 and 13, the
// anywhere component of the noise's shape leaves the culprit at 93%, and
// commit 12 would be run again.)
func TestSearchReusesKnown(t *testing.T) {
	known := map[int][]float64{0: {100.2, 99.1, 100.6}, 12: {99.5, 100.3}, 13: {111.9, 111.4}, 20: {112.3, 111.1, 111.6}}
	m := MeasureFunc(func(_ context.Context, i int) ([]float64, error) {
		t.Errorf("commit %d measured", i)
		return []float64{100}, nil
	})
	res, err := Search(context.Background(), 20, known, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantCulprit(t, res, 13)
	if res.Runs != 0 {
		t.Errorf("%d runs", res.Runs)
	}
}

func TestSearchErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		n       int
		known   map[int][]float64
		m       func(cancel context.CancelFunc) Measurer
		wantEnd bool // an *EndError
		is      error
	}{
		{"no commits", 0, nil, nil, false, nil},
		{"known outside the range", 5, map[int][]float64{6: {1}}, nil, false, nil},
		{"stored without the good end", 5, map[int][]float64{5: {1, 2}}, nil, true, nil},
		{"good end untestable", 5, nil, func(context.CancelFunc) Measurer {
			return MeasureFunc(func(_ context.Context, i int) ([]float64, error) {
				if i == 0 {
					return nil, &SkipError{Reason: "exit code 125"}
				}
				return []float64{1}, nil
			})
		}, true, ErrSkip},
		{"run fails", 10, nil, func(context.CancelFunc) Measurer {
			return MeasureFunc(func(_ context.Context, i int) ([]float64, error) {
				if i == 5 {
					return nil, boom
				}
				return []float64{100 + 10*float64(i/5)}, nil
			})
		}, false, boom},
		{"cancelled", 10, nil, func(cancel context.CancelFunc) Measurer {
			return MeasureFunc(func(ctx context.Context, i int) ([]float64, error) {
				if i != 0 && i != 10 {
					cancel()
				}
				return []float64{100 + 10*float64(i/5)}, ctx.Err()
			})
		}, false, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var m Measurer
			if tt.m != nil {
				m = tt.m(cancel)
			}
			_, err := Search(ctx, tt.n, tt.known, m, Options{})
			if err == nil {
				t.Fatal("no error")
			}
			var ee *EndError
			if errors.As(err, &ee) != tt.wantEnd {
				t.Errorf("error %v: EndError %v, want %v", err, !tt.wantEnd, tt.wantEnd)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not match %v", err, tt.is)
			}
		})
	}
}

func TestProgress(t *testing.T) {
	sm := issueSimulation(42)
	var events []Progress
	res, err := Search(context.Background(), issueN, nil, sm, Options{Progress: func(p Progress) { events = append(events, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2*res.Runs {
		t.Fatalf("%d events for %d runs, want one before and one after each", len(events), res.Runs)
	}
	for i := 0; i < len(events); i += 2 {
		before, after := events[i], events[i+1]
		if before.Done || !after.Done || before.Run != i/2+1 || after.Run != before.Run || before.Index != after.Index || before.Budget != DefaultBudget(issueN) {
			t.Errorf("events %d, %d: %+v then %+v", i, i+1, before, after)
		}
		if after.Skip == "" && len(after.Values) != 1 {
			t.Errorf("event %d has no value: %+v", i+1, after)
		}
		if sm.skip[after.Index] != (after.Skip != "") {
			t.Errorf("event %d: commit %d skip %q", i+1, after.Index, after.Skip)
		}
	}
}

func TestPosterior(t *testing.T) {
	smp := sample{n: 20, values: make([][]float64, 21), skipped: make([]bool, 21)}
	smp.values[0] = []float64{100, 101, 99}
	smp.values[20] = []float64{110, 111, 109}
	smp.values[8] = []float64{100.5}
	smp.values[15] = []float64{110.2}
	p, ok := smp.posterior()
	if !ok {
		t.Fatal("no posterior")
	}
	total, prev := 0.0, 0.0
	for k := 1; k <= 20; k++ {
		total += p.prob(k)
		if pb := p.pBad(k); pb < prev-1e-12 {
			t.Errorf("pBad(%d) = %v < pBad(%d) = %v", k, pb, k-1, prev)
		} else {
			prev = pb
		}
	}
	if math.Abs(total-1) > 1e-9 {
		t.Errorf("probabilities sum to %v", total)
	}
	if p.pBad(8) > 0.01 || p.pBad(15) < 0.99 {
		t.Errorf("pBad(8) = %v, pBad(15) = %v: want good and bad", p.pBad(8), p.pBad(15))
	}
	// The commits between the two measured ones share the mass evenly.
	for k := 10; k <= 15; k++ {
		if math.Abs(p.prob(k)-p.prob(9)) > 1e-12 {
			t.Errorf("prob(%d) = %v, prob(9) = %v", k, p.prob(k), p.prob(9))
		}
	}
	if k, pk := p.best(); k != 9 || math.Abs(pk-1.0/7) > 0.01 {
		t.Errorf("best = %d, %.3f; want 9 (the oldest of 7 equal), 1/7", k, pk)
	}
}

func TestDropOutliers(t *testing.T) {
	ys := [][]float64{{1, 1.01, 0.99, 1.5}, {2, 2.01}, {3, 3.02, 2.99}}
	out, ignored := dropOutliers(ys)
	if len(out[0]) != 3 || !ignored[0][3] {
		t.Errorf("1.5 among values near 1 not dropped: %v %v", out[0], ignored[0])
	}
	if len(out[1]) != 2 || len(out[2]) != 3 || ignored[1] != nil || ignored[2] != nil {
		t.Errorf("other commits changed: %v %v", out, ignored)
	}
}

// TestSearchIntermediateLevel has two changes close together: commit 20
// sits halfway between the levels. Its runs stay ambiguous, so it is
// repeated up to the cap, and the search ends without claiming the target
// confidence, saying why.
func TestSearchIntermediateLevel(t *testing.T) {
	sm := newSimulation(48, 0, 0.01, 0, 13)
	m := MeasureFunc(func(_ context.Context, i int) ([]float64, error) {
		level := 0.0
		switch {
		case i == 20:
			level = 0.06
		case i > 20:
			level = 0.12
		}
		return []float64{100 * math.Exp(level+0.01*sm.rng.NormFloat64())}, nil
	})
	res, err := Search(context.Background(), 48, nil, m, Options{MaxRuns: 60})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == Found && res.Culprit != 20 && res.Culprit != 21 {
		t.Fatalf("found %d, want 20 or 21 if anything", res.Culprit)
	}
	if res.Verdict == OutOfRuns && !strings.Contains(res.Reason, "still ambiguous") {
		t.Errorf("reason %q", res.Reason)
	}
	if res.Verdict != Found && res.Verdict != OutOfRuns {
		t.Errorf("verdict %s (%s)", res.Verdict, res.Reason)
	}
	t.Logf("verdict %s, culprit %d at %.3f after %d runs: %s", res.Verdict, res.Culprit, res.Confidence, res.Runs, res.Reason)
}

// TestSearchCalibration checks that the stated confidence holds where it
// is hardest to earn: at a step of 2 noise standard deviations, at most 5%
// of the commits named at 95% may be wrong (pooled over the rows of that
// step, about 200 named commits; 4 standard deviations must stay near 0;
// -short halves the trials).
// The trials are seeded apart from BenchmarkSearch's (docs/bisect.md has
// its full table). minFound and minAcc keep the search from passing by
// never claiming 95%.
func TestSearchCalibration(t *testing.T) {
	testlong.Skip(t)
	type pool struct{ found, wrong int }
	tests := []struct {
		n        int
		step     float64 // noise standard deviations
		trials   int
		minFound float64 // of all trials
		minAcc   float64 // right among all trials, best guesses included
	}{
		{n: 64, step: 2, trials: 240, minFound: 0.30, minAcc: 0.55},
		{n: 256, step: 2, trials: 90, minFound: 0.30, minAcc: 0.55},
		{n: 256, step: 4, trials: 60, minFound: 0.95, minAcc: 0.97},
	}
	maxWrong := map[float64]float64{2: 0.05, 4: 0.02}
	pools := map[float64]*pool{}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("N=%d/step=%gsigma", tt.n, tt.step), func(t *testing.T) {
			var ty tally
			trials := tt.trials
			if testing.Short() {
				trials /= 2
			}
			tt.trials = trials
			for i := range tt.trials {
				ty.trial(t, randomCulprit(tt.n, 0.015, tt.step, 1<<20+uint64(i)), Options{})
			}
			right, found, wrong := ty.right, ty.found, ty.wrong
			if pools[tt.step] == nil {
				pools[tt.step] = &pool{}
			}
			pools[tt.step].found += found
			pools[tt.step].wrong += wrong
			fFound, acc := float64(found)/float64(tt.trials), float64(right)/float64(tt.trials)
			t.Logf("%d trials: right %.1f%%, found %.1f%%, wrong %d of %d found", tt.trials, 100*acc, 100*fFound, wrong, found)
			if fFound < tt.minFound {
				t.Errorf("found %.1f%%, want at least %.0f%%", 100*fFound, 100*tt.minFound)
			}
			if acc < tt.minAcc {
				t.Errorf("right %.1f%%, want at least %.0f%%", 100*acc, 100*tt.minAcc)
			}
		})
	}
	for step, p := range pools {
		f := float64(p.wrong) / float64(max(p.found, 1))
		t.Logf("step %g sigma: %d of %d found wrong (%.1f%%)", step, p.wrong, p.found, 100*f)
		if f > maxWrong[step] {
			t.Errorf("step %g sigma: %.1f%% of the commits named at 95%% are wrong (%d of %d), want at most %.0f%%", step, 100*f, p.wrong, p.found, 100*maxWrong[step])
		}
	}
}

// TestSearchHistoryShape checks that stored runs outside the range teach
// the noise's second mode: with a history whose repeats show one run in
// five 10% slow, the posterior's shape has that mode before any run of the
// range is slow, and a slow run of a good commit next to the step is
// ambiguous (and will be run again) instead of counting as a bad one.
func TestSearchHistoryShape(t *testing.T) {
	rng := newSimulation(1, 1, 0.005, 0, 14).rng
	var history [][]float64
	for c := range 8 {
		var h []float64
		for j := range 5 {
			v := 100 * math.Exp(0.005*rng.NormFloat64())
			if (c*5+j)%5 == 0 {
				v *= 1.10
			}
			h = append(h, v)
		}
		history = append(history, h)
	}
	smp := sample{n: 20, values: make([][]float64, 21), skipped: make([]bool, 21), stops: true}
	smp.values[0] = []float64{100.2}
	smp.values[20] = []float64{112.1}
	smp.values[5] = []float64{99.8}
	smp.values[10] = []float64{110.4} // a slow run of a good commit, or a bad one?
	smp.values[15] = []float64{111.7}
	without, _ := smp.posterior()
	smp.history = history
	with, ok := smp.posterior()
	if !ok {
		t.Fatal("no posterior")
	}
	if with.shape.mode < 0.1 || math.Abs(with.shape.shift-math.Log(1.10)) > 0.02 {
		t.Errorf("shape %+v, want a mode of about 20%% at +%.3f", with.shape, math.Log(1.10))
	}
	if without.shape.mode != 0 {
		t.Errorf("shape without history %+v, want no mode", without.shape)
	}
	if pb, pw := with.pBad(10), without.pBad(10); pb > 0.7 || pw-pb < 0.2 {
		t.Errorf("P(commit 10 bad) = %.3f with the history, %.3f without: want near one half with it, and well below without", pb, pw)
	}
}
