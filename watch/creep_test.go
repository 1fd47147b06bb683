package watch

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/goldenfile"
)

// creepLevel is a level flat up to a, then rel worse linearly over
// span commits, then flat again.
func creepLevel(a, span int, rel float64) func(int) float64 {
	return func(i int) float64 {
		switch {
		case i < a:
			return 1
		case i >= a+span:
			return 1 + rel
		}
		return 1 + rel*float64(i-a)/float64(span)
	}
}

// watchOne watches mean_ttft_ms values x (one per commit) under the
// default 5% threshold.
func watchOne(t *testing.T, x []float64, acc Accepted) (*fakeRepo, *Report) {
	t.Helper()
	f := newFake(len(x))
	for i, v := range x {
		f.put(i, "serving", map[string]float64{"mean_ttft_ms": v})
	}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[len(x)-1], Ref: "main", Accepted: acc})
	if err != nil {
		t.Fatal(err)
	}
	return f, rep
}

// Issue 38: a metric 30% worse linearly over 300 commits at 2% noise is
// an open regression, reported as a drift still moving, whose start is
// within 20 commits of the true start. Before issue 38 watch reported
// nothing when the creep filled the history.
func TestWatchCreep(t *testing.T) {
	for _, pre := range []int{100, 60, 0} {
		for seed := uint64(1); seed <= 8; seed++ {
			t.Run(fmt.Sprintf("%d flat then creep, seed %d", pre, seed), func(t *testing.T) {
				x := synth(seed, pre+300, 0.02, creepLevel(pre, 300, 0.3))
				f, rep := watchOne(t, x, nil)
				if len(rep.Changes) != 1 {
					t.Fatalf("changes %+v, want the creep once", rep.Changes)
				}
				c := rep.Changes[0]
				if !c.Drift || !c.Moving || c.Kind != Regression || !c.Open {
					t.Errorf("creep %+v, want an open regression, a drift still moving", c)
				}
				if pos := slices.Index(f.shas, c.FirstBad); pos < pre-20 || pos > pre+20 {
					t.Errorf("creep's start at commit %d, want within 20 of %d", pos, pre)
				}
				if c.DriftEnd != f.shas[len(x)-1] {
					t.Errorf("a moving drift's end %s, want the tip", c.DriftEnd)
				}
				if c.ChangePct < 24 || c.ChangePct > 36 || c.PerHundred < 8 || c.PerHundred > 12.5 {
					t.Errorf("size so far %+.1f%%, %+.1f%%/100 commits; want about +30%% and +10%%", c.ChangePct, c.PerHundred)
				}
			})
		}
	}
}

// A creep that stopped is a drift with both ends, open while the level
// stays worse than before it; one fixed later (the level back where it
// was) is recovered; an accepted one (a growing workload expected to
// trend) is silent.
func TestWatchCreepStopFixAccept(t *testing.T) {
	stopped := synth(21, 550, 0.02, creepLevel(100, 300, 0.3))
	fixed := synth(22, 500, 0.02, func(i int) float64 {
		if i >= 350 {
			return 1
		}
		return creepLevel(100, 250, 0.25)(i)
	})
	growing := synth(23, 400, 0.02, creepLevel(0, 400, 0.3))

	f, rep := watchOne(t, stopped, nil)
	if len(rep.Changes) != 1 || !rep.Changes[0].Drift || rep.Changes[0].Moving || !rep.Changes[0].Open {
		t.Fatalf("stopped creep: %+v, want one open drift that stopped", rep.Changes)
	}
	if pos := slices.Index(f.shas, rep.Changes[0].DriftEnd); pos < 380 || pos > 420 {
		t.Errorf("stopped creep's end at %d, want about 400", pos)
	}

	_, rep = watchOne(t, fixed, nil)
	if len(rep.Regressions()) != 0 || len(rep.Changes) == 0 {
		t.Errorf("creep then a fix: %+v, want its changes listed and none open", rep.Changes)
	}

	_, rep = watchOne(t, growing, nil)
	if len(rep.Regressions()) != 1 || !rep.Changes[0].Moving {
		t.Fatalf("growing workload, not accepted: %+v, want one open drift still moving", rep.Changes)
	}
	// Accepted at the commit watch names as where it began to move.
	fg, rep := watchOne(t, growing, nil)
	acc := acceptAt{commit: rep.Changes[0].FirstBad, metric: "mean_ttft_ms"}
	_, rep = watchOne(t, growing, acc)
	if len(rep.Regressions()) != 0 || len(rep.Alerts()) != 0 || len(rep.Changes) != 1 || rep.Changes[0].Accepted == "" {
		t.Errorf("accepted growing workload: %+v, want the drift accepted and silent", rep.Changes)
	}
	// It stays accepted as it keeps growing: 100 commits later.
	more := append(growing, synth(24, 100, 0.02, func(i int) float64 { return 1.3 + 0.3*float64(i)/400 })...)
	_, rep = watchOne(t, more, acc)
	if len(rep.Regressions()) != 0 || len(rep.Changes) != 1 || rep.Changes[0].Accepted == "" {
		t.Errorf("accepted growing workload 100 commits on: %+v, want still accepted", rep.Changes)
	}
	_ = fg
}

// The formats describe a creep as a drift: size so far, per 100
// commits, still moving (golden).
func TestWatchCreepReport(t *testing.T) {
	_, rep := watchOne(t, synth(1, 400, 0.02, creepLevel(100, 300, 0.3)), nil)
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"creep.txt", func(w io.Writer) error { return rep.WriteText(w, false) }},
		{"creep.md", rep.WriteMarkdown},
		{"creep.json", rep.WriteJSON},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, filepath.Join("testdata", f.name), b.Bytes())
	}
}

// Noise-sized level jumps at irregular times between long flat stretches
// are no change (issue 38, item 4: annotators marked such a series as
// having none): a step under 0.75 point noises with evidence under 1.5
// MinZ is dropped. Without that, two of the six series report one.
func TestDetectNoiseSizedJumps(t *testing.T) {
	var n int
	for _, s := range otherCorpus() {
		if s.name != "noise-sized jumps at irregular times, no change" {
			continue
		}
		n++
		if st := Detect(s.values, DefaultParams()); len(st) != 0 {
			t.Errorf("series %d: %+v, want no change", n, st)
		}
	}
	if n == 0 {
		t.Fatal("no noise-sized jumps series in the corpus")
	}
}

// A long rise that turns into a fall (issue 38, item 4) is two drifts
// that meet at the turn: without turns the hinges read the peak as a
// level and placed its ends some 20 to 40 points either side of it.
func TestDetectTurn(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		const up, down = 200, 200
		x := synth(seed, up+down, 0.02, func(i int) float64 {
			if i < up {
				return 1 + 0.3*float64(i)/up
			}
			return 1.3 - 0.3*float64(i-up)/down
		})
		st := Detect(x, DefaultParams())
		if len(st) != 2 || !st[0].Drift || !st[1].Drift {
			t.Errorf("seed %d: %+v, want two drifts", seed, st)
			continue
		}
		if st[0].At != st[1].From || st[0].At < up-15 || st[0].At > up+15 {
			t.Errorf("seed %d: the rise ends at %d and the fall starts at %d, want both at the turn, within 15 of %d", seed, st[0].At, st[1].From, up)
		}
	}
}

// A creep ended by a fix is a drift that runs into the fix: before
// runInto its hinge made up a level and ended it some 10 to 30 points
// early.
func TestDetectCreepThenFix(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		x := synth(seed, 450, 0.02, func(i int) float64 {
			if i >= 350 {
				return 1
			}
			return creepLevel(100, 250, 0.25)(i)
		})
		st := Detect(x, DefaultParams())
		if len(st) != 2 || !st[0].Drift || st[1].Drift {
			t.Errorf("seed %d: %+v, want a drift and a step", seed, st)
			continue
		}
		if st[0].At != st[1].At || st[1].At < 347 || st[1].At > 353 {
			t.Errorf("seed %d: the drift ends at %d and the fix is at %d, want both at about 350", seed, st[0].At, st[1].At)
		}
	}
}

// A drift's confidence compares the level before it began with the
// level it reached: a creep from the first commit, or one still moving
// (one point "after": the line at the tip), is as certain as its
// size says. Before, the Mann-Whitney test took one point a side there
// and printed "confidence 0.000" (or at most 0.935) for a 30% creep.
func TestWatchDriftConfidence(t *testing.T) {
	for _, tc := range []struct {
		name string
		pre  int
		post int
	}{
		{"creep from the first commit, still moving", 0, 0},
		{"flat then creep, still moving", 100, 0},
		{"creep from the first commit, stopped", 0, 100},
		{"flat then creep, stopped", 100, 100},
		{"flat then creep, then a fix", 100, -100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lv := creepLevel(tc.pre, 300, 0.3)
			if tc.post < 0 {
				// The fix: back at the old level after the creep.
				lv = func(i int) float64 {
					if i >= tc.pre+300 {
						return 1
					}
					return creepLevel(tc.pre, 300, 0.3)(i)
				}
			}
			x := synth(3, tc.pre+300+max(tc.post, -tc.post), 0.02, lv)
			_, rep := watchOne(t, x, nil)
			if len(rep.Changes) == 0 || !rep.Changes[0].Drift {
				t.Fatalf("changes %+v, want the creep first", rep.Changes)
			}
			if c := rep.Changes[0]; c.Confidence < 0.99 || c.NAfter < 1 {
				t.Errorf("confidence %.3f (%d/%d points), want at least 0.99 for a %+.1f%% creep, on points after", c.Confidence, c.NBefore, c.NAfter, c.ChangePct)
			}
		})
	}
}

// A drift's points before are the measured points at the old level:
// from the previous change (or the first commit) up to its start, the
// last of them its last_good. Before, a creep from the second commit
// said "0/1 points" (its last_good is a point at the old level) and a
// late creep counted more points before it than the history held there.
func TestWatchDriftPointsBefore(t *testing.T) {
	for _, pre := range []int{0, 1, 60, 100} {
		t.Run(fmt.Sprintf("%d flat then creep", pre), func(t *testing.T) {
			x := synth(5, pre+300, 0.02, creepLevel(pre, 300, 0.3))
			f, rep := watchOne(t, x, nil)
			if len(rep.Changes) != 1 || !rep.Changes[0].Drift {
				t.Fatalf("changes %+v, want the creep once", rep.Changes)
			}
			c := rep.Changes[0]
			if want := slices.Index(f.shas, c.FirstBad); c.NBefore != want {
				t.Errorf("points before %d, want %d (the points up to the drift's start at commit %d)", c.NBefore, want, want)
			}
		})
	}
}

// The levels a report prints carry the metric's unit, in text, markdown
// and the issue: "100.0 ms -> 110.0 ms", not bare numbers; a metric the
// vocabulary has no unit for prints none.
func TestWatchLevelsHaveUnits(t *testing.T) {
	for _, tc := range []struct{ metric, want, not string }{
		{"mean_ttft_ms", " ms -> ", ""},
		{"output_throughput", " tok/s -> ", ""},
		{"widgets", "", " ms"},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			x := synth(9, 200, 0.01, func(i int) float64 {
				if i >= 100 {
					return 1.2
				}
				return 1
			})
			f := newFake(len(x))
			for i, v := range x {
				f.put(i, "serving", map[string]float64{tc.metric: 100 * v})
			}
			rep, err := Watch(context.Background(), f, f, Options{From: f.shas[len(x)-1], Ref: "main"})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Changes) != 1 {
				t.Fatalf("changes %+v, want the step once", rep.Changes)
			}
			var text, md bytes.Buffer
			if err := rep.WriteText(&text, false); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteMarkdown(&md); err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
				if tc.want != "" && !strings.Contains(out, tc.want) && !strings.Contains(out, strings.TrimSuffix(tc.want, " -> ")+" |") {
					t.Errorf("%s report lacks the unit %q:\n%s", name, tc.want, out)
				}
				if tc.not != "" && strings.Contains(out, tc.not) {
					t.Errorf("%s report has a unit %q for a metric without one:\n%s", name, tc.not, out)
				}
			}
		})
	}
}

// The issue of a creep from the first commit counts its points in
// English: "(1 point)", never "(1 points)"; a drift still moving says
// its level after is its line at the last commit, not one point.
func TestWatchIssuePoints(t *testing.T) {
	x := synth(5, 300, 0.02, creepLevel(0, 300, 0.3))
	_, rep := watchOne(t, x, nil)
	alerts := rep.Alerts()
	if len(alerts) != 1 {
		t.Fatalf("alerts %+v, want the creep's", alerts)
	}
	body := alerts[0].Body
	for _, tc := range []struct{ want, not string }{
		{"(1 point)", "(1 points)"},
		{"(its line at the last commit)", ""},
	} {
		if !strings.Contains(body, tc.want) || (tc.not != "" && strings.Contains(body, tc.not)) {
			t.Errorf("issue lacks %q (or has %q):\n%s", tc.want, tc.not, body)
		}
	}
}

// A range with no commits in it (--since after the tip's date, or
// --since the tip itself) says the range is empty, not that the base
// branch has no stored results to ingest.
func TestWatchEmptyRange(t *testing.T) {
	x := synth(5, 20, 0.02, func(int) float64 { return 1 })
	f := newFake(len(x))
	for i, v := range x {
		f.put(i, "serving", map[string]float64{"mean_ttft_ms": v})
	}
	tip := f.shas[len(x)-1]
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"since a date after the tip", Options{From: tip, Ref: "main", Since: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"since the tip", Options{From: tip, Ref: "main", Stop: tip}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Watch(context.Background(), f, f, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(rep.Warnings, "\n")
			if rep.Commits != 0 || !strings.Contains(w, "no first-parent commits in the range") || strings.Contains(w, "store results") {
				t.Errorf("commits %d, warnings %q; want the empty range said", rep.Commits, w)
			}
		})
	}
}

// The text report of a drift still moving says its level after is its
// line at the last commit, as the issue does, not "97/1 points".
func TestWatchTextMovingDriftPoints(t *testing.T) {
	x := synth(5, 400, 0.02, creepLevel(100, 300, 0.3))
	_, rep := watchOne(t, x, nil)
	var b bytes.Buffer
	if err := rep.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "points before, after: its line at the last commit)") || strings.Contains(out, "/1 points") {
		t.Errorf("text report:\n%s\nwant the moving drift's after named as its line", out)
	}
}

// A metric name with a "|" keeps its backslash only in table cells: in
// the drift's line under the table GitHub would show "\|" as it is.
func TestWatchMarkdownCodeSpans(t *testing.T) {
	const name = "lat|p99_ms"
	x := synth(1, 400, 0.02, creepLevel(100, 300, 0.3))
	f := newFake(len(x))
	for i, v := range x {
		f.put(i, "serving", map[string]float64{name: 100 * v})
	}
	rep, err := Watch(context.Background(), f, f, Options{From: f.shas[len(x)-1], Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Changes) == 0 || !rep.Changes[0].Drift {
		t.Fatalf("changes %+v, want the creep as a drift", rep.Changes)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	var inTable, outside bool
	for _, line := range strings.Split(md.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "|") && strings.Contains(line, "`lat\\|p99_ms`"):
			inTable = true
		case !strings.HasPrefix(line, "|") && strings.Contains(line, "`lat|p99_ms`"):
			outside = true
		case !strings.HasPrefix(line, "|") && strings.Contains(line, "lat\\|p99_ms"):
			t.Errorf("a line outside the table escapes the pipe: %q", line)
		}
	}
	if !inTable || !outside {
		t.Errorf("want the metric escaped in the table (%v) and as it is in the drift line (%v):\n%s", inTable, outside, md.String())
	}
}
