package store

import (
	"fmt"
	"path/filepath"
	"testing"
)

// manyMetricsRun returns a run with n metrics whose names share no order
// with their map iteration.
func manyMetricsRun(n int) Run {
	r := Run{Commit: fmt.Sprintf("%040x", n), Benchmark: "wide", Metrics: make(map[string]float64, n)}
	for i := range n {
		r.Metrics[fmt.Sprintf("metric_%07d", (i*7919)%n)] = float64(i) / 8
	}
	return r
}

// Storing one run was quadratic in its metric count: bbolt keeps a
// transaction's new keys in a sorted in-memory node, and the dictionary
// added the run's metric names in map order (250,000 metrics took 57 s).
// They are added in sorted order now, so it takes about a second. This
// test stores and reads back such a run; that the cost stays linear is
// BenchmarkPutManyMetrics's to show (ns/metric flat as n grows): a test
// asserts no wall time, which fails on a loaded machine, not slow code.
func TestPutManyMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("stores MaxMetrics metrics")
	}
	s, err := Open(filepath.Join(t.TempDir(), "history.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := manyMetricsRun(MaxMetrics)
	if _, err := s.Put([]Run{r}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ByCommit(r.Commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Metrics) != MaxMetrics || got[0].Metrics["metric_0000007"] != r.Metrics["metric_0000007"] {
		t.Fatalf("read back %d runs, want 1 run of MaxMetrics metrics", len(got))
	}
}

// BenchmarkPutManyMetrics stores one run of n metrics into a new history;
// ns/metric stays flat as n grows when Put is linear.
//
//	go test ./store -run '^$' -bench PutManyMetrics -benchtime 3x
func BenchmarkPutManyMetrics(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("metrics=%d", n), func(b *testing.B) {
			r := manyMetricsRun(n)
			dir := b.TempDir()
			for i := range b.N {
				s, err := Open(filepath.Join(dir, fmt.Sprintf("h%d.db", i)), Options{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Put([]Run{r}); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/metric")
		})
	}
}
