package gate

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// curveOf builds a curve of p99_ttft_ms from (load, req/s, ms) triples in
// load order.
func curveOf(pts ...[3]float64) Curve {
	var c Curve
	for _, p := range pts {
		c.Points = append(c.Points, LoadPoint{Load: fmtNum(p[0]), Requests: p[1], Latency: map[string]float64{"p99_ttft_ms": p[2]}, Runs: 1})
	}
	return c
}

// TestRelationSaturated: past saturation a curve's throughput stops
// growing while its latency (queueing) grows with the load, so several
// points share one throughput. An unchanged head matches the baseline
// there (it used to be "dominated": its saturated points were compared
// with the baseline's unsaturated point of the same throughput), a head
// whose capacity fell is dominated, one whose capacity rose dominates.
func TestRelationSaturated(t *testing.T) {
	base := curveOf([3]float64{4, 1.53, 51.4}, [3]float64{8, 3.07, 51.4}, [3]float64{16, 6.13, 51.4}, [3]float64{32, 6.13, 2738}, [3]float64{64, 6.13, 8110})
	rateBase := curveOf([3]float64{2, 2.0117, 62.5}, [3]float64{4, 4.0071, 83.333}, [3]float64{8, 8.0585, 250}, [3]float64{16, 9.998, 7511.36}, [3]float64{32, 9.9001, 13890.61})
	noisyBase := curveOf([3]float64{4, 1.53, 51.4}, [3]float64{8, 3.06, 51.5}, [3]float64{16, 6.13, 51.4}, [3]float64{32, 6.12, 2738}, [3]float64{64, 6.135, 8110})
	for _, tc := range []struct {
		name       string
		head, base Curve
		want       string
	}{
		{"unchanged", base, base, RelMatches},
		{"unchanged within noise", curveOf([3]float64{4, 1.532, 51.45}, [3]float64{8, 3.065, 51.4}, [3]float64{16, 6.125, 51.5}, [3]float64{32, 6.13, 2740}, [3]float64{64, 6.12, 8105}), noisyBase, RelMatches},
		{"capacity 10% lower", curveOf([3]float64{4, 1.37, 51.4}, [3]float64{8, 2.74, 51.4}, [3]float64{16, 5.47, 51.4}, [3]float64{32, 5.47, 3061}, [3]float64{64, 5.47, 9080}), base, RelDominated},
		// A request-rate sweep whose rate 8 sits where the curve turns
		// steep: head achieved 1.5% less there at the same latency, and
		// the baseline interpolated at 1.5% less is 2% lower.
		{"unchanged, throughput noise on a steep segment", curveOf([3]float64{2, 2.012, 62.5}, [3]float64{4, 3.9601, 83.333}, [3]float64{8, 7.9387, 250}, [3]float64{16, 10.022, 7426.77}, [3]float64{32, 9.9169, 13695.8}), rateBase, RelMatches},
		{"rate sweep, capacity 10% lower", curveOf([3]float64{2, 1.9962, 64.286}, [3]float64{4, 4.0025, 90}, [3]float64{8, 8.059, 450}, [3]float64{16, 8.9701, 9779.53}, [3]float64{32, 8.9978, 16000.88}), rateBase, RelDominated},
		{"capacity 10% higher", curveOf([3]float64{4, 1.53, 51.4}, [3]float64{8, 3.07, 51.4}, [3]float64{16, 6.13, 51.4}, [3]float64{32, 6.75, 2400}, [3]float64{64, 6.75, 7300}), base, RelDominates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, m := relation(tc.head, tc.base, "p99_ttft_ms", matchTolerance); got != tc.want {
				t.Errorf("relation = %q, want %q (matched %+v)", got, tc.want, m)
			}
		})
	}
}

// TestCapacityLineReference: the load section's capacity line names the
// load label of the points it cites, and when the capacity rule's
// reference (the median of the base branch's capacities) is not the
// baseline commit's capacity shown beside head's, it says so, with both,
// instead of two different "baseline" capacities without a word.
func TestCapacityLineReference(t *testing.T) {
	rep := capacityWorld(refServer.sweep(nil)).checkCfg(t, sloConfig(t, sloRules))
	c := findCheck(rep, "capacity", "")
	if c == nil || c.Baseline == nil || len(rep.Load) != 1 || rep.Load[0].BaselineCapacity == nil {
		t.Fatalf("capacity check %+v, load %+v", c, rep.Load)
	}
	if *c.Baseline == rep.Load[0].BaselineCapacity.Requests {
		t.Fatalf("the world's reference equals the baseline commit's capacity (%v): the test needs them apart", *c.Baseline)
	}
	var text, md bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		out  string
	}{{"text", text.String()}, {"markdown", md.String()}} {
		for _, want := range []string{
			"interpolated between max_concurrency=16 and 24",
			"baseline " + shortSHA(rep.Load[0].BaselineCommit) + " ",
			"the capacity rule compares head with its reference, " + fmtNum(*c.Baseline) + " req/s: the median of " + strconv.Itoa(c.Samples.Baseline) + " base-branch capacities",
		} {
			if !strings.Contains(tc.out, want) && !strings.Contains(tc.out, strings.ReplaceAll(want, "_", `\_`)) {
				t.Errorf("%s report lacks %q:\n%s", tc.name, want, tc.out)
			}
		}
		if n := strings.Count(tc.out, "capacity at the SLO ("); n != 0 {
			t.Errorf("%s report repeats the capacity line as a note %d times:\n%s", tc.name, n, tc.out)
		}
	}
}

// TestChecksInLoadOrder: the checks of a sweep's points are listed in the
// order of their loads (4, 8, 16, 24, 48), not of their label strings
// (16, 24, 4, 48, 8).
func TestChecksInLoadOrder(t *testing.T) {
	rep := capacityWorld(refServer.sweep(nil)).checkCfg(t, sloConfig(t, sloRules))
	var got []string
	for _, c := range rep.Checks {
		if c.Metric == "mean_tpot_ms" {
			got = append(got, c.Labels["max_concurrency"])
		}
	}
	if want := "4 8 16 24 48"; strings.Join(got, " ") != want {
		t.Errorf("checks in order %v, want %s", got, want)
	}
}

// TestCompareInLoadOrder: compare lists a sweep's points in the order of
// their loads, as check does.
func TestCompareInLoadOrder(t *testing.T) {
	sweep := func(commit string) []Sample {
		var out []Sample
		for _, c := range []string{"16", "4", "64", "8", "32"} {
			out = append(out, Sample{Commit: commit, Benchmark: "serving", Labels: map[string]string{"max_concurrency": c}, Metrics: map[string]float64{"mean_ttft_ms": 10}})
		}
		return out
	}
	c := CompareSamples("a", "b", sweep("a"), sweep("b"), nil)
	var got []string
	for _, r := range c.Rows {
		got = append(got, r.Labels["max_concurrency"])
	}
	if want := "4 8 16 32 64"; strings.Join(got, " ") != want {
		t.Errorf("rows in order %v, want %s", got, want)
	}
}

// TestRelText: a curve worse at one matched load and the same at the
// others is "dominated", and the report does not claim it is worse at
// every matched load.
func TestRelText(t *testing.T) {
	base := curveOf([3]float64{2, 2, 60}, [3]float64{4, 4, 80}, [3]float64{8, 8, 250})
	head := curveOf([3]float64{2, 2, 60}, [3]float64{4, 4, 80}, [3]float64{8, 8, 300})
	rel, _ := relation(head, base, "p99_ttft_ms", matchTolerance)
	if rel != RelDominated {
		t.Fatalf("relation %q", rel)
	}
	if txt := relText(rel); strings.Contains(txt, "every matched load") {
		t.Errorf("%q claims every matched load for a curve the same at two of three", txt)
	}
}

// TestPointRowsBeyond: the load table says a head point is "beyond" the
// baseline's throughput only when it is beyond it by more than the
// matching tolerance, as relation counts it: an unchanged head 0.24% above
// the baseline's highest throughput is no new load served.
func TestPointRowsBeyond(t *testing.T) {
	base := curveOf([3]float64{8, 8.06, 250}, [3]float64{16, 9.998, 7511})
	for _, tc := range []struct {
		req  float64
		want string
	}{{10.022, "-"}, {10.5, "beyond"}} {
		head := curveOf([3]float64{8, 8.06, 250}, [3]float64{16, tc.req, 7400})
		lc := LoadCurve{LoadLabel: "request_rate", Metric: "p99_ttft_ms", Head: head.Points, Baseline: base.Points}
		_, lc.Matched = relation(head, base, "p99_ttft_ms", matchTolerance)
		rows := lc.pointRows()
		if got := rows[1][len(rows[1])-1]; got != tc.want {
			t.Errorf("head at %v req/s: %q, want %q (rows %v)", tc.req, got, tc.want, rows)
		}
	}
}

// TestLoadNotesOnce: the terminal report says a saturated point's note
// once, in Why with its check, not again under Load curves.
func TestLoadNotesOnce(t *testing.T) {
	run := func(rate, ttft float64) Sample {
		return Sample{Benchmark: "qwen2.5-vl", Labels: map[string]string{"request_rate": "16.0"},
			Metrics: map[string]float64{"request_throughput": rate, "mean_ttft_ms": ttft, "completed": 500, "failed": 0}}
	}
	w := newWorld(3, func(int) []Sample { return []Sample{run(5.32, 8246.29)} }, []Sample{run(4.41, 11300.73)})
	rep := w.check(t, "mean_ttft_ms:3%")
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(text.String(), "saturated at request_rate=16.0:"); n != 1 {
		t.Errorf("the saturated note is said %d times, want once:\n%s", n, text.String())
	}
}
