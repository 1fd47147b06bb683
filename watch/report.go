package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/mdtext"
	"github.com/perfgate/perfgate/metric"
)

// Regressions are the open regressions.
func (r *Report) Regressions() []Change {
	var out []Change
	for _, c := range r.Changes {
		if c.Open {
			out = append(out, c)
		}
	}
	return out
}

// Failed reports whether anything needs attention: an open regression or
// a missing series.
func (r *Report) Failed() bool { return len(r.Regressions()) > 0 || len(r.Missing) > 0 }

func fmtVal(v float64) string {
	switch a := abs64(v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 0.01:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func abs64(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// end is the first commit at the new level: FirstBad, or a drift's end.
func (c *Change) end() string {
	if c.DriftEnd != "" {
		return c.DriftEnd
	}
	return c.FirstBad
}

// rangeText is the commit range of a change: "a1b2c3d..e4f5a6b (3 unmeasured)".
func (c *Change) rangeText() string {
	if c.Drift && c.Moving {
		return fmt.Sprintf("%s..%s (a drift from %s on, still moving; %d unmeasured between)", shortSHA(c.LastGood), shortSHA(c.DriftEnd), shortSHA(c.FirstBad), c.Unmeasured)
	}
	if c.Drift {
		return fmt.Sprintf("%s..%s (a drift from %s on; %d unmeasured between)", shortSHA(c.LastGood), shortSHA(c.DriftEnd), shortSHA(c.FirstBad), c.Unmeasured)
	}
	if c.Unmeasured == 0 {
		return shortSHA(c.FirstBad) + " (parent " + shortSHA(c.LastGood) + " measured)"
	}
	return fmt.Sprintf("%s..%s (%d unmeasured between)", shortSHA(c.LastGood), shortSHA(c.FirstBad), c.Unmeasured)
}

func (c *Change) status() string {
	switch {
	case c.Accepted != "":
		return c.Kind + ", accepted"
	case c.Suspected:
		return "suspected " + c.Kind
	case c.BelowThreshold:
		return c.Kind + " below the threshold"
	case c.Open:
		return "OPEN " + c.Kind
	case c.Kind == Regression:
		return "regression, recovered"
	}
	return c.Kind
}

// pointsText counts points: "1 point", "30 points".
func pointsText(n int) string {
	if n == 1 {
		return "1 point"
	}
	return fmt.Sprintf("%d points", n)
}

// val is a level of the change's metric with its unit ("131.4 ms",
// "2.43 req/s"; a count or a metric the vocabulary does not know has
// none).
func (c *Change) val(v float64) string {
	if u := metric.Get(c.Metric).Unit; u != "" {
		return fmtVal(v) + " " + u
	}
	return fmtVal(v)
}

func (c *Change) summary() string {
	d := ""
	if c.Drift {
		d = " (" + c.DriftText() + ")"
	}
	points := fmt.Sprintf("%d/%d points", c.NBefore, c.NAfter)
	if c.Drift && c.Moving {
		points = pointsText(c.NBefore) + " before, after: its line at the last commit"
	}
	return fmt.Sprintf("%s -> %s (%+.1f%%, %.1f noise units, confidence %.3f, %s)%s",
		c.val(c.Before), c.val(c.After), c.ChangePct, c.NoiseUnits, c.Confidence, points, d)
}

// DriftText describes a drift: "drift +30.0% since a1b2c3d (+10.0%/100
// commits), still moving" (or "stopped at e4f5a6b"); its size is so far
// when it is still moving.
func (c *Change) DriftText() string {
	end := "still moving"
	if !c.Moving {
		end = "stopped at " + shortSHA(c.DriftEnd)
	}
	return fmt.Sprintf("drift %+.1f%% since %s (%+.1f%%/100 commits), %s", c.ChangePct, shortSHA(c.FirstBad), c.PerHundred, end)
}

// split parts the changes into those at or above their threshold and
// those below it (listed apart, never alerts).
func (r *Report) split() (listed, minor []Change) {
	for _, c := range r.Changes {
		if c.BelowThreshold {
			minor = append(minor, c)
		} else {
			listed = append(listed, c)
		}
	}
	return listed, minor
}

// WriteText renders the report for a terminal.
func (r *Report) WriteText(w io.Writer, _ bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "watch %s at %s: %d first-parent commits, %d measured, %d series x metric\n", r.Ref, shortSHA(r.Tip), r.Commits, r.Measured, r.Series)
	fmt.Fprintf(&b, "method: %s\n", r.Method)
	listed, minor := r.split()
	if len(listed) == 0 {
		b.WriteString("\nno change of level at or above its threshold\n")
	}
	for _, c := range listed {
		fmt.Fprintf(&b, "\n%s  %s  %s\n", strings.ToUpper(c.status()), c.Name(), c.Metric)
		if c.Accepted != "" {
			fmt.Fprintf(&b, "  %s\n", c.Accepted)
		}
		fmt.Fprintf(&b, "  at %s\n", c.rangeText())
		fmt.Fprintf(&b, "  %s; smallest change reported %g%% (%s)\n", c.summary(), c.Threshold, c.Rule)
		if c.Bisect != "" {
			fmt.Fprintf(&b, "  narrow it: %s\n", c.Bisect)
		}
	}
	if len(minor) > 0 {
		fmt.Fprintf(&b, "\nbelow the threshold (beyond the noise, no alert): %d\n", len(minor))
		for _, c := range minor {
			fmt.Fprintf(&b, "  %s  %s  %+.1f%% (%.1f noise units, threshold %g%%, %s) at %s\n", c.Name(), c.Metric, c.ChangePct, c.NoiseUnits, c.Threshold, c.Rule, c.rangeText())
		}
	}
	for _, m := range r.Missing {
		fmt.Fprintf(&b, "\nMISSING  %s: reported on %d measured commits up to %s, absent from the %d measured since\n", m.Name(), m.Reported, shortSHA(m.LastCommit), m.Since)
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(&b, "\nwarning: %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown renders the report as GitHub markdown; every name from the
// history is escaped.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## perfgate watch: %s at `%s`\n\n", mdtext.Escape(r.Ref), shortSHA(r.Tip))
	fmt.Fprintf(&b, "%d first-parent commits, %d measured, %d series x metric. Method: %s.\n\n", r.Commits, r.Measured, r.Series, r.Method)
	listed, minor := r.split()
	if len(listed) > 0 {
		b.WriteString("| status | series | metric | commits | before | after | change | noise units | confidence |\n")
		b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|\n")
		for _, c := range listed {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %+.1f%% | %.1f | %.3f |\n",
				mdtext.Escape(c.status()), mdtext.Escape(c.Name()), mdtext.Code(c.Metric), mdtext.Escape(c.rangeText()),
				c.val(c.Before), c.val(c.After), c.ChangePct, c.NoiseUnits, c.Confidence)
		}
		b.WriteString("\n")
		for _, c := range listed {
			if c.Drift {
				fmt.Fprintf(&b, "%s %s: %s.  \n", mdtext.Escape(c.Name()), mdtext.CodeSpan(c.Metric), mdtext.Escape(c.DriftText()))
			}
		}
		for _, c := range listed {
			if c.Accepted != "" {
				fmt.Fprintf(&b, "☑️ %s %s at %s: %s.  \n", mdtext.Escape(c.Name()), mdtext.CodeSpan(c.Metric), mdtext.CodeSpan(shortSHA(c.FirstBad)), mdtext.Escape(c.Accepted))
			}
		}
		for _, c := range listed {
			if c.Bisect != "" {
				fmt.Fprintf(&b, "To narrow %s %s:\n\n%s\n\n", mdtext.Escape(c.Name()), mdtext.CodeSpan(c.Metric), fence(c.Bisect))
			}
		}
	} else {
		b.WriteString("No change of level at or above its threshold.\n\n")
	}
	if len(minor) > 0 {
		fmt.Fprintf(&b, "<details><summary>%d changes beyond the noise but below their threshold (no alert)</summary>\n\n", len(minor))
		b.WriteString("| series | metric | commits | change | noise units | threshold |\n|---|---|---|---:|---:|---:|\n")
		for _, c := range minor {
			fmt.Fprintf(&b, "| %s | %s | %s | %+.1f%% | %.1f | %g%% |\n", mdtext.Escape(c.Name()), mdtext.Code(c.Metric), mdtext.Escape(c.rangeText()), c.ChangePct, c.NoiseUnits, c.Threshold)
		}
		b.WriteString("\n</details>\n\n")
	}
	if len(r.Missing) > 0 {
		b.WriteString("| missing series | last reported | measured commits since |\n|---|---|---:|\n")
		for _, m := range r.Missing {
			fmt.Fprintf(&b, "| %s | `%s` | %d |\n", mdtext.Escape(m.Name()), shortSHA(m.LastCommit), m.Since)
		}
		b.WriteString("\n")
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(&b, "> warning: %s\n", mdtext.Escape(s))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fence renders s as a shell code block whose fence no content can close.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "sh\n" + strings.ReplaceAll(s, "\n", " ") + "\n" + f
}

// WriteJSON renders the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	out := *r
	if out.Changes == nil {
		out.Changes = []Change{}
	}
	if out.Missing == nil {
		out.Missing = []Missing{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(&out)
}

// Alert is one thing watch raises for people: the open regressions of
// one change (the metrics of one series whose commit ranges overlap), or
// a missing series. Key is stable across runs while the change's range
// is, so a tracker can find its issue again.
type Alert struct {
	Key   string
	Title string
	Body  string // markdown, names escaped
	// Also are the keys of the change's metrics on their own (series and
	// the metric's commit range): an issue written under another key that
	// lists one of them is the same change, whose set of metrics or
	// overall range moved, and is adopted.
	Also []string
	// Formerly are the keys an issue of one of these metrics had before
	// watch grouped metrics into one issue per change (series and
	// metric): such an issue is adopted, or merged into the change's.
	Formerly []string
	// Metrics are the metrics of the change, in the order listed.
	Metrics []string
}

// group is the open regressions of one series whose commit ranges
// overlap or touch (the detector may place the same step a commit apart
// in two metrics): one change, one alert.
type group struct {
	members []Change
	lo, hi  int32 // the union of the members' ranges
	first   *Change
	last    *Change // the members holding the union's ends
}

// groups gathers the open regressions by series and overlapping range, in
// the order of the series and, within one, oldest range first.
func (r *Report) groups() []*group {
	bySeries := map[string][]Change{}
	var order []string
	for _, c := range r.Changes {
		if !c.Open {
			continue
		}
		if _, ok := bySeries[c.seriesKey]; !ok {
			order = append(order, c.seriesKey)
		}
		bySeries[c.seriesKey] = append(bySeries[c.seriesKey], c)
	}
	var out []*group
	for _, k := range order {
		cs := bySeries[k]
		sort.SliceStable(cs, func(i, j int) bool {
			if cs[i].lo != cs[j].lo {
				return cs[i].lo < cs[j].lo
			}
			return cs[i].hi < cs[j].hi
		})
		var g *group
		for _, c := range cs {
			if g == nil || c.lo > g.hi {
				g = &group{lo: c.lo, hi: c.hi}
				out = append(out, g)
			}
			g.members = append(g.members, c)
			g.hi = max(g.hi, c.hi)
		}
	}
	for _, g := range out {
		sort.SliceStable(g.members, func(i, j int) bool { return g.members[i].Metric < g.members[j].Metric })
		for i := range g.members {
			m := &g.members[i]
			if m.lo == g.lo && g.first == nil {
				g.first = m
			}
			if m.hi == g.hi && g.last == nil {
				g.last = m
			}
		}
	}
	return out
}

// rangeKey is the key of a series' change over a commit range.
func rangeKey(seriesKey, lastGood, firstBad string) string {
	return AlertKey(Regression, seriesKey, "range\x00"+lastGood+".."+firstBad)
}

// Alerts are the open regressions, one per change (the metrics of one
// series whose commit ranges overlap), and the missing series.
func (r *Report) Alerts() []Alert {
	var out []Alert
	for _, g := range r.groups() {
		sk := g.first.seriesKey
		a := Alert{Key: rangeKey(sk, g.first.LastGood, g.last.end()), Body: g.issueBody(r)}
		also, formerly := map[string]bool{}, map[string]bool{}
		var parts []string
		for _, m := range g.members {
			a.Metrics = append(a.Metrics, m.Metric)
			also[rangeKey(sk, m.LastGood, m.end())] = true
			formerly[AlertKey(Regression, sk, m.Metric)] = true
			parts = append(parts, fmt.Sprintf("%s %+.1f%%", oneLine(m.Metric, 60), m.ChangePct))
		}
		delete(also, a.Key)
		a.Also, a.Formerly = sortedSet(also), sortedSet(formerly)
		list := strings.Join(parts, ", ")
		if len(parts) > 3 {
			list = fmt.Sprintf("%s and %d more", strings.Join(parts[:3], ", "), len(parts)-3)
		}
		a.Title = fmt.Sprintf("Performance regression: %s %s at %s", oneLine(g.first.Name(), 100), list, shortSHA(g.last.FirstBad))
		out = append(out, a)
	}
	for _, m := range r.Missing {
		k := AlertKey("missing", m.seriesKey, "")
		body := fmt.Sprintf("The series %s reported on each of %d measured commits of %s up to `%s`, and on none of the %d measured since (perfgate watch at `%s`).\n\nIt closes when the series reports again.",
			mdtext.Escape(m.Name()), m.Reported, mdtext.Escape(r.Ref), m.LastCommit, m.Since, shortSHA(r.Tip))
		out = append(out, Alert{Key: k, Title: "Benchmark stopped reporting: " + oneLine(m.Name(), 150), Body: body})
	}
	return out
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// issueBody describes one change: its series and range, and each open
// metric with its levels, change and confidence; the regressions of the
// series over the same range that are no longer open (recovered or
// accepted) are named below.
func (g *group) issueBody(r *Report) string {
	var b strings.Builder
	first := g.first
	n := len(g.members)
	what := "a regression"
	if n > 1 {
		what = fmt.Sprintf("one change that regressed %d metrics", n)
	}
	fmt.Fprintf(&b, "perfgate watch found %s on %s (at `%s`).\n\n", what, mdtext.Escape(r.Ref), shortSHA(r.Tip))
	fmt.Fprintf(&b, "| | |\n|---|---|\n| series | %s |\n", mdtext.Escape(first.Name()))
	same := true
	for _, m := range g.members {
		same = same && m.lo == g.lo && m.hi == g.hi
	}
	switch {
	case same && first.Drift:
		fmt.Fprintf(&b, "| commits | `%s`..`%s` (a drift over several commits, from `%s` on; %d unmeasured between) |\n", first.LastGood, first.DriftEnd, first.FirstBad, first.Unmeasured)
		fmt.Fprintf(&b, "| drift | %s |\n", mdtext.Escape(first.DriftText()))
	case same && first.Unmeasured == 0:
		fmt.Fprintf(&b, "| commit | `%s` (its parent `%s` measured at the old level) |\n", first.FirstBad, first.LastGood)
	case same:
		fmt.Fprintf(&b, "| commits | `%s`..`%s` (%d unmeasured between) |\n", first.LastGood, first.FirstBad, first.Unmeasured)
	default:
		fmt.Fprintf(&b, "| commits | `%s`..`%s` (the metrics' ranges below overlap) |\n", first.LastGood, g.last.end())
	}
	b.WriteString("\n| metric | commits | before | after | now | change | noise units | confidence | smallest change (rule) |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, m := range g.members {
		after := pointsText(m.NAfter)
		if m.Drift && m.Moving {
			after = "its line at the last commit"
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%s) | %s (%s) | %s | %+.1f%% | %.1f | %.3f | %g%% (%s) |\n",
			mdtext.Code(m.Metric), mdtext.Escape(m.rangeText()), m.val(m.Before), pointsText(m.NBefore), m.val(m.After), after, m.val(m.Current),
			m.ChangePct, m.NoiseUnits, m.Confidence, m.Threshold, mdtext.Escape(m.Rule))
	}
	var closed []string
	for i := range r.Changes {
		c := &r.Changes[i]
		if c.seriesKey != first.seriesKey || c.Kind != Regression || c.Open || c.Suspected || c.BelowThreshold || c.hi < g.lo || c.lo > g.hi {
			continue
		}
		st := "recovered"
		if c.Accepted != "" {
			st = mdtext.Escape(c.Accepted)
		}
		closed = append(closed, fmt.Sprintf("%s (%s)", mdtext.CodeSpan(c.Metric), st))
	}
	if len(closed) > 0 {
		fmt.Fprintf(&b, "\nNo longer open: %s.\n", strings.Join(closed, ", "))
	}
	seen := map[string]bool{}
	for _, m := range g.members {
		if m.Bisect == "" || seen[m.LastGood+".."+m.FirstBad] {
			continue
		}
		seen[m.LastGood+".."+m.FirstBad] = true
		fmt.Fprintf(&b, "\nTo find the commit (%s):\n\n%s\n", mdtext.CodeSpan(m.Metric), fence(m.Bisect))
	}
	fmt.Fprintf(&b, "\nIf the change is intended, accept its metrics at once (then perfgate sync):\n\n%s\n", fence(g.acceptCommand()))
	b.WriteString("\nThis issue is updated by each watch run as metrics of this change recover, are accepted (perfgate accept) or join it, and closed when none is open.")
	return b.String()
}

// acceptCommand is the perfgate accept command that accepts every open
// metric of the change at its first commit off the old level.
func (g *group) acceptCommand() string {
	args := []string{"perfgate", "accept", "--benchmark", shellQuote(g.first.Benchmark)}
	seen := map[string]bool{}
	for _, m := range g.members {
		if !seen[m.Metric] {
			seen[m.Metric] = true
			args = append(args, "--metric", shellQuote(m.Metric))
		}
	}
	return strings.Join(append(args, "--commit", shellQuote(g.first.FirstBad), "--reason", shellQuote("WHY IT IS INTENDED")), " ")
}

// oneLine cuts s to n runes on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
