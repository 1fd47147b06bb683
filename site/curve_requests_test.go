package site

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
	slo2 "github.com/perfgate/perfgate/slo"
)

// TestCurveFromRequests: a commit whose sweep lacks p99_ttft_ms, the
// SLO's latency, but stored each run's requests gets its curve's points'
// p99_ttft_ms and capacity at the SLO from them, as the check report
// does, about the capacity the metric gives.
func TestCurveFromRequests(t *testing.T) {
	commits, h := sweepHistory(6)
	sha := commits[5].SHA
	slo, _ := gate.SLOFor(sweepRules().SLOs, "serving")
	withMetric, ok := gate.Curves(h[sha], nil)[0].Capacity(slo)
	if !ok {
		t.Fatal("no capacity with p99_ttft_ms")
	}
	for i := range h[sha] {
		s := &h[sha][i]
		v, ok := s.Metrics["p99_ttft_ms"]
		if !ok {
			continue
		}
		delete(s.Metrics, "p99_ttft_ms")
		b := slo2.NewBuilder(nil)
		b.Has("ttft", "tpot")
		for range 200 {
			b.Add(slo2.Request{TTFT: v, TPOT: 20})
		}
		s.Requests = b.Summary()
	}
	want, ok := gate.Curves(h[sha], nil)[0].Capacity(slo)
	if !ok || math.Abs(want.Requests/withMetric.Requests-1) > 0.02 {
		t.Fatalf("capacity from the requests %+v, %v; with the metric %+v", want, ok, withMetric)
	}
	dir := t.TempDir()
	if _, err := Generate(context.Background(), commits, gate.WithCapacity(h, sweepRules().SLOs, nil), dir, Options{Ref: "main", Rules: sweepRules()}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "data", "c", "serving.qwen2.5-7b-b.by.max_concurrency.ci.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), fmt.Sprintf(`"cap":{"req":%s,`, strconv.FormatFloat(want.Requests, 'g', -1, 64))) {
		t.Errorf("the latest commit's capacity is not gate's from the requests %+v:\n%s", want, got)
	}
	// Its points carry the latency from the requests, drawn beside the
	// SLO, not left out.
	if strings.Contains(string(got), "null") {
		t.Errorf("a point lacks a latency:\n%s", got)
	}
}
