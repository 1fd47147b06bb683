package gate

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/perfgate/perfgate/internal/realnoise"
	"github.com/perfgate/perfgate/internal/robust"
	"github.com/perfgate/perfgate/internal/testlong"
)

// The gate's quality experiment on real noise: ../shared/realnoise holds
// real benchmark histories from public CI (GPU runners included), one
// series a file, with the indices of its real level shifts. Inside every
// step-free stretch of a series, about 20 positions k each play a pull
// request: the values before k are the base branch's measured history
// (one commit a value), the head is value k unchanged (a fail is a false
// alarm) or made worse by 10% or by 4 of the series' noise scales (a pass
// is a miss). For repeated runs, five consecutive values stand for five
// runs of one commit on each side (they carry some drift). The rule is 5%.
//
// The test skips when the folder is absent; the rates it prints are the
// ones quoted in the package documentation:
//
//	go test ./gate -run RealNoise -v

// realSeries is one history of ../shared/realnoise (internal/realnoise),
// with the gate's experiment's own methods.
type realSeries struct{ realnoise.Series }

func loadRealNoise(t testing.TB) []realSeries {
	var out []realSeries
	for _, s := range realnoise.ForTest(t) {
		out = append(out, realSeries{s})
	}
	return out
}

// config is the experiment's configuration for the series: the default
// one with the single rule value:5% in the series' direction.
func (s realSeries) config(t testing.TB) *Config {
	cfg := DefaultConfig()
	rule, err := ParseRuleFlag("value:5%:" + map[bool]string{true: "higher", false: "lower"}[s.Direction == "higher"])
	if err != nil {
		t.Fatal(err)
	}
	cfg.Rules = []Rule{rule}
	return cfg
}

// realTrial is one PR of the experiment: the base branch's history
// (per commit, its runs; oldest first) and the head's runs.
type realTrial struct {
	history [][]float64
	head    []float64
}

// verdictOf runs Check on a fake repository holding the trial.
func verdictOf(t testing.TB, s realSeries, tr realTrial, cfg *Config) CheckResult {
	repo := newFakeRepo()
	parent := repo.commit("", "root")
	for _, runs := range tr.history {
		parent = repo.commit(parent, "main")
		for _, v := range runs {
			repo.add(parent, "bench", nil, map[string]float64{"value": v})
		}
	}
	head := repo.commit(parent, "pr")
	for _, v := range tr.head {
		repo.add(head, "bench", nil, map[string]float64{"value": v})
	}
	rep, err := Check(context.Background(), repo, repo, CheckOptions{Head: head, Base: parent, BaseRef: "main", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 1 {
		t.Fatalf("%s: %d checks", s.ID, len(rep.Checks))
	}
	return rep.Checks[0]
}

type rnTally struct{ n, fail, inc, pass int }

func (r *rnTally) add(v Verdict) {
	r.n++
	switch v {
	case Fail:
		r.fail++
	case Inconclusive:
		r.inc++
	default:
		r.pass++
	}
}

func (r rnTally) pct(x int) float64 {
	if r.n == 0 {
		return math.NaN()
	}
	return 100 * float64(x) / float64(r.n)
}

// Harnesses: how head positions are picked. perStretch takes about 20 in
// every step-free stretch (a series with many short stretches weighs
// more); perSeries about 20 in the whole series (each series weighs the
// same, as the outside harness does).
type harness int

const (
	perStretch harness = iota
	perSeries
)

func (h harness) String() string {
	if h == perSeries {
		return "about 20 positions a series"
	}
	return "about 20 positions a stretch"
}

// rnMode is how many runs each side has: head runs at the PR head, and
// perCommit runs of every main commit. With one run a main commit and
// several at head, the baseline commit has head's number of runs too (the
// history is one commit a value, then five consecutive values for the
// baseline commit); with several a main commit (a team that runs
// --repeat 5 on main), every main commit is a block of perCommit
// consecutive values and the head the next head values.
type rnMode struct{ head, perCommit int }

var (
	oneRun        = rnMode{1, 1}
	fiveRuns      = rnMode{5, 1}
	fivePerCommit = rnMode{5, 5}
)

func (m rnMode) String() string {
	switch {
	case m.perCommit > 1:
		return fmt.Sprintf("%d runs a side, %d per main commit", m.head, m.perCommit)
	case m.head > 1:
		return fmt.Sprintf("%d runs a side", m.head)
	}
	return "1 run a side"
}

// lead is how many values of a stretch precede the first head position:
// minWindow measured commits of history.
func (m rnMode) lead() int {
	if m.perCommit > 1 {
		return minWindow * m.perCommit
	}
	return minWindow + m.head
}

// eligible lists, per stretch, the head positions the mode may use.
func (s realSeries) eligible(m rnMode) [][2]int {
	var out [][2]int
	for _, st := range s.Stretches() {
		lo, hi := st[0]+m.lead(), st[1]-m.head+1
		if hi > lo {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

// pick returns the head positions of the harness, each with the start of
// its stretch.
func (s realSeries) pick(h harness, m rnMode) [][2]int {
	var out [][2]int
	el := s.eligible(m)
	if h == perStretch {
		for _, r := range el {
			for _, k := range realnoise.Positions(r[0], r[1], 20) {
				out = append(out, [2]int{k, s.StretchStart(k)})
			}
		}
		return out
	}
	var all []int
	for _, r := range el {
		for k := r[0]; k < r[1]; k++ {
			all = append(all, k)
		}
	}
	for _, i := range realnoise.Positions(0, len(all), 20) {
		out = append(out, [2]int{all[i], s.StretchStart(all[i])})
	}
	return out
}

// The oracle: a gate that knows each series' noise exactly. Its statistic
// is in log units, worse positive: one run, head's value against the
// median of the 20 points before it; five runs, the median of head's five
// against the median of up to four earlier blocks of five (the 20 points
// before head) in the same stretch. Its threshold for a series is the
// (1 - alpha) quantile of that statistic over every eligible position,
// never below the rule's 5%; alpha is 1.5% for one run, 1% for five.
// It is no upper bound (a better statistic can beat it): it is the level a
// gate that learns the noise from history should approach.
func (s realSeries) oracleStat(k, start, repeats int, frac float64) float64 {
	ref := robust.Median(s.Values[max(start, k-20):k])
	head := make([]float64, repeats)
	for i := range head {
		head[i] = s.Worse(s.Values[k+i], frac)
	}
	d := math.Log(robust.Median(head)) - math.Log(ref)
	if s.Direction == "higher" {
		return -d
	}
	return d
}

func (s realSeries) oracleThreshold(m rnMode) float64 {
	a := 0.015
	if m.head > 1 {
		a = 0.01
	}
	var st []float64
	for _, r := range s.eligible(m) {
		for k := r[0]; k < r[1]; k++ {
			st = append(st, s.oracleStat(k, s.StretchStart(k), m.head, 0))
		}
	}
	th := math.Log(1.05)
	if len(st) == 0 {
		return th
	}
	slices.Sort(st)
	q := st[min(len(st)-1, int(math.Ceil((1-a)*float64(len(st))))-1)]
	return math.Max(th, q)
}

// rnTrial is one head position: the gate's verdicts on the unchanged
// head, on the head 10% worse and on the head four noise scales worse
// (only where that exceeds the rule), and the oracle's on the first two.
type rnTrial struct {
	source, regime string
	low            bool // point noise under 3%
	null, reg10    Verdict
	reg4           Verdict
	hasReg4        bool
	oNull, oReg10  bool // the oracle fails
}

// realNoiseTrials runs the experiment in the mode at the harness's
// positions.
func realNoiseTrials(t testing.TB, series []realSeries, m rnMode, h harness) []rnTrial {
	const history = 60 // base-branch commits kept before the head (window 20 reads fewer)
	repeats := m.head
	var out []rnTrial
	for _, s := range series {
		cfg := s.config(t)
		sigma := s.Noise.PointSigmaPct / 100
		th := s.oracleThreshold(m)
		for _, kp := range s.pick(h, m) {
			k, start := kp[0], kp[1]
			tr := realTrial{}
			switch {
			case m.perCommit > 1:
				// Blocks of perCommit values ending at k, oldest first.
				first := k - m.perCommit*((k-max(start, k-m.perCommit*history))/m.perCommit)
				for i := first; i+m.perCommit <= k; i += m.perCommit {
					tr.history = append(tr.history, s.Values[i:i+m.perCommit])
				}
			case repeats == 1:
				for i := max(start, k-history); i < k; i++ {
					tr.history = append(tr.history, []float64{s.Values[i]})
				}
			default:
				for i := max(start, k-repeats-history); i < k-repeats; i++ {
					tr.history = append(tr.history, []float64{s.Values[i]})
				}
				tr.history = append(tr.history, s.Values[k-repeats:k])
			}
			verdict := func(frac float64) Verdict {
				tr.head = make([]float64, repeats)
				for i := range tr.head {
					tr.head[i] = s.Worse(s.Values[k+i], frac)
				}
				return verdictOf(t, s, tr, cfg).Verdict
			}
			x := rnTrial{source: s.Source, regime: s.Regime(), low: s.Noise.PointSigmaPct < 3}
			x.null, x.reg10 = verdict(0), verdict(0.10)
			if 4*sigma > 0.05 {
				x.reg4, x.hasReg4 = verdict(4*sigma), true
			}
			x.oNull = s.oracleStat(k, start, repeats, 0) > th
			x.oReg10 = s.oracleStat(k, start, repeats, 0.10) > th
			out = append(out, x)
		}
	}
	return out
}

// rnRates are a group of trials' rates, in percent.
type rnRates struct {
	n, nLow, nReg4                   int
	falseAlarm, inconclusive, oFalse float64
	caughtLow, oCaughtLow, passLow   float64
	passed4                          float64
}

func (r rnRates) ratio() float64 { return 100 * r.caughtLow / r.oCaughtLow }

func rates(trials []rnTrial) rnRates {
	var r rnRates
	var fa, inc, ofa, cl, ocl, pl, p4 int
	for _, x := range trials {
		r.n++
		fa += b2i(x.null == Fail)
		inc += b2i(x.null == Inconclusive)
		ofa += b2i(x.oNull)
		if x.low {
			r.nLow++
			cl += b2i(x.reg10 == Fail)
			ocl += b2i(x.oReg10)
			pl += b2i(x.reg10 != Fail && x.reg10 != Inconclusive)
		}
		if x.hasReg4 {
			r.nReg4++
			p4 += b2i(x.reg4 != Fail && x.reg4 != Inconclusive)
		}
	}
	pct := func(a, n int) float64 {
		if n == 0 {
			return math.NaN()
		}
		return 100 * float64(a) / float64(n)
	}
	r.falseAlarm, r.inconclusive, r.oFalse = pct(fa, r.n), pct(inc, r.n), pct(ofa, r.n)
	r.caughtLow, r.oCaughtLow, r.passLow = pct(cl, r.nLow), pct(ocl, r.nLow), pct(pl, r.nLow)
	r.passed4 = pct(p4, r.nReg4)
	return r
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// groupRates splits trials by key and returns each group's rates, keys
// sorted, "all" last.
func groupRates(trials []rnTrial, key func(rnTrial) string) ([]string, map[string]rnRates) {
	groups := map[string][]rnTrial{}
	for _, x := range trials {
		k := key(x)
		groups[k] = append(groups[k], x)
	}
	var keys []string
	out := map[string]rnRates{}
	for k, g := range groups {
		keys = append(keys, k)
		out[k] = rates(g)
	}
	sort.Strings(keys)
	out["all"] = rates(trials)
	return append(keys, "all"), out
}

func logRates(t testing.TB, name string, r rnRates) {
	t.Logf("%-22s false alarms %5.2f%% / %5.2f%% (%4d, %4.1f%% inc.)   10%% caught, noise<3%%: %5.1f%% / %5.1f%% = %5.1f%% of the oracle's (%4d), shown as pass %4.1f%%   4-noise passed %5.1f%%",
		name, r.falseAlarm, r.oFalse, r.n, r.inconclusive, r.caughtLow, r.oCaughtLow, r.ratio(), r.nLow, r.passLow, r.passed4)
}

func TestRealNoiseQuality(t *testing.T) {
	testlong.Skip(t)
	series := loadRealNoise(t)
	if testing.Short() {
		t.Skip("the real-noise experiment takes a while; run without -short")
	}
	// Subtests by harness and mode, so that one row can be run alone:
	// go test ./gate -run 'RealNoiseQuality/per_series/5_runs_a_side,_5' -v
	for _, h := range []harness{perStretch, perSeries} {
		for _, m := range []rnMode{oneRun, fiveRuns, fivePerCommit} {
			t.Run(h.short()+"/"+m.String(), func(t *testing.T) { realNoiseQuality(t, series, h, m) })
		}
	}
}

func (h harness) short() string {
	if h == perSeries {
		return "per series"
	}
	return "per stretch"
}

func realNoiseQuality(t *testing.T, series []realSeries, h harness, m rnMode) {
	trials := realNoiseTrials(t, series, m, h)
	t.Logf("%s, rule 5%%, %s; gate / oracle:", m, h)
	keys, by := groupRates(trials, func(x rnTrial) string { return x.source + " " + x.regime })
	for _, k := range keys[:len(keys)-1] {
		logRates(t, k, by[k])
	}
	keys, by = groupRates(trials, func(x rnTrial) string { return x.regime })
	for _, k := range keys {
		logRates(t, k, by[k])
	}
	// The false-alarm ceilings are the design's (over all series);
	// the detection floors, against the oracle per regime, guard
	// today's rates (the package comment has them and where the
	// issue's 90% and 95% bind).
	maxFalse, minRatio := 1.5, 100.0
	if m.head > 1 {
		maxFalse, minRatio = 1.0, 90.0
	}
	if got := by["all"].falseAlarm; got > maxFalse {
		t.Errorf("%s, %s: false alarms %.2f%%, want at most %.1f%%", m, h, got, maxFalse)
	}
	for _, k := range []string{"one-level", "two-level"} {
		if got := by[k].ratio(); !(got >= minRatio) {
			t.Errorf("%s, %s, %s: caught %.1f%% of what the oracle catches, want at least %.0f%%", m, h, k, got, minRatio)
		}
	}
}

// TestRealNoiseAfterStep: right after a real step on main (the series'
// marked steps), an unchanged head is judged against main's new level: the
// step alarms once, at the commit that made it, not again one to six
// commits later when the new level is barely in the window. The history is
// everything before the head, across earlier steps.
func TestRealNoiseAfterStep(t *testing.T) {
	series := loadRealNoise(t)
	if testing.Short() {
		t.Skip("the real-noise experiment takes a while; run without -short")
	}
	var after rnTally
	for off := 1; off <= 6; off++ {
		var tl rnTally
		for _, s := range series {
			cfg := s.config(t)
			for _, st := range s.Steps {
				k := st + off
				if st < 10 || k >= len(s.Values) {
					continue
				}
				tr := realTrial{head: []float64{s.Values[k]}}
				for i := max(0, k-60); i < k; i++ {
					tr.history = append(tr.history, []float64{s.Values[i]})
				}
				v := verdictOf(t, s, tr, cfg).Verdict
				tl.add(v)
				after.add(v)
			}
		}
		t.Logf("unchanged head %d commit(s) after a real step: fails %.1f%%, inconclusive %.1f%% (%d heads)", off, tl.pct(tl.fail), tl.pct(tl.inc), tl.n)
	}
	if got := after.pct(after.fail); got > 1.5 {
		t.Errorf("unchanged heads 1-6 commits after a real step fail %.2f%% of %d, want at most 1.5%%", got, after.n)
	}
}
