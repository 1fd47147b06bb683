package slo

import (
	"math"
	"testing"
)

// FuzzUnmarshal feeds damaged summaries (a history line, a database row)
// to Unmarshal and to what is computed from one: errors, never panics.
func FuzzUnmarshal(f *testing.F) {
	f.Add(string(build(synth(50, 9), nil).Summary().Marshal()))
	f.Add(`{"v":1,"requests":2,"ttft":{"n":2,"min":1,"max":2,"sum":3,"start":-400,"counts":[1,1]},"joint":{"shift":[30,0,0],"cells":[[9007199254740991,0,0,2]]}}`)
	f.Add(`{"v":1,"requests":1000000000000,"ttft":{"n":1000000000000,"min":1,"max":2,"sum":3,"start":0,"counts":[1000000000000]}}`)
	f.Fuzz(func(t *testing.T, data string) {
		s, err := Unmarshal([]byte(data))
		if err != nil {
			return
		}
		a := s.Attain(Objective{TTFTms: 100, TPOTms: 20, E2ELms: 1000})
		if a.Good.Lo > a.Good.Hi || a.Good.Est < float64(a.Good.Lo) || a.Good.Est > float64(a.Good.Hi) {
			t.Errorf("count %+v out of order", a.Good)
		}
		for _, k := range Kinds {
			if q, err := s.Percentile(k, 99, 0.95); err == nil && q.Lo > q.Hi && !math.IsNaN(q.Lo) {
				t.Errorf("%s: interval [%v, %v]", k, q.Lo, q.Hi)
			}
		}
		_ = a.Metrics()
	})
}
