package gate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/perfgate/perfgate/internal/robust"
)

// The quality experiment of the design: ten series with 3% lognormal
// run-to-run noise, 20 measured main commits, one run per PR commit, rule
// "mean_ttft_ms:3%". It runs the whole Check path on a fake repository and
// also scores two naive gates on the same data, to show what the
// statistics buy.
type qualityRates struct {
	gate, literal, uncut float64 // fraction of checks that failed
	checks               int
}

// qualityScenario simulates trials PRs. step multiplies main's last
// stepLen commits before (and including) the merge-base; pr multiplies
// the PR's value against the merge-base's true level. runs is the number
// of runs of every main commit and of the head (1, or 5 for a team that
// runs --repeat 5 everywhere; the naive gates then read medians).
func qualityScenario(t testing.TB, seed uint64, trials int, step float64, stepLen int, pr float64, runs int) qualityRates {
	const (
		nSeries     = 10
		noise       = 0.03
		mainCommits = 20
	)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	rule, err := ParseRuleFlag("mean_ttft_ms:3%")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Rules = []Rule{rule}
	var r qualityRates
	var gateFails, literalFails, uncutFails int
	for trial := 0; trial < trials; trial++ {
		repo := newFakeRepo()
		root := repo.commit("", "root")
		main := repo.chain(root, mainCommits, "main")
		mb := main[mainCommits-1]
		levels := make([]float64, nSeries)
		for j := range levels {
			levels[j] = 40 * math.Pow(1.7, float64(j))
		}
		truth := func(i int) float64 { // main commit i's true factor
			if mainCommits-1-i < stepLen {
				return step
			}
			return 1
		}
		logv := make([][]float64, nSeries) // per series, main values oldest first (log)
		draw := func(c string, j int, level float64) float64 {
			vs := make([]float64, runs)
			for r := range vs {
				vs[r] = level * math.Exp(noise*rng.NormFloat64())
				repo.add(c, fmt.Sprintf("series-%d", j), map[string]string{"model": "m"}, map[string]float64{"mean_ttft_ms": vs[r]})
			}
			return robust.Median(vs)
		}
		for i, c := range main {
			for j := range levels {
				logv[j] = append(logv[j], math.Log(draw(c, j, levels[j]*truth(i))))
			}
		}
		// main moves on after the PR branched; those commits are not the baseline.
		tip := mb
		for _, c := range repo.chain(mb, 2, "main after") {
			for j := range levels {
				repo.add(c, fmt.Sprintf("series-%d", j), map[string]string{"model": "m"}, map[string]float64{"mean_ttft_ms": levels[j] * 3})
			}
			tip = c
		}
		head := repo.commit(mb, "the PR")
		heads := make([]float64, nSeries)
		for j := range levels {
			heads[j] = draw(head, j, levels[j]*step*pr)
		}

		rep, err := Check(context.Background(), repo, repo, CheckOptions{Head: head, Base: tip, BaseRef: "main", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Checks) != nSeries {
			t.Fatalf("trial %d: %d checks, want %d", trial, len(rep.Checks), nSeries)
		}
		for _, c := range rep.Checks {
			if c.Method != MethodNoiseBand {
				t.Fatalf("trial %d: method %q, want %q", trial, c.Method, MethodNoiseBand)
			}
			if c.Verdict == Fail {
				gateFails++
			}
		}
		for j := range levels {
			r.checks++
			// Literal: the ratio against the merge-base's single value.
			if heads[j]/math.Exp(logv[j][mainCommits-1]) > 1.03 {
				literalFails++
			}
			// Uncut: the same noise band without change points.
			x := logv[j]
			m := robust.Median(x)
			var dev []float64
			for _, v := range x {
				dev = append(dev, math.Abs(v-m))
			}
			sigma := madToSigma * robust.Median(dev)
			z := (math.Log(heads[j]) - m) / (sigma * math.Sqrt(1+robust.MedianVar(len(x))))
			if heads[j]/math.Exp(m) > 1.03 && z > zCritical {
				uncutFails++
			}
		}
	}
	r.gate = float64(gateFails) / float64(r.checks)
	r.literal = float64(literalFails) / float64(r.checks)
	r.uncut = float64(uncutFails) / float64(r.checks)
	return r
}

func TestQualityExperiment(t *testing.T) {
	const trials = 300 // x 10 series = 3000 checks per scenario
	tests := []struct {
		name    string
		step    float64
		stepLen int
		pr      float64
		runs    int
		check   func(r qualityRates) string
	}{
		{"clean noise, no change", 1, 0, 1, 1, func(r qualityRates) string {
			if r.gate > 0.01 {
				return fmt.Sprintf("false failures %.1f%%, want at most 1%%", 100*r.gate)
			}
			if r.literal < 0.10 {
				return fmt.Sprintf("the literal ratio failed only %.1f%%: the experiment has lost its noise", 100*r.literal)
			}
			return ""
		}},
		{"clean noise, 15% regression", 1, 0, 1.15, 1, func(r qualityRates) string {
			if r.gate < 0.90 {
				return fmt.Sprintf("caught %.1f%% of 15%% regressions, want at least 90%%", 100*r.gate)
			}
			return ""
		}},
		{"main stepped up 15% six commits before the merge-base, no change", 1.15, 6, 1, 1, func(r qualityRates) string {
			if r.gate > 0.01 {
				return fmt.Sprintf("blamed %.1f%% of unchanged PRs for main's step, want at most 1%%", 100*r.gate)
			}
			if r.uncut < 0.05 {
				return fmt.Sprintf("an uncut window blamed only %.1f%%: the step no longer tests the cut", 100*r.uncut)
			}
			return ""
		}},
		{"main stepped up 15% six commits before the merge-base, 15% regression", 1.15, 6, 1.15, 1, func(r qualityRates) string {
			if r.gate < 0.80 {
				return fmt.Sprintf("caught %.1f%% of 15%% regressions after a step on main, want at least 80%%", 100*r.gate)
			}
			return ""
		}},
		// Five runs a main commit and five at head: head's median against
		// the level of main's sessions (a 5% regression is within what
		// one run resolves at 3% noise, so the clear case is 10%).
		{"5 runs a main commit, 5 at head, no change", 1, 0, 1, 5, func(r qualityRates) string {
			if r.gate > 0.01 {
				return fmt.Sprintf("false failures %.1f%%, want at most 1%%", 100*r.gate)
			}
			return ""
		}},
		{"5 runs a main commit, 5 at head, 10% regression", 1, 0, 1.10, 5, func(r qualityRates) string {
			if r.gate < 0.90 {
				return fmt.Sprintf("caught %.1f%% of 10%% regressions, want at least 90%%", 100*r.gate)
			}
			return ""
		}},
	}
	for i, tt := range tests {
		n := trials
		if tt.runs > 1 {
			n = trials / 3
		}
		r := qualityScenario(t, uint64(1000+i), n, tt.step, tt.stepLen, tt.pr, tt.runs)
		t.Logf("%-72s gate fails %5.1f%%   literal 3%% ratio %5.1f%%   uncut window %5.1f%%   (%d checks)",
			tt.name+":", 100*r.gate, 100*r.literal, 100*r.uncut, r.checks)
		if msg := tt.check(r); msg != "" {
			t.Errorf("%s: %s", tt.name, msg)
		}
	}
}
