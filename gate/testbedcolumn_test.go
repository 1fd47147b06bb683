package gate

import (
	"strings"
	"testing"
)

// TestTestbedColumn: head measured on two testbeds gives two rows of one
// benchmark and metric; the text and markdown tables name each row's
// testbed, and a report of one testbed has no such column.
func TestTestbedColumn(t *testing.T) {
	noise := noisy(3, 30, 1, 0.01)
	mixed := func(i int) []Sample {
		return []Sample{onBed(laptop, 100*noise[i]), onBed(ciBed, 150*noise[i])}
	}
	w := newWorld(30, mixed, []Sample{onBed(laptop, 100), onBed(ciBed, 165)})
	rep := w.check(t, "mean_ttft_ms:5%")
	beds := map[string]Verdict{}
	for _, c := range rep.Checks {
		beds[c.Testbed] = c.Verdict
	}
	if beds[laptop] != Pass || beds[ciBed] != Fail {
		t.Fatalf("checks by testbed %v, want the laptop passing and CI failing", beds)
	}
	var text, md strings.Builder
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "BENCHMARK  TESTBED") {
		t.Errorf("text table has no testbed column:\n%s", text.String())
	}
	for _, out := range []string{text.String(), md.String()} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, "Mean TTFT") && strings.Contains(line, "165") && !strings.Contains(line, ciBed) {
				t.Errorf("the failing row does not name its testbed %q: %s", ciBed, line)
			}
		}
	}
	if !strings.Contains(md.String(), "| Benchmark | Testbed | Metric |") {
		t.Errorf("markdown table has no testbed column:\n%s", md.String())
	}

	one := newWorld(30, mixed, []Sample{onBed(laptop, 100)}).check(t, "mean_ttft_ms:5%")
	text.Reset()
	if err := one.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "TESTBED") {
		t.Errorf("a report of one testbed has a testbed column:\n%s", text.String())
	}
}
