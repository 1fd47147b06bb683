package gate

import (
	"bytes"
	"encoding/json"
	"io"
	"math"

	"github.com/perfgate/perfgate/internal/jsontext"
)

// Verdict of one check, or of the whole report ("pass" or "fail").
type Verdict string

// Verdicts.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Inconclusive Verdict = "inconclusive" // worse than the threshold, but within measured noise
	Improved     Verdict = "improved"     // better than the threshold, with the same evidence
	Accepted     Verdict = "accepted"     // would fail (or be inconclusive), but the change was accepted (perfgate accept, --accept-label)
	New          Verdict = "new"          // no baseline to compare with
	Missing      Verdict = "missing"      // in the baseline, absent now
)

// Methods a check's verdict came from.
const (
	MethodShift       = "shift"        // repeated runs on both sides: Hodges-Lehmann shift, t reference
	MethodMannWhitney = "mann-whitney" // repeated runs, before version 0.3 (read from old reports)
	MethodNoiseBand   = "noise-band"   // one run against the base branch's window
	MethodRepeats     = "repeats"      // noise from the baseline commit's repeated runs
	MethodThreshold   = "threshold"    // the literal threshold: unqualified
	MethodAbsolute    = "absolute"     // an absolute max or min
	MethodValidity    = "validity"     // failed requests or completed count
)

// Report is the result of Check.
type Report struct {
	Verdict  Verdict  `json:"verdict"` // pass or fail
	Head     string   `json:"head"`
	Dirty    bool     `json:"dirty,omitempty"`    // head results came from a working tree with changes
	Testbeds []string `json:"testbeds,omitempty"` // the testbeds head's results were measured on
	// MeasuredBefore is head's first parent when head's results were
	// measured on its working tree before head was committed.
	MeasuredBefore string `json:"measured_before,omitempty"`
	// Unmeasured says that the working tree's changes were not measured
	// and how to measure them: the checks are head's committed results.
	Unmeasured string `json:"unmeasured,omitempty"`
	// Paired: head and base were run interleaved on one machine and
	// compared pair by pair (perfgate ab, CheckPaired); Base is then the
	// base commit itself.
	Paired     bool          `json:"paired,omitempty"`
	BaseRef    string        `json:"base_ref,omitempty"`
	Base       string        `json:"base,omitempty"` // the base branch commit
	Baseline   BaselineRef   `json:"baseline"`
	Rules      RulesInfo     `json:"rules"`
	Summary    Summary       `json:"summary"`
	Checks     []CheckResult `json:"checks"`
	Mismatches []Mismatch    `json:"mismatches,omitempty"`
	// Load holds head's load curves beside the baseline's, with capacity
	// at the SLO and the trade-offs (see LoadCurve).
	Load []LoadCurve `json:"load,omitempty"`
	// Warnings are the statistical caveats of the verdict (unqualified or
	// inconclusive checks, a cut window, a dirty head, label mismatches),
	// shown in every format.
	Warnings []string `json:"warnings,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// SiteURL is where perfgate site publishes the history (the rules
	// file's site_url, or check --site-url): the markdown links each
	// check that did not pass to its chart there.
	SiteURL string `json:"site_url,omitempty"`
}

// BaselineRef names the baseline most checks used.
type BaselineRef struct {
	Commit    string `json:"commit"` // "" when no ancestor within max_distance was measured
	MergeBase string `json:"merge_base"`
	Distance  int    `json:"distance"` // first-parent commits from the merge-base to Commit
}

// RulesInfo says which rules the check applied.
type RulesInfo struct {
	File     string `json:"file,omitempty"`
	Defaults bool   `json:"defaults"` // no rule was given: DefaultRules applied
	Count    int    `json:"count"`
	// Flags is how many of Count came from --rule flags (the rest from
	// File, or the defaults).
	Flags       int `json:"flags,omitempty"`
	Window      int `json:"window"`
	MaxDistance int `json:"max_distance"`
	// MissingFails: a vanished series or metric fails the check.
	MissingFails bool `json:"missing_fails"`
	// Inconclusive is the rules file's inconclusive policy: pass, warn or fail.
	Inconclusive string `json:"inconclusive,omitempty"`
}

// Summary counts checks per verdict.
type Summary struct {
	Checks       int `json:"checks"`
	Pass         int `json:"pass"`
	Fail         int `json:"fail"`
	Inconclusive int `json:"inconclusive"`
	Improved     int `json:"improved"`
	Accepted     int `json:"accepted"`
	New          int `json:"new"`
	Missing      int `json:"missing"`
}

// CheckResult is one rule applied to one series.
type CheckResult struct {
	Benchmark string            `json:"benchmark"`
	Labels    map[string]string `json:"labels,omitempty"` // identity labels of the series
	Metric    string            `json:"metric"`
	Label     string            `json:"label"` // the metric's display label
	Rule      string            `json:"rule"`
	Origin    string            `json:"origin,omitempty"` // where the rule came from
	Verdict   Verdict           `json:"verdict"`
	Baseline  *float64          `json:"baseline"` // the value compared against
	Current   *float64          `json:"current"`
	Change    *float64          `json:"change"` // percent, current against baseline
	Samples   SampleCounts      `json:"samples"`
	Method    string            `json:"method,omitempty"`
	// Unqualified: no noise estimate was available; the literal threshold decided.
	Unqualified    bool     `json:"unqualified,omitempty"`
	Noise          *float64 `json:"noise,omitempty"`      // percent, one standard deviation of one run
	Z              *float64 `json:"z,omitempty"`          // robust z, positive when worse
	P              *float64 `json:"p,omitempty"`          // one-sided p-value of "worse" (shift test)
	PImproved      *float64 `json:"p_improved,omitempty"` // p-value of "better", for an improved check
	BaselineCommit string   `json:"baseline_commit,omitempty"`
	Distance       *int     `json:"distance,omitempty"`      // from the merge-base to BaselineCommit
	Window         int      `json:"window,omitempty"`        // measured commits in the noise window
	SegmentStart   string   `json:"segment_start,omitempty"` // oldest commit of the reference segment, when the window was cut
	Reason         string   `json:"reason,omitempty"`
	History        []Point  `json:"history,omitempty"` // the window, oldest first, then head
	// RunsToDecide, for an inconclusive check, is about how many runs a
	// side would decide it; 0 when more runs cannot (see Reason).
	RunsToDecide int `json:"runs_to_decide,omitempty"`
	// Uncompared, for an inconclusive check, says why nothing was
	// compared although the base branch has results of the benchmark:
	// "testbed", "labels" or "invalid" (see NotComparable).
	Uncompared string `json:"uncompared,omitempty"`
	// Accepted is the acceptance that turned this check's failure into
	// verdict accepted; CutAt the accepted change its window was cut at.
	Accepted *Acceptance `json:"accepted,omitempty"`
	CutAt    *Acceptance `json:"cut_at,omitempty"`
	// Resolution is the smallest regression the check can see with the
	// noise it measured (relative rules decided on a noise estimate).
	Resolution *Resolution `json:"resolution,omitempty"`
	// LoadNote says what the series' load curve makes of this change: the
	// server saturated at this load, or a trade-off of latency for
	// throughput (see LoadCurve); TradeOff is set when that trade-off
	// turned a latency failure into a pass (see the package comment,
	// "Load curves").
	LoadNote string `json:"load_note,omitempty"`
	TradeOff bool   `json:"trade_off,omitempty"`
	// RequestPercentiles, for a check of a latency percentile whose runs
	// stored their requests, is that percentile computed from head's and
	// the baseline's requests with its 95% interval; RequestNote says
	// what a percentile resting on few requests rests on (the report
	// repeats it as a warning). Neither changes the verdict.
	RequestPercentiles []RequestPercentile `json:"request_percentiles,omitempty"`
	RequestNote        string              `json:"request_note,omitempty"`
	// Testbed is the series' testbed ("" when not recorded); the tables
	// show it in a column when the report's checks have more than one.
	Testbed string `json:"testbed,omitempty"`

	limit  float64
	worse  bool // beyond the threshold in the bad direction
	better bool
}

// SampleCounts is how many values stood behind each side.
type SampleCounts struct {
	Baseline int `json:"baseline"`
	Current  int `json:"current"`
}

// Point is one value of a series at a commit.
type Point struct {
	Commit string  `json:"commit"`
	Value  float64 `json:"value"`
}

// Mismatch is a benchmark measured on both sides under different identity
// labels, which gate does not compare.
type Mismatch struct {
	Benchmark      string            `json:"benchmark"`
	HeadLabels     map[string]string `json:"head_labels"`
	BaselineLabels map[string]string `json:"baseline_labels"`
	Commit         string            `json:"commit"` // where the baseline's labels were seen
	Diff           string            `json:"diff"`
	// HeadTestbed and BaselineTestbed are set when the labels agree and
	// the testbeds differ.
	HeadTestbed     string `json:"head_testbed,omitempty"`
	BaselineTestbed string `json:"baseline_testbed,omitempty"`
}

// Failed reports whether the gate failed.
func (r *Report) Failed() bool { return r.Verdict == Fail }

// Undecided reports whether the report's verdict is inconclusive: no check
// failed, but some could not be decided (the rules file's inconclusive:
// warn, the default). It is not a pass: the check run is neutral.
func (r *Report) Undecided() bool { return r.Verdict == Inconclusive }

// WriteJSON writes the report as indented JSON, by encoding/json (two
// spaces, no HTML escaping). It writes nothing when a value cannot be
// encoded (a NaN or an infinity).
func (r *Report) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON writes v as an Encoder with SetIndent("", "  ") and HTML
// escaping off does, indenting with jsontext.AppendIndent: encoding/json's
// own indenting took longer than the encoding (issue 37).
func writeJSON(w io.Writer, v any) error {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(jsontext.AppendIndent(make([]byte, 0, compact.Len()*2), compact.Bytes(), "  "))
	return err
}

// num returns a pointer to v, or nil when v is not finite.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
