package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMLPerf(t *testing.T) {
	server := map[string]float64{
		"request_throughput": 100.35, "output_throughput": 29228.22, "scheduled_samples_per_second": 101.25,
		"min_e2el_ms": 196.445828, "mean_e2el_ms": 35854.894885, "median_e2el_ms": 31107.282906, "p99.9_e2el_ms": 132503.046236,
		"mean_ttft_ms": 198.269106, "p99_ttft_ms": 452.744202, "median_tpot_ms": 124.285539, "p97_tpot_ms": 140.157508,
	}
	for _, mode := range []string{"", "mlperf"} {
		runFormatCases(t, []formatCase{
			{file: "mlperf/v4.1_llama2-70b_server.txt", format: mode, count: 1, resFormat: "mlperf", metrics: server,
				absent: []string{"target_qps", "samples_per_query", "ttft_latency_ms"},
				labels: map[string]string{"scenario": "Server", "mode": "PerformanceOnly", "sut": "llama2-70b-Server-SUT", "target_qps": "101"}},
			{file: "mlperf/v4.1_llama2-70b_offline.txt", format: mode, count: 1, resFormat: "mlperf",
				metrics: map[string]float64{"request_throughput": 107.477, "output_throughput": 31302.7, "max_e2el_ms": 2743947.981334, "median_e2el_ms": 1391706.720834},
				labels:  map[string]string{"scenario": "Offline", "target_qps": "104"}},
			// Two summaries pasted into a page (a code fence, <pre> and
			// <b>), both INVALID, without LoadGen's closing lines.
			{file: "mlperf/issue_pasted_invalid.md", format: mode, count: 2, idx: 0, resFormat: "mlperf",
				metrics: map[string]float64{"p90_e2el_ms": 700.060891, "mean_e2el_ms": 635.649808, "qps_without_loadgen_overhead": 1.57},
				labels:  map[string]string{"scenario": "SingleStream", "sut": "PySUT"},
				warn:    `MLPerf summary ends after line 34 without LoadGen's closing`},
			{file: "mlperf/issue_pasted_invalid.md", format: mode, count: 2, idx: 1, resFormat: "mlperf",
				metrics: map[string]float64{"request_throughput": 1.21305}, labels: map[string]string{"scenario": "Offline"},
				warn: "ends after line 52"},
		})
	}
}

func TestMLPerfValidity(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "mlperf", "issue_pasted_invalid.md"))
	if err != nil {
		t.Fatal(err)
	}
	res := mustParse(t, string(data), "invalid.md", "")
	want := []string{
		"MLPerf LoadGen: Result is INVALID (not satisfied: early stopping)",
		"MLPerf LoadGen: Result is INVALID (not satisfied: min duration)",
	}
	for i, w := range want {
		if res[i].Invalid != w {
			t.Errorf("result %d: Invalid = %q, want %q", i, res[i].Invalid, w)
		}
	}
	valid := readTestdata(t, "mlperf/v4.1_llama2-70b_server.txt")
	if r := mustParse(t, valid, "s.txt", ""); r[0].Invalid != "" || len(r[0].Warnings) != 0 {
		t.Errorf("VALID run: Invalid %q, warnings %q", r[0].Invalid, r[0].Warnings)
	}
	errs := strings.Replace(valid, "No errors encountered during test.", "2 ERRORS encountered. See detailed log.", 1)
	checkWarn(t, mustParse(t, errs, "e.txt", "")[0], `LoadGen reports "2 ERRORS encountered. See detailed log."`)
}

// TestMLPerfCut cuts the Server summary at several lines: inside its
// Additional Stats or before its result it is an error at the last line;
// after the stats' 99.90 percentile it is kept with a warning.
func TestMLPerfCut(t *testing.T) {
	lines := strings.Split(readTestdata(t, "mlperf/v4.1_llama2-70b_server.txt"), "\n")
	cases := []struct {
		keep int    // lines kept
		err  string // "" = kept with a warning
	}{
		{keep: 6, err: `lacks the scenario's result (samples per second or percentile latency), "Result is"`},
		{keep: 8, err: `lacks "Result is"`},
		{keep: 25, err: "lacks the 99.90 percentile latency of its Additional Stats"},
		{keep: 31},
		{keep: 60},
	}
	for _, c := range cases {
		data := strings.Join(lines[:c.keep], "\n")
		res, err := parseString(t, data, "cut.txt", "")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "cut.txt:") {
				t.Errorf("cut after %d lines: error %v, want one containing %q", c.keep, err, c.err)
			}
			continue
		}
		if err != nil || len(res) != 1 {
			t.Fatalf("cut after %d lines: %d results, %v", c.keep, len(res), err)
		}
		checkWarn(t, res[0], "without LoadGen's closing")
	}
}

// readTestdata returns a testdata file as a string.
func readTestdata(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func FuzzMLPerf(f *testing.F) { fuzzFormat(f, "mlperf", docSeeds(f, "mlperf")...) }

// TestMLPerfLogAfter: log lines after a summary without its closing line
// end it; they are not read as its values.
func TestMLPerfLogAfter(t *testing.T) {
	lines := strings.Split(readTestdata(t, "mlperf/v4.1_llama2-70b_offline.txt"), "\n")
	data := strings.Join(lines[:26], "\n") + "\n2025-03-01 10:00:01 INFO main: 12\n[rank0]: done: 3\nMean latency (ns) : 5\n"
	res := mustParse(t, data, "log.txt", "")
	if len(res) != 1 {
		t.Fatalf("%d results", len(res))
	}
	wantMetric(t, res[0], "mean_e2el_ms", 1391864.085542)
	if len(res[0].Metrics) != 11 {
		t.Errorf("metrics %v", keys(res[0].Metrics))
	}
	checkWarn(t, res[0], "ends after line 26 without LoadGen's closing")
}
