package gate

import (
	"math"
	"testing"
)

func TestSeriesIdentity(t *testing.T) {
	id := NewSeriesIdentity([]string{"batch"})
	a := &Sample{Benchmark: "serving", Labels: map[string]string{"model": "m", "host": "x", "batch": "1"}, Testbed: "tb"}
	b := &Sample{Benchmark: "serving", Labels: map[string]string{"model": "m", "host": "y", "batch": "2"}, Testbed: "tb"}
	c := &Sample{Benchmark: "serving", Labels: map[string]string{"model": "m"}, Testbed: "other"}
	if id.Key(a) != id.Key(b) {
		t.Errorf("descriptive and ignored labels split a series: %q vs %q", id.Key(a), id.Key(b))
	}
	if id.Key(a) == id.Key(c) {
		t.Errorf("two testbeds share a series")
	}
	if l := id.Labels(a); len(l) != 2 || l["model"] != "m" || l[TestbedLabel] != "tb" {
		t.Errorf("Labels = %v, want model and testbed", l)
	}
	if InvalidReason(&Sample{Metrics: map[string]float64{"completed": 50, "failed": 50}}) == "" {
		t.Errorf("half the requests failed, and the sample is valid")
	}
}

func TestNoiseBandAndChangePoints(t *testing.T) {
	var flat, step []float64
	for i := range 40 {
		v := 100 + float64(i%5) - 2 // noise of a few percent
		flat = append(flat, v)
		if i >= 25 {
			v *= 1.3
		}
		step = append(step, v)
	}
	b, ok := NoiseBand(flat[:20])
	if !ok || b.Start != 0 || b.Lo >= b.Ref || b.Hi <= b.Ref || b.Lo > 98 || b.Hi < 102 || b.Hi > 115 {
		t.Errorf("NoiseBand(flat) = %+v, %v: want a band around 100 that holds the noise", b, ok)
	}
	if cps := ChangePoints(step); len(cps) != 1 || cps[0] != 25 {
		t.Errorf("ChangePoints(step at 25) = %v", cps)
	}
	if cps := ChangePoints(flat); cps != nil {
		t.Errorf("ChangePoints(flat) = %v, want none", cps)
	}
	for _, bad := range [][]float64{{1, 2, 3}, {1, 2, 0, 4, 5, 6}, {1, 2, math.Inf(1), 4, 5, 6}} {
		if _, ok := NoiseBand(bad); ok {
			t.Errorf("NoiseBand(%v) has a band", bad)
		}
	}
}
