package gate

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestFitText: a report fitted to 100 columns has no line over 100
// visible characters, cuts the table's first column with "…" (every row
// alike), wraps warnings under their text, and loses no word.
func TestFitText(t *testing.T) {
	long := "serving {backend=vllm,gpu=H100,model=meta-llama/Llama-3.1-8B-Instruct,request_rate=inf}"
	text := "FAIL  1 of 2 checks failed\n" +
		"warning   " + strings.Repeat("a long warning that says what to do ", 6) + "\n" +
		"\n" +
		"\x1b[1mBENCHMARK" + strings.Repeat(" ", len(long)-9+2) + "METRIC          BASELINE  CURRENT  VERDICT\x1b[0m\n" +
		long + "  Mean TTFT (ms)       100      112  \x1b[31mFAIL\x1b[0m\n" +
		"short" + strings.Repeat(" ", len(long)-5+2) + "Mean TPOT (ms)        20       20  PASS\n" +
		"N: values behind baseline/current.\n" +
		"\n" +
		"Why\n" +
		"  " + long + " Mean TTFT (ms): fail: +12.00% against the reference (median of 20 results), beyond the 5% limit\n"
	got := FitText(text, 100)
	for _, l := range strings.Split(got, "\n") {
		if n := utf8.RuneCountInString(visible(l)); n > 100 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(got, "serving {backend=vllm,gpu=H100,model=meta-llama/Llama-3…  Mean TTFT") {
		t.Errorf("the first column is not cut with …:\n%s", got)
	}
	rows := strings.Split(got, "\n")
	var metricCol []int
	for _, l := range rows {
		v := visible(l)
		if i := strings.Index(v, "  Mean T"); i >= 0 {
			metricCol = append(metricCol, utf8.RuneCountInString(v[:i]))
		}
	}
	if len(metricCol) != 2 || metricCol[0] != metricCol[1] {
		t.Errorf("the rows' columns no longer align: %v\n%s", metricCol, got)
	}
	if !strings.Contains(got, "\n          that says") || !strings.Contains(got, "\n    (ms): fail") {
		t.Errorf("a warning or a reason does not continue under its text:\n%s", got)
	}
	for _, w := range strings.Fields(visible(text)) {
		if !strings.Contains(visible(got), strings.TrimRight(w, "…")) && !strings.Contains(w, "{") {
			t.Errorf("lost %q", w)
		}
	}
	if FitText(text, 0) != text {
		t.Error("width 0 changed the text")
	}
}
