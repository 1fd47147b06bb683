package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/robust"
)

// Runs at the baseline commit that disagree. The history branch is written
// by more hands than CI's: a run added at a commit that was measured
// already (by hand, from another machine, or forged) moves the baseline
// as much as it differs from the others there. The check still uses every
// valid run (one run far off moves a median of three little; a pair has
// no majority to tell which is right), but says which runs disagree, so
// that whoever reads the verdict can look at them.
//
// A run disagrees when its value is more than a factor from the median of
// its commit's runs (of a pair, from the other run): six times the spread
// of the window's commit levels (1.4826 MAD of their logs), and at least a
// factor of two. Real CI histories have outliers of +70-90% and second
// modes; measured on ../shared/realnoise, three successive points standing
// for three runs at one commit (go test ./gate -run
// TestRealNoiseDisagreeRate -v), a factor of two reports 0.48% of honest
// baselines (1.25 and 1.5 report several percent). Asking also that the
// run lie outside the levels the window has held reports 0.16%, but then
// forged runs spread over the window's commits widen those levels and
// hide the genuine runs they outvote, the attack this check is for. So a
// forged run far off (the -98% of a hand-written line) is named, while one
// a few tens of percent off hides in the noise: against that, trust the
// branch's writers (docs/github.md) and the rules' trust section.
const (
	disagreeUnits   = 6
	disagreeMinimum = 1.0 // at least this far off (as a ratio - 1): a factor of two
	disagreeNoScale = 1.0 // without a window to measure the spread: the same factor
	disagreeWindow  = 4   // other commits the spread needs
	disagreeListMax = 5   // runs named per check at most
)

// Sides of a check whose runs are compared with each other.
const (
	sideBaseline = "baseline"
	sideHead     = "head"
)

// noteDisagreement records, for the report's warnings, the runs of the
// baseline (or head) commit whose values of a metric are far from their
// commit's median. Head is checked as the baseline is: a run written
// onto the history branch at the pull request's own commit moves its
// result as a forged baseline run moves the baseline.
func (c *checker) noteDisagreement(sr *series, name string, baseRuns []*Sample, baseSHA, side string) {
	if len(baseRuns) < 2 || baseSHA == "" {
		return
	}
	var vals []float64
	var runs []*Sample
	var far []string
	nonPositive := 0
	for _, s := range baseRuns {
		v, ok := s.Metrics[name]
		if !ok || !finite(v) {
			continue
		}
		if v <= 0 {
			// A ratio has no meaning here: such a run is left out of the
			// comparison and named, so that it cannot silence the check.
			far = append(far, fmt.Sprintf("%s %s (not positive)", runName(s), fmtNum(v)))
			nonPositive++
			continue
		}
		vals, runs = append(vals, v), append(runs, s)
	}
	if len(vals) == 0 || len(vals)+nonPositive < 2 {
		return
	}
	limit := c.disagreeLimit(sr, name)
	mid := robust.Median(vals)
	for i, v := range vals {
		ref := mid
		if len(vals) == 1 {
			break
		}
		if len(vals) == 2 {
			// A pair has no majority: each is measured against the other.
			ref = vals[1-i]
		}
		if math.Abs(math.Log(v/ref)) > limit {
			far = append(far, fmt.Sprintf("%s %s", runName(runs[i]), fmtNum(v)))
		}
	}
	if len(far) == 0 {
		return
	}
	if len(far) > disagreeListMax {
		far = append(far[:disagreeListMax], fmt.Sprintf("%d more", len(far)-disagreeListMax))
	}
	what := seriesName(sr.bench, sr.labels) + " " + name
	key := side + " " + what
	if c.disagree == nil {
		c.disagree = map[string]string{}
	}
	if _, seen := c.disagree[key]; seen {
		return
	}
	c.disagree[key] = fmt.Sprintf("%s at %s: %s against the median %s of its %d runs", what, shortSHA(baseSHA), strings.Join(far, ", "), fmtNum(mid), len(vals)+nonPositive)
	c.disagreeOrder = append(c.disagreeOrder, key)
}

// disagreeLimit is how far (in log units) a run may be from its commit's
// median before it disagrees.
func (c *checker) disagreeLimit(sr *series, name string) float64 {
	var logs []float64
	for _, p := range sr.window[1:] {
		if v := pvalues(p.runs, name); len(v) > 0 {
			if m := robust.Median(v); m > 0 {
				logs = append(logs, math.Log(m))
			}
		}
	}
	if len(logs) < disagreeWindow {
		return math.Log1p(disagreeNoScale)
	}
	mid := robust.Median(logs)
	dev := make([]float64, len(logs))
	for i, l := range logs {
		dev[i] = math.Abs(l - mid)
	}
	return math.Max(disagreeUnits*1.4826*robust.Median(dev), math.Log1p(disagreeMinimum))
}

// runName names a run for a report: its id's first 8 digits when known.
func runName(s *Sample) string {
	if len(s.ID) >= 8 {
		return "run " + s.ID[:8]
	}
	return "a run"
}

// disagreeWarnings list the baseline runs, then the head runs, that
// disagree with the others at their commit.
func (c *checker) disagreeWarnings() []string {
	var out []string
	for _, side := range []string{sideBaseline, sideHead} {
		var lines []string
		for _, k := range c.disagreeOrder {
			if strings.HasPrefix(k, side+" ") {
				lines = append(lines, c.disagree[k])
			}
		}
		if len(lines) == 0 {
			continue
		}
		if side == sideBaseline {
			out = append(out, fmt.Sprintf("runs at the baseline commit disagree (a run measured elsewhere, added later or written onto the history branch by hand moves the baseline): %s; perfgate runs --commit COMMIT lists them with who measured them, perfgate invalidate ID --reason \"...\" leaves one out",
				strings.Join(lines, "; ")))
			continue
		}
		out = append(out, fmt.Sprintf("runs at the head commit disagree (a run measured elsewhere or written onto the history branch at this commit moves the result checked): %s; perfgate runs --commit COMMIT lists them with who measured them",
			strings.Join(lines, "; ")))
	}
	return out
}
