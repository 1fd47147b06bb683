package watch

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Detect on 10,000 points of persistent noise (a random walk with
// thermal cycles and blocks of slow runners) with two steps: the noise
// model's rounds of segmentation run to their limit here.
//
//	go test ./watch -run '^$' -bench Wander
func BenchmarkDetect10kWander(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 5))
	x := make([]float64, 10000)
	w := 0.0
	for i := range x {
		w += 0.002 * r.NormFloat64()
		l := w + 0.01*math.Sin(float64(i)/15) + 0.005*r.NormFloat64()
		if r.IntN(20) == 0 {
			l += 0.04
		}
		if i >= 3000 {
			l += 0.1
		}
		if i >= 7000 {
			l -= 0.2
		}
		x[i] = 100 * math.Exp(l)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Detect(x, DefaultParams())
	}
}

// Detect on every series of ../shared/realnoise (73 series, 26,961
// points) per op.
//
//	go test ./watch -run '^$' -bench RealNoise
func BenchmarkDetectRealNoise(b *testing.B) {
	series := loadRealNoise(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, s := range series {
			Detect(s.Values, DefaultParams())
		}
	}
}
