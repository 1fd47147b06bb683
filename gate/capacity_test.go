package gate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// standIn is a serving stand-in whose capacity is known: a server with a
// fixed number of slots, decoding one token per step for every admitted
// request, a step taking base + perReq x batch ms; requests beyond the
// slots queue. Closed-loop clients (max_concurrency) resend as soon as
// their request completes.
type standIn struct {
	slots        int
	base, perReq float64 // ms
	tokens       int     // output tokens per request
}

// trueCapacity is the exact capacity at a TPOT objective: the batch b at
// which a step takes tpot ms, serving b requests every tokens steps.
func (s standIn) trueCapacity(tpot float64) float64 {
	b := math.Min((tpot-s.base)/s.perReq, float64(s.slots))
	return b / (float64(s.tokens) * (s.base + s.perReq*b) / 1000)
}

// run simulates c clients sending n requests in all, deterministically,
// and returns the result's metrics.
func (s standIn) run(c, n int) map[string]float64 {
	type req struct{ arrive, first, done float64 }
	var queue, active []*req
	left := map[*req]int{}
	var finished []*req
	now, sent := 0.0, 0
	send := func() {
		if sent < n {
			sent++
			queue = append(queue, &req{arrive: now, first: -1})
		}
	}
	for range c {
		send()
	}
	for len(finished) < n {
		for len(active) < s.slots && len(queue) > 0 {
			r := queue[0]
			queue = queue[1:]
			active = append(active, r)
			left[r] = s.tokens
		}
		now += s.base + s.perReq*float64(len(active))
		var still []*req
		for _, r := range active {
			left[r]--
			if r.first < 0 {
				r.first = now
			}
			if left[r] == 0 {
				r.done = now
				finished = append(finished, r)
				send()
				continue
			}
			still = append(still, r)
		}
		active = still
	}
	var ttft, tpot []float64
	for _, r := range finished {
		ttft = append(ttft, r.first-r.arrive)
		tpot = append(tpot, (r.done-r.first)/float64(s.tokens-1))
	}
	rate := float64(n) / (now / 1000)
	return map[string]float64{
		"request_throughput": rate, "output_throughput": rate * float64(s.tokens),
		"mean_ttft_ms": mean(ttft), "p99_ttft_ms": pct(ttft, 99),
		"mean_tpot_ms": mean(tpot), "p99_tpot_ms": pct(tpot, 99),
		"completed": float64(n), "failed": 0,
	}
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func pct(xs []float64, p float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(math.Ceil(p/100*float64(len(s))))-1]
}

var sweepLoads = []int{4, 8, 16, 24, 48}

// sweep measures the stand-in at the five loads; noise (a relative
// amount per load, or nil) scales its latencies up and throughputs down.
func (s standIn) sweep(noise []float64) []Sample {
	var out []Sample
	for i, c := range sweepLoads {
		m := s.run(c, 20*c)
		e := 0.0
		if noise != nil {
			e = noise[i]
		}
		for k := range m {
			switch {
			case latencyMetric(k):
				m[k] *= 1 + e
			case strings.HasSuffix(k, "throughput"):
				m[k] /= 1 + e
			}
		}
		out = append(out, Sample{Benchmark: "serve", Labels: map[string]string{"model": "m", "max_concurrency": strconv.Itoa(c), "num_prompts": strconv.Itoa(20 * c)}, Metrics: m})
	}
	return out
}

var refServer = standIn{slots: 32, base: 10, perReq: 0.5, tokens: 100}

const sloRules = `slo:
  tpot_ms: 20
rules:
  - metric: capacity
    max_regression: 5%
  - metric: mean_tpot_ms
    max_regression: 3%
`

func sloConfig(t *testing.T, text string) *Config {
	t.Helper()
	cfg, err := ParseRules(".perfgate.yml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCapacityStandIn: perfgate's capacity at the SLO of a stand-in
// swept at five loads is within 5% of the true value.
func TestCapacityStandIn(t *testing.T) {
	for _, s := range []standIn{refServer, {slots: 32, base: 10, perReq: 0.5 / 0.9, tokens: 100}, {slots: 48, base: 10.2, perReq: 0.45, tokens: 100}} {
		curves := Curves(s.sweep(nil), nil)
		if len(curves) != 1 || len(curves[0].Points) != 5 || curves[0].LoadLabel != "max_concurrency" {
			t.Fatalf("curves: %+v", curves)
		}
		got, ok := curves[0].Capacity(SLO{TPOTMs: 20})
		want := s.trueCapacity(20)
		if !ok || got.Status != CapacityInterpolated || math.Abs(got.Requests/want-1) > 0.05 {
			t.Errorf("%+v: capacity %+v, true %.3f req/s", s, got, want)
		}
		if math.Abs(got.Tokens/(want*100)-1) > 0.05 {
			t.Errorf("%+v: capacity_tokens %.1f, true %.1f tok/s", s, got.Tokens, want*100)
		}
	}
}

// TestCapacityStatuses: beyond the swept range and no point meeting the
// SLO are said as such.
func TestCapacityStatuses(t *testing.T) {
	c := Curves(refServer.sweep(nil), nil)[0]
	for _, tc := range []struct {
		slo    SLO
		status string
	}{
		{SLO{TPOTMs: 1000}, CapacityBeyond},
		{SLO{TPOTMs: 5}, CapacityNone},
		{SLO{TPOTMs: 20}, CapacityInterpolated},
		{SLO{TTFTMs: 1}, CapacityNone},
	} {
		got, ok := c.Capacity(tc.slo)
		if !ok || got.Status != tc.status {
			t.Errorf("SLO %s: %+v, want %s", tc.slo, got, tc.status)
		}
	}
	if _, ok := c.Capacity(SLO{E2ELMs: 100}); ok {
		t.Error("a curve without the SLO's p99_e2el_ms has a capacity")
	}
}

// capacityWorld is twelve base-branch sweeps of the reference stand-in
// with 1% noise, and head's sweep.
func capacityWorld(head []Sample) *world {
	rng := rand.New(rand.NewPCG(35, 1))
	return newWorld(12, func(int) []Sample {
		noise := make([]float64, len(sweepLoads))
		for i := range noise {
			noise[i] = 0.01 * (2*rng.Float64() - 1)
		}
		return refServer.sweep(noise)
	}, head)
}

func findCheck(rep *Report, metric, load string) *CheckResult {
	for i := range rep.Checks {
		c := &rep.Checks[i]
		if c.Metric == metric && c.Labels["max_concurrency"] == load {
			return c
		}
	}
	return nil
}

// TestCapacityGate: a commit that lowers capacity by 10% fails a 5%
// capacity rule; one that shifts a single point's mean by the noise
// passes; a latency-for-throughput trade that raises capacity passes the
// capacity rule and is named a trade-off.
func TestCapacityGate(t *testing.T) {
	t.Run("capacity -10%", func(t *testing.T) {
		slow := standIn{slots: 32, base: 10, perReq: 0.5 / 0.9, tokens: 100}
		rep := capacityWorld(slow.sweep(nil)).checkCfg(t, sloConfig(t, sloRules))
		c := findCheck(rep, "capacity", "")
		if c == nil || c.Verdict != Fail || c.Labels[LoadLabelKey] != "max_concurrency" {
			t.Fatalf("capacity check %+v; report %+v", c, rep.Checks)
		}
		if rep.Verdict != Fail || len(rep.Load) != 1 || rep.Load[0].Capacity == nil {
			t.Errorf("verdict %s, load %+v", rep.Verdict, rep.Load)
		}
	})
	t.Run("one point's mean by the noise", func(t *testing.T) {
		head := refServer.sweep(nil)
		head[1].Metrics["mean_tpot_ms"] *= 1.01
		rep := capacityWorld(head).checkCfg(t, sloConfig(t, sloRules))
		if c := findCheck(rep, "capacity", ""); c == nil || c.Verdict != Pass {
			t.Fatalf("capacity check %+v", c)
		}
		if rep.Verdict != Pass {
			t.Errorf("verdict %s: %+v", rep.Verdict, rep.Checks)
		}
	})
	t.Run("trade-off raising capacity", func(t *testing.T) {
		trade := standIn{slots: 48, base: 10.2, perReq: 0.45, tokens: 100}
		rep := capacityWorld(trade.sweep(nil)).checkCfg(t, sloConfig(t, sloRules))
		c := findCheck(rep, "capacity", "")
		if c == nil || (c.Verdict != Pass && c.Verdict != Improved) || *c.Change <= 5 {
			t.Fatalf("capacity check %+v", c)
		}
		at48 := findCheck(rep, "mean_tpot_ms", "48")
		if at48 == nil || !at48.TradeOff || at48.Verdict != Pass || !strings.Contains(at48.LoadNote, "a trade-off at max_concurrency=48") {
			t.Fatalf("the TPOT check at 48: %+v", at48)
		}
		if rep.Verdict != Pass {
			t.Errorf("verdict %s: %+v", rep.Verdict, rep.Checks)
		}
		var text bytes.Buffer
		if err := rep.WriteText(&text, false); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"TRADE-OFF", "Load curves", "capacity at SLO: head", "interpolated between max_concurrency=16 and 24", "dominates"} {
			if !strings.Contains(text.String(), want) {
				t.Errorf("text report lacks %q:\n%s", want, text.String())
			}
		}
		var md bytes.Buffer
		if err := rep.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "xychart-beta") || !strings.Contains(md.String(), "↔️ trade-off") {
			t.Errorf("markdown lacks the chart or the trade-off:\n%s", md.String())
		}
	})
	t.Run("trade-off without a capacity rule", func(t *testing.T) {
		trade := standIn{slots: 48, base: 10.2, perReq: 0.45, tokens: 100}
		rep := capacityWorld(trade.sweep(nil)).checkCfg(t, sloConfig(t, "slo: {tpot_ms: 20}\nrules:\n  - metric: mean_tpot_ms\n    max_regression: 3%\n"))
		at48 := findCheck(rep, "mean_tpot_ms", "48")
		if at48 == nil || at48.TradeOff || at48.Verdict != Fail || !strings.Contains(at48.LoadNote, "no capacity rule decides it") {
			t.Fatalf("the TPOT check at 48: %+v", at48)
		}
	})
	t.Run("SLO on a latency the results lack", func(t *testing.T) {
		rep := capacityWorld(refServer.sweep(nil)).checkCfg(t, sloConfig(t, "slo: {e2el_ms: 4000}\nrules:\n  - metric: capacity\n    max_regression: 5%\n"))
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), "capacity at the SLO not computed: head's points lack p99_e2el_ms") {
			t.Errorf("warnings %q", rep.Warnings)
		}
	})
	t.Run("capacity rule without an SLO", func(t *testing.T) {
		rep := capacityWorld(refServer.sweep(nil)).checkCfg(t, cfgWith(t, "capacity:5%"))
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), "needs an SLO") {
			t.Errorf("warnings %q", rep.Warnings)
		}
	})
}

// TestFixedRateSaturated: two runs at 16 req/s configured, 4.41 and 5.32
// achieved (a vLLM log on Ascend), are reported as a capacity change, not
// only as a TTFT change.
func TestFixedRateSaturated(t *testing.T) {
	run := func(rate, ttft float64) Sample {
		return Sample{Benchmark: "qwen2.5-vl", Labels: map[string]string{"request_rate": "16.0"},
			Metrics: map[string]float64{"request_throughput": rate, "mean_ttft_ms": ttft, "completed": 500, "failed": 0}}
	}
	w := newWorld(3, func(int) []Sample { return []Sample{run(4.41, 11300.73)} }, []Sample{run(5.32, 8246.29)})
	rep := w.check(t, "mean_ttft_ms:3%")
	c := findCheck(rep, "mean_ttft_ms", "")
	if c == nil || !strings.Contains(c.LoadNote, "capacity 4.41 -> 5.32 req/s (+20.6%)") || !strings.Contains(c.LoadNote, "saturated at request_rate=16.0") {
		t.Fatalf("TTFT check %+v", c)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "capacity 4.41 -> 5.32 req/s (+20.6%)") {
		t.Errorf("text report:\n%s", text.String())
	}

	// The other way, a slower server: the TTFT failure stands, read as
	// capacity -17.1%.
	w = newWorld(3, func(int) []Sample { return []Sample{run(5.32, 8246.29)} }, []Sample{run(4.41, 11300.73)})
	rep = w.check(t, "mean_ttft_ms:3%")
	c = findCheck(rep, "mean_ttft_ms", "")
	if rep.Verdict != Fail || c == nil || c.Verdict != Fail || !strings.Contains(c.LoadNote, "capacity 5.32 -> 4.41 req/s (-17.1%)") {
		t.Fatalf("verdict %s, TTFT check %+v", rep.Verdict, c)
	}
}

// TestSLORules: the slo section's forms and its mistakes, positioned.
func TestSLORules(t *testing.T) {
	cfg := sloConfig(t, "slo:\n  ttft_ms: 200\n  tpot_ms: 50\n  e2el_ms: 4000\n  benchmarks:\n    \"chat-*\": {ttft_ms: 500, attainment: 90%}\n")
	if len(cfg.SLOs) != 2 {
		t.Fatalf("SLOs %+v", cfg.SLOs)
	}
	chat, _ := sloFor(cfg.SLOs, "chat-a")
	if chat.String() != "p90_ttft_ms <= 500, p90_tpot_ms <= 50, p90_e2el_ms <= 4000" {
		t.Errorf("chat SLO %q", chat)
	}
	other, _ := sloFor(cfg.SLOs, "batch")
	if other.String() != "p99_ttft_ms <= 200, p99_tpot_ms <= 50, p99_e2el_ms <= 4000" {
		t.Errorf("global SLO %q", other)
	}
	for _, tc := range []struct{ text, want string }{
		{"slo:\n  ttft_ms: 200\n  percentil: p90\n", `.perfgate.yml:3: unknown key "percentil" in slo; did you mean "percentile"?`},
		{"slo:\n  ttft_ms: 200\n  benchmarks:\n    a: {tpot_mss: 5}\n", `.perfgate.yml:4: unknown key "tpot_mss" in slo benchmark "a"; did you mean "tpot_ms"?`},
		{"slo:\n  ttft_ms: -1\n", `.perfgate.yml:2: slo ttft_ms is "-1"`},
		{"slo:\n  ttft_ms: 200\n  percentile: p90\n  attainment: 90%\n", `.perfgate.yml:4: slo sets both percentile and attainment`},
		{"slo:\n  percentile: p90\n", `.perfgate.yml:1: slo sets no objective`},
		{"slo:\n  ttft_ms: 200\n  percentile: top\n", `.perfgate.yml:3: slo percentile is "top"`},
		{"slo:\n  ttft_ms: 200\n  attainment: 0.9\n", `.perfgate.yml:3: slo attainment is "0.9"`},
	} {
		_, err := ParseRules(".perfgate.yml", []byte(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}

// TestThroughputProfileTradeOff: the throughput-tuning page's profile
// (total TPS 29,822.16 -> 34,470.14, +15.6%; Mean TPOT 34.63 -> 36.97 ms,
// +6.8%) at the top of a sweep, gated with a 3% TPOT rule and a capacity
// rule at a mean-TPOT SLO, reads as a trade-off with its verdict; without
// the capacity rule it fails, with the trade-off named.
func TestThroughputProfileTradeOff(t *testing.T) {
	type pt struct {
		c         string
		tps, tpot float64
	}
	base := []pt{{"16", 12000, 20}, {"32", 20000, 27}, {"64", 29822.16, 34.63}, {"128", 31000, 52}}
	head := []pt{{"16", 11900, 20.3}, {"32", 21000, 27.5}, {"64", 34470.14, 36.97}, {"128", 38000, 47}}
	sweep := func(pts []pt, wobble float64) []Sample {
		var out []Sample
		for _, p := range pts {
			out = append(out, Sample{Benchmark: "profile", Labels: map[string]string{"max_concurrency": p.c}, Metrics: map[string]float64{
				"total_token_throughput": p.tps * (1 - wobble), "request_throughput": p.tps / 1000 * (1 - wobble), "mean_tpot_ms": p.tpot * (1 + wobble)}})
		}
		return out
	}
	wobble := []float64{0.003, -0.002, 0.004, -0.003, 0.001, -0.004, 0.002, 0}
	w := newWorld(len(wobble), func(i int) []Sample { return sweep(base, wobble[i]) }, sweep(head, 0))
	rules := "slo: {tpot_ms: 40, percentile: mean}\nrules:\n  - metric: mean_tpot_ms\n    max_regression: 3%\n"
	withCap := rules + "  - metric: capacity\n    max_regression: 5%\n"

	rep := w.checkCfg(t, sloConfig(t, withCap))
	at64 := findCheck(rep, "mean_tpot_ms", "64")
	if rep.Verdict != Pass || at64 == nil || !at64.TradeOff || !strings.Contains(at64.LoadNote, "request_throughput +15.6%, mean_tpot_ms +6.8") {
		t.Fatalf("with a capacity rule: verdict %s, the TPOT check at 64 %+v", rep.Verdict, at64)
	}
	if c := findCheck(rep, "capacity", ""); c == nil || (c.Verdict != Pass && c.Verdict != Improved) {
		t.Errorf("capacity check %+v", c)
	}

	rep = w.checkCfg(t, sloConfig(t, rules))
	at64 = findCheck(rep, "mean_tpot_ms", "64")
	if rep.Verdict != Fail || at64 == nil || at64.TradeOff || !strings.Contains(at64.LoadNote, "a trade-off at max_concurrency=64") {
		t.Fatalf("without a capacity rule: verdict %s, the TPOT check at 64 %+v", rep.Verdict, at64)
	}

	// A baseline whose every point meets the SLO has a capacity that is
	// only a lower bound: the raise is not established.
	rep = w.checkCfg(t, sloConfig(t, strings.Replace(withCap, "tpot_ms: 40", "tpot_ms: 60", 1)))
	at64 = findCheck(rep, "mean_tpot_ms", "64")
	if rep.Verdict != Fail || at64 == nil || at64.TradeOff || !strings.Contains(at64.LoadNote, "lower bound") {
		t.Fatalf("baseline beyond the swept range: verdict %s, the TPOT check at 64 %+v", rep.Verdict, at64)
	}
}

// TestCurvesApart: runs at a concurrency and runs at a request rate of one
// benchmark are two curves (a vLLM-Ascend page measures both); a vLLM
// concurrency sweep at request_rate inf is one, by max_concurrency;
// guidellm's constant@R benchmarks are one curve, "constant", by rate.
func TestCurvesApart(t *testing.T) {
	s := func(bench string, labels map[string]string) Sample {
		return Sample{Benchmark: bench, Labels: labels, Metrics: map[string]float64{"request_throughput": 1}}
	}
	got := Curves([]Sample{
		s("qwen-vl", map[string]string{"max_concurrency": "16"}),
		s("qwen-vl", map[string]string{"request_rate": "10"}),
		s("sweep", map[string]string{"request_rate": "inf", "max_concurrency": "8", "num_prompts": "80"}),
		s("sweep", map[string]string{"request_rate": "inf", "max_concurrency": "16", "num_prompts": "160"}),
		s("constant@1.00", map[string]string{"strategy": "constant", "rate": "1.0"}),
		s("constant@2.00", map[string]string{"strategy": "constant", "rate": "2.0"}),
	}, nil)
	var names []string
	for _, c := range got {
		names = append(names, fmt.Sprintf("%s by %s: %d", c.Benchmark, c.LoadLabel, len(c.Points)))
	}
	want := "constant by rate: 2; qwen-vl by max_concurrency: 1; qwen-vl by request_rate: 1; sweep by max_concurrency: 2"
	if strings.Join(names, "; ") != want {
		t.Errorf("curves %q, want %q", strings.Join(names, "; "), want)
	}
}

// TestGoldenLoadMarkdown holds the PR comment of a 5-load sweep whose
// capacity at the SLO fell 10% to a golden file: the checks table has
// the capacity at SLO row (reference, head, change, verdict), the load
// curves section names head's and the baseline's capacity, lists both
// curves' points and charts both curves in one mermaid xychart-beta.
func TestGoldenLoadMarkdown(t *testing.T) {
	slow := standIn{slots: 32, base: 10, perReq: 0.5 / 0.9, tokens: 100}
	rep := capacityWorld(slow.sweep(nil)).checkCfg(t, sloConfig(t, sloRules))
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	golden(t, "check-load.md", md.Bytes())
	s := md.String()
	table, _, _ := strings.Cut(s, "**Load curves**")
	for _, want := range []string{"| Capacity at SLO (req/s) | 9.8685 | 8.9244 | -9.57% | max\\_regression 5% | 12/1 | ❌ fail |"} {
		if !strings.Contains(table, want) {
			t.Errorf("the checks table lacks %q", want)
		}
	}
	// One series, one name: the load section names the curve as the
	// checks' table names its capacity series.
	if !strings.Contains(table, "`serve [by max_concurrency]`") || !strings.Contains(s, "**Load curves**\n\n`serve [by max_concurrency]`, SLO") {
		t.Errorf("the load section does not name the curve as the table does:\n%s", s)
	}
	chart := regexp.MustCompile("(?s)```mermaid\nxychart-beta\n    title \"serve \\[by max_concurrency\\]: p99_tpot_ms\".*?```").FindString(s)
	if strings.Count(chart, "\n    line [") != 2 || !strings.Contains(s, "capacity at SLO: head 8.9244 req/s") || !strings.Contains(s, "baseline 3ae9238 9.791 req/s") || !strings.Contains(s, "the capacity rule compares head with its reference, 9.8685 req/s: the median of 12 base-branch capacities") {
		t.Errorf("the load curves section lacks both capacities or both curves:\n%s", s)
	}
}
