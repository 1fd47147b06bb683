package slo

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
)

// Alpha is the relative error of a histogram value: a latency v falls in
// bucket i, (gamma^(i-1), gamma^i], whose representative 2*gamma^i/(gamma+1)
// is within Alpha of v.
const Alpha = 0.01

var (
	gamma    = (1 + Alpha) / (1 - Alpha)
	logGamma = math.Log(gamma)
)

// Bucket range: latencies up to minMs (1 µs) count as zero (bucket loIdx-1),
// latencies above maxMs (about 28 hours) count as maxMs, negative ones as 0. So a
// histogram has at most maxBuckets buckets whatever the request count.
const (
	minMs = 1e-3
	maxMs = 1e8
)

var (
	loIdx      = int(math.Ceil(math.Log(minMs) / logGamma))
	hiIdx      = int(math.Ceil(math.Log(maxMs) / logGamma))
	maxBuckets = hiIdx - loIdx + 2
)

// MaxCells bounds the joint table of a Summary.
const MaxCells = 1024

// SummaryVersion is the version of the Summary encoding.
const SummaryVersion = 1

// index returns the bucket of a latency in milliseconds.
func index(ms float64) int {
	if !(ms > minMs) { // also NaN
		return loIdx - 1
	}
	if ms >= maxMs {
		return hiIdx
	}
	i := int(math.Ceil(math.Log(ms) / logGamma))
	if i < loIdx {
		i = loIdx
	}
	return i
}

// upper and lower return a bucket's bounds, (lower, upper].
func upper(i int) float64 {
	if i < loIdx {
		return 0
	}
	return math.Exp(float64(i) * logGamma)
}

func lower(i int) float64 {
	if i < loIdx {
		return math.Inf(-1)
	}
	if i == loIdx {
		return 0
	}
	return math.Exp(float64(i-1) * logGamma)
}

// value returns a bucket's representative latency.
func value(i int) float64 {
	if i < loIdx {
		return 0
	}
	return 2 * upper(i) / (gamma + 1)
}

// Hist is a log-bucket histogram of one latency in milliseconds. Counts[j]
// counts bucket Start+j; Min and Max are exact.
type Hist struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Sum    float64 `json:"sum"`
	Start  int     `json:"start"`
	Counts []int   `json:"counts"`
}

func (h *Hist) add(ms float64) {
	// Beyond the range, a latency counts as its bound: the summary stays
	// finite (JSON has no Inf) whatever a file holds.
	if !(ms >= 0) {
		ms = 0
	}
	ms = min(ms, maxMs)
	i := index(ms)
	if h.N == 0 {
		h.Min, h.Max, h.Start = ms, ms, i
	}
	h.N++
	h.Sum += ms
	h.Min, h.Max = math.Min(h.Min, ms), math.Max(h.Max, ms)
	if i < h.Start {
		grown := make([]int, h.Start-i+len(h.Counts))
		copy(grown[h.Start-i:], h.Counts)
		h.Counts, h.Start = grown, i
	}
	for i-h.Start >= len(h.Counts) {
		h.Counts = append(h.Counts, 0)
	}
	h.Counts[i-h.Start]++
}

// Mean returns the exact mean.
func (h *Hist) Mean() float64 {
	if h == nil || h.N == 0 {
		return math.NaN()
	}
	return h.Sum / float64(h.N)
}

// atRank returns the representative value of the k-th smallest (1-based)
// latency, clamped to the exact Min and Max.
func (h *Hist) atRank(k int) float64 {
	if k <= 1 {
		return h.Min
	}
	if k >= h.N {
		return h.Max
	}
	seen := 0
	for j, c := range h.Counts {
		seen += c
		if seen >= k {
			return math.Max(h.Min, math.Min(h.Max, value(h.Start+j)))
		}
	}
	return h.Max
}

// meeting counts the latencies that meet objective ms: Lo surely, Hi at most.
func (h *Hist) meeting(ms float64) Count {
	if ms == 0 {
		return Count{h.N, h.N, float64(h.N)}
	}
	var c Count
	for j, n := range h.Counts {
		i := h.Start + j
		switch {
		case upper(i) <= ms || h.Max <= ms:
			c.Lo += n
			c.Hi += n
			c.Est += float64(n)
		case lower(i) < ms && h.Min <= ms:
			c.Hi += n
			if value(i) <= ms {
				c.Est += float64(n)
			}
		}
	}
	return c
}

// shareMeeting returns the share of the latencies in buckets first..last
// whose bucket's representative value meets objective ms (0.5 when the
// histogram has none there).
func (h *Hist) shareMeeting(first, last int, ms float64) float64 {
	if h == nil {
		return 1
	}
	in, ok := 0, 0
	for i := max(first, h.Start); i <= last && i-h.Start < len(h.Counts); i++ {
		n := h.Counts[i-h.Start]
		in += n
		if value(i) <= ms {
			ok += n
		}
	}
	if in == 0 {
		return 0.5
	}
	return float64(ok) / float64(in)
}

// cell is a joint (ttft, tpot, e2el) bucket at the table's shift.
type cell [3]int

// Joint is the joint table: Cells[i] = [ttft, tpot, e2el, count], each
// bucket index shifted right by that latency's Shift (cells of ratio
// gamma^(2^Shift)).
type Joint struct {
	Shift [3]int   `json:"shift"`
	Cells [][4]int `json:"cells"`
}

// Summary is the bounded record of a run's requests.
type Summary struct {
	Version int `json:"v"`
	// Requests counts the requests that completed; Failed those that did
	// not (no latency of theirs is in the histograms).
	Requests int `json:"requests"`
	Failed   int `json:"failed,omitempty"`
	// Duration is the benchmark's duration in seconds, the denominator of
	// goodput; 0 when the source did not give it.
	Duration float64 `json:"duration_s,omitempty"`
	// Alpha is the histograms' relative error.
	Alpha float64 `json:"alpha"`
	TTFT  *Hist   `json:"ttft,omitempty"`
	TPOT  *Hist   `json:"tpot,omitempty"`
	ITL   *Hist   `json:"itl,omitempty"`
	E2EL  *Hist   `json:"e2el,omitempty"`
	Joint *Joint  `json:"joint,omitempty"`
	// E2ELDerived says the source gave no end-to-end latency per request:
	// it was derived (vLLM before 0.10: ttft + sum(itls)), and TPOT from it.
	E2ELDerived bool `json:"e2el_derived,omitempty"`
	// SampledFrom, when > 0, says the source kept only a sample of the
	// requests the run made (guidellm's request samples): this many were
	// made. Percentiles and attainment then describe the sample; goodput
	// (a count of the run's requests) is not computed from it.
	SampledFrom int `json:"sampled_from,omitempty"`
	// SLO is the objective the run's request_goodput and slo_attainment
	// metrics were computed for at ingest (--slo), nil when none: metrics
	// computed under another SLO do not compare.
	SLO *Objective `json:"slo,omitempty"`
}

// Kinds are the latencies a Summary holds, in order.
var Kinds = []string{"ttft", "tpot", "itl", "e2el"}

// Hist returns the histogram of a latency kind (ttft, tpot, itl, e2el),
// nil when the source did not measure it.
func (s *Summary) Hist(kind string) *Hist {
	switch kind {
	case "ttft":
		return s.TTFT
	case "tpot":
		return s.TPOT
	case "itl":
		return s.ITL
	case "e2el":
		return s.E2EL
	}
	return nil
}

// Marshal returns the compact JSON form the store keeps.
func (s *Summary) Marshal() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // only finite numbers and ints: cannot fail
	}
	return b
}

// Unmarshal decodes a stored summary and checks it.
func Unmarshal(b []byte) (*Summary, error) {
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("request summary: %v", err)
	}
	if s.Version != SummaryVersion {
		return nil, fmt.Errorf("request summary has version %d; this perfgate reads version %d: upgrade perfgate", s.Version, SummaryVersion)
	}
	if s.Requests < 0 || s.Failed < 0 || s.Duration < 0 || math.IsNaN(s.Duration) {
		return nil, fmt.Errorf("request summary has negative counts or duration")
	}
	for _, k := range Kinds {
		h := s.Hist(k)
		if h == nil {
			continue
		}
		n := 0
		for _, c := range h.Counts {
			if c < 0 {
				return nil, fmt.Errorf("request summary: %s has a negative count", k)
			}
			n += c
		}
		if n != h.N || len(h.Counts) > maxBuckets {
			return nil, fmt.Errorf("request summary: %s counts %d latencies in %d buckets, but says %d", k, n, len(h.Counts), h.N)
		}
	}
	if j := s.Joint; j != nil {
		for _, sh := range j.Shift {
			if sh < 0 || sh > 30 {
				return nil, fmt.Errorf("request summary: joint table has shift %d; the limit is 30", sh)
			}
		}
		if len(j.Cells) > MaxCells {
			return nil, fmt.Errorf("request summary: joint table has %d cells; the limit is %d", len(j.Cells), MaxCells)
		}
	}
	return &s, nil
}

// Builder accumulates requests into a Summary, and the exact attainment
// of the objective given to NewBuilder.
type Builder struct {
	s      Summary
	hists  [4]Hist
	has    [4]bool
	joint  map[cell]int
	shift  [3]int
	obj    Objective
	exact  Attainment
	hasObj bool
}

// NewBuilder returns a builder; o, when not nil, is the SLO whose
// attainment is counted exactly.
func NewBuilder(o *Objective) *Builder {
	b := &Builder{joint: map[cell]int{}}
	if o != nil && !o.IsZero() {
		b.obj, b.hasObj = *o, true
		b.exact.SLO = *o
	}
	return b
}

// Has records which latencies the source measures (ttft, tpot, itl,
// e2el), so that a latency measured as 0 is told from one not measured.
func (b *Builder) Has(kinds ...string) {
	for _, k := range kinds {
		for i, name := range Kinds {
			if name == k {
				b.has[i] = true
			}
		}
	}
}

// SetDuration sets the benchmark duration in seconds.
func (b *Builder) SetDuration(s float64) {
	if s > 0 && !math.IsInf(s, 0) {
		b.s.Duration = s
	}
}

// Add records one request.
func (b *Builder) Add(r Request) {
	if r.Failed {
		b.s.Failed++
		b.exact.Failed++
		return
	}
	u := r.Unit
	if u == 0 {
		u = 1
	}
	b.s.Requests++
	ms := [3]float64{r.TTFT * u, r.TPOT * u, r.E2EL * u}
	var idx [3]int
	for i, k := range [3]int{0, 1, 3} {
		idx[i] = index(ms[i])
		if r.Unmeasured&(1<<i) != 0 {
			idx[i] = hiIdx // meets no objective, in the joint table too
			continue
		}
		if b.has[k] {
			b.hists[k].add(ms[i])
		}
	}
	if b.has[2] {
		for _, v := range r.ITL {
			b.hists[2].add(v * u)
		}
	}
	c := cell{idx[0] >> b.shift[0], idx[1] >> b.shift[1], idx[2] >> b.shift[2]}
	b.joint[c]++
	if len(b.joint) > MaxCells {
		b.coarsen()
	}
	if b.hasObj {
		a := &b.exact
		a.Requests++
		t := meets(r.TTFT, b.obj.TTFTms, u) && (b.obj.TTFTms == 0 || r.Unmeasured&TTFT == 0)
		p := meets(r.TPOT, b.obj.TPOTms, u) && (b.obj.TPOTms == 0 || r.Unmeasured&TPOT == 0)
		e := meets(r.E2EL, b.obj.E2ELms, u) && (b.obj.E2ELms == 0 || r.Unmeasured&E2EL == 0)
		a.TTFT.add(t)
		a.TPOT.add(p)
		a.E2EL.add(e)
		a.Good.add(t && p && e)
	}
}

// coarsen doubles the cells' ratio of the latency with the most distinct
// cells until the table fits MaxCells.
func (b *Builder) coarsen() {
	for len(b.joint) > MaxCells {
		var distinct [3]map[int]bool
		for d := range distinct {
			distinct[d] = map[int]bool{}
		}
		for c := range b.joint {
			for d := 0; d < 3; d++ {
				distinct[d][c[d]] = true
			}
		}
		d := 0
		for e := 1; e < 3; e++ {
			if len(distinct[e]) > len(distinct[d]) {
				d = e
			}
		}
		b.shift[d]++
		next := make(map[cell]int, len(b.joint))
		for c, n := range b.joint {
			c[d] >>= 1
			next[c] += n
		}
		b.joint = next
	}
}

// Summary returns the summary of the requests added so far.
func (b *Builder) Summary() *Summary {
	s := b.s
	s.Version, s.Alpha = SummaryVersion, Alpha
	for i, k := range Kinds {
		if !b.has[i] || b.hists[i].N == 0 {
			continue
		}
		h := b.hists[i]
		h.Counts = append([]int(nil), h.Counts...)
		switch k {
		case "ttft":
			s.TTFT = &h
		case "tpot":
			s.TPOT = &h
		case "itl":
			s.ITL = &h
		case "e2el":
			s.E2EL = &h
		}
	}
	if len(b.joint) > 0 {
		j := &Joint{Shift: b.shift, Cells: make([][4]int, 0, len(b.joint))}
		for c, n := range b.joint {
			j.Cells = append(j.Cells, [4]int{c[0], c[1], c[2], n})
		}
		sort.Slice(j.Cells, func(x, y int) bool {
			a, c := j.Cells[x], j.Cells[y]
			for i := 0; i < 3; i++ {
				if a[i] != c[i] {
					return a[i] < c[i]
				}
			}
			return false
		})
		s.Joint = j
	}
	return &s
}

// Exact returns the exact attainment of the builder's objective, and
// false when NewBuilder was given none.
func (b *Builder) Exact() (Attainment, bool) {
	a := b.exact
	a.Duration = b.s.Duration
	return a, b.hasObj
}

// Requests returns the number of requests added (completed and failed).
func (b *Builder) Requests() int { return b.s.Requests + b.s.Failed }
