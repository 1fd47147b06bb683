package gate

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
)

func TestPaired(t *testing.T) {
	tests := []struct {
		name       string
		base, head []float64
		lower      bool
		pairs      int
		change     float64 // percent, within 0.05
		worse      bool    // P < 0.01
		better     bool    // PImproved < 0.01
	}{
		{"10% slower, 5 pairs", []float64{100, 101, 99, 100.5, 99.5}, []float64{110, 111.2, 108.8, 110.4, 109.6}, true, 5, 10, true, false},
		{"10% slower, higher is better: an improvement", []float64{100, 101, 99, 100.5, 99.5}, []float64{110, 111.2, 108.8, 110.4, 109.6}, false, 5, 10, false, true},
		{"unchanged", []float64{100, 101, 99, 100.5, 99.5}, []float64{100.4, 100.6, 99.3, 100.2, 99.9}, true, 5, 0.1, false, false},
		{"exactly the same shift in every pair", []float64{100, 200, 300}, []float64{105, 210, 315}, true, 3, 5, true, false},
		{"one pair: no test", []float64{100}, []float64{150}, true, 1, 50, false, false},
		{"non-positive values are left out", []float64{100, 0, 100, -1, 100}, []float64{110, 120, 110, 130, 110}, true, 3, 10, true, false},
		// A drift of 20% across the session moves each pair by far less.
		{"drifting machine, 10% slower", []float64{100, 104, 106, 112, 114, 118}, []float64{112, 113, 118, 121, 127, 128.7}, true, 6, 10, true, false},
		// An outlying pair does not move the estimate much, and makes the
		// test more conservative, not less.
		{"one outlier", []float64{100, 100, 100, 100, 100, 100}, []float64{101, 100, 99, 100.5, 99.5, 160}, true, 6, 0.25, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := Paired(tt.base, tt.head, tt.lower)
			if st.Pairs != tt.pairs {
				t.Errorf("pairs %d, want %d", st.Pairs, tt.pairs)
			}
			if math.Abs(st.Change-tt.change) > 0.05*math.Max(1, math.Abs(tt.change)) {
				t.Errorf("change %.3f%%, want about %.3g%%", st.Change, tt.change)
			}
			if (st.P < 0.01) != tt.worse || (st.PImproved < 0.01) != tt.better {
				t.Errorf("P %.4g, PImproved %.4g; want worse %v, better %v", st.P, st.PImproved, tt.worse, tt.better)
			}
			if st.P < 0 || st.P > 1 || st.PImproved < 0 || st.PImproved > 1 {
				t.Errorf("p-values out of range: %v %v", st.P, st.PImproved)
			}
		})
	}
}

// TestPairedFalseAlarms: on unchanged code with 3% lognormal noise, the
// paired test at alpha 0.01 fires at about that rate.
func TestPairedFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials = 4000
	alarms := 0
	for range trials {
		b, h := make([]float64, 5), make([]float64, 5)
		for i := range b {
			b[i] = 100 * math.Exp(0.03*rng.NormFloat64())
			h[i] = 100 * math.Exp(0.03*rng.NormFloat64())
		}
		if Paired(b, h, true).P < 0.01 {
			alarms++
		}
	}
	if rate := float64(alarms) / trials; rate > 0.015 {
		t.Errorf("false alarm rate %.4f at alpha 0.01", rate)
	}
}

func pairsOf(base, head []float64, name string) []Pair {
	var out []Pair
	for i := range base {
		out = append(out, Pair{
			Base: []Sample{{Benchmark: "serving", Metrics: map[string]float64{name: base[i], "failed": 0, "completed": 100}}},
			Head: []Sample{{Benchmark: "serving", Metrics: map[string]float64{name: head[i], "failed": 0, "completed": 100}}},
		})
	}
	return out
}

func TestCheckPaired(t *testing.T) {
	base := []float64{100, 101, 99, 100.5, 99.5}
	scale := func(f float64, noise ...float64) []float64 {
		out := make([]float64, len(base))
		for i, v := range base {
			out[i] = v * f
			if i < len(noise) {
				out[i] *= 1 + noise[i]
			}
		}
		return out
	}
	rule := func(s string) Rule {
		r, err := ParseRuleFlag(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name    string
		head    []float64
		rules   []Rule
		policy  string // the rules file's inconclusive:
		verdict Verdict
		check   Verdict
		reason  string
	}{
		{"10% regression fails a 5% rule", scale(1.10, 0.002, -0.003, 0.001, 0, 0.002), []Rule{rule("mean_ttft_ms:5%")}, "", Fail, Fail, "beyond the 5% limit and significant (paired t test"},
		{"unchanged passes", scale(1.0, 0.003, -0.002, 0.001, -0.001, 0.002), []Rule{rule("mean_ttft_ms:5%")}, "", Pass, Pass, ""},
		{"noisy 10% is inconclusive", scale(1.10, 0.25, -0.2, 0.1, -0.15, 0.05), []Rule{rule("mean_ttft_ms:5%")}, "", Inconclusive, Inconclusive, "not significant"},
		{"inconclusive: pass", scale(1.10, 0.25, -0.2, 0.1, -0.15, 0.05), []Rule{rule("mean_ttft_ms:5%")}, InconclusivePass, Pass, Inconclusive, "not significant"},
		{"inconclusive: fail", scale(1.10, 0.25, -0.2, 0.1, -0.15, 0.05), []Rule{rule("mean_ttft_ms:5%")}, InconclusiveFail, Fail, Inconclusive, "not significant"},
		{"10% faster is improved", scale(0.90, 0.002, -0.003, 0.001, 0, 0.002), []Rule{rule("mean_ttft_ms:5%")}, "", Pass, Improved, "significant"},
		{"absolute bound on head's median", scale(1.0), []Rule{rule("mean_ttft_ms<50")}, "", Fail, Fail, "outside < 50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Rules = tt.rules
			cfg.Inconclusive = tt.policy
			rep := CheckPaired(pairsOf(base, tt.head, "mean_ttft_ms"), PairedOptions{Head: strings.Repeat("b", 40), Base: strings.Repeat("a", 40), BaseRef: "main", Config: cfg})
			if rep.Verdict != tt.verdict || len(rep.Checks) != 1 || rep.Checks[0].Verdict != tt.check || !strings.Contains(rep.Checks[0].Reason, tt.reason) {
				t.Fatalf("verdict %s, checks %+v; want %s / %s with %q", rep.Verdict, rep.Checks, tt.verdict, tt.check, tt.reason)
			}
			// The report renders in every format, and its JSON reads back
			// (perfgate publish validates it: "paired" is a method).
			for _, f := range []string{"text", "markdown", "json"} {
				var b strings.Builder
				if err := Write(&b, rep, f, false); err != nil {
					t.Errorf("%s: %v", f, err)
				}
				if f != "json" {
					continue
				}
				back, err := ReadReport(strings.NewReader(b.String()))
				if err != nil {
					t.Fatalf("ReadReport: %v\n%s", err, b.String())
				}
				if !back.Paired || back.Verdict != rep.Verdict || back.Checks[0].Method != rep.Checks[0].Method {
					t.Errorf("read back paired %v, verdict %s, method %q; want paired, %s, %q", back.Paired, back.Verdict, back.Checks[0].Method, rep.Verdict, rep.Checks[0].Method)
				}
			}
		})
	}
}

func TestCheckPairedInvalidAndDefaults(t *testing.T) {
	pairs := pairsOf([]float64{100, 100}, []float64{100, 100}, "mean_ttft_ms")
	pairs[1].Head[0].Metrics["failed"] = 50
	rep := CheckPaired(pairs, PairedOptions{Head: strings.Repeat("b", 40), Base: strings.Repeat("a", 40)})
	if rep.Verdict != Fail || rep.Checks[0].Method != MethodValidity || !rep.Rules.Defaults {
		t.Errorf("an invalid head run: %+v", rep)
	}
	// Higher is better: a throughput that dropped 10% fails.
	r := Rule{Metric: "output_throughput", Direction: metric.HigherIsBetter, Bound: Regression, Limit: 5, Origin: "test"}
	cfg := DefaultConfig()
	cfg.Rules = []Rule{r}
	rep = CheckPaired(pairsOf([]float64{300, 303, 297, 301, 299}, []float64{270, 272.4, 267.6, 271.2, 268.8}, "output_throughput"), PairedOptions{Head: strings.Repeat("b", 40), Base: strings.Repeat("a", 40), Config: cfg})
	if rep.Verdict != Fail {
		t.Errorf("10%% less throughput: %+v", rep.Checks)
	}
}

// TestCheckPairedTestbed: the report names the testbed head's runs were
// measured on, as Check's does.
func TestCheckPairedTestbed(t *testing.T) {
	pairs := pairsOf([]float64{100, 101, 99}, []float64{100, 100.5, 99.5}, "mean_ttft_ms")
	for i := range pairs {
		pairs[i].Base[0].Testbed = "ci-910b"
		pairs[i].Head[0].Testbed = "ci-910b"
	}
	rep := CheckPaired(pairs, PairedOptions{Head: strings.Repeat("b", 40), Base: strings.Repeat("a", 40)})
	if len(rep.Testbeds) != 1 || rep.Testbeds[0] != "ci-910b" {
		t.Fatalf("testbeds %q, want [ci-910b]", rep.Testbeds)
	}
	var b strings.Builder
	if err := Write(&b, rep, "text", false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `on testbed ci-910b`) {
		t.Errorf("the text report does not name the testbed:\n%s", b.String())
	}
}

// TestPairedChangeColumn: a machine drifting during the session makes the
// medians move one way while the pairs say the other; the table names
// its change column as the paired estimate and says why they differ.
func TestPairedChangeColumn(t *testing.T) {
	base := []float64{896, 898, 900, 897, 899}
	head := []float64{892, 893.5, 891, 892.2, 894}
	pairs := pairsOf(base, head, "mean_ttft_ms")
	rep := CheckPaired(pairs, PairedOptions{Head: strings.Repeat("b", 40), Base: strings.Repeat("a", 40)})
	for _, f := range []struct {
		name  string
		write func(*strings.Builder) error
		want  []string
	}{
		{"text", func(b *strings.Builder) error { return rep.WriteText(b, false) }, []string{"PAIRED CHANGE", "not the ratio of the two medians"}},
		{"markdown", func(b *strings.Builder) error { return rep.WriteMarkdown(b) }, []string{"| Paired change |", "not the ratio of the two medians"}},
	} {
		var b strings.Builder
		if err := f.write(&b); err != nil {
			t.Fatal(err)
		}
		for _, w := range f.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s lacks %q:\n%s", f.name, w, b.String())
			}
		}
	}
}
