package gate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	runs := func(commit string, base float64, n int, labels map[string]string) []Sample {
		var out []Sample
		for i := 0; i < n; i++ {
			out = append(out, Sample{Commit: commit, Benchmark: "serving", Labels: labels,
				Metrics: map[string]float64{"mean_ttft_ms": base + float64(i), "output_throughput": 1000 - base + float64(i), "zz_custom": 1}})
		}
		return out
	}
	t.Run("repeated runs get a p-value and an assessment", func(t *testing.T) {
		c := CompareSamples("a", "b", runs("a", 100, 5, srvLabels), runs("b", 120, 5, srvLabels), nil)
		if len(c.Rows) != 3 {
			t.Fatalf("%d rows, want 3", len(c.Rows))
		}
		r := c.Rows[0] // throughputs sort before latencies, unknown metrics last
		if r.Metric != "output_throughput" || c.Rows[2].Metric != "zz_custom" {
			t.Errorf("row order %s, %s, %s", c.Rows[0].Metric, c.Rows[1].Metric, c.Rows[2].Metric)
		}
		ttft := c.Rows[1]
		if ttft.Metric != "mean_ttft_ms" || *ttft.A != 102 || *ttft.B != 122 || ttft.P == nil || *ttft.P > 0.05 || ttft.Assessment != "worse" {
			t.Errorf("ttft row %+v", ttft)
		}
		if r.Assessment != "worse" || c.Rows[2].Assessment != "" {
			t.Errorf("assessments %q %q", r.Assessment, c.Rows[2].Assessment)
		}
		if ch := *ttft.Change; ch < 19.6 || ch > 19.7 {
			t.Errorf("change %v, want +19.6%%", ch)
		}
	})
	t.Run("a label mismatch is reported", func(t *testing.T) {
		c := CompareSamples("a", "b", runs("a", 100, 1, map[string]string{"model": "x"}), runs("b", 100, 1, map[string]string{"model": "y"}), nil)
		if len(c.Mismatches) != 1 || !strings.Contains(strings.Join(c.Notes, "\n"), `model: "y" (B) vs "x" (A)`) {
			t.Errorf("mismatches %+v notes %q", c.Mismatches, c.Notes)
		}
		for _, r := range c.Rows {
			if r.A != nil && r.B != nil {
				t.Errorf("row %s compared across labels", r.Metric)
			}
		}
	})
	t.Run("invalid runs are named", func(t *testing.T) {
		bad := runs("b", 100, 1, srvLabels)
		bad[0].Metrics["completed"], bad[0].Metrics["failed"] = 500, 500
		c := CompareSamples("a", "b", runs("a", 100, 1, srvLabels), bad, nil)
		if !strings.Contains(strings.Join(c.Notes, "\n"), "on B (b) is invalid: 500 of 1000 requests failed") {
			t.Errorf("notes %q", c.Notes)
		}
	})
	t.Run("from history", func(t *testing.T) {
		w := newWorld(3, series1([]float64{100, 101, 102}, "mean_ttft_ms"), []Sample{srv(map[string]float64{"mean_ttft_ms": 110})})
		c, err := Compare(context.Background(), w.repo, CompareOptions{A: w.mb, B: w.head})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := c.WriteText(&b, true); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), ansiRed) {
			t.Errorf("a worse TTFT is not red on a terminal:\n%s", b.String())
		}
		_, err = Compare(context.Background(), w.repo, CompareOptions{A: w.mb, B: w.tip})
		if !errors.Is(err, ErrNoResults) {
			t.Errorf("unmeasured side: %v, want ErrNoResults", err)
		}
	})
}

func TestWriteFormats(t *testing.T) {
	c := CompareSamples("a", "b", nil, nil, nil)
	var b bytes.Buffer
	err := Write(&b, c, "csv", false)
	if err == nil || !strings.Contains(err.Error(), `-o "csv" is not a format of this command; use one of text, markdown, json`) {
		t.Errorf("csv for compare: %v", err)
	}
	if err := Write(&b, &Trend{}, "csv", false); err != nil {
		t.Errorf("csv for history: %v", err)
	}
}

func TestFmtNum(t *testing.T) {
	tests := map[float64]string{
		0: "0", 1000: "1000", 45.234: "45.234", 1234.56: "1234.56", 1234.567: "1234.567", 0.012345: "0.012345",
		-3.5: "-3.5", 8.0: "8", 99.95: "99.95", 1e20: "100000000000000000000", 299.96: "299.96", 306.11: "306.11",
		10233.45: "10233.45", 1.23456: "1.23456", 0.000123456: "0.000123456", 21.975: "21.975",
		// As measured, up to 8 significant digits (MindIE's 72.0491);
		// a median of averages is rounded to 5.
		72.0491: "72.0491", 1234.5678: "1234.5678", 100.0 / 3: "33.333", 2.0 / 3: "0.66667",
	}
	for v, want := range tests {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestFmtChange: two decimals, and more when the change would otherwise
// print as a round threshold it is not on (a fail of a 2% rule must not
// read "-2.00%").
func TestFmtChange(t *testing.T) {
	tests := map[float64]string{
		0: "0.00%", 0.004: "0.00%", -0.3: "-0.30%", 4.123: "+4.12%", 21: "+21.00%", -2: "-2.00%",
		-2.0012: "-2.001%", 3.0004: "+3.0004%", 2.5031: "+2.503%", -2.0097: "-2.01%", 100 * (299.96/306.11 - 1): "-2.01%",
		-13.502: "-13.50%", 15.0004: "+15.0004%",
	}
	for v, want := range tests {
		if got := fmtChange(&v); got != want {
			t.Errorf("fmtChange(%v) = %q, want %q", v, got, want)
		}
	}
	if got := fmtChange(nil); got != "-" {
		t.Errorf("fmtChange(nil) = %q", got)
	}
}
