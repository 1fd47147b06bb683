package gate

import (
	"fmt"
	"math"
	"sort"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfgate/perfgate/metric"
)

// MethodPaired is the verdict of perfgate ab: base and head measured in
// adjacent pairs on one machine.
const MethodPaired = "paired"

// PairedStats is the paired analysis of one metric: base[i] and head[i]
// were measured next to each other in time (perfgate ab's ABBA order), so
// what drifts over the session (a machine warming up, a neighbour's load)
// cancels in each pair's log ratio d_i = log(head_i/base_i).
type PairedStats struct {
	Pairs int // pairs with both values positive and finite
	// Shift is the Hodges-Lehmann estimate of the log ratio (the median
	// of the pairwise means of the d_i), positive when head is higher;
	// Change is the same as a percentage, 100*(exp(Shift)-1).
	Shift, Change float64
	// P is the one-sided p-value of "head is worse" (a paired t test on
	// the d_i), PImproved that of "head is better"; both 1 when there
	// are fewer than two pairs.
	P, PImproved float64
	// Noise is the spread of one run, in percent, estimated from the
	// pairs (the standard deviation of d over sqrt 2).
	Noise float64
	// SD is the standard deviation of the pairs' log ratios d.
	SD float64
}

// Paired computes the paired statistics of base and head, which must have
// the same length (pair i is base[i], head[i]); pairs where either value
// is not positive and finite are left out. lower says lower is better.
//
// The test is Student's one-sided paired t test on the log ratios. It is
// exact for lognormal noise, reaches p < 0.01 from three pairs on a
// consistent shift (a Wilcoxon signed-rank test cannot go below 1/2^n,
// 0.031 at five pairs), and an outlying pair inflates the variance, which
// makes the test more conservative, never less. The estimate is the
// Hodges-Lehmann shift, robust to that outlier.
func Paired(base, head []float64, lower bool) PairedStats {
	var d []float64
	for i := range min(len(base), len(head)) {
		b, h := base[i], head[i]
		if b > 0 && h > 0 && !math.IsInf(b, 0) && !math.IsInf(h, 0) {
			d = append(d, math.Log(h/b))
		}
	}
	ps := PairedStats{Pairs: len(d), P: 1, PImproved: 1}
	if len(d) == 0 {
		return ps
	}
	ps.Shift = walshMedian(d)
	ps.Change = 100 * (math.Exp(ps.Shift) - 1)
	if len(d) < 2 {
		return ps
	}
	mean, sd := meanSD(d)
	ps.SD = sd
	ps.Noise = 100 * (math.Exp(sd/math.Sqrt2) - 1)
	n := float64(len(d))
	var pUp, pDown float64
	switch {
	case sd > 0:
		t := mean / (sd / math.Sqrt(n))
		dist := stats.TDist{V: n - 1}
		pUp, pDown = 1-dist.CDF(t), dist.CDF(t)
	case mean > 0: // every pair moved by exactly the same amount
		pUp, pDown = 0, 1
	case mean < 0:
		pUp, pDown = 1, 0
	default:
		pUp, pDown = 1, 1
	}
	if lower {
		ps.P, ps.PImproved = pUp, pDown
	} else {
		ps.P, ps.PImproved = pDown, pUp
	}
	return ps
}

// walshMedian is the one-sample Hodges-Lehmann estimate: the median of
// the Walsh averages (d_i+d_j)/2, i <= j (hodgesLehmann is the two-sample
// one).
func walshMedian(d []float64) float64 {
	w := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	sort.Float64s(w)
	n := len(w)
	if n%2 == 1 {
		return w[n/2]
	}
	return (w[n/2-1] + w[n/2]) / 2
}

func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		sd += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sd / float64(len(x)-1))
}

// Pair is one base run and the head run measured next to it: every result
// each printed (a benchmark may print several).
type Pair struct {
	Base, Head []Sample
}

// PairedOptions says what CheckPaired compares.
type PairedOptions struct {
	// Head and Base are the full ids of the two commits; BaseRef names the
	// base for the report.
	Head, Base, BaseRef string
	// Dirty: the head was a working tree with uncommitted changes.
	Dirty bool
	// Config holds the rules; nil means DefaultConfig. Without rules,
	// DefaultRules apply.
	Config *Config
}

// CheckPaired gates head against base on paired runs (perfgate ab): per
// series (benchmark and identity labels) and relative rule, Paired on the
// pairs where both runs have the metric. A check fails when the estimated
// shift is worse than the rule's limit and P is below 0.01; worse than
// the limit but not significant is inconclusive; better than the limit
// and significant is improved. The metrics of one benchmark are strongly
// correlated, so there is no correction across them. Absolute rules apply
// to the median of head's values; a series with an invalid head run (too
// many failed requests) fails on validity. Every check's baseline is the
// base commit. Inconclusive checks make the report's verdict what the
// rules file's inconclusive policy says (Check's rule: warn, the default,
// is an inconclusive report).
func CheckPaired(pairs []Pair, opts PairedOptions) *Report {
	cfg := opts.Config
	if cfg == nil {
		cfg = DefaultConfig()
	}
	rules := cfg.Rules
	rep := &Report{
		Head: opts.Head, Dirty: opts.Dirty, Paired: true, Base: opts.Base, BaseRef: opts.BaseRef,
		Baseline: BaselineRef{Commit: opts.Base, MergeBase: opts.Base},
		Rules:    RulesInfo{File: cfg.File, Window: cfg.Baseline.Window, MaxDistance: cfg.Baseline.MaxDistance, MissingFails: cfg.MissingFails, Inconclusive: cfg.Inconclusive},
	}
	if len(rules) == 0 {
		rules = DefaultRules()
		rep.Rules.Defaults = true
	}
	rep.Rules.Count, rep.Rules.Flags = len(rules), flagRules(rules)
	id := newIdentity(cfg.IgnoreLabels)
	series, order := pairSeries(pairs, id)
	used := make([]bool, len(rules))
	for _, key := range order {
		ps := series[key]
		if why := ps.invalid(); why != "" {
			rep.Checks = append(rep.Checks, CheckResult{
				Benchmark: ps.bench, Labels: ps.labels, Metric: "(validity)", Label: "Validity", Rule: "valid result",
				Verdict: Fail, Method: MethodValidity, BaselineCommit: opts.Base,
				Reason: "head result is invalid: " + why,
			})
			continue
		}
		for ri, r := range rules {
			if !r.matches(ps.bench) {
				continue
			}
			bv, hv := ps.values(r.Metric)
			if len(hv) == 0 {
				continue
			}
			used[ri] = true
			cr := CheckResult{
				Benchmark: ps.bench, Labels: ps.labels, Metric: r.Metric, Label: metric.Get(r.Metric).Label,
				Rule: r.String(), Origin: r.Origin, BaselineCommit: opts.Base,
				Samples: SampleCounts{Baseline: countFinite(bv), Current: countFinite(hv)},
			}
			if cr.Label == "" {
				cr.Label = r.Metric
			}
			if r.Bound == Regression {
				pairedVerdict(&cr, r, bv, hv)
			} else {
				absoluteVerdict(&cr, r, hv)
			}
			requestPercentiles(&cr, ps.head, ps.base)
			rep.Checks = append(rep.Checks, cr)
		}
	}
	for ri, r := range rules {
		if !used[ri] && r.Origin != "default" {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("rule %s %s (%s) matched no result of either commit", r.Metric, r.String(), r.Origin))
		}
	}
	if w := resolutionWarning(rep.Checks); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	rep.Warnings = append(rep.Warnings, requestWarnings(rep.Checks)...)
	if len(rep.Checks) == 0 {
		rep.Warnings = append(rep.Warnings, "no rule applied to any metric the benchmark printed: nothing was compared; add a rule (--rule METRIC:PERCENT)")
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("paired: %d run(s) of each commit, interleaved on one machine; each head run is compared with the base run next to it (log ratio), shift = Hodges-Lehmann estimate, p = one-sided paired t test, alpha %g, no correction across the metrics of one benchmark (they are correlated)", len(pairs), pairedAlpha))
	rep.Testbeds = pairedTestbeds(pairs, id)
	rep.settle(cfg)
	return rep
}

// pairedTestbeds lists the testbeds head's runs were measured on, sorted.
func pairedTestbeds(pairs []Pair, id identity) []string {
	var out []string
	for i := range pairs {
		for j := range pairs[i].Head {
			if tb := id.testbed(&pairs[i].Head[j]); tb != "" && !contains(out, tb) {
				out = append(out, tb)
			}
		}
	}
	sort.Strings(out)
	return out
}

// pairedAlpha is the level of the paired test.
const pairedAlpha = 0.01

// pairedVerdict applies a max_regression rule to paired values.
func pairedVerdict(cr *CheckResult, r Rule, bv, hv []float64) {
	lower := r.Direction != metric.HigherIsBetter
	cr.Method = MethodPaired
	st := Paired(bv, hv, lower)
	cr.Baseline, cr.Current = num(medianFinite(bv)), num(medianFinite(hv))
	if st.Pairs == 0 {
		cr.Verdict = Pass
		cr.Unqualified = true
		cr.Reason = "no pair with positive values on both sides: not compared"
		return
	}
	cr.Change = num(st.Change)
	cr.P = num(st.P)
	if st.Pairs >= 2 {
		cr.Noise = num(st.Noise)
		cr.limit = r.Limit
		cr.Resolution = resolution(r.Limit, func(n int) float64 {
			if n < 2 {
				return math.NaN()
			}
			return tQuantile(float64(n-1), 1-pairedAlpha) * st.SD / math.Sqrt(float64(n))
		})
	}
	limit := math.Log1p(r.Limit / 100)
	worseBy := st.Shift
	if !lower {
		worseBy = -st.Shift
	}
	desc := fmt.Sprintf("%s (Hodges-Lehmann over %d pairs)", fmtChange(cr.Change), st.Pairs)
	switch {
	case worseBy > limit && st.P < pairedAlpha:
		cr.Verdict = Fail
		cr.Reason = fmt.Sprintf("%s, beyond the %s%% limit and significant (paired t test p = %.3g < %g)", desc, fmtNum(r.Limit), st.P, pairedAlpha)
	case worseBy > limit:
		cr.Verdict = Inconclusive
		cr.Reason = fmt.Sprintf("%s is beyond the %s%% limit but not significant (paired t test p = %.3g, alpha %g); run more pairs (--repeat) to decide", desc, fmtNum(r.Limit), st.P, pairedAlpha)
	case -worseBy > limit && st.PImproved < pairedAlpha:
		cr.Verdict = Improved
		cr.PImproved = num(st.PImproved)
		cr.Reason = fmt.Sprintf("%s, significant (paired t test p = %.3g)", desc, st.PImproved)
	default:
		cr.Verdict = Pass
	}
}

// absoluteVerdict applies a max or min rule to the median of head's values.
func absoluteVerdict(cr *CheckResult, r Rule, hv []float64) {
	cr.Method = MethodAbsolute
	cur := medianFinite(hv)
	cr.Current = num(cur)
	bad := false
	switch r.Bound {
	case Max:
		bad = cur > r.Limit || (r.Strict && cur == r.Limit)
	case Min:
		bad = cur < r.Limit || (r.Strict && cur == r.Limit)
	}
	cr.Verdict = Pass
	if bad {
		cr.Verdict = Fail
		cr.Reason = fmt.Sprintf("head's median %s is outside %s", fmtNum(cur), r.String())
	}
}

// pairedSeries is one series' values in pair order.
type pairedSeries struct {
	bench  string
	labels map[string]string
	base   []*Sample // per pair; nil where the base run lacked the series
	head   []*Sample
}

func pairSeries(pairs []Pair, id identity) (map[string]*pairedSeries, []string) {
	out := map[string]*pairedSeries{}
	var order []string
	get := func(s *Sample) *pairedSeries {
		k := id.key(s)
		ps := out[k]
		if ps == nil {
			ps = &pairedSeries{bench: s.Benchmark, labels: id.labels(s.Labels),
				base: make([]*Sample, len(pairs)), head: make([]*Sample, len(pairs))}
			out[k] = ps
			order = append(order, k)
		}
		return ps
	}
	for i := range pairs {
		for j := range pairs[i].Head {
			s := &pairs[i].Head[j]
			get(s).head[i] = s
		}
	}
	for i := range pairs {
		for j := range pairs[i].Base {
			s := &pairs[i].Base[j]
			if _, ok := out[id.key(s)]; ok {
				get(s).base[i] = s
			}
		}
	}
	sort.Strings(order)
	return out, order
}

// values returns the metric's values of the pairs where both runs are
// valid and have it; NaN marks a missing side, which Paired skips.
func (ps *pairedSeries) values(name string) (base, head []float64) {
	for i := range ps.head {
		h, b := ps.head[i], ps.base[i]
		if h == nil || selfInvalid(h) != "" {
			continue
		}
		hv, ok := h.Metrics[name]
		if !ok {
			continue
		}
		bv := math.NaN()
		if b != nil && selfInvalid(b) == "" {
			if v, ok := b.Metrics[name]; ok {
				bv = v
			}
		}
		base, head = append(base, bv), append(head, hv)
	}
	return base, head
}

// invalid says why head's runs of the series are invalid, when any is.
func (ps *pairedSeries) invalid() string {
	for _, h := range ps.head {
		if h != nil {
			if why := selfInvalid(h); why != "" {
				return why
			}
		}
	}
	return ""
}

func countFinite(xs []float64) int {
	n := 0
	for _, v := range xs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			n++
		}
	}
	return n
}

func medianFinite(xs []float64) float64 {
	var f []float64
	for _, v := range xs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			f = append(f, v)
		}
	}
	if len(f) == 0 {
		return math.NaN()
	}
	sort.Float64s(f)
	n := len(f)
	if n%2 == 1 {
		return f[n/2]
	}
	return (f[n/2-1] + f[n/2]) / 2
}
