package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// TestReportJSONNonFinite: a report holding a NaN or an infinity is not
// written at all (encoding/json marshals before it writes), and the error
// says which value.
func TestReportJSONNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, r := range []*Report{
			{Checks: []CheckResult{{History: []Point{{Commit: "a", Value: v}}}}},
			{Checks: []CheckResult{{Z: &v}}},
		} {
			var buf bytes.Buffer
			err := r.WriteJSON(&buf)
			var ue *json.UnsupportedValueError
			if !errors.As(err, &ue) {
				t.Errorf("value %v: WriteJSON error %v, want an UnsupportedValueError", v, err)
			}
			if buf.Len() != 0 {
				t.Errorf("value %v: WriteJSON wrote %q before failing", v, buf.Bytes())
			}
		}
	}
}

// TestReportJSONNoHTMLEscape: text from a PR (a benchmark name, an
// acceptance reason) keeps its <, > and & in the JSON, as the reports'
// readers (jq, the PR comment) expect; JSON itself stays valid.
func TestReportJSONNoHTMLEscape(t *testing.T) {
	r := &Report{Verdict: Fail, Head: "h", Checks: []CheckResult{{Benchmark: "<b>&amp;</b>"}}}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"<b>&amp;</b>"`)) {
		t.Errorf("WriteJSON escaped HTML: %s", buf.Bytes())
	}
	var back Report
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back.Checks[0].Benchmark != "<b>&amp;</b>" {
		t.Errorf("round trip: %v, %+v", err, back.Checks)
	}
}
