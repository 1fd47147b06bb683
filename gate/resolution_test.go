package gate

import (
	"math"
	"strings"
	"testing"
)

func TestResolution(t *testing.T) {
	for _, tc := range []struct {
		name              string
		r                 *Resolution
		limit             float64
		oneAbove, anyRuns bool
	}{
		{"2% noise, 20 results: one run cannot see 3%, more runs can", bandResolution(3, math.Log(1.02), 20), 3, true, true},
		{"0.5% noise: one run sees 3%", bandResolution(3, math.Log(1.005), 20), 3, false, true},
		{"30% noise over 5 results: no number of runs sees 3%", bandResolution(3, math.Log(1.3), 5), 3, true, false},
		{"repeats, 0.5% noise over 5 runs", repeatsResolution(3, math.Log(1.005), 5), 3, false, true},
		{"repeats, 2% noise over 5 runs: the baseline's own median bounds it", repeatsResolution(3, math.Log(1.02), 5), 3, true, false},
		{"shift, 1% runs and 3% sessions: runs cannot beat the sessions", shiftResolution(3, shift{within: 0.01, tau: 0.03}), 3, false, false},
		{"shift, 2% runs, no session noise", shiftResolution(3, shift{within: 0.02}), 3, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if got := r.OneRun > tc.limit; got != tc.oneAbove {
				t.Errorf("one run resolves %g%%, above the %g%% limit: %v, want %v", r.OneRun, tc.limit, got, tc.oneAbove)
			}
			if got := r.Runs > 0; got != tc.anyRuns {
				t.Errorf("runs %d (resolving %g%%), some number resolves the limit: %v, want %v", r.Runs, r.RunsResolve, got, tc.anyRuns)
			}
			if r.Runs > 0 && r.RunsResolve > tc.limit {
				t.Errorf("%d runs resolve %g%%, above the %g%% limit", r.Runs, r.RunsResolve, tc.limit)
			}
		})
	}
}

func TestResolutionWarning(t *testing.T) {
	checks := []CheckResult{
		{Benchmark: "serving", Label: "Mean TTFT (ms)", limit: 3, Samples: SampleCounts{Current: 1}, Resolution: &Resolution{OneRun: 9, Runs: 4, RunsResolve: 2.9}},
		{Benchmark: "serving", Label: "P99 TTFT (ms)", limit: 10, Samples: SampleCounts{Current: 1}, Resolution: &Resolution{OneRun: 4, Runs: 1, RunsResolve: 4}},
		{Benchmark: "ab", Label: "Mean TPOT (ms)", limit: 2, Samples: SampleCounts{Current: 5}, Resolution: &Resolution{Runs: 0}},
	}
	got := resolutionWarning(checks)
	for _, want := range []string{
		"2 rules are finer than the noise lets one run see",
		"Mean TTFT (ms) at 3% (serving): one run resolves 9% here; 4 runs resolve 2.9%",
		"Mean TPOT (ms) at 2% (ab): 5 runs a side do not resolve it here; no number of runs up to 20 does here",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warning %q\nlacks %q", got, want)
		}
	}
	if strings.Contains(got, "P99") {
		t.Errorf("warning names a rule one run resolves: %q", got)
	}
	if w := resolutionWarning(checks[1:2]); w != "" {
		t.Errorf("a rule one run resolves gave %q", w)
	}
}

func TestCheckPairedResolution(t *testing.T) {
	var pairs []Pair
	for i, d := range []float64{0.9, 1.12, 0.95, 1.1, 1.0} {
		pairs = append(pairs,
			Pair{Base: []Sample{{Benchmark: "ab", Metrics: map[string]float64{"mean_tpot_ms": 100}}}, Head: []Sample{{Benchmark: "ab", Metrics: map[string]float64{"mean_tpot_ms": 100 * d * (1 + 0.001*float64(i))}}}})
	}
	r, err := ParseRuleFlag("mean_tpot_ms:2%")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Rules = []Rule{r}
	rep := CheckPaired(pairs, PairedOptions{Config: cfg})
	if len(rep.Checks) != 1 || rep.Checks[0].Resolution == nil {
		t.Fatalf("checks %+v: want one with a resolution", rep.Checks)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "5 runs a side do not resolve it here") {
		t.Errorf("warnings %q lack the resolution", rep.Warnings)
	}
}
