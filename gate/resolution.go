package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/robust"
)

// Resolution is the smallest regression a check can see, given the noise
// it measured: what one run at head would fail at, and how many runs it
// takes to resolve the rule's limit. It is the noise model's threshold
// (the z or t the method fails at, times the standard error it would
// have), ignoring the tail model, which can ask for more when the window
// shows heavy tails. A rule whose limit is below what one run resolves
// can only fail on changes larger than its limit, so the report says so
// before the verdict.
type Resolution struct {
	// OneRun is the smallest regression, in percent, that one run at head
	// fails at (0 for the shift test, which needs three runs a side, and
	// for perfgate ab's paired test, two pairs).
	OneRun float64 `json:"one_run,omitempty"`
	// Runs is the fewest runs at head (a side, for the shift and paired
	// tests) that
	// resolve the rule's limit, 0 when no number up to maxResolveRuns
	// does (the base branch's level itself moves that much between
	// sessions); RunsResolve is what those runs resolve, in percent.
	Runs        int     `json:"runs,omitempty"`
	RunsResolve float64 `json:"runs_resolve,omitempty"`
}

// maxResolveRuns is the most runs a resolution looks at.
const maxResolveRuns = 20

// resolution fills a Resolution from res(n), the smallest log change n
// runs fail at (NaN where n runs do not apply), for a limit in percent.
func resolution(limit float64, res func(n int) float64) *Resolution {
	pct := func(d float64) float64 { return math.Round(1000*math.Expm1(d)) / 10 }
	r := &Resolution{}
	if d := res(1); !math.IsNaN(d) {
		r.OneRun = pct(d)
	}
	lim := math.Log1p(limit / 100)
	for n := 1; n <= maxResolveRuns; n++ {
		if d := res(n); !math.IsNaN(d) && d <= lim {
			r.Runs, r.RunsResolve = n, pct(d)
			break
		}
	}
	return r
}

// bandResolution is the noise band's: head's median of n runs against the
// reference median of segN values, at the z the band fails at.
func bandResolution(limit, sigma float64, segN int) *Resolution {
	return resolution(limit, func(n int) float64 {
		return failZ(n, false) * sigma * math.Sqrt(robust.MedianVar(n)+robust.MedianVar(segN))
	})
}

// repeatsResolution is the repeats method's: head's median against the
// median of the baseline's m runs.
func repeatsResolution(limit, sigma float64, m int) *Resolution {
	return resolution(limit, func(n int) float64 {
		return zCritical * sigma * math.Sqrt(robust.MedianVar(n)+robust.MedianVar(m))
	})
}

// shiftResolution is the shift test's with n runs a side: the one-sided t
// quantile at alpha times the standard error of the shift.
func shiftResolution(limit float64, s shift) *Resolution {
	return resolution(limit, func(n int) float64 {
		if n < minRepeats {
			return math.NaN()
		}
		se := math.Sqrt(s.within*s.within*2/float64(n) + 2*s.tau*s.tau)
		return tQuantile(float64(2*n-2), 1-alpha) * se
	})
}

// resolutionWarning lists the relative checks whose limit is below what
// one run resolves (or, for the shift test, the runs head has), with the
// runs that would resolve it; "" when there are none.
func resolutionWarning(checks []CheckResult) string {
	var parts []string
	for _, c := range checks {
		r := c.Resolution
		if r == nil || c.limit <= 0 {
			continue
		}
		var first string
		switch {
		case r.OneRun > c.limit:
			first = fmt.Sprintf("one run resolves %s%% here", fmtNum(r.OneRun))
		case r.OneRun == 0 && (r.Runs == 0 || r.Runs > c.Samples.Current):
			first = fmt.Sprintf("%d runs a side do not resolve it here", c.Samples.Current)
		default:
			continue
		}
		next := fmt.Sprintf("%d runs resolve %s%%", r.Runs, fmtNum(r.RunsResolve))
		if r.Runs == 0 {
			next = fmt.Sprintf("no number of runs up to %d does here (perfgate ab, both commits on one machine, can)", maxResolveRuns)
		}
		parts = append(parts, fmt.Sprintf("%s at %s%% (%s): %s; %s", c.Label, fmtNum(c.limit), seriesName(c.Benchmark, c.Labels), first, next))
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s finer than the noise lets one run see, so only larger changes can fail: %s",
		plural(len(parts), "rule is", "rules are"), strings.Join(parts, "; "))
}

// tQuantile is Student's t quantile at p (0.5 < p < 1).
func tQuantile(df, p float64) float64 { return robust.TQuantile(p, df) }
