package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/slo"
)

// ttftSummary is the request summary of n requests whose TTFTs (ms) are
// spread over a long-tailed distribution: quantile q of it is
// 100 - 50*ln(1-q), the same for every n, so only the count differs.
func ttftSummary(n int) *slo.Summary {
	b := slo.NewBuilder(nil)
	b.Has("ttft", "tpot", "e2el")
	b.SetDuration(60)
	for i := 0; i < n; i++ {
		q := (float64(i) + 0.5) / float64(n)
		ttft := 100 - 50*math.Log(1-q)
		b.Add(slo.Request{TTFT: ttft, TPOT: 20, E2EL: ttft + 2000})
	}
	return b.Summary()
}

// TestRequestPercentileThresholds: a percentile check carries a note when
// the percentile rests on few requests (fewer than slo.MinTail beyond it)
// and none when it rests on many; the structured interval is there either
// way, and the verdict is not touched.
func TestRequestPercentileThresholds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		metric     string
		head, base int // requests of each side's run; 0: no summary
		want       []string
		noNote     bool
		sides      int
	}{
		{name: "P99 of 10,000", metric: "p99_ttft_ms", head: 10000, noNote: true, sides: 1},
		{name: "P99 of 1,000 rests on 10", metric: "p99_ttft_ms", head: 1000, noNote: true, sides: 1},
		{name: "P99 of 200", metric: "p99_ttft_ms", head: 200, sides: 1,
			want: []string{"head's P99 TTFT of 200 requests rests on the 2 slowest; 95% interval from ", " ms to beyond the slowest", "measure at least 1000 requests for a P99 to rest on 10"}},
		{name: "P99 of 50", metric: "p99_ttft_ms", head: 50, sides: 1, want: []string{"head's P99 TTFT of 50 requests is the slowest one"}},
		{name: "P99.9 of 5,000", metric: "p99.9_ttft_ms", head: 5000, sides: 1, want: []string{"P99.9 TTFT of 5000 requests rests on the 5 slowest"}},
		{name: "P90 of 200", metric: "p90_ttft_ms", head: 200, noNote: true, sides: 1},
		{name: "median", metric: "median_ttft_ms", head: 20, noNote: true, sides: 1},
		{name: "baseline only", metric: "p99_ttft_ms", base: 200, sides: 1, want: []string{"the baseline's P99 TTFT of 200 requests rests on the 2 slowest"}},
		{name: "both sides", metric: "p99_ttft_ms", head: 300, base: 10000, sides: 2, want: []string{"head's P99 TTFT of 300 requests rests on the 3 slowest"}},
		{name: "a mean is no percentile", metric: "mean_ttft_ms", head: 200, noNote: true},
		{name: "no summaries", metric: "p99_ttft_ms", noNote: true},
		{name: "TPOT not measured per request", metric: "p99_itl_ms", head: 200, noNote: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			side := func(n int) []*Sample {
				s := &Sample{Metrics: map[string]float64{tc.metric: 500}}
				if n > 0 {
					s.Requests = ttftSummary(n)
				}
				return []*Sample{s}
			}
			cr := CheckResult{Benchmark: "b", Metric: tc.metric, Verdict: Pass}
			requestPercentiles(&cr, side(tc.head), side(tc.base))
			if cr.Verdict != Pass {
				t.Errorf("verdict changed to %s", cr.Verdict)
			}
			if len(cr.RequestPercentiles) != tc.sides {
				t.Errorf("request percentiles %+v: want %d sides", cr.RequestPercentiles, tc.sides)
			}
			if tc.noNote && cr.RequestNote != "" {
				t.Errorf("note %q, want none", cr.RequestNote)
			}
			for _, w := range tc.want {
				if !strings.Contains(cr.RequestNote, w) {
					t.Errorf("note %q does not say %q", cr.RequestNote, w)
				}
			}
		})
	}
}

// TestRequestPercentileRuns: with several runs on a side, the one with the
// fewest requests is shown, and the note says so.
func TestRequestPercentileRuns(t *testing.T) {
	runs := []*Sample{{Requests: ttftSummary(1000)}, {Requests: ttftSummary(150)}, {}}
	cr := CheckResult{Metric: "p99_ttft_ms"}
	requestPercentiles(&cr, runs, nil)
	if len(cr.RequestPercentiles) != 1 || cr.RequestPercentiles[0].Runs != 2 || cr.RequestPercentiles[0].Requests != 150 {
		t.Fatalf("request percentiles %+v: want head's 2 runs with summaries, the smaller of 150", cr.RequestPercentiles)
	}
	if !strings.Contains(cr.RequestNote, "head's P99 TTFT of 150 requests (the smallest of 2 runs) rests on the 1 slowest") &&
		!strings.Contains(cr.RequestNote, "(the smallest of 2 runs) rests on the slowest one") {
		t.Errorf("note %q", cr.RequestNote)
	}
}

// TestGoldenCheckRequests: a P99 TTFT check whose head measured 200
// requests and whose baseline measured 10,000 carries the caveat in every
// format, once, with the same verdicts as without the summaries.
func TestGoldenCheckRequests(t *testing.T) {
	build := func(withRequests bool) *Report {
		f := newFakeRepo()
		root := f.commit("", "initial import")
		main := f.chain(root, 6, "main: change")
		mb := main[len(main)-1]
		head := f.commit(mb, "Batch prefills")
		m := func(p99, mean float64) map[string]float64 {
			return map[string]float64{"p99_ttft_ms": p99, "mean_ttft_ms": mean, "completed": 1000, "failed": 0}
		}
		for i, c := range main {
			f.add(c, "sharegpt", labelsWith("max_concurrency", "16"), m(330+float64(i%3), 120+float64(i%2)))
		}
		f.add(head, "sharegpt", labelsWith("max_concurrency", "16"), m(345, 121))
		if withRequests {
			base := f.samples[mb]
			base[0].Requests = ttftSummary(10000)
			f.samples[head][0].Requests = ttftSummary(200)
		}
		cfg := DefaultConfig()
		for _, s := range []string{"p99_ttft_ms:3%", "mean_ttft_ms:3%"} {
			r, err := ParseRuleFlag(s)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Rules = append(cfg.Rules, r)
		}
		rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: mb, BaseRef: "main", Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep, plain := build(true), build(false)
	if len(rep.Checks) != len(plain.Checks) {
		t.Fatalf("%d checks with summaries, %d without", len(rep.Checks), len(plain.Checks))
	}
	for i, c := range rep.Checks {
		if c.Verdict != plain.Checks[i].Verdict {
			t.Errorf("%s: verdict %s with summaries, %s without: a caveat must not change it", c.Metric, c.Verdict, plain.Checks[i].Verdict)
		}
		if (c.RequestNote != "") != (c.Metric == "p99_ttft_ms") {
			t.Errorf("%s: note %q", c.Metric, c.RequestNote)
		}
	}
	var caveat string
	for _, w := range rep.Warnings {
		if strings.Contains(w, "rests on") {
			if caveat != "" {
				t.Errorf("the caveat is repeated: %q", rep.Warnings)
			}
			caveat = w
		}
	}
	if !strings.Contains(caveat, "p99_ttft_ms: head's P99 TTFT of 200 requests rests on the 2 slowest") {
		t.Fatalf("warnings %q: want head's P99 resting on 2 requests", rep.Warnings)
	}
	for f, b := range renderAll(t, rep) {
		want := caveat
		if f == "json" {
			q, _ := json.Marshal(caveat)
			want = string(q[1 : len(q)-1])
		}
		if f != "markdown" && !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s does not carry the caveat %q", f, caveat)
		}
		if f == "markdown" && !bytes.Contains(b, []byte("rests on the 2 slowest")) {
			t.Errorf("markdown does not carry the caveat")
		}
		golden(t, "check-requests."+ext(f), b)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(&js)
	if err != nil {
		t.Fatalf("the report with request percentiles does not read back: %v", err)
	}
	if got := back.Checks[0].RequestPercentiles; len(got) == 0 {
		t.Errorf("read back without its request percentiles")
	}
}

// TestPairedRequestPercentiles: a paired check (perfgate ab) of a P99 on
// runs of 200 requests carries the caveat too, once, with its verdict
// unchanged.
func TestPairedRequestPercentiles(t *testing.T) {
	pairs := func(withRequests bool) []Pair {
		var out []Pair
		for i := 0; i < 5; i++ {
			b := Sample{Benchmark: "serving", Metrics: map[string]float64{"p99_ttft_ms": 300 + float64(i%2), "completed": 200}}
			h := Sample{Benchmark: "serving", Metrics: map[string]float64{"p99_ttft_ms": 301 + float64(i%3), "completed": 200}}
			if withRequests {
				b.Requests, h.Requests = ttftSummary(200), ttftSummary(200)
			}
			out = append(out, Pair{Base: []Sample{b}, Head: []Sample{h}})
		}
		return out
	}
	r, err := ParseRuleFlag("p99_ttft_ms:5%")
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Rules = []Rule{r}
	rep := CheckPaired(pairs(true), PairedOptions{Head: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), Config: cfg})
	plain := CheckPaired(pairs(false), PairedOptions{Head: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), Config: cfg})
	if len(rep.Checks) != 1 || rep.Checks[0].Verdict != plain.Checks[0].Verdict {
		t.Fatalf("checks %+v, without summaries %+v", rep.Checks, plain.Checks)
	}
	c := rep.Checks[0]
	if len(c.RequestPercentiles) != 2 || c.RequestPercentiles[0].Runs != 5 {
		t.Errorf("request percentiles %+v: want both sides, 5 runs each", c.RequestPercentiles)
	}
	n := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, "head's P99 TTFT of 200 requests (each of 5 runs) rests on the 2 slowest") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("warnings %q: want the caveat once", rep.Warnings)
	}
}
