package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/internal/robust"
	"github.com/perfgate/perfgate/metric"
)

// DefaultMaxRuns is the run budget of perfgate run --repeat auto: never
// more runs than --repeat 5 (with 10, the false alarms of the added looks
// exceed those of --repeat 5; TestAdaptiveErrorRates).
const DefaultMaxRuns = 5

// Adaptive spends benchmark runs only while the gate's verdict is
// undecided (perfgate run --repeat auto): it runs once, evaluates the
// gate on what is stored, and runs again while Undecided says more runs of
// head could still change a verdict, up to Max runs. It is built on
// gate.Check's public results (verdict, change, noise, sample counts), so
// it follows whatever statistics the gate uses.
//
// A sequential procedure looks at the data many times, and each look is a
// chance to stop on a fluke; two rules keep its error rates at those of a
// fixed --repeat 5 on lognormal noise (TestAdaptiveErrorRates) and on
// real histories (TestAdaptiveRealNoise: 0.49% against 0.34%, 2.9 runs
// per unchanged PR; against a base commit of five runs, 1.6% against
// 0.7%):
//   - a pass stops the session only when it is clear: the change, plus
//     PassZ standard errors of head's median, is still within the limit
//     (one lucky run of a regressed head passes otherwise);
//   - a fail stops the session only once head has MinFailRuns runs (4),
//     so that the verdict rests on a median that one unlucky run cannot
//     move: one such run fails a one-run gate now and then (that is its
//     false-alarm rate), with two runs their median is their mean, which
//     the unlucky one still drags over the line, and every look at the
//     data is one more chance to stop on a fluke (with 3 the false alarms
//     were twice those of --repeat 5);
//   - unless the fail is clear on two runs (clearFail): the change less
//     FailZ standard errors of head's median is still past the limit, so
//     that no single unlucky run explains it. A regression several noise
//     scales past the limit costs two runs, one near the limit four, an
//     unchanged head about two.
type Adaptive struct {
	// Max is the run budget (DefaultMaxRuns when 0).
	Max int
	// Rules are the rules the gate applied (the config's, or
	// gate.DefaultRules when it has none), for the limits of clear passes.
	Rules []gate.Rule
	// Measure runs the benchmark once (run i, 1-based) and stores it.
	Measure func(ctx context.Context, i int) error
	// Evaluate gates head on what is stored (gate.Check).
	Evaluate func(ctx context.Context) (*gate.Report, error)
	// Progress gets a line after each evaluation; nil is silent.
	Progress io.Writer
}

// MinFailRuns is how many runs of head a fail needs to stop the session,
// unless it is clear (clearFail) on MinClearFailRuns.
const MinFailRuns = 4

// MinClearFailRuns is how many runs of head a clear fail needs to stop the
// session: one run is never enough, whatever its size (one unlucky run of
// an unchanged head is what a one-run gate's false alarms are).
const MinClearFailRuns = 2

// FailZ is how many standard errors of head's median a clear fail keeps
// beyond the limit (one-sided 1%).
const FailZ = 2.326

// PassZ is how many standard errors of head's median a clear pass keeps
// from the limit (one-sided 5%).
const PassZ = 1.645

// AdaptiveResult is what an adaptive session spent and found.
type AdaptiveResult struct {
	Runs    int          // benchmark runs spent
	Decided bool         // no check is left that more runs could decide
	Report  *gate.Report // the last evaluation
	Open    []string     // the undecided checks at the end, described
}

// Run runs the session. An error of Measure or Evaluate ends it; the
// result then holds what was spent so far.
func (a *Adaptive) Run(ctx context.Context) (*AdaptiveResult, error) {
	max := a.Max
	if max <= 0 {
		max = DefaultMaxRuns
	}
	res := &AdaptiveResult{}
	for res.Runs < max {
		if err := a.Measure(ctx, res.Runs+1); err != nil {
			return res, err
		}
		res.Runs++
		rep, err := a.Evaluate(ctx)
		if err != nil {
			return res, err
		}
		res.Report = rep
		res.Open = Undecided(rep, a.Rules)
		if len(res.Open) == 0 && rep.Verdict == gate.Fail && res.Runs < min(MinFailRuns, max) && !clearFail(rep, a.Rules) {
			res.Open = []string{failPending(res.Runs, min(MinFailRuns, max))}
		}
		res.Decided = len(res.Open) == 0
		if a.Progress != nil {
			a.progress(res, max)
		}
		if res.Decided {
			break
		}
	}
	return res, nil
}

// failPending says when a fail on runs runs will stop the session: at
// MinClearFailRuns when it is clear beyond the noise (clearFail), else at
// confirm runs.
func failPending(runs, confirm int) string {
	if runs < MinClearFailRuns && MinClearFailRuns < confirm {
		return fmt.Sprintf("fail on %d run(s), to be confirmed on %d if it stays clear of the noise, else on %d", runs, MinClearFailRuns, confirm)
	}
	return fmt.Sprintf("fail on %d run(s), to be confirmed on %d (not clear of the noise yet)", runs, confirm)
}

func (a *Adaptive) progress(res *AdaptiveResult, max int) {
	switch {
	case res.Decided:
		fmt.Fprintf(a.Progress, "perfgate: run: decided after %d run(s): %s\n", res.Runs, res.Report.Verdict)
	case res.Runs < max:
		fmt.Fprintf(a.Progress, "perfgate: run: after %d run(s), undecided: %s; running again (at most %d)\n", res.Runs, strings.Join(res.Open, "; "), max)
	default:
		fmt.Fprintf(a.Progress, "perfgate: run: still undecided after %d run(s), the --max-runs budget: %s\n", res.Runs, strings.Join(res.Open, "; "))
	}
}

// Undecided lists the checks of a report that more runs of head could
// still decide, described for a message: inconclusive ones (beyond the
// threshold, within the noise); unqualified fails (the literal threshold,
// without a noise estimate); and passes of a relative rule that are not
// clear: the change in the bad direction plus PassZ standard errors of
// head's median (the check's noise over its head runs) reaches the limit.
// A pass without a noise estimate, a fail, improved, new (no baseline:
// more runs of head do not give one) and missing are decided. rules are
// the rules the report applied; a check whose rule is not among them
// cannot be judged clear, and counts as decided.
func Undecided(rep *gate.Report, rules []gate.Rule) []string {
	if rep == nil {
		return nil
	}
	var out []string
	for _, c := range rep.Checks {
		what := fmt.Sprintf("%s %s %s", c.Benchmark, c.Metric, c.Verdict)
		switch {
		case c.Verdict == gate.Inconclusive:
		case c.Verdict == gate.Fail && c.Unqualified:
		case c.Verdict == gate.Pass:
			margin, ok := passMargin(c, rules)
			if !ok || margin >= 0 {
				continue
			}
			what = fmt.Sprintf("%s %s pass, not yet clear", c.Benchmark, c.Metric)
		default:
			continue
		}
		if c.Change != nil {
			what += fmt.Sprintf(" (%+.1f%%)", *c.Change)
		}
		out = append(out, what)
	}
	return out
}

// clearFail reports whether a failing report may stop the session before
// MinFailRuns: head has MinClearFailRuns runs or more, and every failing
// check is a relative rule whose change, less FailZ standard errors of
// head's median, is still beyond its limit. A regression several times the
// noise past the limit then costs two runs, not four; a fail near the
// limit is still confirmed on four.
func clearFail(rep *gate.Report, rules []gate.Rule) bool {
	failing := 0
	for _, c := range rep.Checks {
		if c.Verdict != gate.Fail {
			continue
		}
		failing++
		if c.Samples.Current < MinClearFailRuns || c.Unqualified {
			return false
		}
		margin, ok := relMargin(c, rules, -FailZ)
		if !ok || margin > 0 {
			return false
		}
	}
	return failing > 0
}

// passMargin is how far, in percent, a passing relative check stays
// within its limit after PassZ standard errors of head's median; ok is
// false when the check has no rule, change or noise to judge by.
func passMargin(c gate.CheckResult, rules []gate.Rule) (float64, bool) {
	return relMargin(c, rules, PassZ)
}

// relMargin is the limit of a relative check less its change in the bad
// direction plus z standard errors of head's median, in percent: positive
// within the limit, negative beyond it. ok is false when the check has no
// rule, change or noise to judge by.
func relMargin(c gate.CheckResult, rules []gate.Rule, z float64) (float64, bool) {
	if c.Change == nil || c.Noise == nil || c.Samples.Current < 1 {
		return 0, false
	}
	for _, r := range rules {
		if r.Bound != gate.Regression || r.Metric != c.Metric || r.String() != c.Rule || r.Origin != c.Origin {
			continue
		}
		worse := *c.Change
		if r.Direction == metric.HigherIsBetter {
			worse = -worse
		}
		se := *c.Noise * math.Sqrt(robust.MedianVar(c.Samples.Current))
		return r.Limit - (worse + z*se), true
	}
	return 0, false
}
