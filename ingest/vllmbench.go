package ingest

import (
	"strconv"
	"strings"
)

// The line-oriented vLLM outputs, read by vsParser outside serving blocks.
//
// `vllm bench throughput` (benchmarks/benchmark_throughput.py before it)
// prints one line per run, since 2024 followed by two token counts:
//
//	Throughput: 5.62 requests/s, 2878.94 total tokens/s, 1439.47 output tokens/s
//	Total num prompt tokens:  102400
//	Total num output tokens:  51200
//
// (older versions: "Throughput: 5.62 requests/s, 2878.94 tokens/s", the
// 2023 one only requests/s; some forks put a run tag in front,
// "bs_8_input_128_output_128 Throughput: ...", kept as the label run). Format "vllm-throughput": requests/s ->
// request_throughput, total tokens/s (or bare tokens/s, which counted
// prompt and output tokens too) -> total_token_throughput, output
// tokens/s -> output_throughput, Total num prompt/output tokens ->
// total_input_tokens/total_output_tokens. A "Throughput: ... requests/s"
// line right after "Total time:" is the 2023 serving benchmark's (format
// "vllm", see vllmtext.go), not this one.
//
// `vllm bench latency` (benchmarks/benchmark_latency.py) prints
//
//	Avg latency: 1.2345 seconds
//	Std latency: 0.0123 seconds
//	10% percentile latency: 1.2 seconds
//	...
//	99% percentile latency: 1.3 seconds
//
// Format "vllm-latency": Avg -> mean_e2el_ms, Std -> std_e2el_ms, N%
// percentile -> pN_e2el_ms, all converted to milliseconds (the latency
// of one whole batch, the benchmark's only measure).
//
// Both take labels from the Namespace(...) dump and command line before
// them (see benchContext: model, batch_size, input_len, output_len, tp,
// num_prompts, backend, dataset) and are named after the model, or after
// their format. A result ends at the first non-blank line that is not one
// of its own, or at the end of the input.

// startThroughput reads a "Throughput:" line (t has no prefix).
func (p *vsParser) startThroughput(n int, t string) {
	r := NewResult("vllm-throughput", n)
	for _, part := range strings.Split(t[len("Throughput:"):], ",") {
		v, unit, ok := vsQuantity(part)
		if !ok || unit == "" {
			continue
		}
		_, rest := vsToken(vsTrimLeft(part))
		words := strings.Join(strings.Fields(rest), " ")
		switch {
		case unit == "requests/s" || unit == "reqs/s" || unit == "req/s":
			r.Set("request_throughput", v)
		case strings.HasPrefix(words, "total tokens/s"), strings.HasPrefix(words, "tokens/s"):
			r.Set("total_token_throughput", v)
		case strings.HasPrefix(words, "output tokens/s"):
			r.Set("output_throughput", v)
		}
	}
	if _, ok := r.Metrics["request_throughput"]; ok {
		p.pending = &r
	}
}

// startLatency reads an "Avg latency:" line.
func (p *vsParser) startLatency(n int, t string) {
	if name, v, ok := vllmLatencyLine(t); ok && name == "mean_e2el_ms" {
		r := NewResult("vllm-latency", n)
		r.Set(name, v)
		p.pending = &r
	}
}

// startLegacy reads the "Total time:" line of the 2023 serving benchmark.
func (p *vsParser) startLegacy(n int, t string) {
	v, unit, ok := vsQuantity(t[len("Total time:"):])
	if scale := vsTimeScale(unit); ok && scale > 0 {
		r := NewResult("vllm", n)
		r.Set("duration", v*scale/1000)
		p.pending = &r
	}
}

// more reads a line that may continue the pending result; it reports
// whether it did. The result is emitted once its last line is read.
func (p *vsParser) more(t string, emit Emit) bool {
	r := p.pending
	switch r.Format {
	case "vllm-throughput":
		for _, l := range [...]struct{ label, metric string }{
			{"Total num prompt tokens:", "total_input_tokens"},
			{"Total num output tokens:", "total_output_tokens"},
		} {
			if strings.HasPrefix(t, l.label) {
				if v, _, ok := vsQuantity(t[len(l.label):]); ok {
					r.Set(l.metric, v)
				}
				if l.metric == "total_output_tokens" {
					p.flush(emit)
				}
				return true
			}
		}
	case "vllm-latency":
		if name, v, ok := vllmLatencyLine(t); ok && name != "mean_e2el_ms" {
			r.Set(name, v)
			return true
		}
	case "vllm":
		for _, l := range [...]struct{ label, metric string }{
			{"Throughput:", "request_throughput"},
			{"Average latency per output token:", "mean_latency_per_output_token_ms"},
			{"Average latency per token:", "mean_latency_per_token_ms"},
			{"Average latency:", "mean_e2el_ms"},
		} {
			if !strings.HasPrefix(t, l.label) {
				continue
			}
			v, unit, ok := vsQuantity(t[len(l.label):])
			if !ok {
				return false
			}
			if l.metric == "request_throughput" {
				if unit != "requests/s" && unit != "req/s" {
					return false
				}
				r.Set(l.metric, v)
				return true
			}
			scale := vsTimeScale(unit)
			if scale == 0 {
				return false
			}
			r.Set(l.metric, v*scale)
			if l.metric == "mean_latency_per_output_token_ms" {
				p.flush(emit)
			}
			return true
		}
	}
	return false
}

// flush emits the pending result, if it is one: a 2023 serving result
// needs its throughput and average latency lines.
func (p *vsParser) flush(emit Emit) {
	r := p.pending
	if r == nil {
		return
	}
	p.pending = nil
	if r.Format == "vllm" {
		_, tput := r.Metrics["request_throughput"]
		_, lat := r.Metrics["mean_e2el_ms"]
		if !tput || !lat {
			return // "Total time:" of something else
		}
	}
	ctx := p.ctx.take()
	if p.want&vsFormatBits[r.Format] == 0 {
		return
	}
	vsApplyLabels(r, ctx, nil)
	r.Name = vsName(r, r.Format)
	p.emitted++
	emit(*r)
}

// vllmLatencyLine reads "Avg latency: 1.2 seconds", "Std latency: ..."
// and "10% percentile latency: ...", returning the metric and its value
// in milliseconds.
func vllmLatencyLine(t string) (name string, ms float64, ok bool) {
	colon := strings.Index(t, " latency:")
	if colon <= 0 {
		return "", 0, false
	}
	switch head := t[:colon]; {
	case head == "Avg":
		name = "mean_e2el_ms"
	case head == "Std":
		name = "std_e2el_ms"
	case strings.HasSuffix(head, "% percentile"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(head, "% percentile"), 64)
		if err != nil || f < 0 || f > 100 {
			return "", 0, false
		}
		name = "p" + strconv.FormatFloat(f, 'f', -1, 64) + "_e2el_ms"
	default:
		return "", 0, false
	}
	v, unit, ok := vsQuantity(t[colon+len(" latency:"):])
	scale := vsTimeScale(unit)
	if !ok || scale == 0 {
		return "", 0, false
	}
	return name, v * scale, true
}
