package watch

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzDetect runs the detector on any series of values (the history
// branch is written by more hands than CI's: a value may be huge, tiny,
// negative, zero, repeated, or not a number): it must not panic, and every
// step it reports lies inside the series, its ends in order.
//
//	go test ./watch -run '^$' -fuzz FuzzDetect -fuzztime 60s
func FuzzDetect(f *testing.F) {
	seed := func(xs ...float64) []byte {
		b := make([]byte, 8*len(xs))
		for i, v := range xs {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		return b
	}
	var step, season []float64
	for i := 0; i < 120; i++ {
		v := 100.0
		if i >= 60 {
			v = 120
		}
		step = append(step, v+float64(i%3))
		season = append(season, 100+10*math.Sin(float64(i)*math.Pi/6)+float64(i)/4)
	}
	f.Add(seed(step...))
	f.Add(seed(season...))
	f.Add(seed(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2))
	f.Add(seed(-1000, 1e308, 0, math.NaN(), math.Inf(1), 5, 5, 5, 5, 5, 5, 5, 5))
	f.Fuzz(func(t *testing.T, b []byte) {
		x := make([]float64, len(b)/8)
		for i := range x {
			x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		for _, st := range Detect(x, DefaultParams()) {
			if st.From < 1 || st.From > st.At || st.At >= len(x) {
				t.Fatalf("step %+v outside a series of %d", st, len(x))
			}
		}
	})
}
