package watch

import "testing"

// Detect on one series of 10,000 points (2% noise, one 10% step): watch
// runs it once per series and metric.
//
//	go test ./watch -run '^$' -bench Detect -benchmem
func BenchmarkDetect10k(b *testing.B) {
	x := synth(1, 10000, 0.02, func(i int) float64 {
		if i >= 6000 {
			return 1.1
		}
		return 1
	})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := Detect(x, DefaultParams()); len(got) != 1 || got[0].At != 6000 {
			b.Fatalf("got %+v, want one change at 6000", got)
		}
	}
}
