package gate

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/slo"
)

// e2elSweep is a sweep of five loads whose runs carry a per-request
// summary (TTFT, TPOT, E2EL per request, E2EL growing with the load) and
// the tool's p99_tpot_ms; withMetric also sets each SLO metric of kind
// e2el the tool would have printed (the summary's own percentile), as
// vLLM does with --percentile-metrics ttft,tpot,itl,e2el.
func e2elSweep(t *testing.T, withMetric []string, summaries bool) []Sample {
	t.Helper()
	var out []Sample
	for _, c := range []int{4, 8, 16, 32, 64} {
		b := slo.NewBuilder(nil)
		b.Has("ttft", "tpot", "e2el")
		n := 200
		for i := range n {
			e2el := 1000 + 60*float64(c) + 4*float64(c)*float64(i%50)
			b.Add(slo.Request{TTFT: 50 + float64(c), TPOT: 10 + float64(c)/4, E2EL: e2el})
		}
		sum := b.Summary()
		m := map[string]float64{"request_throughput": float64(c) / ((1000 + 160*float64(c)) / 1000), "p99_tpot_ms": 10 + float64(c)/4, "completed": float64(n)}
		for _, name := range withMetric {
			p, kind, ok := percentileMetric(name)
			if !ok {
				t.Fatalf("%s is no percentile metric", name)
			}
			q, err := sum.Percentile(kind, p, requestConf)
			if err != nil {
				t.Fatal(err)
			}
			m[name] = q.Value
		}
		s := Sample{Benchmark: "serving-qwen", Labels: map[string]string{"model": "qwen", "max_concurrency": strconv.Itoa(c)}, Metrics: m}
		if summaries {
			s.Requests = sum
		}
		out = append(out, s)
	}
	return out
}

// TestCapacityFromRequests: a curve whose points lack the SLO's latency
// (vLLM's default --percentile-metrics has no e2el) but carry their
// requests gets the capacity the tool's metric would have given, at the
// SLO's percentile or attainment target; without requests it gets none.
func TestCapacityFromRequests(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slo    SLO
		metric string
		status string
	}{
		{"p99 e2el", SLO{E2ELMs: 3000}, "p99_e2el_ms", CapacityInterpolated},
		{"p99 e2el and tpot", SLO{E2ELMs: 3000, TPOTMs: 25}, "p99_e2el_ms", CapacityInterpolated},
		{"attainment 90%", SLO{E2ELMs: 3000, Percentile: "p90", Attainment: 0.9}, "p90_e2el_ms", CapacityInterpolated},
		{"median e2el", SLO{E2ELMs: 2500, Percentile: "median"}, "median_e2el_ms", CapacityInterpolated},
		{"beyond the swept range", SLO{E2ELMs: 100000}, "p99_e2el_ms", CapacityBeyond},
		{"no point meets it", SLO{E2ELMs: 10}, "p99_e2el_ms", CapacityNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			with := Curves(e2elSweep(t, []string{tc.metric}, false), nil)[0]
			want, ok := with.Capacity(tc.slo)
			if !ok || want.Status != tc.status {
				t.Fatalf("with %s: %+v, %v; want %s", tc.metric, want, ok, tc.status)
			}
			without := Curves(e2elSweep(t, nil, true), nil)[0]
			if _, ok := without.Points[0].Latency[tc.metric]; ok {
				t.Fatalf("the curve has %s before its requests are read", tc.metric)
			}
			filled, names := without.WithRequestLatencies(tc.slo)
			if _, ok := without.Points[0].Latency[tc.metric]; ok {
				t.Fatal("WithRequestLatencies changed the curve it was called on")
			}
			for _, c := range []Curve{without, filled} {
				got, ok := c.Capacity(tc.slo)
				if !ok || got.Status != want.Status || math.Abs(got.Requests-want.Requests) > 1e-9*want.Requests {
					t.Errorf("from the requests: %+v, %v; with the metric: %+v", got, ok, want)
				}
			}
			got, ok := filled.Capacity(tc.slo)
			if !ok || got.Status != want.Status || math.Abs(got.Requests-want.Requests) > 1e-9*want.Requests {
				t.Errorf("from the requests: %+v, %v; with the metric: %+v", got, ok, want)
			}
			if len(names) != 1 || names[0] != tc.metric {
				t.Errorf("filled %v, want [%s]", names, tc.metric)
			}
			d := DeriveCapacity(e2elSweep(t, nil, true), []SLO{tc.slo}, nil)
			if len(d) != 1 || math.Abs(d[0].Metrics["capacity"]-want.Requests) > 1e-9*want.Requests {
				t.Errorf("derived capacity %+v, want %g req/s", d, want.Requests)
			}
			if d := DeriveCapacity(e2elSweep(t, nil, false), []SLO{tc.slo}, nil); len(d) != 0 {
				t.Errorf("a curve without %s or requests has a capacity: %+v", tc.metric, d)
			}
		})
	}
	t.Run("one point without requests", func(t *testing.T) {
		ss := e2elSweep(t, nil, true)
		ss[2].Requests = nil
		if d := DeriveCapacity(ss, []SLO{{E2ELMs: 3000}}, nil); len(d) != 0 {
			t.Errorf("a curve with a point lacking p99_e2el_ms and requests has a capacity: %+v", d)
		}
	})
	t.Run("mean has no percentile", func(t *testing.T) {
		if d := DeriveCapacity(e2elSweep(t, nil, true), []SLO{{E2ELMs: 3000, Percentile: "mean"}}, nil); len(d) != 0 {
			t.Errorf("a mean SLO got a capacity from the requests: %+v", d)
		}
	})
}

// TestCapacityFromRequestsReport: the check report says once which
// latency was taken from the stored requests, and capacity is checked.
func TestCapacityFromRequestsReport(t *testing.T) {
	w := newWorld(3, func(int) []Sample { return e2elSweep(t, nil, true) }, e2elSweep(t, nil, true))
	rep := w.checkCfg(t, sloConfig(t, "slo:\n  e2el_ms: 3000\nrules:\n  - metric: capacity\n    max_regression: 5%\n"))
	if c := findCheck(rep, "capacity", ""); c == nil || c.Verdict != Pass {
		t.Fatalf("capacity check %+v; checks %+v", c, rep.Checks)
	}
	if len(rep.Load) != 1 || rep.Load[0].Capacity == nil || rep.Load[0].BaselineCapacity == nil {
		t.Fatalf("load %+v", rep.Load)
	}
	var text strings.Builder
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	const note = "p99_e2el_ms of head's and the baseline's points taken from the stored requests"
	if strings.Count(text.String(), note) != 1 || strings.Contains(text.String(), "capacity at the SLO not computed") {
		t.Errorf("the report does not say once %q:\n%s", note, text.String())
	}
}
