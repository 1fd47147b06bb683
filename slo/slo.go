// Package slo computes what serving teams decide on from the requests of
// one benchmark run: goodput (requests per second that meet every latency
// objective), attainment per objective and for all, and latency
// percentiles with a confidence interval from the requests themselves.
//
// # Data flow
//
// The ingest parsers that read per-request measurements (vLLM
// --save-result --save-detailed JSON, SGLang bench_serving details, AIPerf
// profile_export.jsonl records, ...) feed each request to a Builder. The
// Builder keeps two things:
//
//   - exact counts for the SLO given at ingest (Options.SLO, perfgate's
//     --slo): request_goodput and slo_attainment(_ttft|_tpot|_e2el) are
//     computed from the requests themselves, with the tool's own
//     comparison (vLLM: value_s <= slo_ms/1000), so they equal the tool's
//     own goodput for the same SLO;
//   - a bounded Summary stored on the run: one log-bucket histogram per
//     latency (ttft, tpot, itl, e2el; relative error at most Alpha, at most
//     maxBuckets buckets each whatever the request count) and a joint table
//     of (ttft, tpot, e2el) cells (at most MaxCells cells; coarsened by
//     doubling the cell ratio when more would be needed).
//
// # Decisions and limits
//
// Goodput needs the latencies of each request jointly (a request is good
// when it meets every objective), which marginal histograms cannot give.
// The joint table keeps that, coarsely: goodput and attainment for an SLO
// computed later from a stored Summary come as a Count{Lo, Hi}: Lo counts
// the requests whose cell lies wholly within the objectives, Hi adds those
// whose cell straddles a threshold. They are equal (exact) when no cell
// straddles; the width Hi-Lo is the error, stated, never hidden. For the
// SLO given at ingest the numbers are exact. Attainment of one objective
// comes from that latency's fine histogram (cells of relative width
// 2*Alpha), so its interval is narrow.
//
// Percentiles from a Summary are nearest-rank values of the histogram
// (relative error at most Alpha), not numpy's interpolation; the interval
// is the order-statistic binomial interval: the ranks l and u with
// P(X_(l) <= Q_p <= X_(u)) >= conf for n requests. A percentile with
// fewer than MinTail requests beyond it (a P99 of 200 requests rests on two
// requests) carries a warning saying so; an upper rank beyond the slowest
// request makes the upper bound +Inf.
package slo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Objective is a service-level objective on one request's latencies, in
// milliseconds. A zero field sets no objective on that latency.
type Objective struct {
	TTFTms float64 `json:"ttft_ms,omitempty" yaml:"ttft_ms,omitempty"`
	TPOTms float64 `json:"tpot_ms,omitempty" yaml:"tpot_ms,omitempty"`
	E2ELms float64 `json:"e2el_ms,omitempty" yaml:"e2el_ms,omitempty"`
}

// IsZero reports an objective that sets nothing.
func (o Objective) IsZero() bool { return o.TTFTms == 0 && o.TPOTms == 0 && o.E2ELms == 0 }

// Validate checks that every objective is a finite number >= 0.
func (o Objective) Validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"ttft_ms", o.TTFTms}, {"tpot_ms", o.TPOTms}, {"e2el_ms", o.E2ELms}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return fmt.Errorf("slo %s is %v; give a latency in milliseconds, a number >= 0 (0 sets no objective)", f.name, f.v)
		}
	}
	return nil
}

// String writes the objective as the flag and rules file take it:
// "ttft_ms=200,tpot_ms=50".
func (o Objective) String() string {
	var parts []string
	for _, f := range []struct {
		name string
		v    float64
	}{{"ttft_ms", o.TTFTms}, {"tpot_ms", o.TPOTms}, {"e2el_ms", o.E2ELms}} {
		if f.v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%g", f.name, f.v))
		}
	}
	return strings.Join(parts, ",")
}

// Parse reads an objective written "ttft_ms=200,tpot_ms=50,e2el_ms=4000"
// (also "ttft:200,tpot:50", vLLM's --goodput form, with or without _ms).
func Parse(s string) (Objective, error) {
	var o Objective
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		return o, fmt.Errorf("slo %q sets no objective; write e.g. ttft_ms=200,tpot_ms=50,e2el_ms=4000", s)
	}
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			k, v, ok = strings.Cut(f, ":")
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil {
			return o, fmt.Errorf("slo %q: %q is not NAME=MILLISECONDS; write e.g. ttft_ms=200,tpot_ms=50,e2el_ms=4000", s, f)
		}
		switch strings.TrimSuffix(strings.ToLower(strings.TrimSpace(k)), "_ms") {
		case "ttft":
			o.TTFTms = x
		case "tpot":
			o.TPOTms = x
		case "e2el":
			o.E2ELms = x
		default:
			return o, fmt.Errorf("slo %q: unknown objective %q; the objectives are ttft_ms, tpot_ms and e2el_ms", s, k)
		}
	}
	if err := o.Validate(); err != nil {
		return o, err
	}
	if o.IsZero() {
		return o, fmt.Errorf("slo %q sets no objective above 0; write e.g. ttft_ms=200", s)
	}
	return o, nil
}

// Request is one request's measurements, in the unit of its source: Unit
// is the number of milliseconds in that unit (1 for milliseconds, 1000 for
// seconds; 0 means 1). Keeping the source's unit lets the comparison with
// an objective be the tool's own (vLLM compares value_s <= slo_ms/1000).
// A latency the source did not measure is 0, which meets any objective,
// as vLLM counts a one-token request's TPOT, unless Unmeasured says the
// source counts it as missing the objective (inference-perf: a request
// that streamed no tokens has no TTFT and meets no TTFT objective); such
// a latency is then left out of its histogram.
type Request struct {
	TTFT, TPOT, E2EL float64
	ITL              []float64
	Unit             float64
	Failed           bool
	Unmeasured       Latencies
}

// Latencies is a set of a request's latencies.
type Latencies uint8

const (
	TTFT Latencies = 1 << iota
	TPOT
	E2EL
)

// meets reports whether value v (in unit u ms) meets objective ms (0: none).
func meets(v, ms, u float64) bool {
	if ms == 0 {
		return true
	}
	if u == 1 {
		return v <= ms
	}
	return v <= ms/u
}
