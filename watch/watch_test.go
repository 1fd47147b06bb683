package watch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/internal/goldenfile"
)

// fakeRepo is a first-parent chain c0 (oldest) .. c{n-1} (tip) with
// stored samples per commit.
type fakeRepo struct {
	shas    []string // oldest first
	samples map[string][]gate.Sample
}

func (f *fakeRepo) MergeBase(a, b string) (string, error) { return a, nil }

func (f *fakeRepo) FirstParents(from string, n int) ([]gate.Commit, error) {
	var out []gate.Commit
	start := -1
	for i, s := range f.shas {
		if s == from {
			start = i
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("unknown %s", from)
	}
	for i := start; i >= 0 && len(out) < n; i-- {
		out = append(out, gate.Commit{SHA: f.shas[i]})
	}
	return out, nil
}

func (f *fakeRepo) Samples(commits []string) (map[string][]gate.Sample, error) {
	out := map[string][]gate.Sample{}
	for _, c := range commits {
		if s := f.samples[c]; len(s) > 0 {
			out[c] = s
		}
	}
	return out, nil
}

func newFake(n int) *fakeRepo {
	f := &fakeRepo{samples: map[string][]gate.Sample{}}
	for i := 0; i < n; i++ {
		f.shas = append(f.shas, fmt.Sprintf("%040x", i+1))
	}
	return f
}

func (f *fakeRepo) put(i int, bench string, metrics map[string]float64) {
	sha := f.shas[i]
	f.samples[sha] = append(f.samples[sha], gate.Sample{Commit: sha, Benchmark: bench, Metrics: metrics,
		Labels: map[string]string{"model": "m"}, Testbed: "ci"})
}

func TestWatchHistory(t *testing.T) {
	const n = 200
	f := newFake(n)
	ttft := synth(11, n, 0.02, func(i int) float64 {
		if i >= 120 {
			return 1.15 // a 15% TTFT regression at commit 120
		}
		return 1
	})
	thr := synth(12, n, 0.02, func(i int) float64 {
		if i >= 60 {
			return 1.2 // a 20% throughput improvement, measured every 3rd commit
		}
		return 1
	})
	for i := 0; i < n; i++ {
		f.put(i, "serving", map[string]float64{"mean_ttft_ms": ttft[i]})
		if i%3 == 0 {
			f.put(i, "batch", map[string]float64{"output_throughput": thr[i]})
		}
		if i < 150 {
			f.put(i, "old", map[string]float64{"mean_ttft_ms": 50})
		}
	}
	f.samples[f.shas[100]][0].Metrics["mean_ttft_ms"] *= 3 // a spike
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[n-1], Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Commits != n || rep.Measured != n {
		t.Errorf("commits %d measured %d, want %d", rep.Commits, rep.Measured, n)
	}
	if len(rep.Changes) != 2 {
		t.Fatalf("changes %+v, want 2", rep.Changes)
	}
	var reg, imp *Change
	for i := range rep.Changes {
		switch rep.Changes[i].Kind {
		case Regression:
			reg = &rep.Changes[i]
		case Improvement:
			imp = &rep.Changes[i]
		}
	}
	if reg == nil || reg.FirstBad != f.shas[120] || reg.LastGood != f.shas[119] || reg.Unmeasured != 0 || !reg.Open || reg.Bisect != "" {
		t.Errorf("regression %+v, want open at commit 120 with its parent measured", reg)
	}
	if reg != nil && (reg.ChangePct < 10 || reg.ChangePct > 20 || reg.Confidence < 0.99 || reg.Threshold != 5) {
		t.Errorf("regression figures %+v", reg)
	}
	if imp == nil || imp.FirstBad != f.shas[60] || imp.LastGood != f.shas[57] || imp.Unmeasured != 2 || imp.Open {
		t.Fatalf("improvement %+v, want at commit 60 after 57, 2 unmeasured", imp)
	}
	want := "perfgate bisect --good " + f.shas[57] + " --bad " + f.shas[60] + " --name batch --metric output_throughput --threshold 2.5% --label model=m --testbed ci --run 'YOUR BENCHMARK COMMAND'"
	if imp.Bisect != want {
		t.Errorf("bisect command\n got %s\nwant %s", imp.Bisect, want)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Benchmark != "old" || rep.Missing[0].LastCommit != f.shas[149] || rep.Missing[0].Since != 50 {
		t.Errorf("missing %+v, want old after commit 149, 50 commits since", rep.Missing)
	}
	alerts := rep.Alerts()
	if len(alerts) != 2 || !strings.HasPrefix(alerts[0].Key, "regression-") || !strings.HasPrefix(alerts[1].Key, "missing-") {
		t.Errorf("alerts %+v", alerts)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if len(back["changes"].([]any)) != 2 {
		t.Errorf("json changes: %s", js.String())
	}
	var txt, md bytes.Buffer
	if err := rep.WriteText(&txt, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"OPEN REGRESSION", "MISSING  old [model=m] @ci", "narrow it: perfgate bisect"} {
		if !strings.Contains(txt.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, txt.String())
		}
	}
	if !strings.Contains(md.String(), "| OPEN regression |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// A regression the series has recovered from is not open; one accepted
// is neither.
func TestWatchRecoveredAndAccepted(t *testing.T) {
	const n = 150
	f := newFake(n)
	x := synth(13, n, 0.02, func(i int) float64 {
		if i >= 50 && i < 100 {
			return 1.2
		}
		return 1
	})
	y := synth(14, n, 0.02, func(i int) float64 {
		if i >= 100 {
			return 1.2
		}
		return 1
	})
	for i := 0; i < n; i++ {
		f.put(i, "a", map[string]float64{"mean_ttft_ms": x[i], "mean_tpot_ms": y[i]})
	}
	acc := acceptAt{commit: f.shas[100], metric: "mean_tpot_ms"}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[n-1], Ref: "main", Accepted: acc})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 3 {
		t.Fatalf("changes %+v, want 3", rep.Changes)
	}
	for _, c := range rep.Changes {
		if c.Open {
			t.Errorf("open %+v", c)
		}
		if c.Metric == "mean_tpot_ms" && !strings.HasSuffix(c.Accepted, "intended *new default*") {
			t.Errorf("accepted change %+v", c)
		}
	}
	if len(rep.Alerts()) != 0 {
		t.Errorf("alerts %+v", rep.Alerts())
	}
	// Every format says the change was accepted, and by whom (golden).
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"accepted.txt", func(w io.Writer) error { return rep.WriteText(w, false) }},
		{"accepted.md", rep.WriteMarkdown},
		{"accepted.json", rep.WriteJSON},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, filepath.Join("testdata", f.name), b.Bytes())
	}
}

type acceptAt struct{ commit, metric string }

func (a acceptAt) Accepted(s Series, c string) (string, bool) {
	if s.Metric == a.metric && c == a.commit {
		return "accepted by Ada <ada@example.com>: intended *new default*", true
	}
	return "", false
}

func TestWatchFilters(t *testing.T) {
	f := newFake(40)
	for i := 0; i < 40; i++ {
		f.put(i, "serving-a", map[string]float64{"mean_ttft_ms": 10, "p99_ttft_ms": 20})
		f.put(i, "batch", map[string]float64{"mean_ttft_ms": 10})
	}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[39], Bench: "serving-*", Metric: "p99_ttft_ms", Stop: f.shas[9]})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Commits != 30 || rep.Series != 1 {
		t.Errorf("commits %d series %d, want 30 and 1", rep.Commits, rep.Series)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"a-b_c.d": "a-b_c.d", "a b": "'a b'", "x'; rm -rf /": `'x'\''; rm -rf /'`, "": "''", "$(id)": "'$(id)'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// A series is missing only after it reported on each of the last
// missing_after measured commits before its last result, and some
// measured commit since lacks it.
func TestWatchMissing(t *testing.T) {
	tests := []struct {
		name    string
		present func(i int) bool // does series "s" report at commit i (of 20)?
		want    bool
	}{
		{"stopped after reporting on every commit", func(i int) bool { return i < 15 }, true},
		{"stopped after 3 reports, fewer than 5", func(i int) bool { return i >= 12 && i < 15 }, false},
		{"reports on every other commit", func(i int) bool { return i%2 == 0 && i < 15 }, false},
		{"still reporting at the tip", func(i int) bool { return true }, false},
		{"stopped only at the tip", func(i int) bool { return i < 19 }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(20)
			for i := 0; i < 20; i++ {
				f.put(i, "other", map[string]float64{"mean_ttft_ms": 10})
				if tt.present(i) {
					f.put(i, "s", map[string]float64{"mean_ttft_ms": 10})
				}
			}
			rep, err := Watch(context.Background(), f, f, Options{From: f.shas[19]})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(rep.Missing) == 1 && rep.Missing[0].Benchmark == "s"; got != tt.want || len(rep.Missing) > 1 {
				t.Errorf("missing %+v, want s missing: %v", rep.Missing, tt.want)
			}
		})
	}
}

// A drift is one change whose range spans the stretch where the level
// moved, with no bisect command (no one commit to find).
func TestWatchDrift(t *testing.T) {
	const n = 400
	f := newFake(n)
	x := synth(7, n, 0.015, func(i int) float64 {
		switch {
		case i < 100:
			return 1
		case i < 300:
			return 1 + 0.15*float64(i-100)/200
		}
		return 1.15
	})
	for i := 0; i < n; i++ {
		f.put(i, "a", map[string]float64{"mean_ttft_ms": x[i]})
	}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[n-1]})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 1 {
		t.Fatalf("changes %+v, want the drift once", rep.Changes)
	}
	c := rep.Changes[0]
	if !c.Drift || c.Kind != Regression || !c.Open || c.Unmeasured != 0 || c.Bisect != "" {
		t.Errorf("drift %+v", c)
	}
	// The first bad commit is where the level began to move; the drift's
	// end is where it stopped.
	if pos := slices.Index(f.shas, c.FirstBad); pos < 85 || pos > 115 {
		t.Errorf("drift's first bad commit at %d, want about 100 (a gentle ramp: 0.05 noise units a commit)", pos)
	}
	if pos := slices.Index(f.shas, c.DriftEnd); pos < 285 || pos > 315 {
		t.Errorf("drift's end at %d, want about 300", pos)
	}
	if pos := slices.Index(f.shas, c.LastGood); pos != slices.Index(f.shas, c.FirstBad)-1 {
		t.Errorf("drift's last good commit at %d, want just before its first bad", pos)
	}
}

// A change beyond the noise but below its threshold is listed, marked, and
// never open nor an alert; the text and markdown list it apart.
func TestWatchBelowThreshold(t *testing.T) {
	const n = 200
	f := newFake(n)
	x := synth(5, n, 0.003, func(i int) float64 {
		if i >= 120 {
			return 1.03 // 3%: ten noise units, under the 5% default
		}
		return 1
	})
	for i := 0; i < n; i++ {
		f.put(i, "a", map[string]float64{"mean_ttft_ms": x[i]})
	}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[n-1], Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) != 1 {
		t.Fatalf("changes %+v, want the 3%% step", rep.Changes)
	}
	c := rep.Changes[0]
	if !c.BelowThreshold || c.Open || c.Kind != Regression || c.FirstBad != f.shas[120] || rep.Failed() || len(rep.Alerts()) != 0 {
		t.Errorf("change %+v, want a regression below the threshold at 120, not open, no alert", c)
	}
	var txt, md, js bytes.Buffer
	if err := rep.WriteText(&txt, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"text", txt.String(), "below the threshold (beyond the noise, no alert): 1\n  a [model=m] @ci  mean_ttft_ms  +3."},
		{"text", txt.String(), "no change of level at or above its threshold"},
		{"markdown", md.String(), "1 changes beyond the noise but below their threshold (no alert)"},
		{"json", js.String(), `"below_threshold": true`},
	} {
		if !strings.Contains(c.got, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.name, c.want, c.got)
		}
	}
}

// An acceptance recorded at the commit of a step, or a point or two off
// it (where noise can move the detected step), leaves no open regression
// and no alert; one elsewhere, or for another metric, does not.
func TestWatchAcceptedNearTheStep(t *testing.T) {
	const n, step = 150, 100
	x := synth(21, n, 0.02, func(i int) float64 {
		if i >= step {
			return 1.15
		}
		return 1
	})
	tests := []struct {
		name   string
		at     int
		metric string
		open   bool
	}{
		{"at the step", step, "mean_ttft_ms", false},
		{"one commit before", step - 1, "mean_ttft_ms", false},
		{"two before", step - 2, "mean_ttft_ms", false},
		{"two after", step + 2, "mean_ttft_ms", false},
		{"three before", step - 3, "mean_ttft_ms", true},
		{"three after", step + 3, "mean_ttft_ms", true},
		{"long before", 40, "mean_ttft_ms", true},
		{"another metric", step, "mean_tpot_ms", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(n)
			for i := 0; i < n; i++ {
				f.put(i, "a", map[string]float64{"mean_ttft_ms": x[i]})
			}
			rep, err := Watch(context.Background(), f, f, Options{From: f.shas[n-1], Accepted: acceptAt{commit: f.shas[tt.at], metric: tt.metric}})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Changes) != 1 || rep.Changes[0].FirstBad != f.shas[step] || rep.Changes[0].LastGood != f.shas[step-1] {
				t.Fatalf("changes %+v, want the step at %d", rep.Changes, step)
			}
			c := rep.Changes[0]
			if c.Open != tt.open || (c.Accepted == "") != tt.open || len(rep.Regressions()) != btoi(tt.open) || len(rep.Alerts()) != btoi(tt.open) || rep.Failed() != tt.open {
				t.Errorf("open %v accepted %q alerts %d, want open %v", c.Open, c.Accepted, len(rep.Alerts()), tt.open)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The open regressions of one change (the metrics of one series whose
// ranges overlap or touch) are one alert; its issue lists each metric and
// names those no longer open. Another range, or another series, is
// another alert. The alerts are held to a golden file.
func TestWatchAlertsGroupChange(t *testing.T) {
	const n = 170
	stepAt := func(at int, by float64, until int) func(int) float64 {
		return func(i int) float64 {
			if i >= at && i < until {
				return by
			}
			return 1
		}
	}
	series := []struct {
		bench, metric string
		level         func(int) float64
	}{
		{"serving", "mean_ttft_ms", stepAt(100, 1.08, n)},
		{"serving", "p99_ttft_ms", stepAt(101, 1.12, n)},   // the same change, seen a commit later
		{"serving", "mean_tpot_ms", stepAt(100, 1.2, n)},   // accepted
		{"serving", "mean_e2el_ms", stepAt(100, 1.2, 135)}, // recovered
		{"serving", "median_itl_ms", stepAt(40, 1.1, n)},   // an earlier change
		{"batch", "mean_ttft_ms", stepAt(100, 1.3, n)},     // another series
	}
	f := newFake(n)
	for i := range f.shas {
		f.shas[i] = fmt.Sprintf("%04d%036x", i, 0xc0ffee) // short ids that say the commit
	}
	for k, s := range series {
		x := synth(uint64(30+k), n, 0.01, s.level)
		for i := 0; i < n; i++ {
			f.put(i, s.bench, map[string]float64{s.metric: x[i]})
		}
	}
	// One result per benchmark and commit.
	for _, sha := range f.shas {
		merged := map[string]gate.Sample{}
		var order []string
		for _, s := range f.samples[sha] {
			m, ok := merged[s.Benchmark]
			if !ok {
				order = append(order, s.Benchmark)
				m = s
				m.Metrics = map[string]float64{}
			}
			for k, v := range s.Metrics {
				m.Metrics[k] = v
			}
			merged[s.Benchmark] = m
		}
		f.samples[sha] = nil
		for _, b := range order {
			f.samples[sha] = append(f.samples[sha], merged[b])
		}
	}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[n-1], Ref: "main", Accepted: acceptAt{commit: f.shas[100], metric: "mean_tpot_ms"}})
	if err != nil {
		t.Fatal(err)
	}
	alerts := rep.Alerts()
	var got []string
	var b bytes.Buffer
	for _, a := range alerts {
		got = append(got, strings.Join(a.Metrics, "+"))
		fmt.Fprintf(&b, "key: %s\ntitle: %s\nalso: %s\nformerly: %s\n\n%s\n\n----\n", a.Key, a.Title, strings.Join(a.Also, " "), strings.Join(a.Formerly, " "), a.Body)
	}
	want := []string{"mean_ttft_ms", "median_itl_ms", "mean_ttft_ms+p99_ttft_ms"} // batch, then serving oldest first
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("alerts of %q, want %q", got, want)
	}
	for _, s := range []string{"No longer open: `mean_e2el_ms` (recovered), `mean_tpot_ms` (accepted by Ada", "| `p99_ttft_ms` |", "one change that regressed 2 metrics"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("issues lack %q", s)
		}
	}
	// The keys of the issues perfgate opened per metric before grouping.
	var sk string
	for _, c := range rep.Changes {
		if c.Benchmark == "serving" {
			sk = c.SeriesKey()
		}
	}
	if want := []string{AlertKey(Regression, sk, "mean_ttft_ms"), AlertKey(Regression, sk, "p99_ttft_ms")}; len(alerts) == 3 && !slices.Equal(alerts[2].Formerly, sortedSet(map[string]bool{want[0]: true, want[1]: true})) {
		t.Errorf("formerly %q, want the per-metric keys %q", alerts[2].Formerly, want)
	}
	goldenfile.Check(t, filepath.Join("testdata", "alerts.md"), b.Bytes())
}
