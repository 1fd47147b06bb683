package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/perfgate/perfgate/internal/mdtext"
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

// rangeText is the commit range of a change: "a1b2c3d..e4f5a6b (3 unmeasured)".
func (c *Change) rangeText() string {
	if c.Drift {
		return fmt.Sprintf("%s..%s (a drift; %d unmeasured between)", shortSHA(c.LastGood), shortSHA(c.FirstBad), c.Unmeasured)
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
	case c.Open:
		return "OPEN " + c.Kind
	case c.Kind == Regression:
		return "regression, recovered"
	}
	return c.Kind
}

func (c *Change) summary() string {
	d := ""
	if c.Drift {
		d = " (drift)"
	}
	return fmt.Sprintf("%s -> %s (%+.1f%%, %.1f noise units, confidence %.3f, %d/%d points)%s",
		fmtVal(c.Before), fmtVal(c.After), c.ChangePct, c.NoiseUnits, c.Confidence, c.NBefore, c.NAfter, d)
}

// WriteText renders the report for a terminal.
func (r *Report) WriteText(w io.Writer, _ bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "watch %s at %s: %d first-parent commits, %d measured, %d series x metric\n", r.Ref, shortSHA(r.Tip), r.Commits, r.Measured, r.Series)
	fmt.Fprintf(&b, "method: %s\n", r.Method)
	if len(r.Changes) == 0 {
		b.WriteString("\nno change of level\n")
	}
	for _, c := range r.Changes {
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
	if len(r.Changes) > 0 {
		b.WriteString("| status | series | metric | commits | before | after | change | noise units | confidence |\n")
		b.WriteString("|---|---|---|---|---:|---:|---:|---:|---:|\n")
		for _, c := range r.Changes {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %+.1f%% | %.1f | %.3f |\n",
				mdtext.Escape(c.status()), mdtext.Escape(c.Name()), mdtext.Code(c.Metric), mdtext.Escape(c.rangeText()),
				fmtVal(c.Before), fmtVal(c.After), c.ChangePct, c.NoiseUnits, c.Confidence)
		}
		b.WriteString("\n")
		for _, c := range r.Changes {
			if c.Accepted != "" {
				fmt.Fprintf(&b, "☑️ %s %s at %s: %s.  \n", mdtext.Escape(c.Name()), mdtext.Code(c.Metric), mdtext.Code(shortSHA(c.FirstBad)), mdtext.Escape(c.Accepted))
			}
		}
		for _, c := range r.Changes {
			if c.Bisect != "" {
				fmt.Fprintf(&b, "To narrow %s %s:\n\n%s\n\n", mdtext.Escape(c.Name()), mdtext.Code(c.Metric), fence(c.Bisect))
			}
		}
	} else {
		b.WriteString("No change of level.\n\n")
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

// Alert is one thing watch raises for people: an open regression or a
// missing series. Key is stable across runs for the same series and
// metric, so a tracker can find its issue again.
type Alert struct {
	Key   string
	Title string
	Body  string // markdown, names escaped
}

// Alerts are the open regressions (the latest per series and metric) and
// the missing series.
func (r *Report) Alerts() []Alert {
	var out []Alert
	seen := map[string]int{}
	for _, c := range r.Changes {
		if !c.Open {
			continue
		}
		k := AlertKey(Regression, c.seriesKey, c.Metric)
		a := Alert{Key: k, Title: fmt.Sprintf("Performance regression: %s %s %+.1f%%", oneLine(c.Name(), 120), oneLine(c.Metric, 60), c.ChangePct), Body: c.issueBody(r)}
		if i, ok := seen[k]; ok {
			out[i] = a // the later regression of the same series
			continue
		}
		seen[k] = len(out)
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

func (c *Change) issueBody(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "perfgate watch found a regression on %s (at `%s`).\n\n", mdtext.Escape(r.Ref), shortSHA(r.Tip))
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| series | %s |\n| metric | %s |\n", mdtext.Escape(c.Name()), mdtext.Code(c.Metric))
	if c.Unmeasured == 0 {
		fmt.Fprintf(&b, "| commit | `%s` (its parent `%s` measured at the old level) |\n", c.FirstBad, c.LastGood)
	} else {
		fmt.Fprintf(&b, "| commits | `%s`..`%s` (%d unmeasured between) |\n", c.LastGood, c.FirstBad, c.Unmeasured)
	}
	fmt.Fprintf(&b, "| before | %s (%d points) |\n| after | %s (%d points) |\n| now | %s |\n", fmtVal(c.Before), c.NBefore, fmtVal(c.After), c.NAfter, fmtVal(c.Current))
	fmt.Fprintf(&b, "| change | %+.1f%%, %.1f noise units |\n| confidence | %.3f |\n| rule | smallest change %g%% (%s) |\n", c.ChangePct, c.NoiseUnits, c.Confidence, c.Threshold, mdtext.Escape(c.Rule))
	if c.Drift {
		b.WriteString("| shape | a drift over several commits |\n")
	}
	if c.Bisect != "" {
		fmt.Fprintf(&b, "\nTo find the commit:\n\n%s\n", fence(c.Bisect))
	}
	b.WriteString("\nThis issue is updated by each watch run and closed when the series recovers.")
	return b.String()
}

// oneLine cuts s to n runes on one line.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
