package gate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/metric"

	"github.com/perfgate/perfgate/internal/natsort"
	"github.com/perfgate/perfgate/internal/robust"
)

// CheckOptions says what to check against what.
type CheckOptions struct {
	// Head is the full id of the commit under test.
	Head string
	// HeadSamples are the results to check; nil reads Head's stored
	// results (clean ones, or dirty ones when there are no others). A
	// working-tree check passes here, with Dirty set, only the dirty runs
	// of the tree as it is now (perfgate matches their working-tree hash).
	HeadSamples []Sample
	// Base is the full id of the base branch's tip; BaseRef its name, for
	// the report.
	Base, BaseRef string
	// Config holds the rules and baseline settings; nil means
	// DefaultConfig. Without rules, DefaultRules apply.
	Config *Config
	// MaxWalk bounds the first-parent commits read when results are
	// sparse (default 5000).
	MaxWalk int
	// Accepted are the changes recorded as intended (perfgate accept, and
	// a pull request accepted by label: an Acceptance at Head with no
	// benchmark or metric). See the package comment, "Accepted changes".
	Accepted []Acceptance
	// Unmeasured, when set, says that the working tree has changes no run
	// measured (its runs measured earlier edits), and how to measure it:
	// head's committed results are checked, and the verdict is
	// inconclusive whether they pass or fail, since they are about another
	// tree.
	Unmeasured string
}

// series is one benchmark under one set of identity labels.
type series struct {
	key    string
	bench  string
	labels map[string]string
	head   []Sample
	// testbed is the series' testbed ("" when not recorded); legacy is
	// its key without one (see candidates).
	testbed, legacy string

	// Found by collect: the baseline commit's valid runs and the window,
	// newest first (window[0] is the baseline commit when found).
	window  []windowPoint
	baseIdx int // walker index of the baseline commit; -1 when none
	dropped []string
	// onRecord are the dropped runs that a record (perfgate invalidate)
	// made invalid, not their own numbers: the history branch is written
	// by more hands than CI's, so the report shows them with the verdict.
	onRecord []string
	// fixedCount: the benchmark sends a fixed number of requests (see
	// fixedRequests), so fewer completed requests make a run invalid.
	fixedCount bool
}

type windowPoint struct {
	idx  int
	runs []*Sample
}

type checker struct {
	cfg      *Config
	rules    []Rule
	id       identity
	w        *walker
	skip     int // first walker index that may be a baseline
	rep      *Report
	headSHA  string
	ruleUsed []bool
	// noBaseline is the warning of a check that found no baseline at all.
	noBaseline string

	headTestbeds, headLegacy map[string]bool // see noteHeadTestbeds

	accepted []Acceptance
	walkIdx  map[string]int // commit -> walker index, made when asked
	all      []*series      // head's series, in report order

	// disagree are the baseline runs far from the others at their commit
	// (see noteDisagreement), by series and metric, in report order.
	disagree      map[string]string
	disagreeOrder []string

	// loadWarnings are the load curves' caveats (see loadCurves);
	// checkCurve names each check's load curve (see curveIdent).
	loadWarnings []string
	checkCurve   []string

	// uncomparedWarn are the warnings of series the base branch measured
	// under other labels or only invalidly (notComparable), once each.
	uncomparedWarn []string
}

// Check gates a commit: for every series of the head results and every
// rule, it finds the baseline (see the package comment), applies the
// statistics and returns the report. Errors are about the inputs (no
// results at head, wrapped ErrNoResults) or come from Graph and History.
func Check(ctx context.Context, g Graph, h History, opts CheckOptions) (*Report, error) {
	if opts.Head == "" || opts.Base == "" {
		return nil, fmt.Errorf("gate.Check needs the resolved commit ids of head and base (got %q and %q)", opts.Head, opts.Base)
	}
	c, rep := newChecker(opts)
	h = WithCapacity(h, c.cfg.SLOs, c.cfg.IgnoreLabels)
	head, err := headSamples(h, opts)
	if err != nil {
		return nil, err
	}
	head, left := leaveOutOnRecord(head)
	if len(head) == 0 {
		return nil, noResultsf("commit %s has no valid results: %s; measure it again (perfgate run --name BENCH -- CMD, or perfgate ingest FILE), or withdraw an invalidation (perfgate invalidate --undo RUN_ID --reason TEXT)",
			shortSHA(opts.Head), strings.Join(left, "; "))
	}
	if len(left) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("left out at head, as in baselines (the other runs decide): %s", strings.Join(left, "; ")))
	}
	if opts.HeadSamples != nil {
		// Stored heads come through h, which derives their capacity.
		head = append(head[:len(head):len(head)], deriveCapacity(head, c.cfg.SLOs, c.id)...)
	}
	allDirty := rep.noteHead(head, opts.Head)
	mb, err := g.MergeBase(opts.Head, opts.Base)
	if err != nil {
		return nil, fmt.Errorf("merge-base of %s and %s: %w", shortSHA(opts.Head), baseName(opts), err)
	}
	rep.Baseline.MergeBase = mb
	if mb == opts.Head && !allDirty {
		// Head is on the base branch: its own results are what is checked,
		// so the baseline search starts at its first parent.
		c.skip = 1
	}
	byKey, all := c.group(head)
	c.noteHeadTestbeds(all)
	if err := c.findBaselines(ctx, g, h, mb, all, opts.MaxWalk); err != nil {
		return nil, err
	}
	primary := c.primaryBaseline(all, mb)
	if c.skip == 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("head %s is on %s: compared with its first-parent ancestors", shortSHA(opts.Head), baseName(opts)))
	}
	c.evaluateAll(all, byKey, primary)
	c.loadCurves(head)
	if n := c.sloNote(); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
	globWarnings := c.ruleWarnings(all)
	c.all = all
	tbFirst, tbWarnings := c.testbedWarnings(all) // before warnings(): it may replace noBaseline
	rep.Warnings = append(append(append(tbFirst, c.warnings()...), tbWarnings...), globWarnings...)
	if w := c.capacityWarning(); w != "" {
		rep.Warnings = append(rep.Warnings, w)
	}
	rep.Warnings = append(rep.Warnings, c.loadWarnings...)
	rep.Warnings = append(rep.Warnings, requestWarnings(rep.Checks)...)
	if noRule := noRuleWarning(rep, head); noRule != "" {
		// A warning, not a note: a gate that checks nothing passes
		// every change, and a CI log should say so where it is seen.
		rep.Warnings = append(rep.Warnings, noRule)
	}
	rep.settle(c.cfg)
	if opts.Unmeasured != "" {
		// The committed results are no verdict on the tree the user is
		// looking at, failing or passing: inconclusive either way.
		rep.Unmeasured = opts.Unmeasured
		rep.Verdict = Inconclusive
	}
	return rep, nil
}

// newChecker makes the checker of opts and its empty report.
func newChecker(opts CheckOptions) (*checker, *Report) {
	cfg := opts.Config
	if cfg == nil {
		cfg = DefaultConfig()
	}
	c := &checker{cfg: cfg, rules: cfg.Rules, id: newIdentity(cfg.IgnoreLabels), headSHA: opts.Head, accepted: opts.Accepted}
	rep := &Report{
		Head:    opts.Head,
		BaseRef: opts.BaseRef,
		Base:    opts.Base,
		SiteURL: cfg.SiteURL,
		Rules:   RulesInfo{File: cfg.File, Window: cfg.Baseline.Window, MaxDistance: cfg.Baseline.MaxDistance, MissingFails: cfg.MissingFails, Inconclusive: cfg.Inconclusive},
	}
	c.rep = rep
	if len(c.rules) == 0 {
		c.rules = DefaultRules()
		rep.Rules.Defaults = true
	}
	rep.Rules.Count, rep.Rules.Flags = len(c.rules), flagRules(c.rules)
	c.ruleUsed = make([]bool, len(c.rules))
	return c, rep
}

// leaveOutOnRecord drops head's runs invalidated on record (perfgate
// invalidate): they are left out at head as in baselines. It returns the
// runs kept, and one line per run left out, with who and why.
func leaveOutOnRecord(head []Sample) (kept []Sample, left []string) {
	for _, s := range head {
		if s.OnRecord {
			left = append(left, fmt.Sprintf("run %s of %s (%s)", s.ID[:min(8, len(s.ID))], s.Benchmark, s.Invalid))
			continue
		}
		kept = append(kept, s)
	}
	return kept, left
}

// headSamples returns head's results: those opts gives, else the stored
// committed ones (the working tree's when there are no others).
func headSamples(h History, opts CheckOptions) ([]Sample, error) {
	head := opts.HeadSamples
	if head == nil {
		got, err := h.Samples([]string{opts.Head})
		if err != nil {
			return nil, fmt.Errorf("reading stored results of %s: %w", shortSHA(opts.Head), err)
		}
		all := got[opts.Head]
		for _, s := range all {
			if !s.Dirty {
				head = append(head, s)
			}
		}
		if len(head) == 0 {
			head = all
		}
	}
	if len(head) == 0 {
		return nil, noResultsf("commit %s has no stored results; measure it first (perfgate run --name BENCH -- CMD, or perfgate ingest FILE)",
			shortSHA(opts.Head))
	}
	return head, nil
}

// noteHead records in the report what head's results are (measured
// before their commit, on a dirty tree); it reports whether all are dirty.
func (rep *Report) noteHead(head []Sample, headSHA string) bool {
	allDirty := true
	for _, s := range head {
		if s.Before != "" && s.Commit == headSHA {
			rep.MeasuredBefore = s.Before
		}
		if s.Dirty {
			rep.Dirty = true
		} else {
			allDirty = false
		}
	}
	return allDirty
}

// group puts head's results into series, in report order.
func (c *checker) group(head []Sample) (map[string]*series, []*series) {
	byKey := map[string]*series{}
	var all []*series
	for i := range head {
		s := &head[i]
		k := c.id.key(s)
		sr := byKey[k]
		if sr == nil {
			sr = &series{key: k, bench: s.Benchmark, labels: c.id.labels(s.Labels), baseIdx: -1, testbed: c.id.testbed(s), legacy: c.id.legacyKey(s)}
			byKey[k] = sr
			all = append(all, sr)
		}
		sr.head = append(sr.head, *s)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].bench != all[j].bench {
			return all[i].bench < all[j].bench
		}
		// A sweep's points in the order of their loads (8 before 16).
		return natsort.Less(all[i].key, all[j].key)
	})
	return byKey, all
}

// findBaselines walks far enough for every series' baseline and window:
// when every series is measured near the merge-base (the common case) the
// first page suffices; sparse results double the walk until they are
// found or max_distance is searched.
func (c *checker) findBaselines(ctx context.Context, g Graph, h History, mb string, all []*series, maxWalk int) error {
	cfg := c.cfg
	c.w = newWalker(g, h, c.id, mb, maxWalk)
	need := c.skip + 1 + max(cfg.Baseline.Window, 1)
	for {
		if err := c.w.extend(ctx, need); err != nil {
			return err
		}
		satisfied := true
		for _, sr := range all {
			if !c.collect(sr) {
				satisfied = false
			}
		}
		if satisfied || c.w.capped() {
			return nil
		}
		need = max(2*need, cfg.Baseline.MaxDistance+1+max(cfg.Baseline.Window, 1))
	}
}

// primaryBaseline sets the report's baseline, the commit most series
// used, and returns its walker index; -1 (and the no-baseline warning)
// when no series found one.
func (c *checker) primaryBaseline(all []*series, mb string) int {
	counts := map[int]int{}
	for _, sr := range all {
		if sr.baseIdx >= 0 {
			counts[sr.baseIdx]++
		}
	}
	primary := -1
	for idx, n := range counts {
		if primary < 0 || n > counts[primary] || (n == counts[primary] && idx < primary) {
			primary = idx
		}
	}
	if primary >= 0 {
		c.rep.Baseline.Commit = c.w.commits[primary].SHA
		c.rep.Baseline.Distance = primary
	} else {
		// Said first, as a warning: "PASS, none failed" with no history
		// behind it reads as a pass (a fresh clone, a first CI run).
		c.noBaseline = fmt.Sprintf("no baseline: no valid result of these benchmarks within %d first-parent commits of the merge-base %s, so nothing was compared and every check is new; fetch the shared history (perfgate sync --pull-only) or measure the base branch first",
			c.cfg.Baseline.MaxDistance, shortSHA(mb))
	}
	return primary
}

// evaluateAll gives every series' checks, the missing ones and the notes
// of invalid earlier results.
func (c *checker) evaluateAll(all []*series, byKey map[string]*series, primary int) {
	rep := c.rep
	rep.Checks = make([]CheckResult, 0, len(all)*len(c.rules))
	for _, sr := range all {
		checks := c.evaluate(sr)
		said := false // the warning of an uncompared series says it all
		if sr.baseIdx < 0 {
			m := c.mismatch(sr)
			said = c.notComparable(checks, sr, m)
			if m != nil && !said {
				c.noteMismatch(sr, m)
			}
		}
		rep.Checks = append(rep.Checks, checks...)
		if len(sr.dropped) > 0 && !said {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: invalid earlier results not used as baseline: %s", seriesName(sr.bench, sr.labels), strings.Join(sr.dropped, "; ")))
		}
	}
	if primary >= 0 {
		c.missing(primary, byKey)
	}
	if len(rep.Checks) == 0 {
		rep.Checks = nil // as appending nothing left it: "checks": null
	}
	for i := range rep.Checks {
		// The window's values are kept for the checks a reader will chart.
		if v := rep.Checks[i].Verdict; v != Fail && v != Inconclusive && v != Improved && v != Accepted {
			rep.Checks[i].History = nil
		}
	}
}

// ruleWarnings notes the rules that matched no metric and returns the
// warnings of the benchmark globs that match no benchmark at head.
func (c *checker) ruleWarnings(all []*series) []string {
	rep := c.rep
	var globWarnings []string
	for i, used := range c.ruleUsed {
		r := c.rules[i]
		if !used && !rep.Rules.Defaults && r.Benchmark != "" && !anyMatches(r, all) {
			// A glob that names no benchmark is a mistake, not a rule
			// that happens not to apply: say so louder than a note.
			globWarnings = append(globWarnings, fmt.Sprintf("rule %s %s (%s): no benchmark at head matches %q; the benchmarks are %s; fix the rule's benchmark glob (path.Match syntax)",
				r.Metric, r, r.Origin, r.Benchmark, benchList(all)))
			continue
		}
		if !used && !rep.Rules.Defaults {
			where := "any result"
			if r.Benchmark != "" {
				where = fmt.Sprintf("any benchmark matching %q", r.Benchmark)
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("rule %s %s (%s) matched no metric in %s", r.Metric, r, r.Origin, where))
		}
	}
	return globWarnings
}

// noRuleWarning is the warning of a report with no check: the metrics
// head has and a rule to add; "" when some check applied.
func noRuleWarning(rep *Report, head []Sample) string {
	if len(rep.Checks) > 0 {
		return ""
	}
	seen := map[string]bool{}
	for _, s := range head {
		for m := range s.Metrics {
			seen[m] = true
		}
	}
	names := sortedKeys(seen)
	sortMetrics(names)
	if len(names) > 8 {
		names = append(names[:8], "...")
	}
	example := "mean_ttft_ms:5%"
	if len(names) > 0 {
		example = names[0] + ":5%"
		if d := metric.Get(names[0]).Direction; d != metric.LowerIsBetter && d != metric.HigherIsBetter {
			example += ":lower"
		}
	}
	return fmt.Sprintf("no rule applies to these results (metrics: %s), so this gate checked nothing; add one to the rules file or with --rule %q",
		strings.Join(names, ", "), example)
}

// settle counts the checks per verdict and sets the report's verdict: a
// failed check fails it, and so does a missing one with missing: fail;
// undecided checks follow the inconclusive policy.
func (rep *Report) settle(cfg *Config) {
	rep.Summary = Summary{}
	rep.Verdict = Pass
	for _, cr := range rep.Checks {
		rep.Summary.Checks++
		switch cr.Verdict {
		case Pass:
			rep.Summary.Pass++
		case Fail:
			rep.Summary.Fail++
			rep.Verdict = Fail
		case Inconclusive:
			rep.Summary.Inconclusive++
		case Improved:
			rep.Summary.Improved++
		case New:
			rep.Summary.New++
		case Missing:
			rep.Summary.Missing++
			if cfg.MissingFails {
				rep.Verdict = Fail
			}
		case Accepted:
			rep.Summary.Accepted++
		}
	}
	if rep.Summary.Checks == 0 {
		// No rule applied: nothing was gated, which is not a pass.
		rep.Verdict = Inconclusive
	}
	if rep.Verdict == Pass && rep.Summary.Inconclusive > 0 {
		switch cfg.Inconclusive {
		case InconclusiveFail:
			rep.Verdict = Fail
		case InconclusivePass:
		default:
			rep.Verdict = Inconclusive
		}
	}
}

func baseName(opts CheckOptions) string {
	if opts.BaseRef != "" {
		return opts.BaseRef
	}
	return shortSHA(opts.Base)
}

func seriesName(bench string, labels map[string]string) string {
	if len(labels) == 0 {
		return bench
	}
	return bench + " {" + labelString(labels) + "}"
}

// collect finds a series' baseline and window among the commits walked so
// far; it reports whether the walk went far enough for it.
func (c *checker) collect(sr *series) bool {
	w := c.w
	window := max(c.cfg.Baseline.Window, 1)
	var cands []windowPoint
	for _, x := range c.candidates(sr) {
		if x.idx < c.skip || x.s.Dirty {
			continue
		}
		if n := len(cands); n > 0 && cands[n-1].idx == x.idx {
			cands[n-1].runs = append(cands[n-1].runs, x.s)
			continue
		}
		cands = append(cands, windowPoint{idx: x.idx, runs: []*Sample{x.s}})
	}
	// Validity: drop runs that failed too many requests, then runs whose
	// completed count fell below the window's median.
	sr.dropped = sr.dropped[:0]
	sr.onRecord = sr.onRecord[:0]
	var valid []windowPoint
	for _, p := range cands {
		var ok []*Sample
		for _, s := range p.runs {
			if why := selfInvalid(s); why != "" {
				if p.idx <= c.cfg.Baseline.MaxDistance {
					sr.dropped = append(sr.dropped, fmt.Sprintf("%s (%s)", shortSHA(w.commits[p.idx].SHA), why))
					if s.Invalid != "" {
						sr.onRecord = append(sr.onRecord, fmt.Sprintf("%s at %s (%s)", seriesName(sr.bench, sr.labels), shortSHA(w.commits[p.idx].SHA), s.Invalid))
					}
				}
				continue
			}
			ok = append(ok, s)
		}
		if len(ok) > 0 {
			valid = append(valid, windowPoint{idx: p.idx, runs: ok})
		}
	}
	var comp []float64
	var near []*Sample
	for _, p := range valid[:min(len(valid), window+c.cfg.Baseline.MaxDistance)] {
		for _, s := range p.runs {
			near = append(near, s)
			if v, ok := s.Metrics["completed"]; ok {
				comp = append(comp, v)
			}
		}
	}
	sr.fixedCount = fixedRequests(sr.head, near)
	if len(comp) >= 3 && sr.fixedCount {
		ref := robust.Median(comp)
		kept := valid[:0]
		for _, p := range valid {
			var ok []*Sample
			for _, s := range p.runs {
				if why := completedDrop(s, ref, "window median"); why != "" {
					if p.idx <= c.cfg.Baseline.MaxDistance {
						sr.dropped = append(sr.dropped, fmt.Sprintf("%s (%s)", shortSHA(w.commits[p.idx].SHA), why))
					}
					continue
				}
				ok = append(ok, s)
			}
			if len(ok) > 0 {
				kept = append(kept, windowPoint{idx: p.idx, runs: ok})
			}
		}
		valid = kept
	}
	sr.baseIdx = -1
	sr.window = nil
	// The baseline is the nearest valid result within max_distance.
	if len(valid) > 0 && valid[0].idx <= c.cfg.Baseline.MaxDistance {
		sr.baseIdx = valid[0].idx
		sr.window = valid[:min(len(valid), window)]
	}
	if sr.baseIdx >= 0 && len(sr.window) >= window {
		return true // the nearest valid result and a full window: nothing further matters
	}
	searched := len(w.commits) > c.cfg.Baseline.MaxDistance || w.capped()
	if !searched {
		return false
	}
	if sr.baseIdx < 0 {
		return true
	}
	// Invalid candidates do not extend the search without bound: after
	// twice the window's measured commits of this series, valid or not,
	// the window is what they gave (a history where most runs were
	// invalid walked to the 5,000-commit cap before).
	return len(sr.window) >= window || w.capped() || len(cands) >= 2*window
}

// values returns the metric's finite values in runs: a NaN or an
// infinity (an imported history can hold one) is no measurement.
func values(runs []Sample, name string) []float64 {
	var out []float64
	for i := range runs {
		if v, ok := runs[i].Metrics[name]; ok && finite(v) {
			out = append(out, v)
		}
	}
	return out
}

// pvalues is values over pointers.
func pvalues(runs []*Sample, name string) []float64 {
	var out []float64
	for _, s := range runs {
		if v, ok := s.Metrics[name]; ok && finite(v) {
			out = append(out, v)
		}
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// evaluate applies every rule to one series.
func (c *checker) evaluate(sr *series) []CheckResult {
	var baseRuns []*Sample
	var baseSHA string
	if sr.baseIdx >= 0 {
		baseRuns = sr.window[0].runs
		baseSHA = c.w.commits[sr.baseIdx].SHA
	}
	mk := func(r Rule, name string) CheckResult {
		cr := CheckResult{Benchmark: sr.bench, Labels: sr.labels, Testbed: sr.testbed, Metric: name, Label: metric.Get(name).Label, Rule: r.String(), Origin: r.Origin}
		if baseSHA != "" {
			d := sr.baseIdx
			cr.BaselineCommit, cr.Distance = baseSHA, &d
		}
		return cr
	}

	// Validity first: an invalid head is a failure, and its speed is not
	// compared.
	var why []string
	var bad string
	invalid := map[int]bool{} // head runs at fault
	for i := range sr.head {
		if r := selfInvalid(&sr.head[i]); r != "" {
			why, bad = append(why, r), "failed"
			invalid[i] = true
		}
	}
	if len(baseRuns) > 0 && sr.fixedCount {
		if bc := pvalues(baseRuns, "completed"); len(bc) > 0 {
			ref := robust.Median(bc)
			for i := range sr.head {
				if r := completedDrop(&sr.head[i], ref, "baseline"); r != "" {
					why = append(why, r)
					if bad == "" {
						bad = "completed"
					}
					invalid[i] = true
				}
			}
		}
	}
	if len(why) > 0 {
		cr := mk(Rule{}, bad)
		cr.Rule = "valid"
		if bad == "failed" {
			cr.Rule = fmt.Sprintf("failed <= %.0f%% of requests", 100*maxFailedFraction)
		} else {
			cr.Rule = fmt.Sprintf("completed >= %.0f%% of baseline", 100*(1-maxCompletedDrop))
		}
		cr.Origin = "validity"
		cr.Verdict, cr.Method = Fail, MethodValidity
		// Current is the value of the runs at fault: the median over
		// every run would show "0 failed" next to "50 failed" when one
		// of several repetitions broke.
		var faulty []Sample
		for i := range sr.head {
			if invalid[i] {
				faulty = append(faulty, sr.head[i])
			}
		}
		cr.Current = num(robust.Median(values(faulty, bad)))
		if bv := pvalues(baseRuns, bad); len(bv) > 0 {
			cr.Baseline = num(robust.Median(bv))
		}
		cr.Samples = SampleCounts{Baseline: len(baseRuns), Current: len(sr.head)}
		which := "invalid result: "
		if len(faulty) < len(sr.head) {
			which = fmt.Sprintf("%d of %d runs at head are invalid: ", len(faulty), len(sr.head))
		}
		cr.Reason = which + strings.Join(dedupe(why), "; ") + "; its other metrics are not compared (fix the failures, then measure again)"
		return []CheckResult{cr}
	}

	out := make([]CheckResult, 0, len(c.rules))
	for ri, r := range c.rules {
		if !r.matches(sr.bench) {
			continue
		}
		hv := values(sr.head, r.Metric)
		bv := pvalues(baseRuns, r.Metric)
		if len(hv) == 0 && len(bv) == 0 {
			continue
		}
		c.ruleUsed[ri] = true
		cr := mk(r, r.Metric)
		cr.limit = r.Limit
		cr.Samples = SampleCounts{Baseline: len(bv), Current: len(hv)}
		if len(bv) > 0 {
			cr.Baseline = num(robust.Median(bv))
		}
		c.noteDisagreement(sr, r.Metric, baseRuns, baseSHA, sideBaseline)
		c.noteDisagreement(sr, r.Metric, pointers(sr.head), c.headSHA, sideHead)
		requestPercentiles(&cr, pointers(sr.head), baseRuns)
		if len(hv) == 0 {
			cr.Verdict = Missing
			cr.Reason = fmt.Sprintf("%s was measured at the baseline %s but is absent from head", r.Metric, shortSHA(baseSHA))
			out = append(out, cr)
			continue
		}
		cur := robust.Median(hv)
		cr.Current = num(cur)
		if c.judgeRule(&cr, r, sr, cur, hv, bv, baseSHA) {
			if a := c.headAcceptance(sr.bench, r.Metric); a != nil {
				accept(&cr, a)
			}
		}
		out = append(out, cr)
	}
	return out
}

// judgeRule gives a rule's verdict on a series measured on both sides
// (head's values hv with median cur, the baseline's bv): an absolute bound, no baseline,
// or a relative rule against the window, cut at the newest accepted
// change of the metric. It reports whether an acceptance of head's change
// may then stand in for the verdict (not where a required baseline is
// missing).
func (c *checker) judgeRule(cr *CheckResult, r Rule, sr *series, cur float64, hv, bv []float64, baseSHA string) bool {
	if r.Bound != Regression {
		c.absolute(cr, r, cur)
		return true
	}
	if len(bv) == 0 {
		cr.Verdict = New
		if baseSHA == "" {
			cr.Reason = fmt.Sprintf("no valid result of this series within %d commits of the merge-base", c.cfg.Baseline.MaxDistance)
		} else {
			cr.Reason = fmt.Sprintf("the baseline %s has no %s", shortSHA(baseSHA), r.Metric)
		}
		if c.cfg.RequireBaseline {
			cr.Verdict = Fail
			cr.Reason += "; require_baseline is set, so a check without a baseline fails: record the base branch's results (perfgate sync pulls them)"
			return false
		}
		return true
	}
	rsr := sr
	if acc, idx := c.cutAcceptance(sr.bench, r.Metric); acc != nil {
		cut, ok := cutWindow(sr, idx)
		a := *acc
		cr.CutAt = &a
		if !ok {
			// Every result of the window predates the accepted change:
			// the old level is no reference, and there is no new one.
			cr.Verdict = New
			cr.Reason = fmt.Sprintf("no result of this series since the change %s accepted at %s (%s); the baseline %s predates it, so nothing is compared: measure the base branch",
				r.Metric, shortSHA(acc.Commit), acc.Text(), shortSHA(baseSHA))
			if c.cfg.RequireBaseline {
				// An acceptance does not stand in for a measurement.
				cr.Verdict = Fail
				cr.Reason += "; require_baseline is set, so a check with no baseline since the accepted change fails"
				return false
			}
			return true
		}
		rsr = cut
		c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("%s %s: window cut at %s, a change %s; older results are not the reference",
			seriesName(sr.bench, sr.labels), r.Metric, shortSHA(acc.Commit), acc.Shown()))
	}
	c.relative(cr, r, rsr, hv, bv)
	return true
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// absolute applies a max or min bound to the head's median.
func (c *checker) absolute(cr *CheckResult, r Rule, cur float64) {
	cr.Method = MethodAbsolute
	if cr.Baseline != nil && *cr.Baseline != 0 {
		cr.Change = num(100 * (cur / *cr.Baseline - 1))
	}
	ok := true
	switch {
	case r.Bound == Max && r.Strict:
		ok = cur < r.Limit
	case r.Bound == Max:
		ok = cur <= r.Limit
	case r.Bound == Min && r.Strict:
		ok = cur > r.Limit
	case r.Bound == Min:
		ok = cur >= r.Limit
	}
	if ok {
		cr.Verdict = Pass
		return
	}
	cr.Verdict = Fail
	cr.Reason = fmt.Sprintf("%s is %s, outside the bound %s", r.Metric, fmtNum(cur), r)
}

// missing reports the series measured at the report's baseline commit that
// head lacks, unless head measured the same benchmark under other labels
// (a mismatch, reported as such).
func (c *checker) missing(primary int, byKey map[string]*series) {
	// A benchmark whose head series found no baseline is a mismatch.
	headBench := map[string]bool{}
	for _, sr := range byKey {
		if sr.baseIdx < 0 {
			headBench[sr.bench] = true
		}
	}
	sha := c.w.commits[primary].SHA
	groups := map[string][]*Sample{}
	var keys []string
	for _, k := range c.w.samples[sha] {
		if k.s.Dirty || byKey[k.key] != nil || headBench[k.s.Benchmark] || c.notHeads(k) {
			continue
		}
		if groups[k.key] == nil {
			keys = append(keys, k.key)
		}
		groups[k.key] = append(groups[k.key], k.s)
	}
	sort.Strings(keys)
	for _, key := range keys {
		runs := groups[key]
		s0 := runs[0]
		labels := c.id.labels(s0.Labels)
		cr := CheckResult{Benchmark: s0.Benchmark, Labels: labels, Testbed: c.id.testbed(s0), Verdict: Missing, BaselineCommit: sha, Distance: &primary,
			Rule: "benchmark present", Origin: "coverage", Samples: SampleCounts{Baseline: len(runs)}}
		var gated []string
		for ri, r := range c.rules {
			if r.matches(s0.Benchmark) && len(pvalues(runs, r.Metric)) > 0 {
				c.ruleUsed[ri] = true
				gated = append(gated, r.Metric)
			}
		}
		cr.Reason = fmt.Sprintf("benchmark %s was measured at the baseline %s but not at head: a regression in coverage", seriesName(s0.Benchmark, labels), shortSHA(sha))
		if len(gated) > 0 {
			cr.Reason += fmt.Sprintf(" (%d rules gated it: %s)", len(gated), strings.Join(dedupe(gated), ", "))
		}
		c.rep.Checks = append(c.rep.Checks, cr)
	}
}

// mismatch records a series without a baseline whose benchmark was
// measured nearby on another testbed or under other identity labels, and
// returns it (nil when none).
func (c *checker) mismatch(sr *series) *Mismatch {
	if m := c.testbedMismatch(sr); m != nil {
		return m
	}
	limit := min(len(c.w.commits), c.cfg.Baseline.MaxDistance+1)
	for i := c.skip; i < limit; i++ {
		sha := c.w.commits[i].SHA
		for _, k := range c.w.samples[sha] {
			if k.s.Dirty || k.s.Benchmark != sr.bench || k.key == sr.key || c.id.legacyKey(k.s) == sr.legacy {
				continue
			}
			bl := c.id.labels(k.s.Labels)
			mm := Mismatch{Benchmark: sr.bench, HeadLabels: sr.labels, BaselineLabels: bl, Commit: sha, Diff: labelDiff(sr.labels, bl)}
			c.rep.Mismatches = append(c.rep.Mismatches, mm)
			return &c.rep.Mismatches[len(c.rep.Mismatches)-1]
		}
	}
	return nil
}

// noteMismatch notes a series left without a baseline by a mismatch
// whose checks stayed as they were (an absolute bound decides without a
// baseline), so the report still says what was not compared.
func (c *checker) noteMismatch(sr *series, m *Mismatch) {
	what := "under other labels"
	if m.HeadTestbed != "" {
		what = "on another testbed"
	}
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("%s: not compared with %s, measured %s (%s)", seriesName(sr.bench, sr.labels), shortSHA(m.Commit), what, m.Diff))
}

// NotComparable values of CheckResult.Uncompared: why a check whose
// benchmark the base branch measured compared nothing.
const (
	UncomparedTestbed = "testbed"
	UncomparedLabels  = "labels"
	UncomparedInvalid = "invalid"
)

// notComparable makes the new checks of a series without a baseline
// inconclusive when the base branch does have results of it that could
// not be compared (m: measured on another testbed or under other labels;
// or every nearby result invalid): a gate that compared nothing has not
// passed anything. New stays for series the base branch never measured.
// Each check's reason says why in a line; the remedy is said once, in a
// warning (testbedWarnings for testbeds, c.uncomparedWarn otherwise). It
// reports whether a check was made inconclusive.
func (c *checker) notComparable(checks []CheckResult, sr *series, m *Mismatch) bool {
	name := seriesName(sr.bench, sr.labels)
	var kind, short, full string
	switch {
	case m != nil && m.HeadTestbed != "":
		kind = UncomparedTestbed
		short = fmt.Sprintf("the base branch measured this series on testbed %q, head on %q", m.BaselineTestbed, m.HeadTestbed)
	case m != nil:
		kind = UncomparedLabels
		short = fmt.Sprintf("the base branch measured %s under other identity labels (%s)", sr.bench, m.Diff)
		full = fmt.Sprintf("%s not compared: the base branch measured %s at %s under other identity labels (%s), which are never compared; if head's labels are right, measure the base branch with them (the first such result becomes the baseline), or list the label in ignore_labels if it must not separate series",
			name, sr.bench, shortSHA(m.Commit), m.Diff)
	case len(sr.dropped) > 0:
		kind = UncomparedInvalid
		short = "every result of this series on the base branch nearby is invalid"
		full = fmt.Sprintf("%s not compared: every result of this series on the base branch within %d commits is invalid (%s); measure the base branch again, then check",
			name, c.cfg.Baseline.MaxDistance, strings.Join(sr.dropped, "; "))
	default:
		return false
	}
	converted := false
	for i := range checks {
		cr := &checks[i]
		if cr.Verdict != New || cr.BaselineCommit != "" {
			continue
		}
		cr.Verdict, cr.Uncompared = Inconclusive, kind
		cr.Reason = "not compared: " + short + "; the warning says what to do"
		converted = true
	}
	if converted && full != "" {
		c.uncomparedWarn = append(c.uncomparedWarn, full)
	}
	return converted
}

// warnings collects the statistical caveats of a report, each a sentence
// saying what limits the verdict and what to do about it.
func (c *checker) warnings() []string {
	rep := c.rep
	var out []string
	if c.noBaseline != "" {
		out = append(out, c.noBaseline)
	}
	var unq, inc, cut int
	for _, cr := range rep.Checks {
		if cr.Unqualified {
			unq++
		}
		if cr.Verdict == Inconclusive && cr.Uncompared == "" {
			inc++
		}
		if cr.SegmentStart != "" && cr.Verdict != Pass {
			cut++
		}
	}
	if unq > 0 {
		why := fmt.Sprintf("fewer than %d measured base-branch commits in the window and fewer than %d runs at the baseline", minWindow, minRepeats)
		if c.cfg.Baseline.Window < minWindow {
			why = fmt.Sprintf("baseline.window is %d, under %d", c.cfg.Baseline.Window, minWindow)
		}
		out = append(out, fmt.Sprintf("%s unqualified: no noise estimate (%s), so the literal threshold decided and run-to-run noise alone can fail or pass them; measure more base-branch commits, or repeat the runs (perfgate run --repeat %d)",
			plural(unq, "check is", "checks are"), why, minRepeats))
	}
	if inc > 0 {
		out = append(out, fmt.Sprintf("%s inconclusive: worse than the threshold, but not clearly beyond the measured noise; %s",
			plural(inc, "check is", "checks are"), decideAdvice(rep.Checks)))
	}
	if w := resolutionWarning(rep.Checks); w != "" {
		out = append(out, w)
	}
	if w := c.onRecordWarning(); w != "" {
		out = append(out, w)
	}
	out = append(out, c.disagreeWarnings()...)
	if cut > 0 {
		out = append(out, fmt.Sprintf("%s compared with the base branch's level since a change point, not with its whole window: the base branch itself moved",
			plural(cut, "check was", "checks were")))
	}
	out = append(out, c.uncomparedWarn...)
	if rep.Dirty {
		out = append(out, "head's results were measured on a working tree with uncommitted changes, not on a commit")
	}
	return out
}

// plural formats a count with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// decideAdvice says what would decide the inconclusive checks: the most
// runs a side any of them needs, when more runs can decide them.
func decideAdvice(checks []CheckResult) string {
	most, stuck, used := 0, 0, 0
	for _, cr := range checks {
		if cr.Verdict != Inconclusive || cr.Uncompared != "" {
			continue
		}
		used = max(used, cr.Samples.Current)
		if cr.RunsToDecide == 0 {
			stuck++
		}
		most = max(most, cr.RunsToDecide)
	}
	switch {
	case most > used:
		return fmt.Sprintf("about %d runs would decide (perfgate run --repeat %d, or --repeat auto; each check's reason says where)", most, most)
	case stuck > 0:
		return "more runs alone cannot decide (see each check's reason): compare both commits on one machine (perfgate ab), or let the base branch's next results show its level"
	}
	return "see each check's reason for what would decide it"
}

// anyMatches reports whether r's benchmark glob matches a series' benchmark.
func anyMatches(r Rule, all []*series) bool {
	for _, sr := range all {
		if r.matches(sr.bench) {
			return true
		}
	}
	return false
}

// benchList names the distinct benchmarks of the series, quoted, sorted.
func benchList(all []*series) string {
	seen := map[string]bool{}
	var names []string
	for _, sr := range all {
		if !seen[sr.bench] {
			seen[sr.bench] = true
			names = append(names, fmt.Sprintf("%q", sr.bench))
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// onRecordWarning lists the base branch's runs that invalidations on
// record kept out of this verdict's baselines and windows, with who and
// why: what silences a gate is shown where it is decided.
func (c *checker) onRecordWarning() string {
	var runs []string
	for _, sr := range c.all {
		runs = append(runs, sr.onRecord...)
	}
	runs = dedupe(runs)
	if len(runs) == 0 {
		return ""
	}
	return fmt.Sprintf("%s of the base branch %s invalidated on record and not used as a baseline or in a window, which changes this verdict if they were sound: %s",
		plural(len(runs), "run", "runs"), map[bool]string{true: "was", false: "were"}[len(runs) == 1], strings.Join(runs, "; "))
}

// pointers returns pointers to the elements of ss.
func pointers(ss []Sample) []*Sample {
	out := make([]*Sample, len(ss))
	for i := range ss {
		out[i] = &ss[i]
	}
	return out
}
