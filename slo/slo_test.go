package slo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synth returns n requests with latencies in milliseconds, failing every
// 50th.
func synth(n int, seed uint64) []Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]Request, n)
	for i := range out {
		ttft := 20 + rng.ExpFloat64()*80
		tpot := 15 + rng.NormFloat64()*3
		tokens := 50 + rng.IntN(400)
		itl := make([]float64, tokens-1)
		for j := range itl {
			itl[j] = tpot * (0.5 + rng.Float64())
		}
		out[i] = Request{TTFT: ttft, TPOT: tpot, E2EL: ttft + tpot*float64(tokens-1), ITL: itl, Unit: 1, Failed: i%50 == 49}
	}
	return out
}

func build(reqs []Request, o *Objective) *Builder {
	b := NewBuilder(o)
	b.Has("ttft", "tpot", "itl", "e2el")
	b.SetDuration(100)
	for _, r := range reqs {
		b.Add(r)
	}
	return b
}

// exactCount counts the requests meeting o directly.
func exactCount(reqs []Request, o Objective) (good int) {
	for _, r := range reqs {
		if !r.Failed && meets(r.TTFT, o.TTFTms, 1) && meets(r.TPOT, o.TPOTms, 1) && meets(r.E2EL, o.E2ELms, 1) {
			good++
		}
	}
	return good
}

func TestSummaryBoundsCoverExact(t *testing.T) {
	reqs := synth(2000, 7)
	s := build(reqs, nil).Summary()
	if s.Joint == nil || len(s.Joint.Cells) > MaxCells {
		t.Fatalf("joint table: %+v", s.Joint)
	}
	for _, o := range []Objective{
		{TTFTms: 100},
		{TTFTms: 200, TPOTms: 16},
		{TTFTms: 60, TPOTms: 14, E2ELms: 4000},
		{E2ELms: 3000},
	} {
		a := s.Attain(o)
		want := exactCount(reqs, o)
		if a.Good.Lo > want || a.Good.Hi < want {
			t.Errorf("%v: good %+v does not contain the exact %d", o, a.Good, want)
		}
		// The estimate is within 2% of all requests.
		if d := math.Abs(a.Good.Est - float64(want)); d > 0.02*float64(len(reqs)) {
			t.Errorf("%v: estimate %+v is %v from the exact %d", o, a.Good, d, want)
		}
		exact, _ := build(reqs, &o).Exact()
		if exact.Good.Lo != want || !exact.Good.Exact() {
			t.Errorf("%v: builder's exact count %+v, want %d", o, exact.Good, want)
		}
	}
}

func TestSummaryIsBounded(t *testing.T) {
	small := len(build(synth(200, 1), nil).Summary().Marshal())
	large := len(build(synth(20000, 2), nil).Summary().Marshal())
	if large > 40000 {
		t.Errorf("summary of 20,000 requests is %d bytes (200 requests: %d)", large, small)
	}
}

func TestPercentileWarnsOnFewRequests(t *testing.T) {
	vals := make([]float64, 200)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	q, err := Percentile(vals, 99, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if q.Value != 198 || q.Tail != 2 {
		t.Errorf("P99 of 1..200 = %v resting on %d, want 198 on 2", q.Value, q.Tail)
	}
	if !strings.Contains(q.Warning, "rests on the 2 above it") || !math.IsInf(q.Hi, 1) {
		t.Errorf("warning %q, interval [%v, %v]", q.Warning, q.Lo, q.Hi)
	}
	vals = make([]float64, 10000)
	for i := range vals {
		vals[i] = float64(i + 1)
	}
	q, _ = Percentile(vals, 99, 0.95)
	if q.Warning != "" || q.Lo > 9900 || q.Hi < 9900 || q.Hi-q.Lo > 60 {
		t.Errorf("P99 of 10,000: %+v", q)
	}
}

func TestSummaryPercentileWithinAlpha(t *testing.T) {
	reqs := synth(5000, 3)
	s := build(reqs, nil).Summary()
	var ttft []float64
	for _, r := range reqs {
		if !r.Failed {
			ttft = append(ttft, r.TTFT)
		}
	}
	want, _ := Percentile(ttft, 99, 0.95)
	got, err := s.Percentile("ttft", 99, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Value-want.Value) > Alpha*want.Value {
		t.Errorf("P99 TTFT %v from summary, exact %v: beyond %v", got.Value, want.Value, Alpha)
	}
	if _, err := s.Percentile("ttft", 100, 0.95); err == nil {
		t.Error("P100 accepted")
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	s := build(synth(300, 4), nil).Summary()
	b := s.Marshal()
	back, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.Marshal()) != string(b) {
		t.Error("summary does not round-trip")
	}
	for _, bad := range []string{`{}`, `{"v":1,"requests":-1}`, `{"v":1,"requests":1,"ttft":{"n":2,"counts":[1]}}`, `[`} {
		if _, err := Unmarshal([]byte(bad)); err == nil {
			t.Errorf("Unmarshal(%s) accepted", bad)
		}
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]Objective{
		"ttft_ms=200,tpot_ms=50,e2el_ms=4000": {200, 50, 4000},
		"ttft:200 tpot:50":                    {TTFTms: 200, TPOTms: 50},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "ttft", "itl_ms=3", "ttft_ms=-1", "ttft_ms=0", "ttft_ms=200ms", "ttft_ms=NaN", "ttft_ms=Inf"} {
		if _, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) accepted", in)
		}
	}
}

func TestAttainStored(t *testing.T) {
	reqs := synth(500, 11)
	o := Objective{TTFTms: 80, TPOTms: 16}
	a, err := AttainStored(build(reqs, nil).Summary().Marshal(), o)
	if err != nil {
		t.Fatal(err)
	}
	want := exactCount(reqs, o)
	if a.Good.Lo > want || a.Good.Hi < want {
		t.Errorf("good %+v, exact %d", a.Good, want)
	}
	if lo, hi, ok := a.Goodput(); !ok || lo > float64(want)/100 || hi < float64(want)/100 {
		t.Errorf("goodput [%v, %v], exact %v", lo, hi, float64(want)/100)
	}
	if _, err := AttainStored(nil, o); err != ErrNoRequests {
		t.Errorf("no summary: %v", err)
	}
	if _, err := AttainStored([]byte(`{"v":2}`), o); err == nil {
		t.Error("version 2 accepted")
	}
}
