package gate

import (
	"fmt"
	"time"
)

// Acceptance is a change recorded as intended (perfgate accept): from its
// commit on, the new level of the benchmark's metric is the reference.
// Check uses it two ways (see the package comment, "Accepted changes"):
// on the base branch it cuts the window there; at head it turns a failing
// or inconclusive check of that metric into an accepted one.
type Acceptance struct {
	Commit    string    `json:"commit"`
	Benchmark string    `json:"benchmark,omitempty"` // "" matches every benchmark (a pull request accepted by label)
	Metric    string    `json:"metric,omitempty"`    // "" matches every metric
	Reason    string    `json:"reason"`
	By        string    `json:"by"`
	Time      time.Time `json:"time"`
	// Source is where the record comes from (SourceLabel, SourceBranch,
	// SourceLocal; "" when not known) and Via how it arrived, for the
	// report: the history branch's commit that brought it, or that it was
	// made in this history and is on no branch.
	Source string `json:"source,omitempty"`
	Via    string `json:"via,omitempty"`
}

// Covers reports whether the acceptance covers a benchmark's metric
// (canonical name).
func (a *Acceptance) Covers(bench, metricName string) bool {
	return (a.Benchmark == "" || a.Benchmark == bench) && (a.Metric == "" || a.Metric == metricName)
}

// Text is "accepted by BY: REASON", as reports show it.
func (a *Acceptance) Text() string {
	by := a.By
	if by == "" {
		by = "unknown"
	}
	return fmt.Sprintf("accepted by %s: %s", by, a.Reason)
}

// Shown is Text with how the record arrived, as a check report shows an
// acceptance that changes its verdict.
func (a *Acceptance) Shown() string {
	if a.Via != "" {
		return fmt.Sprintf("%s [%s]", a.Text(), a.Via)
	}
	return a.Text()
}

// headAcceptance returns the acceptance of head's change of a metric, or
// nil: one recorded at head's commit, or one given for the pull request.
func (c *checker) headAcceptance(bench, metricName string) *Acceptance {
	for i := range c.accepted {
		a := &c.accepted[i]
		if a.Commit == c.headSHA && a.Covers(bench, metricName) {
			return a
		}
	}
	return nil
}

// cutAcceptance returns the newest acceptance of a metric on the walked
// base-branch commits that may be a baseline (walker index >= skip), with
// its walker index; nil when none.
func (c *checker) cutAcceptance(bench, metricName string) (*Acceptance, int) {
	if len(c.accepted) == 0 {
		return nil, -1
	}
	if c.walkIdx == nil {
		c.walkIdx = make(map[string]int, len(c.w.commits))
		for i, cm := range c.w.commits {
			c.walkIdx[cm.SHA] = i
		}
	}
	var best *Acceptance
	bestIdx := -1
	for i := range c.accepted {
		a := &c.accepted[i]
		if a.Commit == c.headSHA || !a.Covers(bench, metricName) {
			continue
		}
		idx, ok := c.walkIdx[a.Commit]
		if !ok || idx < c.skip {
			continue
		}
		if best == nil || idx < bestIdx || (idx == bestIdx && a.Time.After(best.Time)) {
			best, bestIdx = a, idx
		}
	}
	return best, bestIdx
}

// cutWindow returns sr with its window cut at walker index idx: only the
// accepted commit and the commits after it; ok is false when nothing of
// the window is left (the baseline predates the accepted change).
func cutWindow(sr *series, idx int) (*series, bool) {
	var w []windowPoint
	for _, p := range sr.window {
		if p.idx <= idx {
			w = append(w, p)
		}
	}
	if len(w) == 0 {
		return sr, false
	}
	cut := *sr
	cut.window = w
	return &cut, true
}

// accept turns a failing or inconclusive check into an accepted one.
func accept(cr *CheckResult, a *Acceptance) {
	if cr.Verdict != Fail && cr.Verdict != Inconclusive {
		return
	}
	was := string(cr.Verdict)
	cr.Verdict = Accepted
	acc := *a
	cr.Accepted = &acc
	if cr.Reason != "" {
		cr.Reason = fmt.Sprintf("%s (without it: %s, %s)", a.Shown(), was, cr.Reason)
	} else {
		cr.Reason = fmt.Sprintf("%s (without it: %s)", a.Shown(), was)
	}
}
