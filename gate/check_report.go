package gate

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/internal/mdtext"
)

// pairedLegend says what a paired report's columns are: the change is
// not the ratio of the medians beside it.
const pairedLegend = "REFERENCE and CURRENT: the medians of base's and head's runs. PAIRED CHANGE: head against base pair by pair (Hodges-Lehmann over the pairs), what the verdict uses; it is not the ratio of the two medians, and drift between pairs can even give it the other sign."

// headline is the verdict sentence both renderings start with.
func (r *Report) headline() string {
	s := r.Summary
	var extra []string
	add := func(n int, what string) {
		if n > 0 {
			extra = append(extra, fmt.Sprintf("%d %s", n, what))
		}
	}
	checks := "checks"
	if s.Checks == 1 {
		checks = "check"
	}
	var head string
	switch {
	case s.Fail > 0: // failed, or inconclusive as the committed results of an unmeasured tree
		head = fmt.Sprintf("%d of %d %s failed", s.Fail, s.Checks, checks)
		if s.Missing > 0 {
			head += fmt.Sprintf(", %d missing", s.Missing)
		}
	case r.Verdict == Fail:
		head = fmt.Sprintf("%d of %d %s missing", s.Missing, s.Checks, checks)
		if s.Missing == 0 && s.Inconclusive > 0 {
			head = fmt.Sprintf("%d of %d %s inconclusive (inconclusive: fail), none failed", s.Inconclusive, s.Checks, checks)
			s.Inconclusive = 0
		}
	case r.Verdict == Inconclusive && s.Checks == 0:
		head = "no check applied: not a pass, see the warnings for the rules to add"
	case r.Verdict != Pass && s.Fail == 0 && s.Inconclusive > 0 && r.Uncompared() == s.Inconclusive:
		// The base branch measured these benchmarks, but nothing of it
		// could be compared: not a pass, and not noise either.
		head = fmt.Sprintf("%d of %d %s not comparable with the base branch's results", s.Inconclusive, s.Checks, checks)
		if s.Inconclusive == s.Checks {
			head = "nothing compared: " + head
		}
		if tb := r.otherTestbeds(); tb != "" {
			head += fmt.Sprintf(" (measured on %s there)", tb)
		}
		head += ": not a pass, see the warnings for what to do"
		s.Inconclusive = 0
	case r.Verdict == Inconclusive && s.Inconclusive > 0:
		head = fmt.Sprintf("%d of %d %s inconclusive, none failed: not a pass, see the warnings for what would decide", s.Inconclusive, s.Checks, checks)
		s.Inconclusive = 0
	case s.Checks > 0 && s.New == s.Checks:
		// Nothing was compared: say so first, not in a note below a
		// PASS (a laptop's runs against CI's history, a new benchmark).
		head = fmt.Sprintf("nothing compared: %s new, no baseline", plural(s.Checks, "check is", "checks are"))
		if tb := r.otherTestbeds(); tb != "" {
			head += fmt.Sprintf(" measured on head's testbed (the base branch was measured on %s)", tb)
		}
		s.New = 0
	default:
		head = fmt.Sprintf("%d %s, none failed", s.Checks, checks)
		if s.Checks == 0 {
			head = "no check applied"
		}
	}
	add(s.Inconclusive, "inconclusive")
	add(s.Improved, "improved")
	add(s.Accepted, "accepted")
	add(s.New, "new")
	if r.Verdict != Fail {
		add(s.Missing, "missing (missing: warn)")
	}
	if len(extra) > 0 {
		head += " (" + strings.Join(extra, ", ") + ")"
	}
	if r.Unmeasured != "" {
		// A verdict about the commit, not the tree the user is looking at.
		head = fmt.Sprintf("not a verdict on the working tree: %s; below, %s's committed results: %s", r.Unmeasured, shortSHA(r.Head), head)
	}
	return head
}

// Uncompared counts the checks left inconclusive because nothing of the
// base branch could be compared with head (CheckResult.Uncompared).
func (r *Report) Uncompared() int {
	n := 0
	for _, c := range r.Checks {
		if c.Verdict == Inconclusive && c.Uncompared != "" {
			n++
		}
	}
	return n
}

// otherTestbeds lists the baselines' testbeds that head's differ from
// ("" when no series was left uncompared for its testbed).
func (r *Report) otherTestbeds() string {
	seen := map[string]bool{}
	var out []string
	for _, m := range r.Mismatches {
		if m.HeadTestbed == "" || m.BaselineTestbed == "" || seen[m.BaselineTestbed] {
			continue
		}
		seen[m.BaselineTestbed] = true
		out = append(out, fmt.Sprintf("%q", m.BaselineTestbed))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// baselineLine says which baseline the checks used; code renders a
// commit and esc any other text (both the identity for a terminal).
func (r *Report) baselineLine(code, esc func(string) string) string {
	base := esc(r.BaseRef)
	if r.BaseRef == "" {
		base = code(shortSHA(r.Base))
	}
	if r.Paired {
		return fmt.Sprintf("%s (%s), run interleaved with head on this machine", code(shortSHA(r.Baseline.Commit)), base)
	}
	commits := func(n int) string {
		if n == 1 {
			return "1 first-parent commit"
		}
		return fmt.Sprintf("%d first-parent commits", n)
	}
	if r.Baseline.MergeBase != "" && r.Baseline.MergeBase == r.Head {
		// Head is on the base branch: no merge-base to speak of.
		if r.Baseline.Commit == "" {
			return fmt.Sprintf("none measured within %s before head on %s", commits(r.Rules.MaxDistance), base)
		}
		if r.Baseline.Commit == r.Head {
			return fmt.Sprintf("%s, head's commit on %s (its committed results)", code(shortSHA(r.Baseline.Commit)), base)
		}
		return fmt.Sprintf("%s, %s before head on %s", code(shortSHA(r.Baseline.Commit)), commits(r.Baseline.Distance), base)
	}
	if r.Baseline.Commit == "" {
		return fmt.Sprintf("none measured within %s of the merge-base %s with %s", commits(r.Rules.MaxDistance), code(shortSHA(r.Baseline.MergeBase)), base)
	}
	if r.Baseline.Commit == r.Baseline.MergeBase {
		return fmt.Sprintf("%s, the merge-base with %s (distance 0)", code(shortSHA(r.Baseline.Commit)), base)
	}
	return fmt.Sprintf("%s, %s before the merge-base %s with %s", code(shortSHA(r.Baseline.Commit)),
		commits(r.Baseline.Distance), code(shortSHA(r.Baseline.MergeBase)), base)
}

func (r *Report) rulesLine() string {
	src := r.Rules.File
	switch {
	case r.Rules.Defaults:
		src = "the default set (no rule in the rules file or --rule)"
		if r.Rules.File != "" {
			src = fmt.Sprintf("the default set (%s has no rules)", r.Rules.File)
		}
	case src == "":
		src = "--rule flags"
	}
	count := fmt.Sprintf("%d from %s", r.Rules.Count, src)
	if n := r.Rules.Flags; n > 0 && r.Rules.File != "" && !r.Rules.Defaults {
		// The file's rules and the --rule flags, each counted.
		count = fmt.Sprintf("%d: %d from %s, %d from --rule", r.Rules.Count, r.Rules.Count-n, src, n)
	}
	if r.Paired {
		return fmt.Sprintf("%s; paired runs, alpha %g", count, pairedAlpha)
	}
	return fmt.Sprintf("%s; noise window %d commits, max distance %d", count, r.Rules.Window, r.Rules.MaxDistance)
}

// displayNames names each check's series: the benchmark, plus the labels
// that tell apart the series of the same benchmark.
func displayNames(checks []CheckResult) []string {
	vary := map[string]map[string]bool{} // benchmark -> label keys that vary
	first := map[string]map[string]string{}
	for _, c := range checks {
		f, ok := first[c.Benchmark]
		if !ok {
			first[c.Benchmark] = c.Labels
			vary[c.Benchmark] = map[string]bool{}
			continue
		}
		for k, v := range c.Labels {
			if f[k] != v {
				vary[c.Benchmark][k] = true
			}
		}
		for k := range f {
			if _, ok := c.Labels[k]; !ok {
				vary[c.Benchmark][k] = true
			}
		}
	}
	out := make([]string, len(checks))
	for i, c := range checks {
		keys := sortedKeys(vary[c.Benchmark])
		if len(keys) == 0 {
			out[i] = c.Benchmark
			continue
		}
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			v, ok := c.Labels[k]
			switch {
			case !ok:
				// a key the series has not: saying nothing tells it
				// apart from those that have it
			case k == LoadLabelKey:
				parts = append(parts, "by "+v) // a capacity series
			default:
				parts = append(parts, k+"="+v)
			}
		}
		if len(parts) == 0 {
			out[i] = c.Benchmark
			continue
		}
		out[i] = c.Benchmark + " [" + strings.Join(parts, ",") + "]"
	}
	return out
}

// reasons explains every check that did not pass, one line each; checks
// of one series with the same verdict and reason share a line.
func (r *Report) reasons(names []string, esc func(string) string) []string {
	type group struct {
		name, reason string
		verdict      Verdict
		metrics      []string
	}
	var groups []*group
	index := map[string]*group{}
	for i, c := range r.Checks {
		reason := c.Reason
		if c.Verdict == Pass {
			reason = ""
		}
		if c.LoadNote != "" {
			reason = strings.TrimPrefix(reason+"; "+c.LoadNote, "; ")
		}
		if reason == "" {
			continue
		}
		v := c.Verdict
		if c.TradeOff {
			v = "trade-off"
		}
		key := names[i] + "\x00" + string(v) + "\x00" + reason
		g := index[key]
		if g == nil {
			g = &group{name: names[i], reason: reason, verdict: v}
			index[key] = g
			groups = append(groups, g)
		}
		if c.Metric != "" {
			g.metrics = append(g.metrics, c.Label)
		}
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		what := g.name
		switch len(g.metrics) {
		case 0:
		case 1:
			what += " " + g.metrics[0]
		default:
			what += fmt.Sprintf(" (%d metrics)", len(g.metrics))
		}
		out[i] = fmt.Sprintf("%s: %s: %s", esc(what), esc(string(g.verdict)), esc(g.reason))
	}
	return out
}

func samplesCell(c CheckResult) string {
	return fmt.Sprintf("%d/%d", c.Samples.Baseline, c.Samples.Current)
}

func metricCell(c CheckResult) string {
	if c.Metric == "" {
		return "(all metrics)"
	}
	return c.Label
}

func verdictText(c CheckResult) string {
	v := string(c.Verdict)
	if c.TradeOff {
		v = "trade-off"
	}
	if c.Unqualified {
		v += "*"
	}
	return strings.ToUpper(v)
}

func (r *Report) missingFails() bool { return r.Rules.MissingFails }

// WriteText renders the report for a terminal: the verdict first, then an
// aligned table and the reasons; color adds ANSI colours.
func (r *Report) WriteText(w io.Writer, color bool) error {
	var b strings.Builder
	verdict := strings.ToUpper(string(r.Verdict))
	code := ansiBold + ansiGreen
	if r.Verdict == Fail {
		code = ansiBold + ansiRed
	} else if r.Verdict == Inconclusive {
		code = ansiBold + ansiYellow
	}
	fmt.Fprintf(&b, "%s  %s\n", paint(color, code, verdict), r.headline())
	plain := func(s string) string { return s }
	head := shortSHA(r.Head)
	if r.Dirty {
		head += " (with uncommitted changes)"
	}
	if r.MeasuredBefore != "" {
		head += " (measured on the working tree before it was committed, at " + shortSHA(r.MeasuredBefore) + ")"
	}
	if len(r.Testbeds) > 0 {
		head += " on testbed " + strings.Join(r.Testbeds, "; ")
	}
	fmt.Fprintf(&b, "head      %s\n", head)
	fmt.Fprintf(&b, "baseline  %s\n", r.baselineLine(plain, plain))
	fmt.Fprintf(&b, "rules     %s\n", r.rulesLine())
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "%s   %s\n", paint(color, ansiYellow, "warning"), w)
	}
	b.WriteString("\n")
	if len(r.Checks) > 0 {
		t := &table{
			header: []string{"BENCHMARK", "METRIC", "REFERENCE", "CURRENT", "CHANGE", "RULE", "N", "VERDICT"},
			right:  []bool{false, false, true, true, true, false, true, false},
		}
		if r.Paired {
			t.header[4] = "PAIRED CHANGE"
		}
		names := displayNames(r.Checks)
		mf := r.missingFails()
		tbs := r.testbedColumn()
		if tbs {
			t.header = slices.Insert(t.header, 1, "TESTBED")
			t.right = slices.Insert(t.right, 1, false)
		}
		for i, c := range r.Checks {
			cells := []string{names[i], metricCell(c), fmtPtr(c.Baseline), fmtPtr(c.Current), fmtChange(c.Change), c.Rule, samplesCell(c), verdictText(c)}
			if tbs {
				cells = slices.Insert(cells, 1, testbedCell(c.Testbed))
			}
			t.add(verdictColor(c.Verdict, mf), cells...)
		}
		if err := writeString(&b, t, color); err != nil {
			return err
		}
		legend := "N: values behind reference/current. REFERENCE: the median head is compared with, not one commit's."
		if r.Paired {
			legend = "N: runs of base/head. " + pairedLegend
		}
		for _, c := range r.Checks {
			if c.Unqualified {
				legend += " *: unqualified (no noise estimate; the literal threshold decided)."
				break
			}
		}
		fmt.Fprintln(&b, legend)
		if why := r.reasons(names, func(s string) string { return s }); len(why) > 0 {
			fmt.Fprintf(&b, "\n%s\n", paint(color, ansiBold, "Why"))
			for _, l := range why {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	r.writeLoadText(&b, color)
	if len(r.Notes) > 0 {
		fmt.Fprintf(&b, "\n%s\n", paint(color, ansiBold, "Notes"))
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeString(b *strings.Builder, t *table, color bool) error {
	return t.write(b, color)
}

var mdVerdict = map[Verdict]string{
	Pass:         "✅ pass",
	Fail:         "❌ fail",
	Inconclusive: "⚠️ inconclusive",
	Improved:     "🟢 improved",
	Accepted:     "☑️ accepted",
	New:          "🆕 new",
	Missing:      "❓ missing",
}

// mdTableLimit is how many checks the main markdown table shows before it
// keeps to the checks that did not pass and folds the rest.
const mdTableLimit = 30

// WriteMarkdown renders the report for a PR comment or a job summary.
func (r *Report) WriteMarkdown(w io.Writer) error {
	// The report may come from a fork's artifact (perfgate publish):
	// every string from it is escaped or put in a code span, even those
	// ReadReport has validated.
	var b strings.Builder
	names := displayNames(r.Checks)
	r.mdHeader(&b)
	notPass := r.mdTable(&b, names)
	for i, c := range r.Checks {
		if c.Verdict == Accepted && c.Accepted != nil {
			fmt.Fprintf(&b, "☑️ %s · %s: %s.  \n", mdtext.CodeSpan(names[i]), mdtext.Escape(metricCell(c)), mdtext.Escape(c.Accepted.Text()))
		}
	}
	if r.Summary.Accepted > 0 {
		b.WriteString("\n")
	}
	b.WriteString(r.siteLinks(names, notPass))
	r.mdLoad(&b)
	r.mdDetails(&b, names)
	r.mdCharts(&b, names)
	_, err := io.WriteString(w, b.String())
	return err
}

// mdHeader writes the verdict, head, baseline, rules and warnings.
func (r *Report) mdHeader(b *strings.Builder) {
	icon := "✅"
	if r.Verdict == Fail {
		icon = "❌"
	} else if r.Verdict == Inconclusive {
		icon = "⚠️"
	}
	fmt.Fprintf(b, "### %s perfgate: %s — %s\n\n", icon, mdtext.Escape(string(r.Verdict)), mdtext.Escape(r.headline()))
	head := mdtext.Code(shortSHA(r.Head))
	if r.Dirty {
		head += " (with uncommitted changes)"
	}
	if r.MeasuredBefore != "" {
		head += " (measured on the working tree before it was committed, at " + shortSHA(r.MeasuredBefore) + ")"
	}
	if len(r.Testbeds) > 0 {
		head += " on testbed " + mdtext.Escape(strings.Join(r.Testbeds, "; "))
	}
	fmt.Fprintf(b, "Head %s against baseline %s.  \n", head, r.baselineLine(mdtext.Code, mdtext.Escape))
	fmt.Fprintf(b, "Rules: %s.\n\n", mdtext.Escape(r.rulesLine()))
	for i, w := range r.Warnings {
		sep := "  \n"
		if i == len(r.Warnings)-1 {
			sep = "\n\n"
		}
		fmt.Fprintf(b, "> ⚠️ %s%s", mdtext.Escape(w), sep)
	}
}

// mdTable writes the checks' table (past mdTableLimit checks, those that
// did not pass, then all of them folded) and returns the ones that did
// not pass.
func (r *Report) mdTable(b *strings.Builder, names []string) []int {
	tbs := r.testbedColumn()
	row := func(i int) string {
		c := r.Checks[i]
		v := mdVerdict[c.Verdict]
		if c.TradeOff {
			v = "↔️ trade-off"
		}
		if c.Unqualified {
			v += " (unqualified)"
		}
		if c.Verdict == Missing && r.missingFails() {
			v = "❌ missing"
		}
		name := mdtext.Code(names[i])
		if tbs {
			name += " | " + mdtext.Escape(testbedCell(c.Testbed))
		}
		return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, mdtext.Escape(metricCell(c)),
			fmtPtr(c.Baseline), fmtPtr(c.Current), fmtChange(c.Change), mdtext.Escape(c.Rule), samplesCell(c), v)
	}
	header := "| Benchmark | Metric | Reference | Current | Change | Rule | Samples (base/head) | Verdict |\n|---|---|--:|--:|--:|---|--:|---|\n"
	if tbs {
		header = "| Benchmark | Testbed | Metric | Reference | Current | Change | Rule | Samples (base/head) | Verdict |\n|---|---|---|--:|--:|--:|---|--:|---|\n"
	}
	if r.Paired {
		header = strings.Replace(header, "| Change |", "| Paired change |", 1)
	}
	all := make([]int, len(r.Checks))
	var notPass []int
	for i, c := range r.Checks {
		all[i] = i
		if c.Verdict != Pass {
			notPass = append(notPass, i)
		}
	}
	rows := func(is []int) {
		for _, i := range is {
			b.WriteString(row(i))
		}
	}
	switch {
	case len(r.Checks) == 0:
		b.WriteString("No check applied: no rule matched a metric of these results.\n\n")
	case len(r.Checks) <= mdTableLimit:
		b.WriteString(header)
		rows(all)
		b.WriteString("\n")
	default:
		if len(notPass) > 0 {
			b.WriteString(header)
			rows(notPass)
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "<details><summary>All %d checks</summary>\n\n%s", len(r.Checks), header)
		rows(all)
		b.WriteString("\n</details>\n\n")
	}
	if r.Paired && len(r.Checks) > 0 {
		b.WriteString(mdtext.Escape(strings.ReplaceAll(strings.ReplaceAll(pairedLegend, "REFERENCE and CURRENT", "Reference and Current"), "PAIRED CHANGE", "Paired change")) + "\n\n")
	}
	return notPass
}

// mdDetails writes the folded details: why, the statistics of each check,
// the methods, label mismatches and notes.
func (r *Report) mdDetails(b *strings.Builder, names []string) {
	b.WriteString("<details><summary>Details</summary>\n\n")
	if why := r.reasons(names, mdtext.Escape); len(why) > 0 {
		for _, l := range why {
			fmt.Fprintf(b, "- %s\n", l)
		}
		b.WriteString("\n")
	}
	if r.Summary.Checks > r.Summary.New+r.Summary.Missing {
		r.mdStats(b, names)
	}
	b.WriteString("Methods: *shift*: three or more runs on both sides, the Hodges-Lehmann shift against a one-sided t test at alpha 0.01 whose noise includes the base branch's session-to-session spread; " +
		"*noise-band*: one run against the median of the base branch's recent results (cut at change points), fails only beyond the threshold and " + fmtNum(zFailOne) + " robust standard deviations (" + fmtNum(zCritical) + " for three runs or more), and, when the base branch shows outliers, far beyond them; " +
		"*repeats*: the same band from the baseline's repeated runs; *threshold*: no noise estimate, the literal threshold (unqualified).\n")
	if len(r.Mismatches) > 0 {
		b.WriteString("\n**Not compared (identity labels differ):**\n\n")
		for _, m := range r.Mismatches {
			fmt.Fprintf(b, "- %s at %s: %s\n", mdtext.CodeSpan(m.Benchmark), mdtext.Code(shortSHA(m.Commit)), mdtext.Escape(m.Diff))
		}
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n**Notes:**\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(b, "- %s\n", mdtext.Escape(n))
		}
	}
	b.WriteString("\n</details>\n")
}

// mdStats writes the table of each check's method, noise, statistic,
// window and baseline commit.
func (r *Report) mdStats(b *strings.Builder, names []string) {
	b.WriteString("| Benchmark | Metric | Method | Noise (1σ) | z / p | Window | Baseline commit |\n|---|---|---|--:|--:|--:|---|\n")
	for i, c := range r.Checks {
		if c.Method == "" || c.Method == MethodAbsolute {
			continue
		}
		stat := "-"
		switch {
		case c.Z != nil:
			stat = fmt.Sprintf("z = %.1f", *c.Z)
		case c.PImproved != nil:
			stat = fmt.Sprintf("p = %.3g (better)", *c.PImproved)
		case c.P != nil:
			stat = fmt.Sprintf("p = %.3g", *c.P)
		}
		commit := "-"
		if c.BaselineCommit != "" && c.Distance != nil {
			commit = fmt.Sprintf("%s (distance %d)", mdtext.Code(shortSHA(c.BaselineCommit)), *c.Distance)
		}
		window := "-"
		if c.Window > 0 {
			window = fmt.Sprint(c.Window)
			if c.SegmentStart != "" {
				window += ", cut at " + mdtext.Code(shortSHA(c.SegmentStart))
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdtext.Code(names[i]), mdtext.Escape(metricCell(c)), mdtext.Escape(c.Method), fmtPct(c.Noise), stat, window, commit)
	}
	b.WriteString("\n")
}

// mdCharts writes the trend charts of up to six failing or inconclusive
// metrics, failures first.
func (r *Report) mdCharts(b *strings.Builder, names []string) {
	var charts []int
	for i, c := range r.Checks {
		if (c.Verdict == Fail || c.Verdict == Inconclusive) && len(c.History) > 2 {
			charts = append(charts, i)
		}
	}
	sort.SliceStable(charts, func(x, y int) bool {
		return r.Checks[charts[x]].Verdict == Fail && r.Checks[charts[y]].Verdict != Fail
	})
	if len(charts) > 6 {
		charts = charts[:6]
	}
	for _, i := range charts {
		c := r.Checks[i]
		fmt.Fprintf(b, "\n**%s · %s** over the recent base-branch history (last point: head)\n\n", mdtext.Escape(names[i]), mdtext.Escape(metricCell(c)))
		b.WriteString(mermaidChart(names[i]+": "+metricCell(c), metricCell(c), c.History, r.Head))
	}
}

// mermaidChart renders a line chart GitHub draws from a fenced block.
func mermaidChart(title, yLabel string, pts []Point, head string) string {
	var xs, ys []string
	for _, p := range pts {
		x := shortSHA(p.Commit)
		if p.Commit == head {
			x = "head"
		}
		xs = append(xs, fmt.Sprintf("%q", mermaidText(x)))
		ys = append(ys, fmtNum(p.Value))
	}
	return fmt.Sprintf("```mermaid\nxychart-beta\n    title \"%s\"\n    x-axis [%s]\n    y-axis \"%s\"\n    line [%s]\n```\n",
		mermaidText(title), strings.Join(xs, ", "), mermaidText(yLabel), strings.Join(ys, ", "))
}

// siteLinks links the checks that did not pass to their charts on the
// site perfgate site publishes (#benchmark/metric, which the site
// resolves), or to its overview when all passed; "" without a site URL.
func (r *Report) siteLinks(names []string, notPass []int) string {
	if !ValidSiteURL(r.SiteURL) {
		return ""
	}
	base := strings.TrimRight(r.SiteURL, "/") + "/"
	var links []string
	seen := map[string]bool{}
	for _, i := range notPass {
		c := r.Checks[i]
		if c.Metric == "" || c.Verdict == New || seen[c.Benchmark+"/"+c.Metric] {
			continue
		}
		seen[c.Benchmark+"/"+c.Metric] = true
		if len(links) == 10 {
			links = append(links, "…")
			break
		}
		frag := url.PathEscape(c.Benchmark) + "/" + url.PathEscape(c.Metric)
		links = append(links, fmt.Sprintf("[%s · %s](%s#%s)", mdtext.Escape(names[i]), mdtext.Escape(metricCell(c)), base, frag))
	}
	if len(links) == 0 {
		return fmt.Sprintf("History of every series: [the dashboard](%s).\n\n", base)
	}
	return fmt.Sprintf("History on [the dashboard](%s): %s.\n\n", base, strings.Join(links, ", "))
}

// ValidSiteURL reports whether u can be a site URL in a report: https (or
// http on localhost), no spaces, quotes, brackets or parentheses that
// could break out of a markdown link. A report read from a fork's
// artifact is checked with it.
func ValidSiteURL(u string) bool {
	if u == "" || len(u) > 2000 || strings.ContainsAny(u, " \t\r\n\"'<>()[]`\\") {
		return false
	}
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || p.User != nil || p.Fragment != "" || p.RawQuery != "" {
		return false
	}
	return p.Scheme == "https" || (p.Scheme == "http" && (p.Hostname() == "localhost" || p.Hostname() == "127.0.0.1"))
}

// testbedColumn reports whether the tables show a testbed column: when
// the checks are of more than one testbed, so that two rows of one
// benchmark and metric on two machines do not look alike.
func (r *Report) testbedColumn() bool {
	for _, c := range r.Checks {
		if c.Testbed != r.Checks[0].Testbed {
			return true
		}
	}
	return false
}

// testbedCell is a check's testbed in a table; "-" when not recorded.
func testbedCell(tb string) string {
	if tb == "" {
		return "-"
	}
	return tb
}
