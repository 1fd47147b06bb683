package ingest

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/perfgate/perfgate/slo"
)

// AIPerf's per-request records (profile_export.jsonl: one object per
// request, {"metadata": {...}, "metrics": {name: {"value", "unit"}},
// "error"}) are read together as one aiperf result: its requests'
// summary (Result.Requests), goodput and attainment for --slo, and
// completed, failed, duration (first request's start to last request's
// end), request_throughput and the exact means mean_ttft_ms (AIPerf's
// time_to_first_token), mean_itl_ms (its inter_token_latency, named as
// the aiperf format names it: see genaiperf.go) and mean_e2el_ms (its
// request_latency). In the summary, which answers SLOs, inter_token_latency
// is the TPOT (it is vLLM's TPOT: (latency - ttft) / (tokens - 1)) and
// inter_chunk_latency the ITL (per chunk, as vLLM's itls). Its percentiles are AIPerf's own in
// profile_export_aiperf.json, the file to ingest beside the records; a
// directory of AIPerf's artifacts gives that one (DirInputs). Warmup
// records (benchmark_phase "warmup") are left out; a record with an error
// is a failed request.

// aiperfRecords accumulates the records of one input.
type aiperfRecords struct {
	line       int
	set        requestSet
	start, end int64 // ns; 0 unknown
	warmup     int
}

// addAIPerfRecord reads one per-request record.
func (r *Reader) addAIPerfRecord(obj map[string]any, line int) error {
	if r.records == nil {
		r.records = &aiperfRecords{line: line, set: requestSet{has: []string{"ttft", "tpot", "itl", "e2el"}}}
	}
	acc := r.records
	md, _ := obj["metadata"].(map[string]any)
	if phase, _ := md["benchmark_phase"].(string); phase == "warmup" {
		acc.warmup++
		return nil
	}
	if s, ok := nsOf(md["request_start_ns"]); ok && (acc.start == 0 || s < acc.start) {
		acc.start = s
	}
	if e, ok := nsOf(md["request_end_ns"]); ok && e > acc.end {
		acc.end = e
	}
	q := slo.Request{Unit: 1}
	if e, present := obj["error"]; present && e != nil {
		q.Failed = true
		acc.set.reqs = append(acc.set.reqs, q)
		return nil
	}
	metrics, _ := obj["metrics"].(map[string]any)
	var err error
	read := func(name string, dst *float64) {
		if err != nil {
			return
		}
		v, ok := metrics[name].(map[string]any)
		if !ok {
			return
		}
		var f float64
		if f, err = recordMs(name, v, v["value"]); err == nil {
			*dst = f
		}
	}
	read("time_to_first_token", &q.TTFT)
	read("inter_token_latency", &q.TPOT)
	read("request_latency", &q.E2EL)
	if ic, ok := metrics["inter_chunk_latency"].(map[string]any); ok && err == nil {
		l, _ := ic["value"].([]any)
		q.ITL = make([]float64, 0, len(l))
		for _, x := range l {
			f, e := recordMs("inter_chunk_latency", ic, x)
			if e != nil {
				err = e
				break
			}
			q.ITL = append(q.ITL, f)
		}
	}
	if err != nil {
		return r.errorf(line, "aiperf per-request record: %v; fix the record or leave the file out", err)
	}
	acc.set.reqs = append(acc.set.reqs, q)
	return nil
}

// recordMs reads one value of a record's metric in milliseconds.
func recordMs(name string, m map[string]any, v any) (float64, error) {
	f, ok := Num(v)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%s is %s, not a duration", name, docDescribe(v))
	}
	unit, _ := m["unit"].(string)
	switch unit {
	case "ms", "":
		return f, nil
	case "ns":
		return f / 1e6, nil
	case "us":
		return f / 1e3, nil
	case "s", "sec":
		return f * 1e3, nil
	}
	return 0, fmt.Errorf("%s has unit %s; perfgate reads ns, us, ms and s", name, Quote(unit))
}

// nsOf reads a nanosecond timestamp exactly.
func nsOf(v any) (int64, bool) {
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		return i, err == nil && i > 0
	}
	f, ok := Num(v)
	return int64(f), ok && f > 0 && f < math.MaxInt64
}

// flushAIPerfRecords emits the result of the records read.
func (r *Reader) flushAIPerfRecords() {
	acc := r.records
	r.records = nil
	if acc == nil {
		return
	}
	if len(acc.set.reqs) == 0 {
		r.notes = append(r.notes, fmt.Sprintf("%s:%d: AIPerf per-request records, %d of the warmup and none of the profiling phase: nothing to store", r.file, acc.line, acc.warmup))
		return
	}
	res := NewResult("aiperf", acc.line)
	res.File = r.file
	var completed, failed int
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, q := range acc.set.reqs {
		if q.Failed {
			failed++
			continue
		}
		completed++
		// inter_token_latency is stored as itl, as the aiperf format does.
		for k, v := range map[string]float64{"ttft": q.TTFT, "itl": q.TPOT, "e2el": q.E2EL} {
			sums[k] += v
			counts[k]++
		}
	}
	res.Set("completed", float64(completed))
	res.Set("failed", float64(failed))
	if acc.end > acc.start && acc.start > 0 {
		d := float64(acc.end-acc.start) / 1e9
		acc.set.duration = d
		res.Set("duration", d)
		res.Set("request_throughput", float64(completed)/d)
	}
	for _, k := range slo.Kinds {
		if counts[k] > 0 {
			res.Set("mean_"+k+"_ms", sums[k]/float64(counts[k]))
		}
	}
	set := acc.set
	res.perRequest = &set
	r.emit(res)
}
