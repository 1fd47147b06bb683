package gate

import (
	"encoding/json"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/perfgate/perfgate/internal/jsontext"
)

// The check report's JSON is written by hand: byte for byte what
// encoding/json's Encoder (two-space indent, no HTML escaping) writes for
// a *Report, which TestReportJSONMatchesEncodingJSON holds it to. A check
// of 100 series with their windows is about 115 KB of JSON; encoding/json
// marshals it by reflection and then re-indents it in a second buffer,
// which in a short-lived perfgate check process cost about 2 ms (the
// buffers' page faults and a garbage collection included) of a 10 ms run
// (BenchmarkCheck10kProcess in cmd/perfgate). Written here through one
// reused 32 KB buffer, it is a few hundred microseconds.

// writeReportJSON writes r as encoding/json would encode it, with the
// trailing newline of Encoder.Encode, in writes of about 32 KB. Like
// encoding/json it writes nothing when a value cannot be encoded (a NaN
// or an infinity).
func writeReportJSON(w io.Writer, r *Report) error {
	if r == nil {
		_, err := io.WriteString(w, "null\n")
		return err
	}
	if err := r.checkFinite(); err != nil {
		return err
	}
	j := jsonWriter{b: make([]byte, 0, flushAt+4096), w: w}
	j.open('{')
	j.key("verdict")
	j.str(string(r.Verdict))
	j.key("head")
	j.str(r.Head)
	if r.Dirty {
		j.key("dirty")
		j.bool(true)
	}
	if len(r.Testbeds) > 0 {
		j.key("testbeds")
		j.open('[')
		for _, t := range r.Testbeds {
			j.elem()
			j.str(t)
		}
		j.close(']')
	}
	if r.Paired {
		j.key("paired")
		j.bool(true)
	}
	if r.BaseRef != "" {
		j.key("base_ref")
		j.str(r.BaseRef)
	}
	if r.Base != "" {
		j.key("base")
		j.str(r.Base)
	}
	j.key("baseline")
	j.open('{')
	j.key("commit")
	j.str(r.Baseline.Commit)
	j.key("merge_base")
	j.str(r.Baseline.MergeBase)
	j.key("distance")
	j.int(r.Baseline.Distance)
	j.close('}')
	j.key("rules")
	j.open('{')
	if r.Rules.File != "" {
		j.key("file")
		j.str(r.Rules.File)
	}
	j.key("defaults")
	j.bool(r.Rules.Defaults)
	j.key("count")
	j.int(r.Rules.Count)
	j.key("window")
	j.int(r.Rules.Window)
	j.key("max_distance")
	j.int(r.Rules.MaxDistance)
	j.key("missing_fails")
	j.bool(r.Rules.MissingFails)
	if r.Rules.Inconclusive != "" {
		j.key("inconclusive")
		j.str(r.Rules.Inconclusive)
	}
	j.close('}')
	s := r.Summary
	j.key("summary")
	j.open('{')
	for _, f := range [...]struct {
		k string
		v int
	}{{"checks", s.Checks}, {"pass", s.Pass}, {"fail", s.Fail}, {"inconclusive", s.Inconclusive}, {"improved", s.Improved}, {"accepted", s.Accepted}, {"new", s.New}, {"missing", s.Missing}} {
		j.key(f.k)
		j.int(f.v)
	}
	j.close('}')
	j.key("checks")
	if r.Checks == nil {
		j.null()
	} else {
		j.open('[')
		for i := range r.Checks {
			j.elem()
			j.check(&r.Checks[i])
		}
		j.close(']')
	}
	if len(r.Mismatches) > 0 {
		j.key("mismatches")
		j.open('[')
		for _, m := range r.Mismatches {
			j.elem()
			j.open('{')
			j.key("benchmark")
			j.str(m.Benchmark)
			j.key("head_labels")
			j.labels(m.HeadLabels)
			j.key("baseline_labels")
			j.labels(m.BaselineLabels)
			j.key("commit")
			j.str(m.Commit)
			j.key("diff")
			j.str(m.Diff)
			if m.HeadTestbed != "" {
				j.key("head_testbed")
				j.str(m.HeadTestbed)
			}
			if m.BaselineTestbed != "" {
				j.key("baseline_testbed")
				j.str(m.BaselineTestbed)
			}
			j.close('}')
		}
		j.close(']')
	}
	for _, f := range [...]struct {
		k string
		v []string
	}{{"warnings", r.Warnings}, {"notes", r.Notes}} {
		if len(f.v) == 0 {
			continue
		}
		j.key(f.k)
		j.open('[')
		for _, v := range f.v {
			j.elem()
			j.str(v)
		}
		j.close(']')
	}
	if r.SiteURL != "" {
		j.key("site_url")
		j.str(r.SiteURL)
	}
	j.close('}')
	j.b = append(j.b, '\n')
	j.flush()
	return j.err
}

func (j *jsonWriter) check(c *CheckResult) {
	j.open('{')
	j.key("benchmark")
	j.str(c.Benchmark)
	if len(c.Labels) > 0 {
		j.key("labels")
		j.labels(c.Labels)
	}
	j.key("metric")
	j.str(c.Metric)
	j.key("label")
	j.str(c.Label)
	j.key("rule")
	j.str(c.Rule)
	if c.Origin != "" {
		j.key("origin")
		j.str(c.Origin)
	}
	j.key("verdict")
	j.str(string(c.Verdict))
	j.key("baseline")
	j.floatPtr(c.Baseline)
	j.key("current")
	j.floatPtr(c.Current)
	j.key("change")
	j.floatPtr(c.Change)
	j.key("samples")
	j.open('{')
	j.key("baseline")
	j.int(c.Samples.Baseline)
	j.key("current")
	j.int(c.Samples.Current)
	j.close('}')
	if c.Method != "" {
		j.key("method")
		j.str(c.Method)
	}
	if c.Unqualified {
		j.key("unqualified")
		j.bool(true)
	}
	for _, f := range [...]struct {
		k string
		v *float64
	}{{"noise", c.Noise}, {"z", c.Z}, {"p", c.P}, {"p_improved", c.PImproved}} {
		if f.v != nil {
			j.key(f.k)
			j.float(*f.v)
		}
	}
	if c.BaselineCommit != "" {
		j.key("baseline_commit")
		j.str(c.BaselineCommit)
	}
	if c.Distance != nil {
		j.key("distance")
		j.int(*c.Distance)
	}
	if c.Window != 0 {
		j.key("window")
		j.int(c.Window)
	}
	if c.SegmentStart != "" {
		j.key("segment_start")
		j.str(c.SegmentStart)
	}
	if c.Reason != "" {
		j.key("reason")
		j.str(c.Reason)
	}
	if len(c.History) > 0 {
		j.key("history")
		j.open('[')
		for _, p := range c.History {
			j.elem()
			j.open('{')
			j.key("commit")
			j.str(p.Commit)
			j.key("value")
			j.float(p.Value)
			j.close('}')
		}
		j.close(']')
	}
	if c.RunsToDecide != 0 {
		j.key("runs_to_decide")
		j.int(c.RunsToDecide)
	}
	if c.Accepted != nil {
		j.key("accepted")
		j.acceptance(c.Accepted)
	}
	if c.CutAt != nil {
		j.key("cut_at")
		j.acceptance(c.CutAt)
	}
	j.close('}')
}

// acceptance writes an Acceptance as encoding/json would.
func (j *jsonWriter) acceptance(a *Acceptance) {
	j.open('{')
	j.key("commit")
	j.str(a.Commit)
	if a.Benchmark != "" {
		j.key("benchmark")
		j.str(a.Benchmark)
	}
	if a.Metric != "" {
		j.key("metric")
		j.str(a.Metric)
	}
	j.key("reason")
	j.str(a.Reason)
	j.key("by")
	j.str(a.By)
	j.key("time")
	j.str(a.Time.Format(time.RFC3339Nano))
	j.close('}')
}

// checkFinite returns encoding/json's error for the first float it
// cannot encode.
func (r *Report) checkFinite() error {
	bad := func(v float64) error {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &json.UnsupportedValueError{Value: reflect.ValueOf(v), Str: strconv.FormatFloat(v, 'g', -1, 64)}
		}
		return nil
	}
	for i := range r.Checks {
		c := &r.Checks[i]
		for _, p := range [...]*float64{c.Baseline, c.Current, c.Change, c.Noise, c.Z, c.P, c.PImproved} {
			if p != nil {
				if err := bad(*p); err != nil {
					return err
				}
			}
		}
		for _, p := range c.History {
			if err := bad(p.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonWriter appends indented JSON: two spaces per level, empty objects
// and arrays as {} and [], as json.Indent lays them out.
type jsonWriter struct {
	b     []byte
	depth int
	empty bool // the innermost open object or array has no member yet
	w     io.Writer
	err   error // the first write error; nothing is written after it
}

// flushAt is the buffered size from which elem writes the buffer out.
const flushAt = 32 << 10

func (j *jsonWriter) flush() {
	if j.err == nil && len(j.b) > 0 {
		_, j.err = j.w.Write(j.b)
	}
	j.b = j.b[:0]
}

func (j *jsonWriter) newline() {
	j.b = append(j.b, '\n')
	for range j.depth {
		j.b = append(j.b, ' ', ' ')
	}
}

func (j *jsonWriter) open(c byte) {
	j.b = append(j.b, c)
	j.depth++
	j.empty = true
}

func (j *jsonWriter) close(c byte) {
	j.depth--
	if !j.empty {
		j.newline()
	}
	j.b = append(j.b, c)
	j.empty = false
}

// elem starts an array element.
func (j *jsonWriter) elem() {
	if len(j.b) >= flushAt {
		j.flush()
	}
	if !j.empty {
		j.b = append(j.b, ',')
	}
	j.empty = false
	j.newline()
}

// key starts an object member.
func (j *jsonWriter) key(k string) {
	j.elem()
	j.str(k)
	j.b = append(j.b, ':', ' ')
}

func (j *jsonWriter) null() { j.b = append(j.b, "null"...) }

func (j *jsonWriter) bool(v bool) { j.b = strconv.AppendBool(j.b, v) }

func (j *jsonWriter) int(v int) { j.b = strconv.AppendInt(j.b, int64(v), 10) }

// float is encoding/json's float64 encoding (the value is finite).
func (j *jsonWriter) float(f float64) {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	j.b = strconv.AppendFloat(j.b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(j.b); n >= 4 && j.b[n-4] == 'e' && j.b[n-3] == '-' && j.b[n-2] == '0' {
			j.b[n-2] = j.b[n-1]
			j.b = j.b[:n-1]
		}
	}
}

func (j *jsonWriter) floatPtr(p *float64) {
	if p == nil {
		j.null()
		return
	}
	j.float(*p)
}

// labels writes a map as encoding/json does: null when nil, keys sorted.
func (j *jsonWriter) labels(m map[string]string) {
	if m == nil {
		j.null()
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	j.open('{')
	for _, k := range keys {
		j.key(k)
		j.str(m[k])
	}
	j.close('}')
}

// str writes s as encoding/json does (jsontext.AppendString).
func (j *jsonWriter) str(s string) { j.b = jsontext.AppendString(j.b, s) }
