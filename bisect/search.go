package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/perfgate/perfgate/internal/robust"
)

// Measurer runs the benchmark at one commit of the searched range.
type Measurer interface {
	// Measure runs the benchmark once at commit i (0 is the good end, n
	// the bad end) and returns the metric's value, or several when one
	// run printed the benchmark several times. An error that matches
	// ErrSkip (errors.Is) means the commit cannot be tested (exit code
	// 125); the search goes on without it. Any other error stops it.
	Measure(ctx context.Context, i int) ([]float64, error)
}

// MeasureFunc adapts a function to Measurer.
type MeasureFunc func(ctx context.Context, i int) ([]float64, error)

// Measure calls f.
func (f MeasureFunc) Measure(ctx context.Context, i int) ([]float64, error) { return f(ctx, i) }

// ErrSkip is matched by a Measurer's error for a commit that cannot be
// tested, as exit code 125 means to git bisect run.
var ErrSkip = errors.New("cannot test this commit")

// SkipError is an ErrSkip with the reason shown in the report.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string        { return "skipped: " + e.Reason }
func (e *SkipError) Is(target error) bool { return target == ErrSkip }

// Defaults of Options.
const (
	DefaultConfidence    = 0.95
	DefaultEndRuns       = 1
	DefaultMaxEndRuns    = 6
	DefaultMaxCommitRuns = 10
	DefaultAlpha         = 0.01
)

// DefaultBudget is the run budget for a range of n commits when none is
// given: room for the ends, one decision per halving, and repeats where
// the noise makes a measurement ambiguous.
func DefaultBudget(n int) int {
	return 12 + 4*int(math.Ceil(math.Log2(float64(max(n, 2)))))
}

// Options tune Search. Zero values mean the defaults.
type Options struct {
	// Confidence is the posterior probability of one commit at which the
	// search stops (default 0.95).
	Confidence float64
	// MaxRuns is the run budget (default DefaultBudget(n)); runs of the
	// ends count, stored values do not.
	MaxRuns int
	// EndRuns is how many values each end needs before the search starts
	// (default 2: the least that measures the noise); MaxEndRuns how many
	// it may take to tell a small step from noise (default 6, doubled
	// while a step is emerging, p < 0.1).
	EndRuns, MaxEndRuns int
	// MaxCommitRuns caps the values taken at one intermediate commit: a
	// commit still ambiguous after that many is left out (default 10).
	MaxCommitRuns int
	// Threshold is the smallest relative change between the ends that
	// counts as a step (0.03 is 3%); 0 accepts any change the noise
	// resolves. On a linear scale (values <= 0) it is relative to the
	// good level.
	Threshold float64
	// Alpha is the significance level at which the ends must differ
	// (default 0.01).
	Alpha float64
	// History holds runs of the same benchmark, metric and testbed at
	// commits outside the range, one slice per commit: their spread
	// around each commit's median teaches the noise's shape (a second
	// mode, wild runs; see noise.go) before the search has runs of its
	// own. Their levels are not used; slices of one run teach nothing.
	History [][]float64
	// Progress, when set, is called before and after every run.
	Progress func(Progress)

	// variant replaces parts of the search's policy, for the measurements
	// of the trade-offs behind them (BenchmarkIssueFrontier); the zero
	// value is the search as documented.
	variant variant
}

// variant is a change to the search's policy that BenchmarkIssueFrontier
// measures against the defaults: each trades runs in the clear scenarios
// against wrong answers where the noise has a second mode.
type variant struct {
	// noLean turns off the rerun of a lone run that leans towards the
	// other level (leaning).
	noLean bool
	// trustLone names a culprit whose side of the step rests on one run
	// of it (the policy before issue 27; see confirmCulprit).
	trustLone bool
	// noLeanPair turns off the rerun of two or three runs that lean
	// together towards the other level (leaningPair).
	noLeanPair bool
	// tiltCap, when positive, stops the noise prior's tilt (see
	// noiseDFDiscount) at tiltCap times the noise estimate: the prior is
	// scale-free above it.
	tiltCap float64
}

func (o Options) withDefaults(n int) Options {
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = DefaultConfidence
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultBudget(n)
	}
	if o.EndRuns <= 0 {
		o.EndRuns = DefaultEndRuns
	}
	if o.MaxEndRuns < o.EndRuns {
		o.MaxEndRuns = max(DefaultMaxEndRuns, o.EndRuns)
	}
	if o.MaxCommitRuns <= 0 {
		o.MaxCommitRuns = DefaultMaxCommitRuns
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	return o
}

// Progress reports one run of the search.
type Progress struct {
	Index  int  // the commit measured
	Run    int  // 1-based number of this run
	Budget int  // the run budget
	Ends   bool // measuring an end, before the search proper
	Done   bool // false before the run, true after it
	// After the run: its values, or why the commit was skipped.
	Values []float64
	Skip   string
	// PBad is the probability that the commit is at the bad level, before
	// the run (after it, when Done); Confidence the best commit's.
	PBad       float64
	Confidence float64
}

// Verdict says how a search ended.
type Verdict string

// Verdicts.
const (
	// Found: one commit reached the confidence.
	Found Verdict = "found"
	// OutOfRuns: the budget ran out first; Culprit is the best guess.
	OutOfRuns Verdict = "budget"
	// NoStep: the ends do not differ beyond the noise (or the threshold).
	NoStep Verdict = "no-step"
	// Untestable: the culprit is one of a range of commits that cannot
	// be told apart, because the commits between them were skipped (or
	// have no stored values).
	Untestable Verdict = "untestable"
)

// Result is the outcome of Search.
type Result struct {
	Verdict Verdict
	// Culprit is the index (1..n) of the most probable first commit at
	// the bad level, 0 when the verdict names none; Confidence is its
	// posterior probability.
	Culprit    int
	Confidence float64
	// First and Last bound the commits that may hold the change when the
	// verdict is Untestable or OutOfRuns: the most probable run of commits
	// that no measurement separates; RangeConfidence is their total
	// probability.
	First, Last     int
	RangeConfidence float64
	// Runs is the number of benchmark runs the search made; Budget its
	// limit. Stored values cost nothing.
	Runs, Budget int
	// Good and Bad are the two levels (medians of each side, on the
	// metric's own scale), Change the relative change bad/good-1 (the
	// difference bad-good when the values are not all positive), and
	// ChangeSE its standard error on the same footing.
	Good, Bad, Change, ChangeSE float64
	// Relative tells whether Change is relative (a log scale was used).
	Relative bool
	// Noise is one run's standard deviation (relative when Relative) and
	// NoiseDF its degrees of freedom; NoiseFrom says what measured it.
	Noise     float64
	NoiseDF   int
	NoiseFrom string
	// PValue is the two-sided p-value of the step between the two sides.
	PValue float64
	// Reason explains a NoStep or Untestable verdict in one sentence.
	Reason string
	// Evaluated lists every commit with values or a skip, in order.
	Evaluated []Evaluation
	// Candidates are the commits with posterior probability >= 1%, most
	// probable first.
	Candidates []Candidate
}

// Evaluation is one commit the search looked at.
type Evaluation struct {
	Index   int
	Values  []float64 // every value, stored ones first
	Stored  int       // how many of Values came from the history
	Runs    int       // runs this search made here (skipped ones included)
	Ignored []float64 // values left out as outliers (also in Values)
	Skip    string    // why the commit could not be tested; "" when it could
	PBad    float64   // posterior probability that it is at the bad level
}

// Candidate is a commit with its posterior probability of being the culprit.
type Candidate struct {
	Index       int
	Probability float64
}

// Search looks for the commit among 1..n where the metric moved from the
// good end's level (commit 0) to the bad end's (commit n). known holds
// values already stored per index; m runs the benchmark where more are
// needed, or is nil to search the known values alone (no runs).
//
// It first measures both ends until the step between them is established
// (or shown to be within noise), then keeps a posterior over the culprit
// and measures the commit that splits its mass in half, which repeats a
// commit whose values are ambiguous, until one commit holds
// opts.Confidence, the budget runs out, or only untestable commits are
// left. With a cancelled context it returns the context's error.
func Search(ctx context.Context, n int, known map[int][]float64, m Measurer, opts Options) (*Result, error) {
	if n < 1 {
		return nil, fmt.Errorf("bisect: no commits between good and bad")
	}
	opts = opts.withDefaults(n)
	if m == nil {
		opts.MaxRuns = 0
	}
	s := &searcher{
		ctx: ctx, m: m, opts: opts,
		smp:    sample{n: n, values: make([][]float64, n+1), skipped: make([]bool, n+1), stops: m != nil, history: opts.History, tiltCap: opts.variant.tiltCap},
		stored: make([]int, n+1), runs: make([]int, n+1), skip: make([]string, n+1),
	}
	for i, vs := range known {
		if i < 0 || i > n {
			return nil, fmt.Errorf("bisect: known values for commit %d, outside 0..%d", i, n)
		}
		for _, v := range vs {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				s.smp.values[i] = append(s.smp.values[i], v)
			}
		}
		s.stored[i] = len(s.smp.values[i])
	}
	res, err := s.run()
	if res != nil {
		s.finish(res)
	}
	return res, err
}

type searcher struct {
	ctx    context.Context
	m      Measurer
	opts   Options
	smp    sample
	stored []int
	runs   []int
	skip   []string
	total  int
	last   *posterior
	lastOK bool
	lastN  int     // values behind last
	endsP  float64 // p-value of the step between the ends
}

// posterior returns the posterior of the current sample, computed again
// only when values were added since the last call.
func (s *searcher) posterior() (*posterior, bool) {
	n := 0
	for _, vs := range s.smp.values {
		n += len(vs)
	}
	if s.last == nil || n != s.lastN {
		s.last, s.lastOK = s.smp.posterior()
		s.lastN = n
	}
	return s.last, s.lastOK
}

// EndError is returned when an end of the range cannot be measured: it
// has no stored values (a search without a Measurer), it cannot be tested
// (Err matches ErrSkip), or its run failed.
type EndError struct {
	Good bool // the good end; else the bad one
	Err  error
}

func (e *EndError) Error() string {
	end := "bad"
	if e.Good {
		end = "good"
	}
	return fmt.Sprintf("the %s end cannot be measured: %v", end, e.Err)
}

func (e *EndError) Unwrap() error { return e.Err }

// measure runs commit i once. skipped reports an untestable commit.
func (s *searcher) measure(i int, ends bool) (skipped bool, err error) {
	if err := s.ctx.Err(); err != nil {
		return false, err
	}
	s.total++
	s.runs[i]++
	pr := Progress{Index: i, Run: s.total, Budget: s.opts.MaxRuns, Ends: ends}
	if s.last != nil && s.lastOK {
		pr.PBad = s.last.pBad(i)
		_, pr.Confidence = s.last.best()
	} else if i == s.smp.n {
		pr.PBad = 1
	}
	s.report(pr)
	vs, err := s.m.Measure(s.ctx, i)
	if err != nil {
		if errors.Is(err, ErrSkip) {
			s.smp.skipped[i] = true
			s.skip[i] = skipReason(err)
			pr.Done, pr.Skip = true, s.skip[i]
			s.report(pr)
			return true, nil
		}
		return false, err
	}
	var clean []float64
	for _, v := range vs {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			clean = append(clean, v)
		}
	}
	if len(clean) == 0 {
		return false, fmt.Errorf("commit %d: the run gave no value", i)
	}
	s.smp.values[i] = append(s.smp.values[i], clean...)
	pr.Done, pr.Values = true, clean
	if p, ok := s.posterior(); ok {
		pr.PBad = p.pBad(i)
		_, pr.Confidence = p.best()
	}
	s.report(pr)
	return false, nil
}

func skipReason(err error) string {
	var se *SkipError
	if errors.As(err, &se) {
		return se.Reason
	}
	return err.Error()
}

func (s *searcher) report(p Progress) {
	if s.opts.Progress != nil {
		s.opts.Progress(p)
	}
}

func (s *searcher) budgetLeft() int { return s.opts.MaxRuns - s.total }

func (s *searcher) run() (*Result, error) {
	res := &Result{Budget: s.opts.MaxRuns}
	// The ends: a first value each (stored ones count).
	if err := s.measureEnds(); err != nil {
		return res, err
	}
	established := s.m == nil // stored values: the step is tested at the end
	for {
		p, ok := s.posterior()
		if !ok {
			if s.m == nil {
				res.Verdict = NoStep
				res.Reason = "the stored results cannot measure the noise: they need repeated runs of a commit, or results at four commits or more"
				return res, nil
			}
			// Two values, two levels: a third value measures the noise.
			if err := s.measureMore(res, nil); err != nil || res.Verdict != "" {
				return res, err
			}
			continue
		}
		if !established {
			var err error
			if established, err = s.checkStep(res, p); err != nil || res.Verdict != "" || !established {
				if err != nil || res.Verdict != "" {
					return res, err
				}
				if err := s.measureMore(res, p); err != nil || res.Verdict != "" {
					return res, err
				}
				continue
			}
		}
		k, pk := p.best()
		i := -1
		if pk >= s.opts.Confidence {
			if i = s.confirm(p, k); i < 0 || s.budgetLeft() <= 0 {
				res.Verdict, res.Culprit, res.Confidence = Found, k, pk
				return res, nil
			}
		} else {
			i = s.pick(p)
		}
		if i < 0 {
			g := p.bestGap()
			if g.hi-g.lo > 1 {
				res.Verdict = Untestable
				res.First, res.Last, res.RangeConfidence = g.lo+1, g.hi, g.mass
				res.Culprit, res.Confidence = k, pk
				return res, nil
			}
			// Every commit that could move the posterior was measured
			// MaxCommitRuns times and is still ambiguous.
			s.outOfRuns(res, p)
			res.Reason = fmt.Sprintf("the commits around the culprit are still ambiguous after %d runs each: their level may lie between good and bad (two changes close together?)", s.opts.MaxCommitRuns)
			return res, nil
		}
		if s.budgetLeft() <= 0 {
			s.outOfRuns(res, p)
			return res, nil
		}
		if _, err := s.measure(i, false); err != nil {
			return res, err
		}
	}
}

// outOfRuns ends the search short of the confidence: the most probable
// commit, and the shortest run of commits that holds the target
// confidence, which is the answer the report gives: one commit only has
// the probability it has.
func (s *searcher) outOfRuns(res *Result, p *posterior) {
	res.Verdict = OutOfRuns
	res.Culprit, res.Confidence = p.best()
	res.First, res.Last, res.RangeConfidence = p.credibleRange(s.opts.Confidence)
}

// confirm returns a commit to run again before culprit k is named, or
// -1. The culprit always needs two runs (confirmCulprit). When the runs
// show noise that is not one Gaussian (a second mode, or wild runs: the
// learned shape has either), a single run can pass for the other level, so
// the last measured commit before the culprit needs two runs too, and each
// end three, before the confidence is trusted: a slow run of a good commit
// would otherwise name it. Clean noise costs no run here beyond the
// culprit's.
func (s *searcher) confirm(p *posterior, k int) int {
	if s.m == nil {
		return -1
	}
	g := p.gapOf(k)
	if i := s.confirmCulprit(g); i >= 0 {
		return i
	}
	if i := s.leaning(p, g); i >= 0 {
		return i
	}
	if i := s.disagreeing(p, g); i >= 0 {
		return i
	}
	if i := s.leaningPair(p, g); i >= 0 {
		return i
	}
	// A culprit next to an end whose level rests on that end's lone run:
	// a wild run of the end would put every commit on the other side.
	for _, i := range []int{g.lo, g.hi} {
		if (i == 0 || i == s.smp.n) && len(s.smp.values[i]) < 2 {
			return i
		}
	}
	if !p.shape.irregular() {
		return -1
	}
	for _, i := range []int{g.hi, g.lo} {
		if i <= 0 || i >= s.smp.n || s.smp.skipped[i] {
			continue
		}
		if len(s.smp.values[i]) < 2 {
			return i
		}
	}
	// The levels come from the ends' medians first: with a second mode,
	// one run of an end may sit in it and put that level where the other
	// end's runs fall.
	for _, i := range []int{0, s.smp.n} {
		if len(s.smp.values[i]) < confirmEndRuns {
			return i
		}
	}
	return -1
}

// confirmCulprit returns the culprit when one run is all that puts it at
// the bad level, or -1: the culprit's lone run is always run again. A slow
// run of a good commit in a second mode lies within the noise of the bad
// level and looks exactly like a run of the culprit until either is run
// again, and noise with a second mode may show none before that run (issue
// 15's bimodal scenario: 20% of runs 10% slow). So a second run of the
// culprit is the one run every answer pays for (issue 27 chose it): 0.2 to
// 0.35 runs a search when the step is clear, since most culprits have a
// second run by then, and it cut the wrong found answers in that scenario
// from 6.3% to 5.3% over 1,000 trials (BenchmarkIssueFrontier, before
// leaningPair). The commit before it needs no such run: a slow run of a
// good commit is what the wrong answers hang on, and its two runs are
// leaningPair's. The bad end is the culprit's own level and is confirmed
// in confirm (an end resting on one run).
func (s *searcher) confirmCulprit(g *gap) int {
	if s.opts.variant.trustLone || g.hi >= s.smp.n || s.smp.skipped[g.hi] || len(s.smp.values[g.hi]) >= 2 {
		return -1
	}
	return g.hi
}

// leaning returns the commit either side of the culprit's gap whose side
// rests on one run that leans towards the other level by more than
// leanZ noise standard deviations, or -1: the one value the answer hangs
// on is then the likeliest to be a run of a second mode that the runs so
// far have not shown (a slow run of a good commit sits just below the bad
// level), and one more run of it is cheap insurance.
func (s *searcher) leaning(p *posterior, g *gap) int {
	if s.opts.variant.noLean {
		return -1
	}
	dir := 1.0
	if p.bad < p.good {
		dir = -1
	}
	if p.sigma <= 0 {
		return -1
	}
	for _, c := range []struct {
		i     int
		level float64
		sign  float64
	}{{g.hi, p.bad, -dir}, {g.lo, p.good, dir}} {
		if c.i <= 0 || c.i >= s.smp.n || s.smp.skipped[c.i] || len(p.ys[c.i]) != 1 {
			continue
		}
		nLevel := p.goodN
		if c.level == p.bad {
			nLevel = p.badN
		}
		if c.sign*(p.ys[c.i][0]-c.level)/(p.sigma*math.Sqrt(1+robust.MedianVar(max(nLevel, 1)))) > leanZ {
			return c.i
		}
	}
	return -1
}

// leaningPair returns the commit either side of the culprit's gap whose two
// or three runs, on average, lean towards the other level by more than
// leanPairZ standard errors of that mean's distance from its level, or -1.
// Once the culprit has two runs (confirmCulprit), the wrong answers left in
// noise with a second mode are a good commit whose runs were all slow: a
// good commit's slow mode (10% in issue 15's bimodal scenario) falls short
// of the bad level (12%) by a little, and two runs of it agree with each
// other, so disagreeing does not see them, but their mean sits below the
// bad level by more than the noise of a mean of two. A commit of the bad
// level leans that far about one time in fifty.
func (s *searcher) leaningPair(p *posterior, g *gap) int {
	if s.opts.variant.noLeanPair || p.sigma <= 0 {
		return -1
	}
	dir := 1.0
	if p.bad < p.good {
		dir = -1
	}
	for _, c := range []struct {
		i, nLevel   int
		level, sign float64
	}{{g.hi, p.badN, p.bad, -dir}, {g.lo, p.goodN, p.good, dir}} {
		if c.i <= 0 || c.i >= s.smp.n || s.smp.skipped[c.i] {
			continue
		}
		y := p.ys[c.i]
		if len(y) < 2 || len(y) >= disagreeMaxRuns || len(s.smp.values[c.i]) >= s.opts.MaxCommitRuns {
			continue
		}
		se := p.sigma * math.Sqrt(1/float64(len(y))+robust.MedianVar(max(c.nLevel, 1)))
		if c.sign*(mean(y)-c.level)/se > leanPairZ {
			return c.i
		}
	}
	return -1
}

// leanPairZ is how far, in standard errors, the mean of a commit's two or
// three runs next to the step may lean towards the other level before it
// is run again (leaningPair). At 2, it cuts the wrong found answers that
// a second mode leaves after the culprit's repeat by about a seventh (51
// to 44 of about 965 on BenchmarkIssueFrontier's seeds, 46 to 39 on
// TestBimodalWrongAnswers'), for 0.05-0.07 runs a search where the step
// is clear; at 1.5, by about two fifths (to 30) for 0.3 runs.
const leanPairZ = 2.0

// disagreeing returns the commit either side of the culprit's gap whose
// two or three runs disagree by more than the noise explains (their range
// beyond spreadZ noise standard deviations), or -1: two runs of a good
// commit that both sit in a slow mode near the bad level agree with that
// level but not with each other, and a further run settles which they
// are. Noise that is one Gaussian asks for it about one time in twenty
// that the culprit's neighbours have two runs.
func (s *searcher) disagreeing(p *posterior, g *gap) int {
	if p.sigma <= 0 {
		return -1
	}
	for _, i := range []int{g.hi, g.lo} {
		if i <= 0 || i >= s.smp.n || s.smp.skipped[i] {
			continue
		}
		y := p.ys[i]
		if len(y) < 2 || len(y) >= disagreeMaxRuns || len(s.smp.values[i]) >= s.opts.MaxCommitRuns {
			continue
		}
		if (slices.Max(y)-slices.Min(y))/(p.sigma*math.Sqrt2) > spreadZ {
			return i
		}
	}
	return -1
}

// spreadZ is how far apart, in standard deviations of a difference of two
// runs, the runs of a commit next to the step may lie before it is run
// again; disagreeMaxRuns is how many runs end that.
const (
	spreadZ         = 2.0
	disagreeMaxRuns = 4
)

// leanZ is how far towards the other level a lone run next to the step
// may lie before it is run again, in standard deviations of its distance
// from a level that few runs measure (the run's noise and the level's
// uncertainty together). A slow run of a good commit that a second mode
// puts near the bad level leans towards the good one by the mode's miss
// of the step; one that leans little is let through, and the issue's
// bimodal scenario shows the cost (about 4% of its found answers wrong).
const leanZ = 0.7

// confirmEndRuns is how many values each end needs before a culprit is
// named when the noise is irregular.
const confirmEndRuns = 3

// pick returns the commit to measure next: the testable intermediate
// commit whose "bad" probability is nearest one half, or -1 when no such
// commit is uncertain enough to be worth a run. The probability it halves
// is the one at the most likely noise (posterior.atSigma), not averaged
// over the noise: while a few runs leave the noise uncertain, the average
// keeps every commit near one half and the runs would creep along the
// range instead of halving it; the stated confidence stays the average's.
func (s *searcher) pick(p *posterior) int {
	if s.m == nil {
		return -1
	}
	best, bestScore := -1, math.Inf(1)
	for i := 1; i < s.smp.n; i++ {
		if s.smp.skipped[i] || len(s.smp.values[i]) >= s.opts.MaxCommitRuns {
			continue
		}
		q := p.pBad(i)
		if math.Min(q, 1-q) < 1e-3 {
			continue
		}
		if p.atSigma != nil {
			q = pBadIn(p.atSigma, i, p.n)
		}
		if d := math.Abs(q - 0.5); d < bestScore-1e-9 {
			best, bestScore = i, d
		}
	}
	return best
}

// The step between good and bad is established when the difference of
// the two levels (every value of the ends and of the commits settled on
// either side) is significant at Alpha and at least minStepT standard
// errors: a step known to within a quarter of its size, so that the
// levels it sorts commits by are right. Until then the search goes on as
// usual for searchFirst runs, which measure the noise and the levels as
// well as repeats of the ends would and move the search forward too; then
// the ends are run, the one with fewer values first, up to MaxEndRuns
// values each (twice that while a step is emerging, p < futility). Ends
// that still do not differ mean no step.
const (
	minStepT    = 4.0
	futility    = 0.1
	searchFirst = 4
)

// measureEnds gives each end its first EndRuns values.
func (s *searcher) measureEnds() error {
	n := s.smp.n
	for _, i := range []int{0, n} {
		if s.m == nil {
			if len(s.smp.values[i]) == 0 {
				return &EndError{Good: i == 0, Err: errors.New("no stored values")}
			}
			continue
		}
		for len(s.smp.values[i]) < s.opts.EndRuns {
			if s.budgetLeft() <= 0 {
				return fmt.Errorf("the run budget (%d) is too small to measure both ends %d times", s.opts.MaxRuns, s.opts.EndRuns)
			}
			if err := s.measureEnd(i); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *searcher) measureEnd(i int) error {
	skipped, err := s.measure(i, true)
	if err != nil {
		return &EndError{Good: i == 0, Err: err}
	}
	if skipped {
		return &EndError{Good: i == 0, Err: fmt.Errorf("%s: %w", s.skip[i], ErrSkip)}
	}
	return nil
}

// checkStep tells whether the step between the ends is established, and
// sets res.Verdict to NoStep when it surely stays below the threshold.
func (s *searcher) checkStep(res *Result, p *posterior) (bool, error) {
	good, bad := p.settled()
	nz := noise{sigma: p.sigma, df: max(len(good)+len(bad)+p.innerValues()-2, 1)}
	if p.sigma <= 0 {
		nz = p.noise
	}
	diff, se, pv := stepTest(good, bad, nz)
	s.endsP = pv
	change := relChange(p.sc, mean(good), diff)
	significant := pv < s.opts.Alpha && math.Abs(change) >= s.opts.Threshold
	if significant && math.Abs(diff) >= minStepT*se {
		return true, nil
	}
	if s.sidesEstablish(p) {
		return true, nil
	}
	// A change whose upper confidence bound is below the threshold will
	// not reach it with more runs.
	if s.opts.Threshold > 0 {
		hi := math.Abs(diff) + tQuantile(1-s.opts.Alpha/2, nz.df)*se
		if math.Abs(relChange(p.sc, mean(good), hi)) < s.opts.Threshold {
			res.Verdict = NoStep
			res.Reason = fmt.Sprintf("the change between the ends, %+.2g%%, is below the threshold of %s", 100*change, pct(s.opts.Threshold))
		}
	}
	return false, nil
}

// sidesEstablish tells whether the step is established by every value on
// either side of the most probable split, not only by the ends and the
// settled commits: with one run per end, a clear step is clear from the
// first runs between them, and running the ends again would be wasted.
// The split is chosen by the data, so the test is corrected for the
// number of splits the measured commits allow, and the two sides' pooled
// spread (which a misplaced run inflates) is the noise.
func (s *searcher) sidesEstablish(p *posterior) bool {
	if s.m == nil || len(p.gaps) < 3 {
		return false
	}
	good, bad, _, _ := p.sides(p.bestGap().lo)
	nz := sidesNoise(good, bad, noise{})
	if nz.df < 2 {
		return false
	}
	diff, se, pv := stepTest(good, bad, nz)
	change := relChange(p.sc, mean(good), diff)
	return pv*float64(len(p.gaps)) < s.opts.Alpha && math.Abs(change) >= s.opts.Threshold && math.Abs(diff) >= minStepT*se
}

// middle returns the testable commit nearest the middle of the range
// that has no value yet, or -1.
func (s *searcher) middle() int {
	n := s.smp.n
	for d := 0; d <= n/2; d++ {
		for _, i := range []int{n/2 - d, n/2 + d} {
			if i > 0 && i < n && !s.smp.skipped[i] && len(s.smp.values[i]) == 0 {
				return i
			}
		}
	}
	return -1
}

// measureMore makes one run while the step is not established: the
// search's own choice for the first searchFirst runs between the ends,
// then the end with fewer values. It sets res.Verdict to NoStep when the
// ends have had all their runs.
func (s *searcher) measureMore(res *Result, p *posterior) error {
	n := s.smp.n
	inner := 0
	for i := 1; i < n; i++ {
		inner += s.runs[i]
	}
	if inner < searchFirst && s.budgetLeft() > 0 {
		i := -1
		if p != nil {
			i = s.pick(p)
		} else {
			i = s.middle()
		}
		if i >= 0 {
			_, err := s.measure(i, false)
			return err
		}
	}
	ng, nb := len(s.smp.values[0]), len(s.smp.values[n])
	limit := s.opts.MaxEndRuns
	if s.endsP < futility {
		limit *= 2 // a step is emerging: give it more runs
	}
	if (ng >= limit && nb >= limit) || s.budgetLeft() <= 0 {
		res.Verdict = NoStep
		if s.budgetLeft() <= 0 {
			res.Reason = "the run budget ran out before the ends could be told apart from the noise"
		} else {
			res.Reason = fmt.Sprintf("the ends do not differ beyond the noise after %d and %d runs", ng, nb)
		}
		return nil
	}
	i := 0
	if nb < ng {
		i = n
	}
	return s.measureEnd(i)
}

// relChange converts a difference on the model's scale to the reported
// change: relative on a log scale, else relative to the good level (or
// absolute when that is zero).
func relChange(sc scale, goodMean, diff float64) float64 {
	if sc.log {
		return math.Expm1(diff)
	}
	if goodMean == 0 {
		return diff
	}
	return diff / math.Abs(goodMean)
}

// finish fills in the levels, the evaluated commits and the candidates,
// and demotes a culprit whose two sides do not differ beyond the noise.
func (s *searcher) finish(res *Result) {
	res.Runs = s.total
	p, ok := s.smp.posterior()
	if p == nil {
		return
	}
	res.Relative = p.sc.log
	res.Noise, res.NoiseDF, res.NoiseFrom = p.noise.sigma, p.noise.df, p.noise.from
	if ok {
		res.Noise = p.sigma
	}
	n := s.smp.n
	switch {
	case !ok || res.Verdict == NoStep:
		// The ends alone.
		good, bad := p.ys[0], p.ys[n]
		if len(good) > 0 && len(bad) > 0 {
			diff, se, pv := stepTest(good, bad, p.noise)
			res.Good, res.Bad = p.sc.from(robust.Median(good)), p.sc.from(robust.Median(bad))
			res.Change, res.ChangeSE = change(p.sc, mean(good), diff, se)
			res.PValue = pv
		}
	default:
		// The levels the posterior sorted the commits by, from the ends
		// and every commit settled on either side.
		diff := p.bad - p.good
		se := p.sigma * math.Sqrt(robust.MedianVar(p.goodN)+robust.MedianVar(p.badN))
		res.Good, res.Bad = p.sc.from(p.good), p.sc.from(p.bad)
		res.Change, res.ChangeSE = change(p.sc, p.good, diff, se)
		res.PValue = s.endsP
		if s.m == nil {
			// The stored ends may hold one value each: test the step with
			// every value on either side of the most probable split. That
			// split was chosen by the data, so the test is corrected for
			// the number of splits the measured commits allow.
			good, bad, _, _ := p.sides(p.bestGap().lo)
			_, _, res.PValue = stepTest(good, bad, sidesNoise(good, bad, p.noise))
			reason := ""
			switch {
			case res.PValue*float64(len(p.gaps)) >= s.opts.Alpha:
				reason = "the stored values on either side of the most likely culprit do not differ beyond the noise"
			case math.Abs(res.Change) < s.opts.Threshold:
				reason = fmt.Sprintf("the change between the two sides is below the threshold of %s", pct(s.opts.Threshold))
			}
			if reason != "" {
				res.Verdict, res.Culprit, res.Confidence = NoStep, 0, 0
				res.First, res.Last, res.RangeConfidence = 0, 0, 0
				res.Reason = reason
			}
		}
	}
	for i := 0; i <= n; i++ {
		if len(s.smp.values[i]) == 0 && s.skip[i] == "" {
			continue
		}
		e := Evaluation{Index: i, Values: s.smp.values[i], Stored: s.stored[i], Runs: s.runs[i], Skip: s.skip[i]}
		for j, ign := range p.ignored[i] {
			if ign {
				e.Ignored = append(e.Ignored, s.smp.values[i][j])
			}
		}
		if ok {
			e.PBad = p.pBad(i)
		}
		res.Evaluated = append(res.Evaluated, e)
	}
	if ok && res.Verdict != NoStep {
		for k := 1; k <= n; k++ {
			if q := p.prob(k); q >= 0.01 {
				res.Candidates = append(res.Candidates, Candidate{k, q})
			}
		}
		res.Candidates = sortCandidates(res.Candidates)
	}
}

// change converts a difference of levels and its standard error on the
// model's scale to the reported relative change and its error.
func change(sc scale, good, diff, se float64) (float64, float64) {
	if sc.log {
		return math.Expm1(diff), se * math.Exp(diff)
	}
	return relChange(sc, good, diff), math.Abs(relChange(sc, good, se))
}

func sortCandidates(cs []Candidate) []Candidate {
	for i := 1; i < len(cs); i++ {
		for j := i; j > 0 && (cs[j].Probability > cs[j-1].Probability ||
			cs[j].Probability == cs[j-1].Probability && cs[j].Index < cs[j-1].Index); j-- {
			cs[j], cs[j-1] = cs[j-1], cs[j]
		}
	}
	if len(cs) > 10 {
		cs = cs[:10]
	}
	return cs
}

func pct(f float64) string { return fmt.Sprintf("%.3g%%", 100*f) }
