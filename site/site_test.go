package site

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/internal/goldenfile"
)

func generate(t testing.TB, sh shape, opts Options) (string, *Summary) {
	t.Helper()
	commits, h := genHistory(sh)
	dir := t.TempDir()
	if opts.Ref == "" {
		opts.Ref = "main"
	}
	if opts.Forge == (Forge{}) {
		opts.Forge = ParseRemote("git@github.com:perfgate/demo.git")
	}
	sum, err := Generate(context.Background(), commits, h, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return dir, sum
}

// TestGolden holds the generated data files to golden files.
func TestGolden(t *testing.T) {
	// bench-0's mean TTFT steps up 30% at commit 30: accepted there.
	commits, _ := genHistory(shape{commits: 40, benches: 2, metrics: 2, reps: 2})
	acc := []gate.Acceptance{{Commit: commits[30].SHA, Benchmark: "bench-0", Metric: "mean_ttft_ms", By: "ana", Reason: "new <b>default</b> @team"}}
	dir, sum := generate(t, shape{commits: 40, benches: 2, metrics: 2, reps: 2}, Options{Accepted: acc})
	if sum.Series != 3 || sum.Charts != 6 {
		t.Errorf("summary %+v: want 3 series and 6 charts", sum)
	}
	for _, f := range []string{"perfgate-site.json", "data/index.js", "data/commits.js", "data/s/bench-0/mean_ttft_ms.js", "data/s/bench-1.910b.qwen2.5-7b.ci-910b/output_throughput.js"} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, filepath.Join("testdata", strings.ReplaceAll(f, "/", "_")+".golden"), got)
	}
}

func TestGenerateFlagsRegression(t *testing.T) {
	dir, sum := generate(t, shape{commits: 60, benches: 1, metrics: 2, reps: 3}, Options{})
	if sum.Flagged != 1 {
		t.Errorf("flagged %d charts, want 1 (bench-0 mean_ttft_ms)", sum.Flagged)
	}
	data, err := os.ReadFile(filepath.Join(dir, "data", "s", "bench-0", "mean_ttft_ms.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"flag":"regression"`) {
		t.Errorf("mean_ttft_ms is not flagged")
	}
	// The +30% step at three quarters is a change point.
	if strings.Contains(string(data), `"cps":[]`) {
		t.Errorf("no change point found in %s", data[len(data)-200:])
	}
}

// TestGenerateAccepted: an acceptance is marked on the charts it covers
// only, and the latest commit's band starts there: a step accepted at the
// latest commit is not beyond the band, but the +30% step before it, not
// accepted, is still watch's open regression and flags the chart; the
// step accepted, the latest commit's own regression past it is flagged
// by the band, against the accepted level, and watch has none open. An
// acceptance at a commit the walk does not hold is not drawn.
func TestGenerateAccepted(t *testing.T) {
	sh := shape{commits: 60, benches: 1, metrics: 2, reps: 3}
	commits, _ := genHistory(sh)
	step, last := len(commits)*3/4, len(commits)-1 // genHistory's +30% step, then +50% at the last commit
	measured := step                               // the first commit at or after the step with runs (genHistory skips i%7 == 3)
	if measured%7 == 3 {
		measured++
	}
	acc := func(at int, metric string) []gate.Acceptance {
		return []gate.Acceptance{{Commit: commits[at].SHA, Benchmark: "bench-0", Metric: metric, By: "ana", Reason: "trade TTFT for throughput"}}
	}
	for _, tt := range []struct {
		name      string
		acc       []gate.Acceptance
		flagged   int
		open      int    // watch's open regressions
		marked    int    // commit index of the mark, -1 none
		bandStart string // the band's "from", when it must start at the acceptance
	}{
		{"none", nil, 1, 1, -1, ""},
		{"at the latest commit", acc(last, "mean_ttft_ms"), 1, 1, last, ""},
		{"every metric of the benchmark", acc(last, ""), 1, 1, last, ""},
		{"at the step: the latest regression is judged from there", acc(step, "mean_ttft_ms"), 1, 0, step, fmt.Sprintf(`"band":{"from":%d,`, measured)},
		{"another metric", acc(last, "output_throughput"), 1, 1, -1, ""},
		{"off the walked history", []gate.Acceptance{{Commit: strings.Repeat("e", 40), Benchmark: "bench-0", Metric: "mean_ttft_ms", By: "ana", Reason: "x"}}, 1, 1, -1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, sum := generate(t, sh, Options{Accepted: tt.acc})
			if sum.Flagged != tt.flagged || sum.OpenRegressions != tt.open {
				t.Errorf("flagged %d charts, %d open regressions, want %d and %d", sum.Flagged, sum.OpenRegressions, tt.flagged, tt.open)
			}
			data, err := os.ReadFile(filepath.Join(dir, "data", "s", "bench-0", "mean_ttft_ms.js"))
			if err != nil {
				t.Fatal(err)
			}
			tail := string(data[max(0, len(data)-400):])
			if tt.marked < 0 && !strings.Contains(tail, `"acc":[]`) {
				t.Errorf("marked, want no mark: %s", tail)
			}
			if want := fmt.Sprintf(`"acc":[{"x":%d,"text":"accepted by ana: trade TTFT for throughput"}]`, tt.marked); tt.marked >= 0 && !strings.Contains(tail, want) {
				t.Errorf("want %s in %s", want, tail)
			}
			if tt.bandStart != "" && !strings.Contains(tail, tt.bandStart) {
				t.Errorf("want %s in %s", tt.bandStart, tail)
			}
		})
	}
}

func TestGenerateSelection(t *testing.T) {
	commits, h := genHistory(shape{commits: 20, benches: 3, metrics: 3, reps: 1})
	tests := []struct {
		name    string
		opts    Options
		charts  int
		wantErr string
	}{
		{"glob", Options{Benchmark: "bench-[01]"}, 9, ""},
		{"metric by label", Options{Metrics: []string{"Mean TTFT"}}, 4, ""},
		{"no benchmark", Options{Benchmark: "serving-*"}, 0, `--benchmark "serving-*" matches none`},
		{"bad glob", Options{Benchmark: "["}, 0, "not a valid glob"},
		{"no metric", Options{Metrics: []string{"mean_tft_ms"}}, 0, `did you mean "mean_ttft_ms"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum, err := Generate(context.Background(), commits, h, t.TempDir(), tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrBadInput) {
					t.Fatalf("err = %v, want bad input containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Charts != tt.charts {
				t.Errorf("charts = %d, want %d", sum.Charts, tt.charts)
			}
		})
	}
}

func TestGenerateRefusesForeignDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	commits, h := genHistory(shape{commits: 5, benches: 1, metrics: 1, reps: 1})
	_, err := Generate(context.Background(), commits, h, dir, Options{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "holds no perfgate site") {
		t.Fatalf("err = %v", err)
	}
	// A site written before is replaced.
	dir2 := t.TempDir()
	for range 2 {
		if _, err := Generate(context.Background(), commits, h, dir2, Options{}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEmptyHistory(t *testing.T) {
	sum, err := Generate(context.Background(), nil, fakeHistory{}, t.TempDir(), Options{})
	if err != nil || sum.Charts != 0 {
		t.Fatalf("sum %+v, err %v", sum, err)
	}
}

// TestGenerateAgreesWithWatch: the new user's case. A +8% TTFT step 13
// commits back has left the latest commit inside the band of its new
// level, but perfgate watch reports it as an open regression: the
// overview flags the chart, its row and chart data carry watch's change,
// and the summary counts it. Accepted, or too small for the rules, it is
// not flagged.
func TestGenerateAgreesWithWatch(t *testing.T) {
	const n, back = 60, 13
	commits, h := stepHistory(n, back, 8)
	at := commits[n-back].SHA
	tests := []struct {
		name string
		opts Options
		open int
	}{
		{"the step is open", Options{}, 1},
		{"accepted at its commit", Options{Accepted: []gate.Acceptance{{Commit: at, Benchmark: "serving", Metric: "mean_ttft_ms", By: "ana", Reason: "new default"}}}, 0},
		{"under the rule's threshold", Options{Rules: rulesWith(t, "mean_ttft_ms:10%")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sum, err := Generate(context.Background(), commits, h, dir, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if sum.OpenRegressions != tt.open || sum.Flagged != tt.open {
				t.Errorf("open regressions %d, flagged %d; want %d", sum.OpenRegressions, sum.Flagged, tt.open)
			}
			index, err := os.ReadFile(filepath.Join(dir, "data", "index.js"))
			if err != nil {
				t.Fatal(err)
			}
			row := ""
			for _, l := range strings.Split(string(index), "\n") {
				if strings.Contains(l, `"m":"mean_ttft_ms"`) {
					row = l
				}
			}
			flagged := strings.Contains(row, `"flag":"regression"`)
			carries := strings.Contains(row, fmt.Sprintf(`"w":[{"at":%d,"sha":%q,"good":%q`, n-back, at, commits[n-back-1].SHA))
			if flagged != (tt.open > 0) || carries != (tt.open > 0) || !strings.Contains(string(index), fmt.Sprintf(`"open":%d`, tt.open)) {
				t.Errorf("row %s\nwant flagged and carrying watch's change at %s: %v", row, at[:7], tt.open > 0)
			}
			chart, err := os.ReadFile(filepath.Join(dir, "data", "s", "serving", "mean_ttft_ms.js"))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(chart), `"watch":[{"at":`); got != (tt.open > 0) {
				t.Errorf("chart data carries watch's change: %v, want %v", got, tt.open > 0)
			}
		})
	}
}

// rulesWith is the default configuration with --rule flags on top.
func rulesWith(t *testing.T, flags ...string) *gate.Config {
	t.Helper()
	cfg := gate.DefaultConfig()
	cfg.Rules = gate.DefaultRules()
	for _, f := range flags {
		r, err := gate.ParseRuleFlag(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Rules = append([]gate.Rule{r}, cfg.Rules...)
	}
	return cfg
}

// TestSummaryCountsRuns: the summary counts stored runs, each once however
// many metrics it has, and the commits they were measured at (not the
// values drawn, nor the commits walked).
func TestSummaryCountsRuns(t *testing.T) {
	commits, h := genHistory(shape{commits: 20, benches: 2, metrics: 3, reps: 2})
	runs, measured := 0, 0
	for _, c := range commits {
		runs += len(h[c.SHA])
		if len(h[c.SHA]) > 0 {
			measured++
		}
	}
	// An unmeasured commit at the tip is walked but not measured.
	commits = append(commits, gate.Commit{SHA: "ffff", Time: commits[len(commits)-1].Time})
	for _, tt := range []struct {
		name string
		opts Options
		runs int
	}{
		{"all", Options{}, runs},
		{"one benchmark", Options{Benchmark: "bench-0"}, runs / 3}, // bench-1 has two series
		{"one metric", Options{Metrics: []string{"mean_ttft_ms"}}, runs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sum, err := Generate(context.Background(), commits, h, t.TempDir(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if sum.Runs != tt.runs || sum.Measured != measured || sum.Commits != len(commits) {
				t.Errorf("runs %d at %d measured of %d commits, want %d at %d of %d", sum.Runs, sum.Measured, sum.Commits, tt.runs, measured, len(commits))
			}
		})
	}
}

// TestGoldenCurve holds a load curve's file to a golden file: a 5-load
// sweep on two commits, each commit's points and its capacity at the SLO
// (gate's: interpolated between loads 4 and 8), and the overview's row
// of it. A history without sweeps writes no curve (TestGolden's files
// are unchanged).
func TestGoldenCurve(t *testing.T) {
	commits, h := sweepHistory(6)
	dir := t.TempDir()
	// As perfgate site reads it: with each commit's capacity at the SLO.
	sum, err := Generate(context.Background(), commits, gate.WithCapacity(h, sweepRules().SLOs, nil), dir, Options{Ref: "main", Rules: sweepRules()})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Curves != 1 {
		t.Fatalf("summary %+v: want 1 load curve", sum)
	}
	id := "serving.qwen2.5-7b-b.by.max_concurrency.ci"
	got, err := os.ReadFile(filepath.Join(dir, "data", "c", id+".js"))
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "curve_"+id+".js.golden"), got)
	ix, err := os.ReadFile(filepath.Join(dir, "data", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	goldenfile.Check(t, filepath.Join("testdata", "curve_index.js.golden"), ix)
	// The capacity is gate's, computed from the same curve.
	curves := gate.Curves(h[commits[5].SHA], nil)
	slo, _ := gate.SLOFor(sweepRules().SLOs, "serving")
	want, ok := curves[0].Capacity(slo)
	if !ok || !strings.Contains(string(got), fmt.Sprintf(`"cap":{"req":%s,`, strconv.FormatFloat(want.Requests, 'g', -1, 64))) {
		t.Errorf("the latest commit's capacity is not gate's %+v", want)
	}
}

// TestCurveNone: a sweep of one commit's single load, a dirty sweep and
// a history without any write no curve file.
func TestCurveNone(t *testing.T) {
	commits, h := sweepHistory(6)
	for _, sha := range []string{commits[4].SHA, commits[5].SHA} {
		for i := range h[sha] {
			h[sha][i].Dirty = h[sha][i].Benchmark == "serving"
		}
	}
	dir := t.TempDir()
	sum, err := Generate(context.Background(), commits, h, dir, Options{Ref: "main", Rules: sweepRules()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "c")); sum.Curves != 0 || err == nil {
		t.Errorf("dirty sweeps: %d curves written, want none", sum.Curves)
	}
}
