package ingest

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixturesDir is ../shared/fixtures seen from the repository root; tests
// that read it skip when it is absent.
var fixturesDir = filepath.Join("..", "..", "shared", "fixtures")

// seedsDir holds copies of the user's own documents.
var seedsDir = filepath.Join("..", "testdata")

// readFixture returns a file under ../shared/fixtures or skips the test.
func readFixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixturesDir, rel))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("fixture %s absent (../shared/fixtures not beside the repo)", rel)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseString parses data as file with the given format ("" = auto).
func parseString(t testing.TB, data, file, format string) ([]Result, error) {
	t.Helper()
	r := NewReader(strings.NewReader(data), file, Options{Format: format})
	var out []Result
	for r.Scan() {
		out = append(out, r.Result())
	}
	return out, r.Err()
}

// mustParse parses and fails the test on error.
func mustParse(t testing.TB, data, file, format string) []Result {
	t.Helper()
	res, err := parseString(t, data, file, format)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return res
}

// approx compares floats with a relative tolerance of 1e-9.
func approx(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// wantMetric checks one metric of one result.
func wantMetric(t testing.TB, r Result, name string, want float64) {
	t.Helper()
	got, ok := r.Metrics[name]
	if !ok {
		t.Errorf("%s:%d: metric %s missing (have %v)", r.File, r.Line, name, keys(r.Metrics))
		return
	}
	if !approx(got, want) {
		t.Errorf("%s:%d: %s = %v, want %v", r.File, r.Line, name, got, want)
	}
}

func keys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkInvariants is what every parser guarantees for any input: no
// panic (the caller's fuzz harness), finite metrics, positioned errors.
func checkInvariants(t *testing.T, data, format string) {
	res, err := parseString(t, data, "fuzz.txt", format)
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("error is %T, not *ingest.Error: %v", err, err)
		}
		if !strings.HasPrefix(err.Error(), "fuzz.txt") {
			t.Fatalf("error does not name the file: %v", err)
		}
	}
	for _, r := range res {
		for k, v := range r.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("metric %s = %v is not finite", k, v)
			}
			if k == "" {
				t.Fatalf("empty metric name in %+v", r)
			}
		}
		if r.Format == "" {
			t.Fatalf("result without format: %+v", r)
		}
	}
}

// fuzzFormat runs the invariants over fuzzed input for one format (and
// auto-detection); seeds come from the arguments and from
// testdata/fuzz/<FuzzName>.
func fuzzFormat(f *testing.F, format string, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkInvariants(t, data, format)
		checkInvariants(t, data, "")
	})
}

// checkWarn checks that one of r's warnings contains want, or, for want
// "", that r has none.
func checkWarn(t testing.TB, r Result, want string) {
	t.Helper()
	if want == "" {
		if len(r.Warnings) > 0 {
			t.Errorf("%s:%d: unexpected warnings %q", r.File, r.Line, r.Warnings)
		}
		return
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, want) {
			return
		}
	}
	t.Errorf("%s:%d: no warning contains %q (warnings %q)", r.File, r.Line, want, r.Warnings)
}
