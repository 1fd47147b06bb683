package bisect

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/mdtext"
)

// Commit names one commit of the searched range in a report.
type Commit struct {
	SHA     string
	Short   string // abbreviated SHA
	Subject string
}

// Report is a finished search with what a reader needs to act on it: the
// commits, the metric and how the search went.
type Report struct {
	Benchmark string
	Metric    string // canonical metric name
	Label     string // display label, e.g. "Mean TTFT (ms)"
	Unit      string // "ms", "tok/s", ...
	// Direction is "lower" or "higher" (which way is better), or "" when
	// the metric's direction is not known.
	Direction string
	// Commits are the searched range: Commits[0] is the good end, then
	// the first-parent commits after it up to the bad end, oldest first.
	Commits []Commit
	Stored  bool    // --stored: no runs, the history alone
	Target  float64 // the confidence the search aimed at
	// Threshold is the smallest relative change that counts (0: any).
	Threshold float64
	Elapsed   time.Duration
	Result    *Result
}

func (r *Report) n() int { return len(r.Commits) - 1 }

// culprit returns the named culprit, if any.
func (r *Report) culprit() (Commit, bool) {
	res := r.Result
	if res.Culprit <= 0 || res.Culprit >= len(r.Commits) || res.Verdict == NoStep || res.Verdict == Untestable {
		return Commit{}, false
	}
	if res.Verdict == OutOfRuns && res.Last > res.First {
		return Commit{}, false // several commits are equally likely
	}
	return r.Commits[res.Culprit], true
}

// worse tells whether the change makes the metric worse: +1 worse, -1
// better, 0 unknown direction or no change.
func (r *Report) worse() int {
	c := r.Result.Change
	switch {
	case c == 0 || r.Direction == "":
		return 0
	case (c > 0) == (r.Direction == "lower"):
		return 1
	}
	return -1
}

func (r *Report) changeWord() string {
	switch r.worse() {
	case 1:
		return "worse"
	case -1:
		return "better"
	}
	return "changed"
}

// fmtVal prints a metric value with about four significant digits.
func fmtVal(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func (r *Report) withUnit(v float64) string {
	if r.Unit == "" {
		return fmtVal(v)
	}
	return fmtVal(v) + " " + r.Unit
}

// fmtChange prints the change between the levels: relative in percent,
// or in the metric's unit when the values were not all positive.
func (r *Report) fmtChange() string {
	res := r.Result
	if res.Relative {
		return fmt.Sprintf("%+.1f%% ± %.1f%%", 100*res.Change, 100*res.ChangeSE)
	}
	if res.Good == 0 {
		return fmt.Sprintf("%+g ± %s", res.Change, fmtVal(res.ChangeSE))
	}
	return fmt.Sprintf("%+.1f%% ± %.1f%%", 100*res.Change, 100*res.ChangeSE)
}

func (r *Report) fmtNoise() string {
	res := r.Result
	if res.Relative {
		if res.Noise >= 0.01 {
			return fmt.Sprintf("±%.1f%%", 100*res.Noise)
		}
		return fmt.Sprintf("±%.2g%%", 100*res.Noise)
	}
	return "±" + r.withUnit(res.Noise)
}

func pctConf(p float64) string {
	switch {
	case p >= 0.9995:
		return ">99.9%"
	case p < 0.001 && p > 0:
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", 100*p)
}

func (r *Report) metricName() string {
	if r.Label != "" && r.Label != r.Metric {
		return r.Label
	}
	return r.Metric
}

// commitRef is "a1b2c3d (commit 29 of 48)".
func (r *Report) commitRef(i int) string {
	return fmt.Sprintf("%s (commit %d of %d)", r.Commits[i].Short, i, r.n())
}

// headline is the one-sentence answer.
func (r *Report) headline() string {
	res := r.Result
	switch res.Verdict {
	case Found:
		c, _ := r.culprit()
		return fmt.Sprintf("%s %s at %s %q, confidence %s", r.metricName(), r.verb(), r.commitRef(res.Culprit), c.Subject, pctConf(res.Confidence))
	case OutOfRuns:
		if _, ok := r.culprit(); ok {
			return fmt.Sprintf("most likely culprit %s %q, confidence %s, below the target %s", r.commitRef(res.Culprit), r.Commits[res.Culprit].Subject, pctConf(res.Confidence), pctConf(r.Target))
		}
		if res.First > 0 {
			return fmt.Sprintf("not narrowed down: the change is most likely in one of %d commits, %s to %s (confidence %s)",
				res.Last-res.First+1, r.commitRef(res.First), r.commitRef(res.Last), pctConf(res.RangeConfidence))
		}
		return "no culprit: the run budget ran out"
	case Untestable:
		return fmt.Sprintf("the change is in one of %d commits, %s to %s, that cannot be told apart (confidence %s)",
			res.Last-res.First+1, r.commitRef(res.First), r.commitRef(res.Last), pctConf(res.RangeConfidence))
	}
	return "no step between good and bad: " + res.Reason
}

func (r *Report) verb() string {
	switch r.worse() {
	case 1:
		return "regressed"
	case -1:
		return "improved"
	}
	return "changed"
}

// advice says what to do next, when there is something to do.
func (r *Report) advice() string {
	res := r.Result
	switch res.Verdict {
	case OutOfRuns:
		if res.Reason != "" {
			return res.Reason + "; inspect them by hand"
		}
		if r.Stored {
			return "the stored results cannot tell the candidates apart: bisect with --run to measure them"
		}
		return fmt.Sprintf("the run budget (%d) ran out: rerun with a larger --max-runs; the %d runs made are stored and reused", res.Budget, res.Runs)
	case Untestable:
		if r.Stored {
			return "no stored results between them: bisect with --run to measure them"
		}
		return "the commits between them could not be tested (exit 125 or --skip-failures): fix their build, or inspect them by hand"
	case NoStep:
		if r.Threshold > 0 {
			return fmt.Sprintf("check that --good and --bad bracket the regression, or lower --threshold (%s)", pct(r.Threshold))
		}
		return "check that --good and --bad bracket the regression; more runs per end (--end-runs) resolve smaller steps"
	}
	return ""
}

// side classifies an evaluated commit for display. The named culprit is
// "culprit": P(bad) of the first bad commit is the probability that the
// change is at or before it, which can stay below 99% while the verdict
// is confident, and "unsure" next to it read as a contradiction. For the
// same reason, with a culprit found every commit before it is "good" and
// every one after it "bad": P(bad) of a commit before it is at most one
// minus the confidence, of one after it at least the confidence.
func side(e Evaluation, n int, res *Result) string {
	found := res.Verdict == Found && res.Culprit > 0
	switch {
	case e.Skip == "" && found && e.Index == res.Culprit && e.Index != n:
		return "culprit"
	case e.Skip != "":
		return "skipped"
	case e.Index == 0:
		return "good end"
	case e.Index == n:
		return "bad end"
	case found && e.Index < res.Culprit:
		return "good"
	case found && e.Index > res.Culprit:
		return "bad"
	case e.PBad >= 0.99:
		return "bad"
	case e.PBad <= 0.01:
		return "good"
	}
	return "unsure"
}

func (r *Report) values(e Evaluation) string {
	if e.Skip != "" {
		return e.Skip
	}
	parts := make([]string, len(e.Values))
	for i, v := range e.Values {
		parts[i] = fmtVal(v)
	}
	s := strings.Join(parts, " ")
	if len(e.Ignored) > 0 {
		s += fmt.Sprintf(" (%d outlier ignored)", len(e.Ignored))
	}
	return s
}

func runsCell(e Evaluation) string {
	if e.Stored > 0 && e.Runs > 0 {
		return fmt.Sprintf("%d+%d stored", e.Runs, e.Stored)
	}
	if e.Stored > 0 {
		return fmt.Sprintf("%d stored", e.Stored)
	}
	return strconv.Itoa(e.Runs)
}

func fmtElapsed(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	return fmt.Sprintf("%dm%02ds", m, s)
}

func (r *Report) runsLine() string {
	res := r.Result
	if r.Stored {
		return "runs: none (stored results only)"
	}
	return fmt.Sprintf("runs: %d of a budget of %d, %s", res.Runs, res.Budget, fmtElapsed(r.Elapsed))
}

func (r *Report) levelsLine() string {
	res := r.Result
	if len(res.Evaluated) == 0 {
		return ""
	}
	word := r.changeWord()
	if r.Direction != "" {
		word += ", " + r.Direction + " is better"
	}
	if res.Verdict == NoStep {
		word = fmt.Sprintf("p = %.2g", res.PValue)
	}
	return fmt.Sprintf("levels: %s -> %s, %s (%s); noise %s per run",
		r.withUnit(res.Good), r.withUnit(res.Bad), r.fmtChange(), word, r.fmtNoise())
}

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	res := r.Result
	mode := ""
	if r.Stored {
		mode = ", stored results"
	}
	fmt.Fprintf(&b, "bisect %s of %s over %d commits: good %s .. bad %s%s\n",
		r.metricName(), r.Benchmark, r.n(), r.Commits[0].Short, r.Commits[r.n()].Short, mode)
	fmt.Fprintf(&b, "%s\n", r.headline())
	if l := r.levelsLine(); l != "" {
		fmt.Fprintf(&b, "%s\n", l)
	}
	fmt.Fprintf(&b, "%s\n", r.runsLine())
	if a := r.advice(); a != "" {
		fmt.Fprintf(&b, "next: %s\n", a)
	}
	if _, named := r.culprit(); named && len(res.Candidates) > 1 {
		b.WriteString("\ncandidates:\n")
		for _, c := range res.Candidates {
			fmt.Fprintf(&b, "  %-7s %s  %s\n", pctConf(c.Probability), r.commitRef(c.Index), oneLine(r.Commits[c.Index].Subject, 50))
		}
	}
	if len(res.Evaluated) > 0 {
		b.WriteString("\nevaluated:\n")
		rows := [][]string{{"#", "commit", "side", "P(bad)", "runs", "values", "subject"}}
		for _, e := range res.Evaluated {
			rows = append(rows, []string{strconv.Itoa(e.Index), r.Commits[e.Index].Short, side(e, r.n(), r.Result), pBadCell(e, r.n()), runsCell(e), r.values(e), oneLine(r.Commits[e.Index].Subject, 40)})
		}
		writeTable(&b, rows)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pBadCell(e Evaluation, n int) string {
	if e.Skip != "" || e.Index == 0 || e.Index == n {
		return "-"
	}
	return fmt.Sprintf("%.3f", e.PBad)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func writeTable(b *strings.Builder, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, row := range rows {
		var line strings.Builder
		line.WriteString("  ")
		for i, c := range row {
			if i == 0 {
				line.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))) + c)
			} else {
				line.WriteString(c + strings.Repeat(" ", widths[i]-len([]rune(c))))
			}
			if i < len(row)-1 {
				line.WriteString("  ")
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// WriteMarkdown writes the report for an issue or a pull request.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	res := r.Result
	code := func(s string) string { return "`" + s + "`" }
	switch res.Verdict {
	case Found:
		c, _ := r.culprit()
		fmt.Fprintf(&b, "### %s %s at %s\n\n", mdtext.Escape(r.metricName()), r.verb(), code(c.Short))
		fmt.Fprintf(&b, "**%s** %s — confidence %s (commit %d of %d between %s and %s).\n\n",
			code(c.Short), mdtext.Escape(c.Subject), pctConf(res.Confidence), res.Culprit, r.n(), code(r.Commits[0].Short), code(r.Commits[r.n()].Short))
	default:
		fmt.Fprintf(&b, "### perfgate bisect: %s of %s\n\n", mdtext.Escape(r.metricName()), mdtext.Escape(r.Benchmark))
		h := r.headline()
		fmt.Fprintf(&b, "%s.\n\n", mdtext.Escape(strings.ToUpper(h[:1])+h[1:]))
	}
	b.WriteString("| | |\n|---|---|\n")
	fmt.Fprintf(&b, "| benchmark | %s |\n", mdtext.Escape(r.Benchmark))
	fmt.Fprintf(&b, "| metric | %s (%s) |\n", mdtext.Escape(r.metricName()), code(r.Metric))
	fmt.Fprintf(&b, "| range | %s (good) .. %s (bad), %d first-parent commits |\n", code(r.Commits[0].Short), code(r.Commits[r.n()].Short), r.n())
	if len(res.Evaluated) > 0 {
		word := r.changeWord()
		if res.Verdict == NoStep {
			word = fmt.Sprintf("p = %.2g", res.PValue)
		}
		fmt.Fprintf(&b, "| levels | %s → %s: %s (%s) |\n", r.withUnit(res.Good), r.withUnit(res.Bad), r.fmtChange(), word)
		fmt.Fprintf(&b, "| noise | %s per run |\n", r.fmtNoise())
	}
	if r.Stored {
		b.WriteString("| runs | none: stored results only |\n")
	} else {
		fmt.Fprintf(&b, "| runs | %d of a budget of %d, %s |\n", res.Runs, res.Budget, fmtElapsed(r.Elapsed))
	}
	fmt.Fprintf(&b, "| target confidence | %s |\n", pctConf(r.Target))
	if a := r.advice(); a != "" {
		fmt.Fprintf(&b, "\n%s\n", mdtext.Escape(strings.ToUpper(a[:1])+a[1:]+"."))
	}
	if len(res.Evaluated) > 0 {
		fmt.Fprintf(&b, "\n<details><summary>%d evaluated commits</summary>\n\n", len(res.Evaluated))
		b.WriteString("| # | commit | side | P(bad) | runs | values | subject |\n|--:|---|---|--:|--:|---|---|\n")
		for _, e := range res.Evaluated {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", e.Index, code(r.Commits[e.Index].Short), side(e, r.n(), r.Result),
				pBadCell(e, r.n()), runsCell(e), mdtext.Escape(r.values(e)), mdtext.Escape(oneLine(r.Commits[e.Index].Subject, 60)))
		}
		b.WriteString("\n</details>\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON is the machine-readable report (bisect -o json).
type JSON struct {
	Verdict    Verdict  `json:"verdict"`
	Culprit    *string  `json:"culprit"` // null when no commit is named
	Confidence float64  `json:"confidence"`
	Runs       int      `json:"runs"`
	Budget     int      `json:"budget"`
	Target     float64  `json:"target_confidence"`
	Benchmark  string   `json:"benchmark"`
	Metric     string   `json:"metric"`
	Direction  string   `json:"direction,omitempty"`
	Stored     bool     `json:"stored"`
	Good       EndJSON  `json:"good"`
	Bad        EndJSON  `json:"bad"`
	Commits    int      `json:"commits"`
	Change     *float64 `json:"change"`
	ChangeSE   *float64 `json:"change_stderr"`
	Relative   bool     `json:"change_relative"`
	Regression *bool    `json:"regression"`
	Noise      float64  `json:"noise"`
	PValue     float64  `json:"p_value"`
	Reason     string   `json:"reason,omitempty"`
	// CulpritCommit describes the culprit; Range the commits an
	// untestable verdict leaves.
	CulpritCommit *CommitJSON      `json:"culprit_commit,omitempty"`
	Range         *RangeJSON       `json:"range,omitempty"`
	Evaluated     []EvaluationJSON `json:"evaluated"`
	Candidates    []CandidateJSON  `json:"candidates"`
	Elapsed       float64          `json:"elapsed_seconds"`
}

// EndJSON is one end of the range with its level.
type EndJSON struct {
	Commit string   `json:"commit"`
	Level  *float64 `json:"level"`
}

// CommitJSON names a commit.
type CommitJSON struct {
	Commit  string `json:"commit"`
	Short   string `json:"short"`
	Subject string `json:"subject"`
	Index   int    `json:"index"`
}

// RangeJSON is a range of commits that could not be told apart.
type RangeJSON struct {
	First      string   `json:"first"`
	Last       string   `json:"last"`
	Commits    []string `json:"commits"`
	Confidence float64  `json:"confidence"`
}

// EvaluationJSON is one evaluated commit.
type EvaluationJSON struct {
	CommitJSON
	Values  []float64 `json:"values"`
	Ignored []float64 `json:"ignored,omitempty"`
	Stored  int       `json:"stored"`
	Runs    int       `json:"runs"`
	Skipped string    `json:"skipped,omitempty"`
	PBad    float64   `json:"p_bad"`
	Side    string    `json:"side"`
}

// CandidateJSON is a commit with its probability of being the culprit.
type CandidateJSON struct {
	Commit      string  `json:"commit"`
	Index       int     `json:"index"`
	Probability float64 `json:"probability"`
}

// JSON returns the machine-readable form of the report.
func (r *Report) JSON() JSON {
	res := r.Result
	n := r.n()
	j := JSON{
		Verdict: res.Verdict, Confidence: round(res.Confidence), Runs: res.Runs, Budget: res.Budget, Target: r.Target,
		Benchmark: r.Benchmark, Metric: r.Metric, Direction: r.Direction, Stored: r.Stored,
		Good: EndJSON{Commit: r.Commits[0].SHA}, Bad: EndJSON{Commit: r.Commits[n].SHA},
		Commits: n, Relative: res.Relative, Noise: round(res.Noise), PValue: round(res.PValue), Reason: res.Reason,
		Evaluated: []EvaluationJSON{}, Candidates: []CandidateJSON{}, Elapsed: math.Round(r.Elapsed.Seconds()*10) / 10,
	}
	if len(res.Evaluated) > 0 {
		g, b, c, se := round(res.Good), round(res.Bad), round(res.Change), round(res.ChangeSE)
		j.Good.Level, j.Bad.Level, j.Change, j.ChangeSE = &g, &b, &c, &se
		if w := r.worse(); w != 0 {
			reg := w > 0
			j.Regression = &reg
		}
	}
	if c, ok := r.culprit(); ok {
		j.Culprit = &c.SHA
		j.CulpritCommit = &CommitJSON{Commit: c.SHA, Short: c.Short, Subject: c.Subject, Index: res.Culprit}
	} else {
		j.Confidence = 0
	}
	if res.Verdict == Untestable || res.Verdict == OutOfRuns && j.Culprit == nil && res.First > 0 {
		rg := &RangeJSON{First: r.Commits[res.First].SHA, Last: r.Commits[res.Last].SHA, Confidence: round(res.RangeConfidence)}
		for i := res.First; i <= res.Last; i++ {
			rg.Commits = append(rg.Commits, r.Commits[i].SHA)
		}
		j.Range = rg
	}
	for _, e := range res.Evaluated {
		c := r.Commits[e.Index]
		values := e.Values
		if values == nil {
			values = []float64{}
		}
		j.Evaluated = append(j.Evaluated, EvaluationJSON{
			CommitJSON: CommitJSON{Commit: c.SHA, Short: c.Short, Subject: c.Subject, Index: e.Index},
			Values:     values, Ignored: e.Ignored, Stored: e.Stored, Runs: e.Runs, Skipped: e.Skip,
			PBad: round(e.PBad), Side: side(e, n, res),
		})
	}
	for _, c := range res.Candidates {
		j.Candidates = append(j.Candidates, CandidateJSON{Commit: r.Commits[c.Index].SHA, Index: c.Index, Probability: round(c.Probability)})
	}
	return j
}

// round keeps six significant digits, so reports are stable and short.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0 // JSON has no NaN; a quantity that could not be computed is 0
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return f
}

// WriteJSON writes the JSON report, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.JSON())
}

// Write writes the report in a format: "text", "markdown" (or "md") or
// "json".
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case "text":
		return r.WriteText(w)
	case "markdown", "md":
		return r.WriteMarkdown(w)
	case "json":
		return r.WriteJSON(w)
	}
	return fmt.Errorf("unknown report format %q; choose text, markdown or json", format)
}
