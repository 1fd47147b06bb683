package gate

import (
	"strings"
	"testing"
)

const (
	laptop = "Apple M3 Pro, darwin/arm64"
	ciBed  = "ci:github-actions linux/amd64 self-hosted, 8x NVIDIA H100"
)

// onBed is a serving result on a testbed.
func onBed(tb string, ttft float64) Sample {
	s := srv(map[string]float64{"mean_ttft_ms": ttft})
	s.Testbed = tb
	return s
}

func TestCheckTestbeds(t *testing.T) {
	noise := noisy(3, 30, 1, 0.01)
	// Main: a laptop at 100 ms and a CI runner at 150 ms, interleaved:
	// every other commit was measured by each.
	mixed := func(i int) []Sample {
		if i%2 == 0 {
			return []Sample{onBed(laptop, 100*noise[i])}
		}
		return []Sample{onBed(ciBed, 150*noise[i])}
	}
	tests := []struct {
		name    string
		at      func(i int) []Sample
		head    Sample
		verdict Verdict
		warn    string // a warning that must appear
		base    float64
	}{
		{"CI head at the CI level passes against CI runs only", mixed, onBed(ciBed, 150), Pass, "", 150},
		{"laptop head at the laptop level passes against laptop runs only", mixed, onBed(laptop, 100), Pass, "", 100},
		{"CI head 10% slower fails against CI runs", mixed, onBed(ciBed, 165), Fail, "", 150},
		{"laptop head at the CI level fails against laptop runs", mixed, onBed(laptop, 150), Fail, "", 100},
		{"only another testbed: not compared, inconclusive, said so", func(i int) []Sample { return []Sample{onBed(ciBed, 150)} }, onBed(laptop, 100), Inconclusive,
			`head was measured on testbed "Apple M3 Pro, darwin/arm64", its nearest baseline`, 0},
		{"runs stored before testbeds match any, with a warning", func(i int) []Sample { return []Sample{srv(map[string]float64{"mean_ttft_ms": 100 * noise[i]})} },
			onBed(laptop, 100), Pass, "have no testbed (stored before perfgate recorded", 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(30, tt.at, []Sample{tt.head})
			rep := w.check(t, "mean_ttft_ms:5%")
			c := find(t, rep, "serving", "mean_ttft_ms")
			if c.Verdict != tt.verdict {
				t.Errorf("verdict %s (%s), want %s", c.Verdict, c.Reason, tt.verdict)
			}
			if tt.base > 0 && (c.Baseline == nil || *c.Baseline < tt.base*0.97 || *c.Baseline > tt.base*1.03) {
				t.Errorf("baseline %v, want about %v: the testbeds were mixed", fmtPtr(c.Baseline), tt.base)
			}
			all := strings.Join(rep.Warnings, "\n")
			if tt.warn != "" && !strings.Contains(all, tt.warn) {
				t.Errorf("warnings %q lack %q", rep.Warnings, tt.warn)
			}
			if tt.warn == "" && strings.Contains(all, "testbed") {
				t.Errorf("unexpected testbed warning: %q", rep.Warnings)
			}
			if len(rep.Testbeds) != 1 || rep.Testbeds[0] != tt.head.Testbed {
				t.Errorf("report testbeds %q", rep.Testbeds)
			}
			for _, c := range rep.Checks {
				if c.Verdict == Missing {
					t.Errorf("the other testbed's series is reported missing: %+v", c)
				}
			}
		})
	}

	t.Run("ignore_labels: [testbed] pools the testbeds", func(t *testing.T) {
		w := newWorld(30, mixed, []Sample{onBed(laptop, 100)})
		cfg := cfgWith(t, "mean_ttft_ms:5%")
		cfg.IgnoreLabels = []string{TestbedLabel}
		c := find(t, w.checkCfg(t, cfg), "serving", "mean_ttft_ms")
		if c.Baseline == nil || *c.Baseline < 110 {
			t.Errorf("baseline %v: with the testbed ignored the nearest (CI) run should be the baseline", fmtPtr(c.Baseline))
		}
	})

	t.Run("the mismatch is in every format", func(t *testing.T) {
		w := newWorld(5, func(i int) []Sample { return []Sample{onBed(ciBed, 150)} }, []Sample{onBed(laptop, 100)})
		rep := w.check(t, "mean_ttft_ms:5%")
		if len(rep.Mismatches) != 1 || rep.Mismatches[0].HeadTestbed != laptop || rep.Mismatches[0].BaselineTestbed != ciBed {
			t.Fatalf("mismatches %+v", rep.Mismatches)
		}
		for _, f := range []string{"text", "markdown", "json"} {
			var b strings.Builder
			if err := Write(&b, rep, f, false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "--testbed") || !strings.Contains(b.String(), "darwin/arm64") {
				t.Errorf("%s report does not name the testbeds and --testbed:\n%s", f, b.String())
			}
		}
	})
}

// TestCheckUnknownTestbed: results of the unknown testbed (files ingested
// outside CI without --testbed) compare with each other, with a note, and
// never with a named testbed's: that is inconclusive with the remedy,
// never a pass. A benchmark the base branch never measured stays new.
func TestCheckUnknownTestbed(t *testing.T) {
	noise := noisy(5, 30, 1, 0.01)
	unknown := func(i int) []Sample { return []Sample{onBed(UnknownTestbed, 100*noise[i])} }
	named := func(i int) []Sample { return []Sample{onBed(ciBed, 100*noise[i])} }
	tests := []struct {
		name       string
		at         func(i int) []Sample
		head       Sample
		verdict    Verdict // the check's
		report     Verdict
		uncompared string
		say        string // in the report's notes and warnings
	}{
		{"unknown head 10% worse fails against unknown", unknown, onBed(UnknownTestbed, 110), Fail, Fail, "", "compared with each other, as one unnamed machine's"},
		{"unknown head unchanged passes against unknown", unknown, onBed(UnknownTestbed, 100), Pass, Pass, "", "--testbed NAME"},
		{"unknown head against a named history", named, onBed(UnknownTestbed, 110), Inconclusive, Inconclusive, UncomparedTestbed, "ingest it again with --testbed"},
		{"named head against an unknown history", unknown, onBed(ciBed, 110), Inconclusive, Inconclusive, UncomparedTestbed, "let the record job run on the base branch"},
		{"another benchmark entirely is new", unknown, func() Sample { s := onBed(UnknownTestbed, 100); s.Benchmark = "other"; return s }(), New, Pass, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(20, tt.at, []Sample{tt.head})
			rep := w.check(t, "mean_ttft_ms:3%")
			c := find(t, rep, tt.head.Benchmark, "mean_ttft_ms")
			if c.Verdict != tt.verdict || rep.Verdict != tt.report || c.Uncompared != tt.uncompared {
				t.Errorf("check %s (%q: %s), report %s; want %s (%q), %s", c.Verdict, c.Uncompared, c.Reason, rep.Verdict, tt.verdict, tt.uncompared, tt.report)
			}
			all := strings.Join(append(rep.Notes, rep.Warnings...), "\n")
			if !strings.Contains(all, tt.say) {
				t.Errorf("report lacks %q:\n%s", tt.say, all)
			}
			var b strings.Builder
			if err := Write(&b, rep, "text", false); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(b.String(), "\n")
			if tt.uncompared != "" && (!strings.Contains(first, "nothing compared") || strings.HasPrefix(first, "PASS")) {
				t.Errorf("headline %q", first)
			}
		})
	}
}

func TestCompareTestbeds(t *testing.T) {
	a := []Sample{onBed(ciBed, 150), onBed(laptop, 100)}
	b := []Sample{onBed(ciBed, 151), onBed(laptop, 101)}
	cmp := CompareSamples("a", "b", a, b, nil)
	if len(cmp.Rows) != 2 {
		t.Fatalf("%d rows, want one per testbed: %+v", len(cmp.Rows), cmp.Rows)
	}
	for _, r := range cmp.Rows {
		if r.Change == nil || *r.Change > 1.1 {
			t.Errorf("row %v: change %v, want about +1%% (testbeds mixed?)", r.Labels, fmtPtr(r.Change))
		}
		if r.Labels[TestbedLabel] == "" {
			t.Errorf("row without its testbed: %v", r.Labels)
		}
	}
	// A history from before testbeds against a run with one: lined up.
	old := []Sample{srv(map[string]float64{"mean_ttft_ms": 100})}
	cmp = CompareSamples("a", "b", old, []Sample{onBed(laptop, 110)}, nil)
	if len(cmp.Rows) != 1 || cmp.Rows[0].Change == nil || len(cmp.Notes) != 1 {
		t.Errorf("legacy compare: rows %+v notes %q", cmp.Rows, cmp.Notes)
	}
}

func TestTrendTestbeds(t *testing.T) {
	w := newWorld(10, func(i int) []Sample { return []Sample{onBed(ciBed, 150), onBed(laptop, 100)} }, nil)
	tr, err := ReadTrend(t.Context(), w.repo, w.repo, TrendOptions{From: w.mb, Benchmark: "serving", Metric: "mean_ttft_ms"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Series) != 2 {
		t.Fatalf("%d series, want one per testbed", len(tr.Series))
	}
	for _, s := range tr.Series {
		for _, p := range s.Points {
			if want := map[string]float64{ciBed: 150, laptop: 100}[s.Labels[TestbedLabel]]; p.Value != want {
				t.Errorf("series %v has %v", s.Labels, p.Value)
			}
		}
	}
	tr, err = ReadTrend(t.Context(), w.repo, w.repo, TrendOptions{From: w.mb, Benchmark: "serving", Metric: "mean_ttft_ms", Labels: map[string]string{TestbedLabel: laptop}})
	if err != nil || len(tr.Series) != 1 || tr.Series[0].Points[0].Value != 100 {
		t.Errorf("--label testbed=laptop: %+v, %v", tr, err)
	}
}

// TestTestbedWarningOnce: several series left uncompared for the same
// pair of testbeds get one warning naming them, not one each.
func TestTestbedWarningOnce(t *testing.T) {
	at := func(load string) Sample {
		s := onBed(ciBed, 150)
		s.Labels = map[string]string{"max_concurrency": load}
		return s
	}
	head := func(load string) Sample {
		s := onBed(laptop, 150)
		s.Labels = map[string]string{"max_concurrency": load}
		return s
	}
	w := newWorld(5, func(i int) []Sample { return []Sample{at("1"), at("4"), at("16")} }, []Sample{head("1"), head("4"), head("16")})
	rep := w.check(t, "mean_ttft_ms:5%")
	n := 0
	for _, s := range rep.Warnings {
		n += strings.Count(s, "not compared")
	}
	if n != 1 || len(rep.Notes) != 0 {
		t.Errorf("%d 'not compared' warnings (want 1), notes %q:\n%s", n, rep.Notes, strings.Join(rep.Warnings, "\n"))
	}
	if rep.Verdict != Inconclusive || rep.Uncompared() != 3 {
		t.Errorf("verdict %s, %d uncompared; want inconclusive, 3", rep.Verdict, rep.Uncompared())
	}
}
