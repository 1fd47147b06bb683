package runner

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
)

// simRepo is a main branch of measured commits and a PR head on its tip,
// as gate sees them.
type simRepo struct {
	main    []string // oldest first
	head    string
	samples map[string][]gate.Sample
}

func (s *simRepo) MergeBase(a, b string) (string, error) { return s.main[len(s.main)-1], nil }

func (s *simRepo) FirstParents(from string, n int) ([]gate.Commit, error) {
	var out []gate.Commit
	if from == s.head {
		out = append(out, gate.Commit{SHA: s.head})
	}
	for i := len(s.main) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, gate.Commit{SHA: s.main[i]})
	}
	return out, nil
}

func (s *simRepo) Samples(commits []string) (map[string][]gate.Sample, error) {
	out := map[string][]gate.Sample{}
	for _, c := range commits {
		if ss := s.samples[c]; len(ss) > 0 {
			out[c] = ss
		}
	}
	return out, nil
}

// simBench is the stand-in benchmark: Mean TTFT of 100 ms times a factor,
// with lognormal noise of sd sigma.
func simSample(rng *rand.Rand, commit string, factor, sigma float64) gate.Sample {
	return gate.Sample{Commit: commit, Benchmark: "serving", Metrics: map[string]float64{"mean_ttft_ms": 100 * factor * math.Exp(sigma*rng.NormFloat64())}}
}

func newSimRepo(rng *rand.Rand, commits int, sigma float64) *simRepo {
	s := &simRepo{samples: map[string][]gate.Sample{}, head: fmt.Sprintf("%040x", 1<<40)}
	for i := range commits {
		sha := fmt.Sprintf("%040x", i+1)
		s.main = append(s.main, sha)
		s.samples[sha] = []gate.Sample{simSample(rng, sha, 1, sigma)}
	}
	return s
}

// simOutcome tallies one policy over many PRs.
type simOutcome struct {
	prs, runs, fail, inconclusive int
}

func (o simOutcome) String() string {
	return fmt.Sprintf("%5.2f runs/PR, fail %5.1f%%, inconclusive %5.1f%%", float64(o.runs)/float64(o.prs), 100*float64(o.fail)/float64(o.prs), 100*float64(o.inconclusive)/float64(o.prs))
}

// simulate gates prs pull requests whose head is factor times main's level,
// with repeat runs of head (0: --repeat auto with maxRuns). PR i draws its
// main history and its head runs from streams seeded by (seed, i), so
// every policy sees the same PRs (common random numbers): the differences
// between policies are not sampling noise between experiments.
func simulate(t testing.TB, seed uint64, prs int, factor float64, repeat, maxRuns int) simOutcome {
	cfg := gate.DefaultConfig()
	r, err := gate.ParseRuleFlag("mean_ttft_ms:5%")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Rules = []gate.Rule{r}
	var o simOutcome
	ctx := context.Background()
	for pr := range prs {
		s := newSimRepo(rand.New(rand.NewPCG(seed, uint64(pr))), 20, 0.03)
		headRNG := rand.New(rand.NewPCG(seed, uint64(pr)|1<<40))
		evaluate := func(context.Context) (*gate.Report, error) {
			return gate.Check(ctx, s, s, gate.CheckOptions{Head: s.head, Base: s.main[len(s.main)-1], BaseRef: "main", Config: cfg})
		}
		measure := func(context.Context, int) error {
			s.samples[s.head] = append(s.samples[s.head], simSample(headRNG, s.head, factor, 0.03))
			return nil
		}
		var rep *gate.Report
		if repeat > 0 {
			for i := range repeat {
				measure(ctx, i+1)
			}
			if rep, err = evaluate(ctx); err != nil {
				t.Fatal(err)
			}
			o.runs += repeat
		} else {
			res, err := (&Adaptive{Max: maxRuns, Rules: cfg.Rules, Measure: measure, Evaluate: evaluate}).Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rep = res.Report
			o.runs += res.Runs
		}
		o.prs++
		switch {
		case rep.Verdict == gate.Fail:
			o.fail++
		case rep.Summary.Inconclusive > 0:
			o.inconclusive++
		}
	}
	return o
}

// TestAdaptiveErrorRates states the error rates of perfgate run --repeat
// auto against a fixed --repeat 5, in process: a stand-in benchmark with
// 3% lognormal noise (seeded), a history of 20 main commits with one run
// each, a PR head on main's tip, rule mean_ttft_ms:5%; unchanged heads
// (a fail is a false alarm) and 10% regressions (a fail is a detection).
//
//	go test ./runner -run TestAdaptiveErrorRates -v
func TestAdaptiveErrorRates(t *testing.T) {
	prs := 3000
	if testing.Short() {
		prs = 300
	}
	type row struct {
		name               string
		unchanged, regress simOutcome
	}
	rows := []row{
		{"--repeat 1", simulate(t, 1, prs, 1, 1, 0), simulate(t, 2, prs, 1.10, 1, 0)},
		{"--repeat 5", simulate(t, 1, prs, 1, 5, 0), simulate(t, 2, prs, 1.10, 5, 0)},
		{"--repeat auto (--max-runs 5)", simulate(t, 1, prs, 1, 0, DefaultMaxRuns), simulate(t, 2, prs, 1.10, 0, DefaultMaxRuns)},
		{"--repeat auto --max-runs 10", simulate(t, 1, prs, 1, 0, 10), simulate(t, 2, prs, 1.10, 0, 10)},
	}
	// A clear regression (25%, several noise scales past the limit) stops
	// on two runs, not four.
	clear := simulate(t, 3, prs, 1.25, 0, DefaultMaxRuns)
	var b strings.Builder
	fmt.Fprintf(&b, "%d PRs each; 3%% lognormal noise, 20 main commits, rule mean_ttft_ms:5%%\n", prs)
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-28s unchanged: %s | 10%% regression: %s\n", r.name, r.unchanged, r.regress)
	}
	fmt.Fprintf(&b, "  %-28s 25%% regression: %s\n", "--repeat auto (--max-runs 5)", clear)
	t.Log("\n" + b.String())
	fixed, auto := rows[1], rows[2]
	rate := func(n, of int) float64 { return float64(n) / float64(of) }
	// Fewer runs than a fixed 5, unchanged or regressed, with error rates
	// as good: the policies see the same PRs, so a difference of a few
	// PRs in thousands is one (0.25 points of false alarms allow for
	// -short's 300 PRs).
	if a, r := rate(auto.unchanged.runs, prs), rate(auto.regress.runs, prs); a >= 3 || r >= 5 {
		t.Errorf("--repeat auto spent %.2f runs per unchanged PR, %.2f per regression; --repeat 5 spends 5", a, r)
	}
	if fa, ffa := rate(auto.unchanged.fail, prs), rate(fixed.unchanged.fail, prs); fa > ffa+0.0025 {
		t.Errorf("--repeat auto false alarms %.2f%%, --repeat 5 %.2f%%", 100*fa, 100*ffa)
	}
	if r := rate(clear.runs, prs); r > 2.2 || clear.fail < prs*99/100 {
		t.Errorf("--repeat auto spent %.2f runs per 25%% regression and caught %d of %d; a clear fail should stop on two", r, clear.fail, prs)
	}
	if det, fdet := rate(auto.regress.fail, prs), rate(fixed.regress.fail, prs); det < fdet {
		t.Errorf("--repeat auto caught %.1f%% of 10%% regressions, --repeat 5 %.1f%%", 100*det, 100*fdet)
	}
}

func TestUndecided(t *testing.T) {
	p := func(v float64) *float64 { return &v }
	rep := &gate.Report{Checks: []gate.CheckResult{
		{Benchmark: "s", Metric: "a", Verdict: gate.Pass},
		{Benchmark: "s", Metric: "b", Verdict: gate.Inconclusive, Change: p(6.1)},
		{Benchmark: "s", Metric: "c", Verdict: gate.Fail, Unqualified: true, Change: p(9)},
		{Benchmark: "s", Metric: "d", Verdict: gate.Fail},
		{Benchmark: "s", Metric: "e", Verdict: gate.New},
		{Benchmark: "s", Metric: "f", Verdict: gate.Improved},
	}}
	got := strings.Join(Undecided(rep, nil), "; ")
	if want := "s b inconclusive (+6.1%); s c fail (+9.0%)"; got != want {
		t.Errorf("Undecided = %q, want %q", got, want)
	}
	if Undecided(nil, nil) != nil {
		t.Error("Undecided(nil) is not empty")
	}
}

// TestAdaptiveStops: the session stops when decided, and at the budget.
func TestAdaptiveStops(t *testing.T) {
	rule, err := gate.ParseRuleFlag("mean_ttft_ms:5%")
	if err != nil {
		t.Fatal(err)
	}
	thirty, two := 30.0, 2.0
	for _, tt := range []struct {
		name     string
		verdicts []gate.Verdict // per evaluation
		max      int
		runs     int
		decided  bool
		clear    bool // the fail is 30% past a 5% limit with 2% noise
	}{
		{"decided at once", []gate.Verdict{gate.Pass}, 10, 1, true, false},
		// A fail stops the session from the fourth run on.
		{"a fail is confirmed on four runs", []gate.Verdict{gate.Fail, gate.Fail, gate.Fail, gate.Fail}, 10, 4, true, false},
		{"a fail on the fifth run stops", []gate.Verdict{gate.Inconclusive, gate.Inconclusive, gate.Inconclusive, gate.Inconclusive, gate.Fail}, 10, 5, true, false},
		{"a fail on the last run of the budget stands", []gate.Verdict{gate.Inconclusive, gate.Fail}, 2, 2, true, false},
		{"a clear fail stops on two runs", []gate.Verdict{gate.Fail, gate.Fail}, 10, 2, true, true},
		{"a fail that does not hold", []gate.Verdict{gate.Inconclusive, gate.Fail, gate.Pass}, 10, 3, true, false},
		{"budget spent", []gate.Verdict{gate.Inconclusive, gate.Inconclusive, gate.Inconclusive}, 3, 3, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			measured := 0
			a := &Adaptive{
				Max:     tt.max,
				Rules:   []gate.Rule{rule},
				Measure: func(context.Context, int) error { measured++; return nil },
				Evaluate: func(context.Context) (*gate.Report, error) {
					v := tt.verdicts[measured-1]
					c := gate.CheckResult{Benchmark: "s", Metric: "m", Verdict: v, Rule: rule.String(), Origin: rule.Origin,
						Samples: gate.SampleCounts{Baseline: 20, Current: measured}}
					if tt.clear {
						// 30% worse with 2% noise a run: far past the 5% limit.
						c.Metric, c.Change, c.Noise = rule.Metric, &thirty, &two
					}
					return &gate.Report{Verdict: v, Checks: []gate.CheckResult{c}}, nil
				},
			}
			res, err := a.Run(context.Background())
			if err != nil || res.Runs != tt.runs || measured != tt.runs || res.Decided != tt.decided {
				t.Errorf("runs %d (measured %d), decided %v, err %v; want %d, %v", res.Runs, measured, res.Decided, err, tt.runs, tt.decided)
			}
		})
	}
}

// TestFailPending: the message of a fail not yet confirmed names both
// ways it can stop: clear of the noise on two runs, else on four.
func TestFailPending(t *testing.T) {
	tests := []struct {
		runs, confirm int
		want          string
	}{
		{1, 4, "fail on 1 run(s), to be confirmed on 2 if it stays clear of the noise, else on 4"},
		{2, 4, "fail on 2 run(s), to be confirmed on 4 (not clear of the noise yet)"},
		{3, 4, "fail on 3 run(s), to be confirmed on 4 (not clear of the noise yet)"},
		{1, 2, "fail on 1 run(s), to be confirmed on 2 (not clear of the noise yet)"},
	}
	for _, tt := range tests {
		if got := failPending(tt.runs, tt.confirm); got != tt.want {
			t.Errorf("failPending(%d, %d) = %q, want %q", tt.runs, tt.confirm, got, tt.want)
		}
	}
}
