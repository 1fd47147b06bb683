package gate

import (
	"fmt"
	"strings"
	"testing"
)

// TestRequestWarningsBounded: a sweep of 6 loads x 3 benchmarks gated on
// p99_ttft_ms and p99_e2el_ms has 36 percentiles resting on few requests;
// the report warns of the first ones in full and counts the rest in one
// warning naming their metrics, instead of 36 near-identical lines (a
// third of a PR comment's room, above its table). Up to the bound each
// check keeps its own warning.
func TestRequestWarningsBounded(t *testing.T) {
	const bound = 4 // maxRequestWarnings
	checks := func(n int) []CheckResult {
		var out []CheckResult
		for i := range n {
			m := []string{"p99_ttft_ms", "p99_e2el_ms"}[i%2]
			out = append(out, CheckResult{Benchmark: "serve", Labels: map[string]string{"max_concurrency": fmt.Sprint(i)}, Metric: m,
				RequestNote: "head's P99 of 10 requests is the slowest one"})
			out = append(out, CheckResult{Benchmark: "serve", Metric: "mean_ttft_ms"}) // no note
		}
		return out
	}
	if got := requestWarnings(checks(bound)); len(got) != bound || strings.Contains(strings.Join(got, "\n"), "more checks") {
		t.Errorf("%d notes: want each in full, got %q", bound, got)
	}
	got := requestWarnings(checks(36))
	if len(got) != bound {
		t.Fatalf("36 notes: %d warnings, want %d: %q", len(got), bound, got)
	}
	for _, w := range got[:bound-1] {
		if !strings.Contains(w, "serve {max_concurrency=") || !strings.Contains(w, "is the slowest one") {
			t.Errorf("a kept warning lacks its series or note: %q", w)
		}
	}
	last := got[bound-1]
	if !strings.HasPrefix(last, fmt.Sprintf("%d more checks (p99_e2el_ms, p99_ttft_ms) have a percentile resting on few requests", 36-bound+1)) ||
		!strings.Contains(last, "request_note (-o json)") {
		t.Errorf("the last warning does not count the others: %q", last)
	}
}
