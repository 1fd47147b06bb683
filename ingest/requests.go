package ingest

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfgate/perfgate/slo"
)

// Per-request measurements
//
// A result whose file carries each request's latencies keeps them, not as
// arrays but as a bounded summary (Result.Requests, package slo: a
// log-bucket histogram per latency and a joint table), from which goodput
// and attainment for another SLO, and percentiles with their interval,
// are computed later without the file. When Options.SLO is set (perfgate's
// --slo), the result also gets request_goodput, slo_attainment and
// slo_attainment_ttft/_tpot/_e2el computed exactly from the requests,
// with the tool's own comparison, so that where the tool printed its own
// goodput for the same SLO, perfgate's equals it; a request_goodput the
// file holds and perfgate's differ only when the tool ran with another
// SLO, which a warning says (perfgate's is kept).
//
// Sources:
//   - vllm-json, sglang-jsonl (`--save-result --save-detailed`, SGLang's
//     --output-details): the arrays ttfts, itls, e2els (newer vLLM),
//     output_lens and errors, in seconds. A request failed when its error
//     is not empty, or when it produced no output and no first token.
//     TPOT is vLLM's: (e2el - ttft) / (output_len - 1), 0 for one token.
//     Without e2els (vLLM before 0.10), e2el is taken as ttft + sum(itls),
//     which omits the time after the last token: with a tpot or e2el
//     objective a warning says that they may then count differently from
//     vLLM. Lists that are not one finite value >= 0 per request are left
//     out with a warning (the result's statistics stand).
//   - aiperf: profile_export.jsonl's records (aiperfrecords.go).
//   - guidellm: the requests a benchmark keeps, often a sample
//     (guidellmRequests).
//   - genai-bench: individual_request_metrics (genaiBenchRequests).
//   - inference-perf: per_request_lifecycle_metrics.json
//     (inferenceperfrecords.go).

// requestSet holds a result's requests until the reader summarises them.
type requestSet struct {
	reqs     []slo.Request
	has      []string
	duration float64 // seconds, 0 unknown
	// derived says e2el (and so tpot) was derived as ttft + sum(itls).
	derived bool
	// sampledFrom, when > 0, is the number of requests the run made, of
	// which the file kept only reqs (guidellm's request samples).
	sampledFrom int
}

// summarise turns a result's requests into its summary and, with an SLO,
// its exact attainment metrics.
func summarise(res *Result, o *slo.Objective) {
	rs := res.perRequest
	res.perRequest = nil
	if rs == nil || len(rs.reqs) == 0 {
		return
	}
	b := slo.NewBuilder(o)
	b.Has(rs.has...)
	dur := rs.duration
	if dur <= 0 {
		dur = res.Metrics["duration"]
	}
	b.SetDuration(dur)
	for _, q := range rs.reqs {
		b.Add(q)
	}
	res.Requests = b.Summary()
	res.Requests.E2ELDerived = rs.derived
	res.Requests.SampledFrom = rs.sampledFrom
	a, ok := b.Exact()
	if !ok {
		return
	}
	used := *o
	res.Requests.SLO = &used
	if rs.sampledFrom > 0 {
		res.Requests.SLO = nil
		res.Warnings = append(res.Warnings, fmt.Sprintf("the file keeps %d of its %d requests (guidellm's --request-samples): no request_goodput or slo_attainment for --slo %s is computed from a sample; keep every request (--request-samples -1) for them", len(rs.reqs), rs.sampledFrom, o))
		return
	}
	for _, x := range []struct {
		name string
		ms   float64
	}{{"ttft", o.TTFTms}, {"tpot", o.TPOTms}, {"e2el", o.E2ELms}} {
		if x.ms != 0 && !slices.Contains(rs.has, x.name) {
			res.Warnings = append(res.Warnings, fmt.Sprintf("--slo sets %s_ms=%g but the file gives no %s per request: that objective is taken as met by every request", x.name, x.ms, x.name))
		}
	}
	if rs.derived && (o.TPOTms != 0 || o.E2ELms != 0) {
		res.Warnings = append(res.Warnings, "the file has no per-request \"e2els\" (vLLM before 0.10): each request's e2el is taken as ttft + sum(itls), which omits the time after its last token, and its tpot from that; a request near the tpot or e2el objective may count differently from vLLM's own goodput")
	}
	own, hasOwn := res.Metrics["request_goodput"]
	for name, v := range a.Metrics() {
		res.Set(name, v)
	}
	if ours, set := res.Metrics["request_goodput"]; hasOwn && set && !sameFloat(own, ours) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the file's request_goodput %g differs from perfgate's %g for --slo %s: the tool ran with another SLO (its --goodput); perfgate's is stored", own, ours, o))
	}
	if a.Duration <= 0 {
		res.Warnings = append(res.Warnings, "the result gives no duration, so no request_goodput (requests/s) is computed from its requests; slo_attainment is")
	}
}

func sameFloat(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// guidellmRequests reads the requests a guidellm benchmark keeps
// ("requests": {"successful": [...], "errored": [...]}, v0.2/v0.3 keys
// time_to_first_token_ms, inter_token_latency_ms and request_latency in
// seconds); nil when it keeps none. guidellm's inter_token_latency_ms,
// (last token - first token) / (output tokens - 1), is vLLM's TPOT and is
// the summary's TPOT; incomplete requests, cut off by the end of the run,
// are left out as in its statistics. guidellm keeps a sample of each
// status (--request-samples, 20 by default): the summary then says of how
// many requests (Summary.SampledFrom), and no goodput is computed.
func guidellmRequests(b map[string]any, m map[string]float64, warn func(string)) *requestSet {
	reqs, _ := b["requests"].(map[string]any)
	if reqs == nil {
		return nil
	}
	rs := &requestSet{has: []string{"ttft", "tpot", "e2el"}}
	if d := m["duration"]; d > 0 {
		rs.duration = d
	}
	for _, status := range []string{"successful", "errored"} {
		l, _ := reqs[status].([]any)
		for i, x := range l {
			obj, _ := x.(map[string]any)
			if status == "errored" {
				rs.reqs = append(rs.reqs, slo.Request{Failed: true})
				continue
			}
			q := slo.Request{Unit: 1}
			for _, f := range []struct {
				key   string
				dst   *float64
				scale float64
			}{{"time_to_first_token_ms", &q.TTFT, 1}, {"inter_token_latency_ms", &q.TPOT, 1}, {"request_latency", &q.E2EL, 1e3}} {
				v, ok := Num(obj[f.key])
				if !ok || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					if _, present := obj[f.key]; present && obj[f.key] != nil {
						warn(fmt.Sprintf("its kept requests are left out (no request summary): requests.%s[%d].%s is %s, not a duration", status, i, f.key, docDescribe(obj[f.key])))
						return nil
					}
					v = 0
				}
				*f.dst = v * f.scale
			}
			rs.reqs = append(rs.reqs, q)
		}
	}
	if len(rs.reqs) == 0 {
		return nil
	}
	if made := int(m["completed"] + m["failed"]); made > len(rs.reqs) {
		rs.sampledFrom = made
	}
	return rs
}

// genaiBenchRequests reads genai-bench's individual_request_metrics; nil
// when there are none.
func genaiBenchRequests(obj map[string]any, duration float64, warn func(string)) *requestSet {
	l, _ := obj["individual_request_metrics"].([]any)
	if len(l) == 0 {
		return nil
	}
	rs := &requestSet{has: []string{"ttft", "tpot", "e2el"}, duration: duration}
	for i, x := range l {
		rec, _ := x.(map[string]any)
		if rec == nil {
			warn(fmt.Sprintf("its per-request records are left out (no request summary): individual_request_metrics[%d] is %s, not an object", i, docDescribe(x)))
			return nil
		}
		if e := rec["error_code"]; e != nil {
			rs.reqs = append(rs.reqs, slo.Request{Failed: true})
			continue
		}
		q := slo.Request{Unit: 1000}
		for _, f := range []struct {
			key string
			dst *float64
		}{{"ttft", &q.TTFT}, {"tpot", &q.TPOT}, {"e2e_latency", &q.E2EL}} {
			v, present := rec[f.key]
			if !present || v == nil {
				continue
			}
			n, ok := Num(v)
			if !ok || math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
				warn(fmt.Sprintf("its per-request records are left out (no request summary): individual_request_metrics[%d].%s is %s, not a duration in seconds", i, f.key, docDescribe(v)))
				return nil
			}
			*f.dst = n
		}
		rs.reqs = append(rs.reqs, q)
	}
	return rs
}

// serveRequests reads the per-request arrays of a vLLM or SGLang serving
// result; nil when it has none. Arrays that are not one value per request
// (a hand-made or damaged file) are left out with a warning: the result's
// own statistics still stand.
func serveRequests(obj map[string]any, warn func(string)) *requestSet {
	rs, err := readServeRequests(obj)
	if err != nil {
		warn(fmt.Sprintf("its per-request lists are left out (no request summary, no goodput for --slo): %v", err))
		return nil
	}
	return rs
}

func readServeRequests(obj map[string]any) (*requestSet, error) {
	ttfts, ok := obj["ttfts"].([]any)
	if !ok || len(ttfts) == 0 {
		return nil, nil
	}
	n := len(ttfts)
	arr := func(key string) ([]any, error) {
		v, present := obj[key]
		if !present || v == nil {
			return nil, nil
		}
		l, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%q is %s, not a list of one value per request", key, docDescribe(v))
		}
		if len(l) != n {
			return nil, fmt.Errorf("%q has %d values but \"ttfts\" has %d; a per-request list holds one value per request: the file is damaged or cut", key, len(l), n)
		}
		return l, nil
	}
	itls, err := arr("itls")
	if err != nil {
		return nil, err
	}
	e2els, err := arr("e2els")
	if err != nil {
		return nil, err
	}
	outLens, err := arr("output_lens")
	if err != nil {
		return nil, err
	}
	errs, err := arr("errors")
	if err != nil {
		return nil, err
	}
	num := func(key string, i int, v any) (float64, error) {
		f, ok := Num(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, fmt.Errorf("%q[%d] is %s, not a duration in seconds", key, i, docDescribe(v))
		}
		return f, nil
	}
	rs := &requestSet{reqs: make([]slo.Request, n), has: []string{"ttft"}}
	if itls != nil {
		rs.has = append(rs.has, "itl")
	}
	if e2els != nil || itls != nil {
		rs.has = append(rs.has, "e2el")
		if outLens != nil {
			rs.has = append(rs.has, "tpot")
		}
	}
	if d, ok := Num(obj["duration"]); ok && d > 0 {
		rs.duration = d
	}
	for i := 0; i < n; i++ {
		q := slo.Request{Unit: 1000}
		if q.TTFT, err = num("ttfts", i, ttfts[i]); err != nil {
			return nil, err
		}
		if itls != nil {
			l, ok := itls[i].([]any)
			if !ok && itls[i] != nil {
				return nil, fmt.Errorf("%q[%d] is %s, not a list of inter-token latencies", "itls", i, docDescribe(itls[i]))
			}
			q.ITL = make([]float64, len(l))
			for j, e := range l {
				f, ok := Num(e)
				if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
					return nil, fmt.Errorf("%q[%d][%d] is %s, not a duration in seconds", "itls", i, j, docDescribe(e))
				}
				q.ITL[j] = f
			}
		}
		if e2els != nil {
			if q.E2EL, err = num("e2els", i, e2els[i]); err != nil {
				return nil, err
			}
		} else {
			q.E2EL = q.TTFT
			for _, v := range q.ITL {
				q.E2EL += v
			}
		}
		outLen := -1.0
		if outLens != nil {
			if outLen, err = num("output_lens", i, outLens[i]); err != nil {
				return nil, err
			}
		}
		if errs != nil {
			if s, _ := errs[i].(string); strings.TrimSpace(s) != "" {
				q.Failed = true
			}
		}
		if outLen == 0 && q.TTFT == 0 {
			q.Failed = true
		}
		if outLen > 1 {
			q.TPOT = (q.E2EL - q.TTFT) / (outLen - 1)
		}
		rs.reqs[i] = q
	}
	rs.derived = e2els == nil && itls != nil
	return rs, nil
}
