package slo

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Count is a number of requests known within bounds: Lo surely, Hi at
// most. Lo == Hi when it is exact. Est is the point estimate: Lo when
// exact, else Lo plus the requests of the straddling cells, each cell
// weighted by the share of its latencies, per objective, that the fine
// histograms put within the objective (as if the latencies were
// independent within a cell).
type Count struct {
	Lo  int     `json:"lo"`
	Hi  int     `json:"hi"`
	Est float64 `json:"est"`
}

func (c *Count) add(ok bool) {
	if ok {
		c.Lo++
		c.Hi++
		c.Est++
	}
}

// Exact reports whether the count is known exactly.
func (c Count) Exact() bool { return c.Lo == c.Hi }

// Attainment is how a run's requests met an SLO.
type Attainment struct {
	SLO Objective `json:"slo"`
	// Requests completed, and Failed (which meet no objective).
	Requests int `json:"requests"`
	Failed   int `json:"failed"`
	// Duration in seconds, the denominator of goodput; 0 unknown.
	Duration float64 `json:"duration_s"`
	// Good met every objective; TTFT, TPOT and E2EL met that one.
	Good Count `json:"good"`
	TTFT Count `json:"ttft"`
	TPOT Count `json:"tpot"`
	E2EL Count `json:"e2el"`
	// Warnings say what limits the numbers: an objective on a latency the
	// source did not measure, bounds that are not exact.
	Warnings []string `json:"warnings,omitempty"`
}

// Goodput returns the requests per second that met every objective
// (vLLM's request_goodput: good completed requests / duration), as bounds;
// ok is false when the duration is unknown.
func (a Attainment) Goodput() (lo, hi float64, ok bool) {
	if a.Duration <= 0 {
		return 0, 0, false
	}
	return float64(a.Good.Lo) / a.Duration, float64(a.Good.Hi) / a.Duration, true
}

// Percent returns the share of all requests (failed ones included) a
// count is, in percent: its bounds.
func (a Attainment) Percent(c Count) (lo, hi float64) {
	n := a.Requests + a.Failed
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	return 100 * float64(c.Lo) / float64(n), 100 * float64(c.Hi) / float64(n)
}

// Metrics returns the attainment as run metrics: request_goodput (req/s,
// when the duration is known), slo_attainment, slo_attainment_ttft,
// slo_attainment_tpot and slo_attainment_e2el (percent of all requests;
// per objective only for the objectives set). Inexact counts give their
// point estimate (Count.Est).
func (a Attainment) Metrics() map[string]float64 {
	m := map[string]float64{}
	if a.Requests+a.Failed == 0 {
		return m
	}
	if a.Duration > 0 {
		m["request_goodput"] = a.Good.Est / a.Duration
	}
	pct := func(c Count) float64 { return 100 * c.Est / float64(a.Requests+a.Failed) }
	m["slo_attainment"] = pct(a.Good)
	if a.SLO.TTFTms != 0 {
		m["slo_attainment_ttft"] = pct(a.TTFT)
	}
	if a.SLO.TPOTms != 0 {
		m["slo_attainment_tpot"] = pct(a.TPOT)
	}
	if a.SLO.E2ELms != 0 {
		m["slo_attainment_e2el"] = pct(a.E2EL)
	}
	return m
}

// Attain computes how the summarised requests met an SLO: per objective
// from that latency's histogram, for all from the joint table. Counts are
// bounds (see the package documentation); Warnings name what limits them.
func (s *Summary) Attain(o Objective) Attainment {
	a := Attainment{SLO: o, Requests: s.Requests, Failed: s.Failed, Duration: s.Duration}
	obj := []struct {
		name string
		ms   float64
		h    *Hist
		c    *Count
	}{{"ttft", o.TTFTms, s.TTFT, &a.TTFT}, {"tpot", o.TPOTms, s.TPOT, &a.TPOT}, {"e2el", o.E2ELms, s.E2EL, &a.E2EL}}
	for _, x := range obj {
		switch {
		case x.ms == 0:
			*x.c = Count{s.Requests, s.Requests, float64(s.Requests)}
		case x.h == nil:
			*x.c = Count{s.Requests, s.Requests, float64(s.Requests)}
			a.Warnings = append(a.Warnings, fmt.Sprintf("the SLO sets %s_ms=%g but the source measured no %s per request: that objective is taken as met", x.name, x.ms, x.name))
		default:
			*x.c = x.h.meeting(x.ms)
		}
	}
	if s.SampledFrom > 0 {
		a.Duration = 0 // no goodput from a sample
		a.Warnings = append(a.Warnings, fmt.Sprintf("the source kept %d of the run's %d requests: attainment describes that sample, and no goodput is computed from it", s.Requests+s.Failed, s.SampledFrom))
	}
	if s.E2ELDerived && (o.TPOTms != 0 || o.E2ELms != 0) {
		a.Warnings = append(a.Warnings, "the source gave no end-to-end latency per request: it was taken as ttft + sum(itls), which omits the time after the last token, and tpot from it")
	}
	a.Good = s.jointMeeting(o)
	// The joint count can be no better than any single objective's.
	for _, x := range obj {
		a.Good.Lo = min(a.Good.Lo, x.c.Lo)
		a.Good.Hi = min(a.Good.Hi, x.c.Hi)
	}
	a.Good.Lo = min(a.Good.Lo, a.Good.Hi)
	a.Good.Est = max(float64(a.Good.Lo), min(float64(a.Good.Hi), a.Good.Est))
	if !a.Good.Exact() {
		a.Warnings = append(a.Warnings, fmt.Sprintf("from the stored summary, %d to %d of %d requests met every objective: %d lie in cells that straddle a threshold", a.Good.Lo, a.Good.Hi, s.Requests+s.Failed, a.Good.Hi-a.Good.Lo))
	}
	return a
}

// jointMeeting counts the joint cells within every objective.
func (s *Summary) jointMeeting(o Objective) Count {
	if s.Joint == nil {
		return Count{0, s.Requests, float64(s.Requests) / 2}
	}
	lims := [3]float64{o.TTFTms, o.TPOTms, o.E2ELms}
	hists := [3]*Hist{s.TTFT, s.TPOT, s.E2EL}
	var c Count
	for _, cl := range s.Joint.Cells {
		sure, maybe, share := true, true, 1.0
		for d := 0; d < 3; d++ {
			if lims[d] == 0 {
				continue
			}
			k := s.Joint.Shift[d]
			first := cl[d] << k
			last := first + 1<<k - 1
			if upper(last) > lims[d] {
				sure = false
				share *= hists[d].shareMeeting(first, last, lims[d])
			}
			if lower(first) >= lims[d] {
				maybe = false
			}
		}
		switch {
		case sure && maybe:
			c.Lo += cl[3]
			c.Hi += cl[3]
			c.Est += float64(cl[3])
		case maybe:
			c.Hi += cl[3]
			c.Est += share * float64(cl[3])
		}
	}
	return c
}

// MinTail is the number of requests beyond a percentile below which its
// estimate carries a warning.
const MinTail = 10

// Quantile is a latency percentile with its confidence interval.
type Quantile struct {
	P     float64 `json:"p"`     // percentile, 0 < P < 100
	Value float64 `json:"value"` // ms; nearest rank
	Lo    float64 `json:"lo"`    // ms; lower bound of the interval
	Hi    float64 `json:"hi"`    // ms; upper bound, +Inf beyond the slowest request
	Conf  float64 `json:"conf"`  // confidence of [Lo, Hi], e.g. 0.95
	N     int     `json:"n"`     // latencies it rests on
	// Tail counts the latencies above the percentile: what it rests on.
	Tail    int    `json:"tail"`
	Warning string `json:"warning,omitempty"`
}

// Percentile returns percentile p (0 < p < 100) of a latency kind with
// its conf interval (e.g. 0.95), from the summary's histogram.
func (s *Summary) Percentile(kind string, p, conf float64) (Quantile, error) {
	h := s.Hist(kind)
	if h == nil || h.N == 0 {
		return Quantile{}, fmt.Errorf("the run's requests have no %s measurements", kind)
	}
	return quantile(h.N, p, conf, h.atRank, kind)
}

// Percentile returns percentile p (0 < p < 100) of exact latencies with
// its conf interval. It sorts values in place.
func Percentile(values []float64, p, conf float64) (Quantile, error) {
	if len(values) == 0 {
		return Quantile{}, fmt.Errorf("no latencies")
	}
	sort.Float64s(values)
	return quantile(len(values), p, conf, func(k int) float64 { return values[max(1, min(k, len(values)))-1] }, "latency")
}

func quantile(n int, p, conf float64, at func(rank int) float64, kind string) (Quantile, error) {
	if !(p > 0 && p < 100) {
		return Quantile{}, fmt.Errorf("percentile %v is out of range; give one between 0 and 100, e.g. 99", p)
	}
	if !(conf > 0 && conf < 1) {
		return Quantile{}, fmt.Errorf("confidence %v is out of range; give one between 0 and 1, e.g. 0.95", conf)
	}
	q := Quantile{P: p, Conf: conf, N: n}
	f := p / 100
	rank := int(math.Ceil(f*float64(n) - 1e-9))
	rank = max(1, min(rank, n))
	q.Value = at(rank)
	q.Tail = n - rank
	l, u := orderInterval(n, f, conf)
	q.Lo = at(l)
	if u > n {
		q.Hi = math.Inf(1)
	} else {
		q.Hi = at(u)
	}
	name := fmt.Sprintf("P%g %s", p, kind)
	switch {
	case q.Tail < MinTail && u > n:
		q.Warning = fmt.Sprintf("%s of %d requests rests on the %d above it; its %g%% interval reaches beyond the slowest request: measure more requests (at least %d for %d above it)", name, n, q.Tail, conf*100, int(math.Ceil(MinTail/(1-f))), MinTail)
	case q.Tail < MinTail:
		q.Warning = fmt.Sprintf("%s of %d requests rests on the %d above it: measure more requests (at least %d for %d above it)", name, n, q.Tail, int(math.Ceil(MinTail/(1-f))), MinTail)
	case u > n:
		q.Warning = fmt.Sprintf("%s of %d requests: its %g%% interval reaches beyond the slowest request", name, n, conf*100)
	}
	return q, nil
}

// orderInterval returns the 1-based ranks l <= u of the order statistics
// X_(l), X_(u) that cover quantile f with probability >= conf: with
// B ~ Binomial(n, f), P(l <= B < u) >= conf, split equally between the
// tails. u may be n+1 (no upper bound within the sample); l is at least 1.
func orderInterval(n int, f, conf float64) (l, u int) {
	if n > maxExactN {
		// The normal approximation of the binomial, exact enough here.
		z := math.Sqrt2 * math.Erfinv(conf)
		sd := math.Sqrt(float64(n) * f * (1 - f))
		l = max(1, int(math.Floor(float64(n)*f-z*sd)))
		u = min(n+1, int(math.Ceil(float64(n)*f+z*sd))+1)
		return l, u
	}
	tail := (1 - conf) / 2
	cdf := binomialCDF(n, f)
	// l: the largest rank with P(B <= l-1) <= tail.
	l = 1
	for k := 1; k <= n; k++ {
		if cdf(k-1) <= tail {
			l = k
		} else {
			break
		}
	}
	// u: the smallest rank with P(B <= u-1) >= 1-tail.
	u = n + 1
	for k := l; k <= n; k++ {
		if cdf(k-1) >= 1-tail {
			u = k
			break
		}
	}
	return l, u
}

// maxExactN bounds the request counts whose interval is computed from the
// binomial distribution itself (a table of n+1 values).
const maxExactN = 100000

// binomialCDF returns k -> P(B <= k) for B ~ Binomial(n, f), computed
// once in log space.
func binomialCDF(n int, f float64) func(int) float64 {
	cum := make([]float64, n+1)
	lf, lq := math.Log(f), math.Log1p(-f)
	lgn, _ := math.Lgamma(float64(n + 1))
	acc := 0.0
	for k := 0; k <= n; k++ {
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		acc += math.Exp(lgn - lk - lnk + float64(k)*lf + float64(n-k)*lq)
		cum[k] = acc
	}
	return func(k int) float64 {
		if k < 0 {
			return 0
		}
		if k >= n {
			return 1
		}
		return cum[k]
	}
}

// ErrNoRequests is returned for a run that stored no request summary.
var ErrNoRequests = errors.New("the run stored no per-request measurements (its file had none)")

// AttainStored computes how a stored run's requests met an SLO, from its
// request summary (store.Run.Requests): the gate's entry point. A run
// without a summary gives ErrNoRequests.
func AttainStored(requests []byte, o Objective) (Attainment, error) {
	if len(requests) == 0 {
		return Attainment{}, ErrNoRequests
	}
	s, err := Unmarshal(requests)
	if err != nil {
		return Attainment{}, err
	}
	return s.Attain(o), nil
}
