package histsync

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// BenchmarkSyncAddOne measures one CI sync: the branch holds n runs, one
// new run is pushed. Its cost should follow the new runs, not n.
func BenchmarkSyncAddOne(b *testing.B) {
	for _, n := range []int{100, 5000} {
		b.Run(fmt.Sprintf("branch=%d", n), func(b *testing.B) {
			w := newWorld(b)
			c := w.clone("a")
			c.put(b, "serving", w.code[0], n, false)
			if _, err := Sync(context.Background(), c.dir, c.st, Options{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				r := store.Run{Commit: w.code[1], Benchmark: "serving", Time: time.Unix(int64(i), 0),
					Metrics: map[string]float64{"mean_ttft_ms": float64(i)}, Source: store.Source{File: fmt.Sprint("b", i)}}
				if _, err := c.st.Put([]store.Run{r}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				res, err := Sync(context.Background(), c.dir, c.st, Options{})
				if err != nil || res.Pushed != 1 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// BenchmarkSyncPullAll measures rebuilding a fresh clone's history from a
// branch of n runs.
func BenchmarkSyncPullAll(b *testing.B) {
	const n = 5000
	w := newWorld(b)
	c := w.clone("a")
	c.put(b, "serving", w.code[0], n, false)
	if _, err := Sync(context.Background(), c.dir, c.st, Options{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		d := w.clone(fmt.Sprint("fresh", i))
		b.StartTimer()
		res, err := Sync(context.Background(), d.dir, d.st, Options{NoPush: true})
		if err != nil || res.Pulled != n {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.ReportMetric(float64(n), "runs/op")
}
