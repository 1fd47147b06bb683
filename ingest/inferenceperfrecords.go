package ingest

import (
	"fmt"
	"math"

	"github.com/perfgate/perfgate/slo"
)

// inference-perf's per-request report (per_request_lifecycle_metrics.json,
// with request_lifecycle.per_request: a list of {"start_time", "end_time",
// "request", "response", "info": {"request_metrics", "response_metrics":
// {"output_tokens", "output_token_times", ...}}, "error"}, times in
// seconds) is read as one inference-perf result, as its lifecycle reports
// compute them (inference_perf/reportgen/base.py, summarize_requests):
// e2el = end_time - start_time; for a streamed request (more than one
// output token time) TTFT = output_token_times[0] - start_time, TPOT =
// (last - first output token time) / (output_tokens - 1) and the ITLs the
// gaps between output token times; a request with an error failed. The
// result holds completed, failed, duration (the first start to the last
// end of the completed requests, inference-perf's goodput denominator),
// request_throughput, the exact mean_e2el_ms, mean_ttft_ms and
// mean_tpot_ms, and the request summary; --slo gives goodput, counted as
// inference-perf counts it: a request that streamed no token times has no
// TTFT or TPOT (one of one output token no TPOT) and meets no objective
// on them (slo.Request.Unmeasured).

// ipRecords accumulates the records of one input.
type ipRecords struct {
	line       int
	set        requestSet
	start, end float64 // of the completed requests
	seen       bool    // a completed request was read
	sums       map[string]float64
	counts     map[string]int
}

// isInferencePerfRecord recognises one element of the per-request report.
func isInferencePerfRecord(obj map[string]any) bool {
	info, ok := obj["info"].(map[string]any)
	if !ok || !docIsNumber(obj["start_time"]) || !docIsNumber(obj["end_time"]) {
		return false
	}
	_, err := obj["error"]
	_, req := info["request_metrics"]
	_, resp := info["response_metrics"]
	return err && (req || resp)
}

// addInferencePerfRecord reads one per-request record.
func (r *Reader) addInferencePerfRecord(obj map[string]any, line int) error {
	if r.ipRecords == nil {
		r.ipRecords = &ipRecords{line: line, set: requestSet{has: []string{"ttft", "tpot", "itl", "e2el"}},
			sums: map[string]float64{}, counts: map[string]int{}}
	}
	acc := r.ipRecords
	if e := obj["error"]; e != nil {
		acc.set.reqs = append(acc.set.reqs, slo.Request{Failed: true})
		return nil
	}
	start, _ := Num(obj["start_time"])
	end, _ := Num(obj["end_time"])
	if !(end >= start) || math.IsInf(end, 0) || math.IsInf(start, 0) {
		return r.errorf(line, "inference-perf per-request record: end_time %v is before start_time %v; fix the record or leave the file out", end, start)
	}
	if !acc.seen || start < acc.start {
		acc.start = start
	}
	if !acc.seen || end > acc.end {
		acc.end = end
	}
	acc.seen = true
	q := slo.Request{Unit: 1000, E2EL: end - start, Unmeasured: slo.TTFT | slo.TPOT}
	info, _ := obj["info"].(map[string]any)
	resp, _ := info["response_metrics"].(map[string]any)
	times, _ := resp["output_token_times"].([]any)
	if len(times) > 1 {
		ts := make([]float64, len(times))
		for i, x := range times {
			f, ok := Num(x)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) || i > 0 && f < ts[i-1] {
				return r.errorf(line, "inference-perf per-request record: output_token_times[%d] is %s, not a time after the one before; fix the record or leave the file out", i, docDescribe(x))
			}
			ts[i] = f
		}
		q.TTFT = math.Max(0, ts[0]-start)
		q.Unmeasured = slo.TPOT
		if n, ok := Num(resp["output_tokens"]); ok && n > 1 {
			q.TPOT = (ts[len(ts)-1] - ts[0]) / (n - 1)
			q.Unmeasured = 0
		}
		q.ITL = make([]float64, len(ts)-1)
		for i := 1; i < len(ts); i++ {
			q.ITL[i-1] = ts[i] - ts[i-1]
		}
		acc.sums["ttft"] += q.TTFT
		acc.counts["ttft"]++
		if q.Unmeasured&slo.TPOT == 0 {
			acc.sums["tpot"] += q.TPOT
			acc.counts["tpot"]++
		}
	}
	acc.sums["e2el"] += q.E2EL
	acc.counts["e2el"]++
	acc.set.reqs = append(acc.set.reqs, q)
	return nil
}

// failed counts the failed requests of a set.
func (rs *requestSet) failed() int {
	n := 0
	for _, q := range rs.reqs {
		if q.Failed {
			n++
		}
	}
	return n
}

// flushInferencePerfRecords emits the result of the records read.
func (r *Reader) flushInferencePerfRecords() {
	acc := r.ipRecords
	r.ipRecords = nil
	if acc == nil {
		return
	}
	res := NewResult("inference-perf", acc.line)
	res.File = r.file
	failed := acc.set.failed()
	completed := len(acc.set.reqs) - failed
	res.Set("completed", float64(completed))
	res.Set("failed", float64(failed))
	if d := acc.end - acc.start; completed > 0 && d > 0 {
		acc.set.duration = d
		res.Set("duration", d)
		res.Set("request_throughput", float64(completed)/d)
	}
	for _, k := range []string{"ttft", "tpot", "e2el"} {
		if acc.counts[k] > 0 {
			res.Set(fmt.Sprintf("mean_%s_ms", k), 1e3*acc.sums[k]/float64(acc.counts[k]))
		}
	}
	set := acc.set
	res.perRequest = &set
	r.emit(res)
}
