package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// A check report read back from JSON may come from a fork's pull request
// (perfgate publish posts the artifact of an untrusted workflow with a
// write token), so ReadReport treats it as hostile: it is read with a
// size limit and checked against the schema before anything renders it.

// Limits of a report read by ReadReport. A check of 100 series with
// their windows is about 115 KB of JSON; these are far above any real
// report and only keep a hostile one from costing memory and time.
const (
	MaxReportBytes = 64 << 20 // the JSON file
	maxChecks      = 100_000  // checks, and mismatches
	maxHistory     = 10_000   // points of one check's window
	maxLabels      = 256      // labels of one series
	maxLines       = 10_000   // warnings, and notes
	maxName        = 4 << 10  // a benchmark, metric, label, rule, origin, file or branch name
	maxText        = 64 << 10 // a warning, note, reason or label diff
	maxCount       = 1 << 30  // any count or distance
)

// Methods lists the methods a check's verdict may come from.
var Methods = []string{MethodShift, MethodMannWhitney, MethodNoiseBand, MethodRepeats, MethodThreshold, MethodAbsolute, MethodValidity, MethodPaired}

// InconclusivePolicies lists the values of the rules file's inconclusive key.
var InconclusivePolicies = []string{InconclusivePass, InconclusiveWarn, InconclusiveFail}

// Verdicts lists the verdicts of a check.
var Verdicts = []Verdict{Pass, Fail, Inconclusive, Improved, Accepted, New, Missing}

// ReadReport reads a report written by WriteJSON, so that a later step
// (perfgate publish) can render it again as markdown. The report is
// untrusted: it is refused when it is over MaxReportBytes or does not
// match the schema (commits are 40 lowercase hex digits, verdicts and
// methods come from the known sets, names and lists are bounded, the
// summary counts the checks), and the error names the field.
func ReadReport(rd io.Reader) (*Report, error) {
	data, err := io.ReadAll(io.LimitReader(rd, MaxReportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading a perfgate check report: %w", err)
	}
	if len(data) > MaxReportBytes {
		return nil, fmt.Errorf("reading a perfgate check report: it is over %d MiB, perfgate's limit for a report (a check of 100 series is about 115 KB); pass the file written by perfgate check -o json", MaxReportBytes>>20)
	}
	if err := duplicateKeys(data); err != nil {
		return nil, fmt.Errorf("reading a perfgate check report: %w; pass the file written by perfgate check -o json", err)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("reading a perfgate check report: %w; pass the file written by perfgate check -o json", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("reading a perfgate check report: more data after the report at byte %d; pass the file written by perfgate check -o json", dec.InputOffset())
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("reading a perfgate check report: %w; pass the file written by perfgate check -o json", err)
	}
	return &r, nil
}

// validate checks a report read from JSON against the schema.
func (r *Report) validate() error {
	v := &validator{}
	if r.Verdict != Pass && r.Verdict != Fail && r.Verdict != Inconclusive {
		return fmt.Errorf("verdict %q is not \"pass\", \"fail\" or \"inconclusive\"", r.Verdict)
	}
	v.commit("head", r.Head, false)
	v.commit("measured_before", r.MeasuredBefore, true)
	v.name("unmeasured", r.Unmeasured)
	v.name("base_ref", r.BaseRef)
	v.commit("base", r.Base, true)
	v.commit("baseline.commit", r.Baseline.Commit, true)
	v.commit("baseline.merge_base", r.Baseline.MergeBase, true)
	v.count("baseline.distance", r.Baseline.Distance)
	v.name("rules.file", r.Rules.File)
	v.count("rules.count", r.Rules.Count)
	v.count("rules.flags", r.Rules.Flags)
	if v.err == nil && r.Rules.Flags > r.Rules.Count {
		v.fail("rules.flags %d is more than rules.count %d", r.Rules.Flags, r.Rules.Count)
	}
	v.count("rules.window", r.Rules.Window)
	v.count("rules.max_distance", r.Rules.MaxDistance)
	if r.Rules.Inconclusive != "" && !slices.Contains(InconclusivePolicies, r.Rules.Inconclusive) {
		v.fail("rules.inconclusive %q is not a policy; valid: %s", quoteCut(r.Rules.Inconclusive), strings.Join(InconclusivePolicies, ", "))
	}
	v.length("checks", len(r.Checks), maxChecks)
	v.length("mismatches", len(r.Mismatches), maxChecks)
	v.length("warnings", len(r.Warnings), maxLines)
	v.length("notes", len(r.Notes), maxLines)
	if v.err != nil {
		return v.err
	}
	var counted Summary
	for i := range r.Checks {
		v.check(fmt.Sprintf("checks[%d]", i), &r.Checks[i])
		if v.err != nil {
			return v.err
		}
		counted.add(r.Checks[i].Verdict)
	}
	if counted != r.Summary {
		return fmt.Errorf("summary %+v does not count the checks (%+v)", r.Summary, counted)
	}
	// The headline may not be kinder than its checks: a report that says
	// pass over a failing row is forged or broken.
	implied := &Report{Checks: r.Checks}
	implied.settle(&Config{MissingFails: r.Rules.MissingFails, Inconclusive: r.Rules.Inconclusive})
	if severity(implied.Verdict) > severity(r.Verdict) {
		return fmt.Errorf("verdict %q does not follow from its checks, which make it %q", r.Verdict, implied.Verdict)
	}
	for i, m := range r.Mismatches {
		at := fmt.Sprintf("mismatches[%d]", i)
		v.name(at+".benchmark", m.Benchmark)
		v.labels(at+".head_labels", m.HeadLabels)
		v.labels(at+".baseline_labels", m.BaselineLabels)
		v.commit(at+".commit", m.Commit, true)
		v.text(at+".diff", m.Diff)
	}
	v.length("load", len(r.Load), maxChecks)
	for i := range r.Load {
		v.loadCurve(fmt.Sprintf("load[%d]", i), &r.Load[i])
	}
	for i, s := range r.Warnings {
		v.text(fmt.Sprintf("warnings[%d]", i), s)
	}
	for i, s := range r.Notes {
		v.text(fmt.Sprintf("notes[%d]", i), s)
	}
	if r.SiteURL != "" && !ValidSiteURL(r.SiteURL) && v.err == nil {
		v.fail("site_url %q is not an https URL without quotes, brackets or spaces", quoteCut(r.SiteURL))
	}
	return v.err
}

func (v *validator) check(at string, c *CheckResult) {
	v.name(at+".benchmark", c.Benchmark)
	v.labels(at+".labels", c.Labels)
	v.name(at+".metric", c.Metric)
	v.name(at+".label", c.Label)
	v.name(at+".rule", c.Rule)
	v.name(at+".origin", c.Origin)
	if v.err == nil && !slices.Contains(Verdicts, c.Verdict) {
		v.err = fmt.Errorf("%s.verdict %q is not a verdict; valid: %s", at, c.Verdict, joinVerdicts(Verdicts))
	}
	if v.err == nil && c.Method != "" && !slices.Contains(Methods, c.Method) {
		v.err = fmt.Errorf("%s.method %q is not a method; valid: %s", at, c.Method, strings.Join(Methods, ", "))
	}
	v.count(at+".samples.baseline", c.Samples.Baseline)
	v.count(at+".samples.current", c.Samples.Current)
	v.commit(at+".baseline_commit", c.BaselineCommit, true)
	if c.Distance != nil {
		v.count(at+".distance", *c.Distance)
	}
	v.count(at+".window", c.Window)
	v.count(at+".runs_to_decide", c.RunsToDecide)
	v.commit(at+".segment_start", c.SegmentStart, true)
	v.text(at+".reason", c.Reason)
	v.text(at+".load_note", c.LoadNote)
	v.text(at+".request_note", c.RequestNote)
	v.length(at+".request_percentiles", len(c.RequestPercentiles), 2)
	for i, rp := range c.RequestPercentiles {
		ai := fmt.Sprintf("%s.request_percentiles[%d]", at, i)
		if v.err == nil && rp.Side != "head" && rp.Side != "baseline" {
			v.fail("%s.side %q is not a side; valid: head, baseline", ai, quoteCut(rp.Side))
		}
		v.count(ai+".requests", rp.Requests)
		v.count(ai+".tail", rp.Tail)
		v.count(ai+".runs", rp.Runs)
	}
	v.length(at+".history", len(c.History), maxHistory)
	for i, p := range c.History {
		v.commit(fmt.Sprintf("%s.history[%d].commit", at, i), p.Commit, false)
	}
	v.acceptance(at+".accepted", c.Accepted)
	v.acceptance(at+".cut_at", c.CutAt)
	if v.err == nil && (c.Verdict == Accepted) != (c.Accepted != nil) {
		v.fail("%s: verdict accepted goes with an \"accepted\" record, and only it", at)
	}
}

func (v *validator) acceptance(at string, a *Acceptance) {
	if a == nil {
		return
	}
	v.commit(at+".commit", a.Commit, false)
	v.name(at+".benchmark", a.Benchmark)
	v.name(at+".metric", a.Metric)
	v.name(at+".by", a.By)
	v.text(at+".reason", a.Reason)
}

// validator keeps the first error of a report's checks.
type validator struct{ err error }

func (v *validator) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf(format, args...)
	}
}

// commit checks a full commit id: 40 lowercase hex digits.
func (v *validator) commit(at, s string, optional bool) {
	if v.err != nil || (optional && s == "") {
		return
	}
	if !isFullSHA(s) {
		v.fail("%s %q is not a commit id (40 lowercase hex digits)", at, quoteCut(s))
	}
}

func (v *validator) name(at, s string) {
	if v.err == nil && len(s) > maxName {
		v.fail("%s is %d bytes, over the limit of %d", at, len(s), maxName)
	}
}

func (v *validator) text(at, s string) {
	if v.err == nil && len(s) > maxText {
		v.fail("%s is %d bytes, over the limit of %d", at, len(s), maxText)
	}
}

func (v *validator) length(at string, n, limit int) {
	if v.err == nil && n > limit {
		v.fail("%s has %d entries, over the limit of %d", at, n, limit)
	}
}

func (v *validator) count(at string, n int) {
	if v.err == nil && (n < 0 || n > maxCount) {
		v.fail("%s %d is not a count (0 to %d)", at, n, maxCount)
	}
}

func (v *validator) labels(at string, m map[string]string) {
	v.length(at, len(m), maxLabels)
	for k, val := range m {
		v.name(at+" key", k)
		v.name(at+"."+quoteCut(k), val)
	}
}

func (s *Summary) add(v Verdict) {
	s.Checks++
	switch v {
	case Pass:
		s.Pass++
	case Fail:
		s.Fail++
	case Inconclusive:
		s.Inconclusive++
	case Improved:
		s.Improved++
	case Accepted:
		s.Accepted++
	case New:
		s.New++
	case Missing:
		s.Missing++
	}
}

func isFullSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// quoteCut shortens a hostile value quoted in an error.
func quoteCut(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func joinVerdicts(vs []Verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// duplicateKeys reports an object with the same key twice anywhere in a
// JSON document. encoding/json keeps the last of them, so a report with
// two "verdict" keys would read as whichever the forger put last, while
// other readers (GitHub's, a person's) may see the first.
func duplicateKeys(data []byte) error {
	type frame struct {
		obj, wantKey bool
		keys         map[string]bool
	}
	var stack []*frame
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].wantKey = true
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				if stack[n-1].keys[k] {
					return fmt.Errorf("key %q appears twice in one object (at byte %d)", quoteCut(k), dec.InputOffset())
				}
				stack[n-1].keys[k] = true
				stack[n-1].wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, wantKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}

// loadCurve checks one load curve of a report read from JSON.
func (v *validator) loadCurve(at string, lc *LoadCurve) {
	v.name(at+".benchmark", lc.Benchmark)
	v.labels(at+".labels", lc.Labels)
	v.name(at+".load_label", lc.LoadLabel)
	v.name(at+".slo", lc.SLO)
	v.name(at+".metric", lc.Metric)
	v.name(at+".relation", lc.Relation)
	v.commit(at+".baseline_commit", lc.BaselineCommit, true)
	v.length(at+".head", len(lc.Head), maxHistory)
	v.length(at+".baseline", len(lc.Baseline), maxHistory)
	v.length(at+".matched", len(lc.Matched), maxHistory)
	v.length(at+".notes", len(lc.Notes), maxLines)
	for _, pts := range [][]LoadPoint{lc.Head, lc.Baseline} {
		for i, p := range pts {
			v.name(fmt.Sprintf("%s.points[%d].load", at, i), p.Load)
			v.length(fmt.Sprintf("%s.points[%d].latency", at, i), len(p.Latency), maxLabels)
		}
	}
	for _, c := range []*CapacityAt{lc.Capacity, lc.BaselineCapacity} {
		if c != nil {
			v.name(at+".capacity.status", c.Status)
			v.name(at+".capacity.below", c.Below)
			v.name(at+".capacity.above", c.Above)
		}
	}
	for i, n := range lc.Notes {
		v.text(fmt.Sprintf("%s.notes[%d]", at, i), n)
	}
}
