package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// world is a main branch of measured commits and a PR head on top of its
// last commit.
type world struct {
	repo *fakeRepo
	main []string // oldest first; the last one is the merge-base
	mb   string
	tip  string // main's tip: two unmeasured commits after the merge-base
	head string
}

var srvLabels = map[string]string{"model": "llama", "gpu": "H100"}

// newWorld builds n main commits; at(i) gives main commit i's results (nil
// for none), head gives the PR's.
func newWorld(n int, at func(i int) []Sample, head []Sample) *world {
	w := &world{repo: newFakeRepo()}
	root := w.repo.commit("", "root")
	w.main = w.repo.chain(root, n, "main")
	for i, c := range w.main {
		for _, s := range at(i) {
			s.Commit = c
			w.repo.samples[c] = append(w.repo.samples[c], s)
		}
	}
	w.mb = w.main[n-1]
	w.tip = w.mb
	for _, c := range w.repo.chain(w.mb, 2, "main after") {
		w.tip = c
	}
	w.head = w.repo.commit(w.mb, "pr")
	for _, s := range head {
		s.Commit = w.head
		w.repo.samples[w.head] = append(w.repo.samples[w.head], s)
	}
	return w
}

func (w *world) check(t *testing.T, rules ...string) *Report {
	t.Helper()
	return w.checkCfg(t, cfgWith(t, rules...))
}

func (w *world) checkCfg(t *testing.T, cfg *Config) *Report {
	t.Helper()
	rep, err := Check(context.Background(), w.repo, w.repo, CheckOptions{Head: w.head, Base: w.tip, BaseRef: "main", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func cfgWith(t *testing.T, rules ...string) *Config {
	t.Helper()
	cfg := DefaultConfig()
	for _, s := range rules {
		r, err := ParseRuleFlag(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	return cfg
}

func srv(metrics map[string]float64) Sample {
	return Sample{Benchmark: "serving", Labels: srvLabels, Metrics: metrics}
}

// noisy returns n values around level with lognormal noise sigma, from a
// fixed seed.
func noisy(seed uint64, n int, level, sigma float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]float64, n)
	for i := range out {
		out[i] = level * math.Exp(sigma*rng.NormFloat64())
	}
	return out
}

func series1(vals []float64, name string) func(i int) []Sample {
	return func(i int) []Sample {
		if math.IsNaN(vals[i]) {
			return nil
		}
		return []Sample{srv(map[string]float64{name: vals[i], "completed": 1000, "failed": 0})}
	}
}

func find(t *testing.T, rep *Report, bench, metric string) CheckResult {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Benchmark == bench && c.Metric == metric {
			return c
		}
	}
	var buf bytes.Buffer
	rep.WriteText(&buf, false)
	t.Fatalf("no check of %s %s in\n%s", bench, metric, buf.String())
	return CheckResult{}
}

func TestCheckVerdicts(t *testing.T) {
	window := noisy(1, 20, 100, 0.02)
	wide := noisy(2, 20, 100, 0.10)
	repeats := func(level float64, seed uint64) []Sample {
		var out []Sample
		for _, v := range noisy(seed, 6, level, 0.01) {
			out = append(out, srv(map[string]float64{"mean_ttft_ms": v}))
		}
		return out
	}
	onlyLast := func(vals ...float64) []float64 { // unmeasured but for the last len(vals) commits
		out := make([]float64, 20)
		for i := range out {
			out[i] = math.NaN()
		}
		copy(out[20-len(vals):], vals)
		return out
	}
	tests := []struct {
		name        string
		at          func(i int) []Sample
		head        []Sample
		rule        string
		metric      string
		verdict     Verdict
		method      string
		unqualified bool
	}{
		{"pass within noise", series1(window, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 101})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Pass, MethodNoiseBand, false},
		{"fail beyond threshold and noise", series1(window, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 125})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Fail, MethodNoiseBand, false},
		{"inconclusive: beyond threshold, within noise", series1(wide, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 108})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Inconclusive, MethodNoiseBand, false},
		{"improved", series1(window, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 80})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Improved, MethodNoiseBand, false},
		{"higher is better: a throughput drop fails", series1(window, "output_throughput"), []Sample{srv(map[string]float64{"output_throughput": 80})},
			"output_throughput:5%", "output_throughput", Fail, MethodNoiseBand, false},
		{"higher is better: a throughput rise improves", series1(window, "output_throughput"), []Sample{srv(map[string]float64{"output_throughput": 125})},
			"output_throughput:5%", "output_throughput", Improved, MethodNoiseBand, false},
		{"new: never measured", series1(window, "mean_ttft_ms"), []Sample{{Benchmark: "other", Metrics: map[string]float64{"mean_ttft_ms": 1}}},
			"mean_ttft_ms:3%", "mean_ttft_ms", New, "", false},
		{"new: the baseline lacks the metric", series1(window, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 100, "p99_ttft_ms": 200})},
			"p99_ttft_ms:3%", "p99_ttft_ms", New, "", false},
		{"missing: head lacks a metric the baseline had", series1(window, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_tpot_ms": 20})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Missing, "", false},
		{"unqualified: no history", series1(onlyLast(100, 100), "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 104})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Fail, MethodThreshold, true},
		{"unqualified pass", series1(onlyLast(100), "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 102})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Pass, MethodThreshold, true},
		{"unqualified improved", series1(onlyLast(100), "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 90})},
			"mean_ttft_ms:3%", "mean_ttft_ms", Improved, MethodThreshold, true},
		{"repeats on both sides: significant regression fails", func(i int) []Sample {
			if i == 19 {
				return repeats(100, 3)
			}
			return nil
		}, repeats(110, 4), "mean_ttft_ms:3%", "mean_ttft_ms", Fail, MethodShift, false},
		{"repeats on both sides: small shift passes", func(i int) []Sample {
			if i == 19 {
				return repeats(100, 3)
			}
			return nil
		}, repeats(101, 4), "mean_ttft_ms:3%", "mean_ttft_ms", Pass, MethodShift, false},
		{"repeats on both sides: improvement", func(i int) []Sample {
			if i == 19 {
				return repeats(100, 3)
			}
			return nil
		}, repeats(90, 4), "mean_ttft_ms:3%", "mean_ttft_ms", Improved, MethodShift, false},
		{"baseline repeats give the noise for one head run", func(i int) []Sample {
			if i == 19 {
				return repeats(100, 3)
			}
			return nil
		}, []Sample{srv(map[string]float64{"mean_ttft_ms": 112})}, "mean_ttft_ms:3%", "mean_ttft_ms", Fail, MethodRepeats, false},
		{"absolute max fails", series1(window, "failed"), []Sample{srv(map[string]float64{"failed": 3, "completed": 997})},
			"failed<=0", "failed", Fail, MethodAbsolute, false},
		{"absolute strict max passes", series1(window, "p99_ttft_ms"), []Sample{srv(map[string]float64{"p99_ttft_ms": 5999})},
			"p99_ttft_ms<6000", "p99_ttft_ms", Pass, MethodAbsolute, false},
		{"absolute applies without a baseline", series1(window, "mean_ttft_ms"), []Sample{{Benchmark: "fresh", Metrics: map[string]float64{"p99_ttft_ms": 7000}}},
			"p99_ttft_ms<6000", "p99_ttft_ms", Fail, MethodAbsolute, false},
		{"absolute min", series1(window, "mean_ttft_ms"), []Sample{srv(map[string]float64{"request_throughput": 7.9})},
			"request_throughput>=8", "request_throughput", Fail, MethodAbsolute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(20, tt.at, tt.head)
			rep := w.check(t, tt.rule)
			bench := tt.head[0].Benchmark
			c := find(t, rep, bench, tt.metric)
			if c.Verdict != tt.verdict || c.Method != tt.method || c.Unqualified != tt.unqualified {
				t.Errorf("verdict %s, method %q, unqualified %v; want %s, %q, %v (reason: %s)",
					c.Verdict, c.Method, c.Unqualified, tt.verdict, tt.method, tt.unqualified, c.Reason)
			}
			wantOverall := Pass
			if tt.verdict == Fail || tt.verdict == Missing {
				wantOverall = Fail
			}
			if tt.verdict == Inconclusive {
				wantOverall = Inconclusive // the default policy, inconclusive: warn
			}
			if rep.Verdict != wantOverall {
				t.Errorf("overall %s, want %s", rep.Verdict, wantOverall)
			}
			if c.Verdict != Pass && c.Reason == "" {
				t.Errorf("verdict %s without a reason", c.Verdict)
			}
			if tt.method == MethodShift && c.P == nil {
				t.Error("Mann-Whitney check without p")
			}
			if tt.method == MethodNoiseBand && (c.Z == nil || c.Noise == nil || c.Window != 20) {
				t.Errorf("noise-band check: z %v noise %v window %d", c.Z, c.Noise, c.Window)
			}
			// The window's values travel with the checks a reader charts.
			charted := c.Verdict == Fail || c.Verdict == Inconclusive || c.Verdict == Improved
			if tt.method == MethodNoiseBand && charted != (len(c.History) == 21) {
				t.Errorf("%s check with %d history points", c.Verdict, len(c.History))
			}
		})
	}
}

func TestCheckMissingBenchmark(t *testing.T) {
	both := func(i int) []Sample {
		return []Sample{
			srv(map[string]float64{"mean_ttft_ms": 100}),
			{Benchmark: "long", Labels: srvLabels, Metrics: map[string]float64{"mean_ttft_ms": 900}},
		}
	}
	w := newWorld(5, both, []Sample{srv(map[string]float64{"mean_ttft_ms": 100})})
	rep := w.check(t, "mean_ttft_ms:3%")
	c := find(t, rep, "long", "")
	if c.Verdict != Missing || rep.Verdict != Fail || rep.Summary.Missing != 1 {
		t.Errorf("vanished benchmark: %s, overall %s", c.Verdict, rep.Verdict)
	}
	if !strings.Contains(c.Reason, "regression in coverage") {
		t.Errorf("reason %q", c.Reason)
	}
	// missing: warn keeps the verdict but does not fail.
	cfg := cfgWith(t, "mean_ttft_ms:3%")
	cfg.MissingFails = false
	rep = w.checkCfg(t, cfg)
	if find(t, rep, "long", "").Verdict != Missing || rep.Verdict != Pass {
		t.Errorf("missing: warn: overall %s", rep.Verdict)
	}
}

func TestCheckValidity(t *testing.T) {
	ok := func(i int) []Sample {
		return []Sample{srv(map[string]float64{"mean_ttft_ms": 100, "output_throughput": 2000, "completed": 1000, "failed": 0})}
	}
	tests := []struct {
		name   string
		head   map[string]float64
		metric string
		reason string
	}{
		{"too many failed requests", map[string]float64{"mean_ttft_ms": 100, "output_throughput": 2000, "completed": 900, "failed": 100},
			"failed", "100 of 1000 requests failed (10.0%, more than 5%)"},
		{"a faster run that served half the requests is not an improvement",
			map[string]float64{"mean_ttft_ms": 60, "output_throughput": 2600, "completed": 514, "failed": 0},
			"completed", "514 requests completed, 48.6% fewer than the baseline's 1000 (more than 5% fewer)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(10, ok, []Sample{srv(tt.head)})
			rep := w.check(t, "mean_ttft_ms:3%", "output_throughput:3%")
			if rep.Verdict != Fail || len(rep.Checks) != 1 {
				t.Fatalf("overall %s with %d checks, want one failing validity check", rep.Verdict, len(rep.Checks))
			}
			c := rep.Checks[0]
			if c.Method != MethodValidity || c.Verdict != Fail || c.Metric != tt.metric || !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("got %s %s %s: %s", c.Method, c.Verdict, c.Metric, c.Reason)
			}
			for _, x := range rep.Checks {
				if x.Verdict == Improved {
					t.Error("an invalid run counted as an improvement")
				}
			}
		})
	}
	t.Run("invalid results never become baselines", func(t *testing.T) {
		at := func(i int) []Sample {
			switch i {
			case 9: // the merge-base served half its requests
				return []Sample{srv(map[string]float64{"mean_ttft_ms": 50, "completed": 500, "failed": 500})}
			case 8: // completed fell far below its window
				return []Sample{srv(map[string]float64{"mean_ttft_ms": 60, "completed": 600, "failed": 0})}
			case 7: // marked invalid by the store
				s := srv(map[string]float64{"mean_ttft_ms": 70, "completed": 1000, "failed": 0})
				s.Invalid = "benchmark command exited with status 1"
				return []Sample{s}
			}
			return ok(i)
		}
		w := newWorld(10, at, []Sample{srv(map[string]float64{"mean_ttft_ms": 101, "completed": 1000, "failed": 0})})
		rep := w.check(t, "mean_ttft_ms:3%")
		c := find(t, rep, "serving", "mean_ttft_ms")
		if c.BaselineCommit != w.main[6] || c.Distance == nil || *c.Distance != 3 || c.Verdict != Pass || *c.Baseline != 100 {
			t.Errorf("baseline %s at distance %v (%v), verdict %s; want %s at 3", shortSHA(c.BaselineCommit), fmtIntPtr(c.Distance), *c.Baseline, c.Verdict, shortSHA(w.main[6]))
		}
		notes := strings.Join(rep.Notes, "\n")
		for _, want := range []string{"500 of 1000 requests failed", "600 requests completed", "exited with status 1"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes lack %q:\n%s", want, notes)
			}
		}
	})
}

func TestCheckBaselineSelection(t *testing.T) {
	val := func(i int) []Sample { return []Sample{srv(map[string]float64{"mean_ttft_ms": 100 + float64(i)})} }
	t.Run("the merge-base", func(t *testing.T) {
		w := newWorld(5, val, []Sample{srv(map[string]float64{"mean_ttft_ms": 104})})
		rep := w.check(t, "mean_ttft_ms:3%")
		if rep.Baseline != (BaselineRef{Commit: w.mb, MergeBase: w.mb, Distance: 0}) {
			t.Errorf("baseline %+v, want the merge-base %s", rep.Baseline, shortSHA(w.mb))
		}
		// main's later commits (measured at 3x) are not the baseline.
		for _, c := range w.repo.chain(w.tip, 1, "more") {
			w.repo.add(c, "serving", srvLabels, map[string]float64{"mean_ttft_ms": 300})
			w.tip = c
		}
		got := find(t, w.check(t, "mean_ttft_ms:3%"), "serving", "mean_ttft_ms")
		if got.BaselineCommit != w.mb || *got.Baseline != 102 || got.Window != 5 {
			t.Errorf("baseline %s value %v, want the merge-base's window (median 102, last 104)", shortSHA(got.BaselineCommit), *got.Baseline)
		}
	})
	t.Run("the nearest measured ancestor", func(t *testing.T) {
		w := newWorld(10, func(i int) []Sample {
			if i > 6 {
				return nil
			}
			return val(i)
		}, []Sample{srv(map[string]float64{"mean_ttft_ms": 106})})
		rep := w.check(t, "mean_ttft_ms:3%")
		if rep.Baseline.Commit != w.main[6] || rep.Baseline.Distance != 3 || rep.Baseline.MergeBase != w.mb {
			t.Errorf("baseline %+v, want %s at distance 3", rep.Baseline, shortSHA(w.main[6]))
		}
		var b bytes.Buffer
		rep.WriteText(&b, false)
		if !strings.Contains(b.String(), "3 first-parent commits before the merge-base") {
			t.Errorf("text does not name the distance:\n%s", b.String())
		}
	})
	t.Run("beyond max_distance", func(t *testing.T) {
		w := newWorld(10, func(i int) []Sample {
			if i > 2 {
				return nil
			}
			return val(i)
		}, []Sample{srv(map[string]float64{"mean_ttft_ms": 106})})
		cfg := cfgWith(t, "mean_ttft_ms:3%")
		cfg.Baseline.MaxDistance = 5
		rep := w.checkCfg(t, cfg)
		if c := find(t, rep, "serving", "mean_ttft_ms"); c.Verdict != New || rep.Baseline.Commit != "" {
			t.Errorf("verdict %s, baseline %+v; want new without baseline", c.Verdict, rep.Baseline)
		}
		if len(rep.Warnings) == 0 || !strings.HasPrefix(rep.Warnings[0], "no baseline") ||
			!strings.Contains(rep.Warnings[0], "within 5 first-parent commits") || !strings.Contains(rep.Warnings[0], "perfgate sync --pull-only") {
			t.Errorf("warnings: %v; want the missing baseline first, with what to do", rep.Warnings)
		}
	})
	t.Run("head on the base branch", func(t *testing.T) {
		w := newWorld(6, val, nil)
		rep, err := Check(context.Background(), w.repo, w.repo, CheckOptions{Head: w.mb, Base: w.tip, BaseRef: "main", Config: cfgWith(t, "mean_ttft_ms:3%")})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Baseline.Commit != w.main[4] || rep.Baseline.Distance != 1 {
			t.Errorf("baseline %+v, want the first parent %s", rep.Baseline, shortSHA(w.main[4]))
		}
	})
	t.Run("a dirty run compares with its own commit", func(t *testing.T) {
		w := newWorld(6, val, nil)
		dirty := srv(map[string]float64{"mean_ttft_ms": 200})
		dirty.Dirty = true
		rep, err := Check(context.Background(), w.repo, w.repo, CheckOptions{Head: w.mb, HeadSamples: []Sample{dirty}, Base: w.tip, Config: cfgWith(t, "mean_ttft_ms:3%")})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Baseline.Commit != w.mb || !rep.Dirty || rep.Verdict != Fail {
			t.Errorf("baseline %+v dirty %v verdict %s; want the head commit itself, dirty, fail", rep.Baseline, rep.Dirty, rep.Verdict)
		}
	})
	t.Run("dirty stored results are not baselines", func(t *testing.T) {
		w := newWorld(6, val, []Sample{srv(map[string]float64{"mean_ttft_ms": 105})})
		for i := range w.repo.samples[w.mb] {
			w.repo.samples[w.mb][i].Dirty = true
		}
		rep := w.check(t, "mean_ttft_ms:3%")
		if rep.Baseline.Commit != w.main[4] {
			t.Errorf("baseline %s, want %s", shortSHA(rep.Baseline.Commit), shortSHA(w.main[4]))
		}
	})
	t.Run("no results at head", func(t *testing.T) {
		w := newWorld(3, val, nil)
		_, err := Check(context.Background(), w.repo, w.repo, CheckOptions{Head: w.head, Base: w.tip})
		if !errors.Is(err, ErrNoResults) || !strings.Contains(err.Error(), "perfgate ingest") {
			t.Errorf("err = %v, want ErrNoResults saying what to do", err)
		}
	})
	t.Run("sparse history is read in batches", func(t *testing.T) {
		w := newWorld(400, func(i int) []Sample {
			if i%40 != 0 {
				return nil
			}
			return val(i)
		}, []Sample{srv(map[string]float64{"mean_ttft_ms": 105})})
		w.repo.calls = 0
		cfg := cfgWith(t, "mean_ttft_ms:3%")
		cfg.Baseline.MaxDistance = 100
		rep := w.checkCfg(t, cfg)
		c := find(t, rep, "serving", "mean_ttft_ms")
		if c.Distance == nil || *c.Distance != 39 || c.Window != 10 {
			t.Errorf("distance %s window %d, want 39 and all 10 measured commits", fmtIntPtr(c.Distance), c.Window)
		}
		if w.repo.calls > 6 {
			t.Errorf("%d History.Samples calls for 400 commits; want a few batches", w.repo.calls)
		}
	})
}

func TestCheckLabels(t *testing.T) {
	at := func(i int) []Sample {
		return []Sample{{Benchmark: "serving", Labels: map[string]string{"model": "llama-8b", "date": "20250101", "host": "node1"},
			Metrics: map[string]float64{"mean_ttft_ms": 100}}}
	}
	t.Run("descriptive labels do not split series", func(t *testing.T) {
		w := newWorld(5, at, []Sample{{Benchmark: "serving", Labels: map[string]string{"model": "llama-8b", "date": "20250302", "host": "node7"},
			Metrics: map[string]float64{"mean_ttft_ms": 100}}})
		rep := w.check(t, "mean_ttft_ms:3%")
		if c := find(t, rep, "serving", "mean_ttft_ms"); c.Verdict != Pass || len(rep.Mismatches) != 0 {
			t.Errorf("verdict %s, mismatches %v", c.Verdict, rep.Mismatches)
		}
	})
	t.Run("an identity label mismatch is reported, not compared", func(t *testing.T) {
		w := newWorld(5, at, []Sample{{Benchmark: "serving", Labels: map[string]string{"model": "llama-70b"},
			Metrics: map[string]float64{"mean_ttft_ms": 900}}})
		rep := w.check(t, "mean_ttft_ms:3%")
		c := find(t, rep, "serving", "mean_ttft_ms")
		// The base branch measured the benchmark: nothing compared is
		// not a pass.
		if c.Verdict != Inconclusive || c.Uncompared != UncomparedLabels || rep.Verdict != Inconclusive {
			t.Errorf("verdict %s (%q) overall %s; want inconclusive (labels) and inconclusive", c.Verdict, c.Uncompared, rep.Verdict)
		}
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), "measure the base branch with them") {
			t.Errorf("warnings lack the remedy: %q", rep.Warnings)
		}
		if len(rep.Mismatches) != 1 || rep.Mismatches[0].Diff != `model: "llama-70b" (head) vs "llama-8b" (baseline)` {
			t.Errorf("mismatches %+v", rep.Mismatches)
		}
		var b bytes.Buffer
		rep.WriteMarkdown(&b)
		if !strings.Contains(b.String(), "Not compared (identity labels differ)") {
			t.Error("markdown does not show the mismatch")
		}
	})
	t.Run("ignore_labels", func(t *testing.T) {
		w := newWorld(5, at, []Sample{{Benchmark: "serving", Labels: map[string]string{"model": "llama-8b", "runner": "ci-7"},
			Metrics: map[string]float64{"mean_ttft_ms": 100}}})
		cfg := cfgWith(t, "mean_ttft_ms:3%")
		if c := find(t, w.checkCfg(t, cfg), "serving", "mean_ttft_ms"); c.Verdict != Inconclusive {
			t.Errorf("an extra identity label: %s, want inconclusive (not comparable)", c.Verdict)
		}
		cfg.IgnoreLabels = []string{"runner"}
		if c := find(t, w.checkCfg(t, cfg), "serving", "mean_ttft_ms"); c.Verdict != Pass {
			t.Errorf("with runner ignored: %s, want pass", c.Verdict)
		}
	})
	t.Run("series of one benchmark are compared separately", func(t *testing.T) {
		two := func(i int) []Sample {
			return []Sample{
				{Benchmark: "serving", Labels: map[string]string{"request_rate": "1"}, Metrics: map[string]float64{"mean_ttft_ms": 50}},
				{Benchmark: "serving", Labels: map[string]string{"request_rate": "16"}, Metrics: map[string]float64{"mean_ttft_ms": 400}},
			}
		}
		w := newWorld(5, two, two(0))
		rep := w.check(t, "mean_ttft_ms:3%")
		if len(rep.Checks) != 2 || rep.Verdict != Pass {
			t.Errorf("%d checks, %s; want 2 passing", len(rep.Checks), rep.Verdict)
		}
	})
}

func TestCheckChangePointOnMain(t *testing.T) {
	// main stepped up 15% six commits before the merge-base; the PR
	// changes nothing.
	vals := noisy(5, 20, 100, 0.03)
	for i := 14; i < 20; i++ {
		vals[i] *= 1.15
	}
	w := newWorld(20, series1(vals, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 112})})
	rep := w.check(t, "mean_ttft_ms:3%")
	c := find(t, rep, "serving", "mean_ttft_ms")
	if c.Verdict != Pass || c.SegmentStart != w.main[14] || c.Samples.Baseline != 6 {
		t.Errorf("verdict %s, segment start %s, %d values; want pass from %s with 6 (reason %s)",
			c.Verdict, shortSHA(c.SegmentStart), c.Samples.Baseline, shortSHA(w.main[14]), c.Reason)
	}
	// The same PR with a real regression on top still fails.
	w = newWorld(20, series1(vals, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 145})})
	if c := find(t, w.check(t, "mean_ttft_ms:3%"), "serving", "mean_ttft_ms"); c.Verdict != Fail || !strings.Contains(c.Reason, "since the change point at") {
		t.Errorf("verdict %s (%s), want fail naming the change point", c.Verdict, c.Reason)
	}
}

func TestCheckNotes(t *testing.T) {
	w := newWorld(5, series1(noisy(1, 5, 100, 0.01), "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 100})})
	rep := w.check(t, "mean_ttft_ms:3%", "p99_itl_ms:5%")
	if !strings.Contains(strings.Join(rep.Notes, "\n"), `rule p99_itl_ms max_regression 5% (--rule "p99_itl_ms:5%") matched no metric`) {
		t.Errorf("notes %q: want the unused rule named", rep.Notes)
	}
	// A benchmark glob that matches no benchmark is a warning naming them.
	cfg, err := ParseRules(".perfgate.yml", []byte("rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n  - metric: mean_ttft_ms\n    max_regression: 3%\n    benchmark: \"nomatch-*\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep = w.checkCfg(t, cfg)
	if got := strings.Join(rep.Warnings, "\n"); !strings.Contains(got, `no benchmark at head matches "nomatch-*"; the benchmarks are "serving"`) {
		t.Errorf("warnings %q: want the unmatched glob and the benchmarks named", rep.Warnings)
	}
	// Default rules say so.
	rep = w.checkCfg(t, nil)
	if !rep.Rules.Defaults {
		t.Error("no rules: Defaults not set")
	}
	var b bytes.Buffer
	rep.WriteText(&b, false)
	if !strings.Contains(b.String(), "from the default set") {
		t.Errorf("text does not say the defaults were used:\n%s", b.String())
	}
}

func TestReadReport(t *testing.T) {
	d := newDemo()
	rep, err := Check(context.Background(), d.repo, d.repo, CheckOptions{Head: d.head, Base: d.tip, BaseRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	rep.WriteMarkdown(&a)
	back.WriteMarkdown(&b)
	if a.String() != b.String() {
		t.Error("markdown from the JSON report differs from the original")
	}
	if _, err := ReadReport(strings.NewReader(`{"verdict":"maybe"}`)); err == nil {
		t.Error("a bad verdict was accepted")
	}
}

func fmtIntPtr(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

func TestCheckNoRuleApplies(t *testing.T) {
	gobench := func(i int) []Sample {
		return []Sample{{Benchmark: "BenchmarkParse", Metrics: map[string]float64{"ns_per_op": 1200, "allocs_per_op": 3}}}
	}
	w := newWorld(3, gobench, gobench(0))
	rep := w.checkCfg(t, nil)
	// Nothing gated is not a pass: inconclusive (a neutral check run),
	// and the headline says so.
	if rep.Verdict != Inconclusive || len(rep.Checks) != 0 {
		t.Fatalf("%s with %d checks, want inconclusive with none", rep.Verdict, len(rep.Checks))
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if h, _, _ := strings.Cut(md.String(), "\n"); h != "### ⚠️ perfgate: inconclusive — no check applied: not a pass, see the warnings for the rules to add" {
		t.Errorf("markdown headline %q", h)
	}
	want := `no rule applies to these results (metrics: allocs_per_op, ns_per_op), so this gate checked nothing; add one to the rules file or with --rule "allocs_per_op:5%"`
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), want) {
		t.Errorf("warnings %q, want %q", rep.Warnings, want)
	}
	// With a rule for them, Go benchmarks are gated like any other.
	head := []Sample{{Benchmark: "BenchmarkParse", Metrics: map[string]float64{"ns_per_op": 1800}}}
	w = newWorld(3, gobench, head)
	if c := find(t, w.check(t, "ns_per_op:10%"), "BenchmarkParse", "ns_per_op"); c.Verdict != Fail || !c.Unqualified {
		t.Errorf("ns_per_op +50%%: %s (unqualified %v)", c.Verdict, c.Unqualified)
	}
}

// repeatedCheck checks n head runs against m base runs of three metrics
// with three rules, the head's values worse by factor, the runs spread
// by about 3%.
func repeatedCheck(t *testing.T, n, m int, factor float64) *Report {
	t.Helper()
	f := newFakeRepo()
	mb := f.chain(f.commit("", "root"), 3, "main")[2]
	head := f.commit(mb, "pr")
	spread := func(k int) float64 { return 1 + 0.03*float64(k%5-2)/2 }
	run := func(s float64, k int) map[string]float64 {
		return map[string]float64{"mean_ttft_ms": s * 100 * spread(k), "mean_tpot_ms": s * 20 * spread(k+1), "mean_itl_ms": s * 20 * spread(k+2)}
	}
	for k := 0; k < m; k++ {
		f.add(mb, "b", nil, run(1, k))
	}
	for k := 0; k < n; k++ {
		f.add(head, "b", nil, run(factor, k+3))
	}
	cfg := DefaultConfig()
	for _, s := range []string{"mean_ttft_ms:3%", "mean_tpot_ms:3%", "mean_itl_ms:3%"} {
		r, _ := ParseRuleFlag(s)
		cfg.Rules = append(cfg.Rules, r)
	}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: mb, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCheckRepeatedRunsDecide: five runs a side and three rules fail a 20%
// regression (Holm across the correlated metrics of one run made this
// undecidable before), and three a side already do.
func TestCheckRepeatedRunsDecide(t *testing.T) {
	for _, n := range []int{3, 5} {
		rep := repeatedCheck(t, n, n, 1.2)
		if rep.Verdict != Fail || rep.Summary.Fail != 3 {
			t.Errorf("%d vs %d, +20%%: verdict %s with %d of 3 failed; want all three to fail (%v)", n, n, rep.Verdict, rep.Summary.Fail, rep.Checks)
		}
		for _, c := range rep.Checks {
			if c.Method != MethodShift {
				t.Errorf("%d vs %d: method %q, want %q", n, n, c.Method, MethodShift)
			}
		}
	}
	if rep := repeatedCheck(t, 5, 5, 1.0); rep.Verdict != Pass || rep.Summary.Pass != 3 {
		t.Errorf("5 vs 5, no change: verdict %s, %+v; want 3 passes", rep.Verdict, rep.Summary)
	}
}

// TestCheckMoreRunsNeverUnfail: for the same effect, adding runs on either
// side never turns a fail into a pass or an inconclusive.
func TestCheckMoreRunsNeverUnfail(t *testing.T) {
	for _, factor := range []float64{1.1, 1.2, 2} {
		for m := 3; m <= 10; m++ {
			failed := false
			for n := 3; n <= 10; n++ {
				rep := repeatedCheck(t, n, m, factor)
				if failed && rep.Verdict != Fail {
					t.Errorf("x%.2f: %d vs %d runs %s after a fail with fewer head runs", factor, n, m, rep.Verdict)
				}
				failed = failed || rep.Verdict == Fail
				if factor >= 1.2 && !failed {
					t.Errorf("x%.2f: %d vs %d runs %s, want fail", factor, n, m, rep.Verdict)
				}
			}
		}
	}
}

// TestInconclusivePolicy: the rules file's inconclusive key decides what an
// undecided check makes of the report.
func TestInconclusivePolicy(t *testing.T) {
	for _, tt := range []struct {
		policy string
		want   Verdict
	}{{"", Inconclusive}, {"warn", Inconclusive}, {"pass", Pass}, {"fail", Fail}} {
		rep := repeatedCheck(t, 3, 3, 1.045)
		if rep.Summary.Inconclusive == 0 || rep.Summary.Fail != 0 {
			t.Fatalf("setup: %+v, want inconclusive checks and no failure", rep.Summary)
		}
		cfg, err := ParseRules(".perfgate.yml", []byte("inconclusive: "+tt.policy+"\nrules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n"))
		if tt.policy == "" {
			cfg, err = ParseRules(".perfgate.yml", []byte("rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n"))
		}
		if err != nil {
			t.Fatal(err)
		}
		f := newFakeRepo()
		mb := f.chain(f.commit("", "root"), 3, "main")[2]
		head := f.commit(mb, "pr")
		for k, v := range []float64{100, 103, 97} {
			f.add(mb, "b", nil, map[string]float64{"mean_ttft_ms": v})
			f.add(head, "b", nil, map[string]float64{"mean_ttft_ms": 1.045 * []float64{99, 102, 98}[k]})
		}
		rep, err = Check(context.Background(), f, f, CheckOptions{Head: head, Base: mb, Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != tt.want || rep.Summary.Inconclusive != 1 {
			t.Errorf("inconclusive: %q: verdict %s (%+v), want %s", tt.policy, rep.Verdict, rep.Summary, tt.want)
		}
		var b strings.Builder
		rep.WriteText(&b, false)
		if first := strings.SplitN(b.String(), "\n", 2)[0]; tt.want == Inconclusive && !strings.HasPrefix(first, "INCONCLUSIVE  1 of 1 check inconclusive") {
			t.Errorf("inconclusive: %q: first line %q, want it to say inconclusive first", tt.policy, first)
		}
	}
	if _, err := ParseRules(".perfgate.yml", []byte("inconclusive: maybe\n")); err == nil || !strings.Contains(err.Error(), `inconclusive is "maybe"; use "warn"`) {
		t.Errorf("a bad policy: %v", err)
	}
}

// TestCheckInconclusiveAdvice: an inconclusive check never advises the
// repeat count the user just used.
func TestCheckInconclusiveAdvice(t *testing.T) {
	for _, n := range []int{3, 5, 8} {
		rep := repeatedCheck(t, n, n, 1.045)
		for _, c := range rep.Checks {
			if c.Verdict != Inconclusive {
				continue
			}
			if c.RunsToDecide != 0 && c.RunsToDecide <= n {
				t.Errorf("%d a side: %s advises %d runs a side", n, c.Metric, c.RunsToDecide)
			}
			if strings.Contains(c.Reason, fmt.Sprintf("repeat %d)", n)) || strings.Contains(c.Reason, fmt.Sprintf("about %d runs", n)) {
				t.Errorf("%d a side: reason %q advises the count just used", n, c.Reason)
			}
		}
		for _, w := range rep.Warnings {
			if strings.Contains(w, fmt.Sprintf("--repeat %d)", n)) {
				t.Errorf("%d a side: warning %q advises the count just used", n, w)
			}
		}
	}
}

// TestCheckTimeBoundedCounts: a benchmark bounded by time completes as many
// requests as the time allows, so a slower build completing fewer is
// slower, not invalid, and no history run is dropped for its count; a
// configured count (num_prompts) keeps the completed-count rule.
func TestCheckTimeBoundedCounts(t *testing.T) {
	counts := []float64{10, 400, 1000, 250, 730, 90, 520, 880, 160, 610, 300, 940}
	at := func(i int) []Sample {
		return []Sample{srv(map[string]float64{"mean_ttft_ms": 100 * (1 + 0.01*float64(i%3-1)), "completed": counts[i], "failed": 0})}
	}
	w := newWorld(len(counts), at, []Sample{srv(map[string]float64{"mean_ttft_ms": 130, "completed": 20, "failed": 0})})
	rep := w.check(t, "mean_ttft_ms:5%")
	c := find(t, rep, "serving", "mean_ttft_ms")
	if c.Method == MethodValidity || c.Verdict != Fail || c.Window != len(counts) {
		t.Errorf("time-bounded: %s %s over a window of %d (%s); want the slowdown to fail on its speed over all %d results", c.Method, c.Verdict, c.Window, c.Reason, len(counts))
	}
	if strings.Contains(strings.Join(rep.Notes, "\n"), "requests completed") {
		t.Errorf("notes %q: no history run is invalid for its count", rep.Notes)
	}

	// The same runs with a configured count: completing 20 of 1000 is invalid.
	fixed := func(i int) []Sample {
		s := at(i)[0]
		s.Labels = map[string]string{"model": "llama", "gpu": "H100", "num_prompts": "1000"}
		s.Metrics["completed"] = 1000
		return []Sample{s}
	}
	head := srv(map[string]float64{"mean_ttft_ms": 101, "completed": 20, "failed": 0})
	head.Labels = map[string]string{"model": "llama", "gpu": "H100", "num_prompts": "1000"}
	w = newWorld(len(counts), fixed, []Sample{head})
	rep = w.check(t, "mean_ttft_ms:5%")
	if rep.Verdict != Fail || len(rep.Checks) != 1 || rep.Checks[0].Method != MethodValidity {
		t.Errorf("fixed count: %s %v; want the validity check to fail", rep.Verdict, rep.Checks)
	}
}

// TestCheckDogfoodGate: perfgate's own benchmark gate (go test -count 5,
// .github/perfgate-bench.yml) fails a 2x slowdown, allocs/op 4 -> 8 with
// zero variance included, and passes an unchanged build.
func TestCheckDogfoodGate(t *testing.T) {
	rules, err := os.ReadFile("../.github/perfgate-bench.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseRules("perfgate-bench.yml", rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		factor float64
		allocs float64
		want   Verdict
	}{
		{"2x slower, allocs 4 -> 8", 2, 8, Fail},
		{"allocs 4 -> 8 alone", 1, 8, Fail},
		{"unchanged", 1, 4, Pass},
	} {
		f := newFakeRepo()
		main := f.chain(f.commit("", "root"), 6, "main")
		head := f.commit(main[5], "pr")
		noise := noisy(7, 60, 1, 0.04)
		k := 0
		bench := func(c string, factor, allocs float64) {
			for r := 0; r < 5; r++ {
				f.add(c, "BenchmarkCheck", map[string]string{"cpu": "AMD EPYC"}, map[string]float64{
					"ns_per_op": 3e6 * factor * noise[k], "b_per_op": 880000, "allocs_per_op": allocs})
				k++
			}
		}
		for _, c := range main {
			bench(c, 1, 4)
		}
		bench(head, tt.factor, tt.allocs)
		rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: main[5], BaseRef: "main", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != tt.want {
			t.Errorf("%s: verdict %s, want %s: %v", tt.name, rep.Verdict, tt.want, rep.Checks)
		}
	}
}

// TestSiteLinks: with site_url, the markdown links each check that did not
// pass to its chart (#benchmark/metric, which the site resolves); a
// report whose site_url could break out of a link is refused on reading.
func TestSiteLinks(t *testing.T) {
	rep := repeatedCheck(t, 5, 5, 1.2)
	rep.SiteURL = "https://perfgate.github.io/perfgate/"
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(https://perfgate.github.io/perfgate/#b/mean_ttft_ms)") {
		t.Errorf("no link to the failing chart:\n%s", b.String())
	}
	for u, ok := range map[string]bool{
		"https://x.github.io/r/": true, "http://localhost:8080/": true, "http://example.com/": false,
		"https://x.io/a) [evil](https://evil": false, "javascript:alert(1)": false, "https://x.io/#frag": false, "": false,
	} {
		if ValidSiteURL(u) != ok {
			t.Errorf("ValidSiteURL(%q) = %v, want %v", u, !ok, ok)
		}
	}
	var js strings.Builder
	rep.SiteURL = "https://x.io/a) [evil](https://evil"
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadReport(strings.NewReader(js.String())); err == nil || !strings.Contains(err.Error(), "site_url") {
		t.Errorf("ReadReport of a hostile site_url: %v, want it refused", err)
	}
}
