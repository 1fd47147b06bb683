package gate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// stepRepo is main with 20 commits at TTFT 100, then an accepted step to
// 130 at commit step and after commits at the new level, and a pull
// request on top of main's tip whose head has TTFT headTTFT.
func stepRepo(t *testing.T, after int, headTTFT float64) (f *fakeRepo, step, tip, head string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	f = newFakeRepo()
	root := f.commit("", "root")
	noisy := func(v float64) float64 { return math.Round(v*math.Exp(0.01*rng.NormFloat64())*100) / 100 }
	add := func(c string, ttft float64) {
		f.add(c, "serving", map[string]string{"model": "m"}, map[string]float64{"mean_ttft_ms": noisy(ttft), "output_throughput": noisy(2000)})
	}
	for _, c := range f.chain(root, 20, "old level") {
		add(c, 100)
		tip = c
	}
	newLevel := f.chain(tip, 1+after, "new level")
	step = newLevel[0]
	for _, c := range newLevel {
		add(c, 130)
		tip = c
	}
	head = f.commit(tip, "pull request")
	add(head, headTTFT)
	return f, step, tip, head
}

func acceptedStep(step string) Acceptance {
	return Acceptance{Commit: step, Benchmark: "serving", Metric: "mean_ttft_ms", Reason: "trade TTFT for throughput", By: "Ada <ada@example.com>", Time: fakeEpoch}
}

func ttftCheck(t *testing.T, rep *Report) CheckResult {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Metric == "mean_ttft_ms" {
			return c
		}
	}
	t.Fatalf("no mean_ttft_ms check in %+v", rep.Checks)
	return CheckResult{}
}

// After an accepted step on main, the new level is the reference: an
// unchanged pull request passes, a further regression still fails.
func TestCheckAfterAcceptedStep(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%")}
	for _, tc := range []struct {
		name     string
		after    int // commits measured after the step
		head     float64
		accepted bool
		want     Verdict
	}{
		{"unchanged, 2 after", 2, 130, true, Pass},
		{"unchanged, 8 after", 8, 130, true, Pass},
		{"regressed again, 2 after", 2, 160, true, Fail},
		{"regressed again, 8 after", 8, 160, true, Fail},
		{"improved back, 8 after", 8, 100, true, Improved},
		{"unaccepted step, 2 after", 2, 130, false, Inconclusive}, // the gate cannot tell main's new level yet
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, step, tip, head := stepRepo(t, tc.after, tc.head)
			opts := CheckOptions{Head: head, Base: tip, Config: cfg}
			if tc.accepted {
				opts.Accepted = []Acceptance{acceptedStep(step)}
			}
			rep, err := Check(context.Background(), f, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			c := ttftCheck(t, rep)
			if c.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", c.Verdict, c.Reason, tc.want)
			}
			if tc.accepted {
				if c.CutAt == nil || c.CutAt.Commit != step {
					t.Errorf("cut_at = %+v, want the accepted step", c.CutAt)
				}
				if c.Baseline == nil || math.Abs(*c.Baseline/130-1) > 0.03 {
					t.Errorf("reference %v, want the new level 130", fmtPtr(c.Baseline))
				}
				if !strings.Contains(strings.Join(rep.Notes, "\n"), "window cut at "+shortSHA(step)) {
					t.Errorf("notes do not say where the window was cut: %q", rep.Notes)
				}
			}
		})
	}
}

// An accepted change whose commit no measured result follows leaves no
// reference: the check is new, neither blamed nor excused.
func TestCheckAcceptedUnmeasured(t *testing.T) {
	f, _, tip, head := stepRepo(t, 2, 160)
	later := f.commit(tip, "accepted, not measured")
	head2 := f.commit(later, "pull request")
	f.add(head2, "serving", map[string]string{"model": "m"}, map[string]float64{"mean_ttft_ms": 200})
	_ = head
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%")}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head2, Base: later, Config: cfg, Accepted: []Acceptance{acceptedStep(later)}})
	if err != nil {
		t.Fatal(err)
	}
	if c := ttftCheck(t, rep); c.Verdict != New || !strings.Contains(c.Reason, "predates it") {
		t.Fatalf("verdict %s (%s), want new", c.Verdict, c.Reason)
	}
	// Under require_baseline an acceptance does not stand in for a
	// measurement: the check fails, also when head itself is accepted.
	cfg.RequireBaseline = true
	headAcc := Acceptance{Commit: head2, Time: fakeEpoch, Reason: "label", By: "octocat"}
	rep, err = Check(context.Background(), f, f, CheckOptions{Head: head2, Base: later, Config: cfg, Accepted: []Acceptance{acceptedStep(later), headAcc}})
	if err != nil {
		t.Fatal(err)
	}
	if c := ttftCheck(t, rep); c.Verdict != Fail || !strings.Contains(c.Reason, "require_baseline") || rep.Verdict != Fail {
		t.Fatalf("require_baseline: verdict %s (%s), report %s, want fail", c.Verdict, c.Reason, rep.Verdict)
	}
}

// A pull request accepted before merge: its failing metric is accepted,
// the report passes, and other metrics are judged as ever.
func TestCheckHeadAccepted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%"), mustRule(t, "output_throughput:5%")}
	for _, tc := range []struct {
		name string
		acc  Acceptance
		want Verdict
	}{
		{"by record", Acceptance{Benchmark: "serving", Metric: "mean_ttft_ms", Reason: "trade TTFT for throughput", By: "Ada <ada@example.com>"}, Accepted},
		{"by label", Acceptance{Reason: `pull request label "perf-accepted"`, By: "octocat"}, Accepted},
		{"other metric", Acceptance{Benchmark: "serving", Metric: "output_throughput", Reason: "x", By: "y"}, Fail},
		{"other benchmark", Acceptance{Benchmark: "other", Metric: "mean_ttft_ms", Reason: "x", By: "y"}, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, tip, head := stepRepo(t, 8, 200)
			a := tc.acc
			a.Commit, a.Time = head, fakeEpoch
			rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: tip, Config: cfg, Accepted: []Acceptance{a}})
			if err != nil {
				t.Fatal(err)
			}
			c := ttftCheck(t, rep)
			if c.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", c.Verdict, c.Reason, tc.want)
			}
			if tc.want == Accepted {
				if rep.Failed() || rep.Summary.Accepted != 1 || c.Accepted == nil || !strings.HasPrefix(c.Reason, "accepted by "+a.By+": "+a.Reason) {
					t.Fatalf("report %s, summary %+v, check %+v", rep.Verdict, rep.Summary, c)
				}
			}
		})
	}
}

// The PR comment of an accepted pull request says who accepted it and
// why (escaped), and the JSON report reads back.
func TestGoldenCheckAccepted(t *testing.T) {
	f, _, tip, head := stepRepo(t, 8, 200)
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%"), mustRule(t, "output_throughput:5%")}
	acc := Acceptance{Commit: head, Benchmark: "serving", Metric: "mean_ttft_ms", Reason: "trade TTFT for throughput <b>*new default*</b>", By: "Ada <ada@example.com>", Time: fakeEpoch}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: tip, BaseRef: "main", Config: cfg, Accepted: []Acceptance{acc}})
	if err != nil {
		t.Fatal(err)
	}
	var md, js, txt bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	golden(t, "check-accepted.md", md.Bytes())
	if err := rep.WriteText(&txt, false); err != nil {
		t.Fatal(err)
	}
	golden(t, "check-accepted.txt", txt.Bytes())
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden(t, "check-accepted.json", js.Bytes())
	back, err := ReadReport(bytes.NewReader(js.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if c := ttftCheck(t, back); c.Accepted == nil || c.Accepted.By != acc.By {
		t.Fatalf("read back: %+v", c)
	}
	if !strings.Contains(md.String(), "accepted by Ada &lt;ada@&#8203;example.com&gt;") || strings.Contains(md.String(), "<b>") {
		t.Errorf("markdown does not show the escaped acceptance:\n%s", md.String())
	}
}

func mustRule(t *testing.T, s string) Rule {
	t.Helper()
	r, err := ParseRuleFlag(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// history shows the changes accepted on the commits it covers, in every
// format (golden), and only those of its benchmark and metric.
func TestGoldenTrendAccepted(t *testing.T) {
	f, step, tip, _ := stepRepo(t, 3, 130)
	accs := []Acceptance{
		acceptedStep(step),
		{Commit: step, Benchmark: "serving", Metric: "output_throughput", Reason: "other metric", By: "x", Time: fakeEpoch},
		{Commit: step, Benchmark: "other", Metric: "mean_ttft_ms", Reason: "other benchmark", By: "x", Time: fakeEpoch},
	}
	accs[0].Reason = "new default [#12](http://x) <i>"
	tr, err := ReadTrend(context.Background(), f, f, TrendOptions{From: tip, Ref: "main", Benchmark: "serving", Metric: "mean_ttft_ms", Limit: 8, Accepted: accs})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Accepted) != 1 || tr.Accepted[0].Commit != step {
		t.Fatalf("accepted %+v, want the one of serving mean_ttft_ms", tr.Accepted)
	}
	for _, format := range []string{"text", "markdown", "json"} {
		var b bytes.Buffer
		if err := Write(&b, tr, format, false); err != nil {
			t.Fatal(err)
		}
		golden(t, "trend-accepted."+map[string]string{"text": "txt", "markdown": "md", "json": "json"}[format], b.Bytes())
	}
}

// Runs of the base branch invalidated on record change which runs are the
// baseline: the report says so in its warnings, with who and why, beside
// the verdict (TestCheck's self-invalid runs stay in the notes).
func TestCheckShowsInvalidationsOnRecord(t *testing.T) {
	f := newFakeRepo()
	parent := f.commit("", "root")
	var last string
	for i := 0; i < 8; i++ {
		parent = f.commit(parent, "main")
		f.add(parent, "serving", nil, map[string]float64{"mean_ttft_ms": 100 + float64(i%3)})
		last = parent
	}
	f.samples[last][0].Invalid = "invalidated by mallory: runner was throttled"
	head := f.commit(last, "pr")
	f.add(head, "serving", nil, map[string]float64{"mean_ttft_ms": 101})
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%")}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: last, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(w, "1 run of the base branch was invalidated on record") || !strings.Contains(w, "serving at "+shortSHA(last)+" (invalidated by mallory: runner was throttled)") {
		t.Errorf("warnings %q do not show the invalidation", rep.Warnings)
	}
	if rep.Baseline.Commit == last {
		t.Errorf("the invalidated run is the baseline")
	}
}

// A value its metric cannot take (a negative latency, as a forged history
// line may hold) makes the run invalid: never a baseline, and a head with
// one fails on validity.
func TestCheckImpossibleValues(t *testing.T) {
	f := newFakeRepo()
	parent := f.commit("", "root")
	for i := 0; i < 6; i++ {
		parent = f.commit(parent, "main")
		f.add(parent, "serving", nil, map[string]float64{"mean_ttft_ms": 100 + float64(i%3)})
	}
	forged := f.commit(parent, "main")
	f.add(forged, "serving", nil, map[string]float64{"mean_ttft_ms": -1000})
	head := f.commit(forged, "pr")
	f.add(head, "serving", nil, map[string]float64{"mean_ttft_ms": 200})
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%")}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: forged, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if c := ttftCheck(t, rep); c.Verdict != Fail || c.BaselineCommit == forged {
		t.Errorf("verdict %s against %s (%s), want a fail against the last sound run", c.Verdict, shortSHA(c.BaselineCommit), c.Reason)
	}
	bad := f.commit(forged, "pr 2")
	f.add(bad, "serving", nil, map[string]float64{"mean_ttft_ms": -5})
	rep, err = Check(context.Background(), f, f, CheckOptions{Head: bad, Base: forged, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != Fail || !strings.Contains(fmt.Sprint(rep.Checks), "cannot be") {
		t.Errorf("a negative head: %s %+v", rep.Verdict, rep.Checks)
	}
}
