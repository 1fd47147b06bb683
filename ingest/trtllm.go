package ingest

import (
	"fmt"
	"path"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// TensorRT-LLM's `trtllm-bench throughput` (and `latency`) prints a report
// of '='-ruled sections, each "Label: value" lines:
//
//	===========================================================
//	= ENGINE DETAILS                       (or = PYTORCH BACKEND, = REQUEST DETAILS)
//	===========================================================
//	Model:                  meta-llama/Llama-3.1-8B
//	...
//	===========================================================
//	= PERFORMANCE OVERVIEW
//	===========================================================
//	Request Throughput (req/sec):                     1.4439
//	Total Output Throughput (tokens/sec):             185.8351
//	Total Latency (ms):                               6925.4963
//	Average request latency (ms):                     3671.8441
//
//	-- Request Latency Breakdown (ms) -----------------------
//	[Latency] P50    : 3936.3022
//	[Latency] MINIMUM: 2397.1047
//	===========================================================
//
// Format "trtllm-bench": one unnamed result per report (the model is a
// label, as for vLLM's blocks), from its PERFORMANCE
// OVERVIEW and the sections around it. Reports of 0.12 and before
// (tensorrt_llm/bench/run/run.py) have a STATISTICS section instead:
// Number of requests, Average Input/Output Length (tokens), Token
// Throughput, Request Throughput and Total Latency (seconds), after ENGINE
// DETAILS and WORLD + RUNTIME INFORMATION. Mapping: Request Throughput ->
// request_throughput; Total Output Throughput (0.17 and before: Token
// Throughput) -> output_throughput; Total Token Throughput ->
// total_token_throughput; Total Latency (the run's wall time, in ms; 0.12:
// seconds) -> duration in seconds; Average request latency -> mean_e2el_ms; Average
// time-to-first-token [TTFT] and time-per-output-token [TPOT] ->
// mean_ttft_ms, mean_tpot_ms; Number of requests -> completed; Number of
// concurrent requests (the measured average) -> concurrency. Breakdown
// lines "[Latency|TTFT|TPOT|ITL] STAT: v" give {stat}_{e2el|ttft|tpot|itl}_ms
// (MINIMUM, MAXIMUM, AVERAGE, P50 -> min, max, mean, median), in the unit
// their "-- ... (ms)" heading states; other tags ([GTPS]) {stat}_{tag}.
// Other numeric lines of the overview and request sections keep their
// sanitized names without the unit (per_user_output_throughput), time
// units converted to _ms. A DECODING STATISTICS (<mode>) section (1.0 and
// later, speculative decoding) gives {stat}_spec_decode_draft_tokens,
// _accepted_tokens, _acceptance_rate (a fraction) and _acceptance_length
// from its [DT], [ADT], [DAR] and [AL] lines, and the label spec_decode =
// <mode>. Labels: Model -> model, TensorRT-LLM Version (1.1 on: TensorRT
// LLM Version) -> engine_version, the GPU name of MACHINE DETAILS -> gpu, Dtype, KV Cache Dtype, Quantization, TP/PP/EP Size ->
// tp/pp/ep, Max Runtime Batch Size -> max_batch_size, Max Runtime Tokens ->
// max_num_tokens, Scheduling Policy, Dataset Path -> dataset (its base
// name), a PYTORCH BACKEND section -> backend=pytorch. Absent values
// ("None") are left out.
//
// Log prefixes ("[01/18/2025-01:01:42] [TRT-LLM] [I] ") are dropped. A
// report ends at a line that is not part of it or at a repeated section
// title (the next run). A report whose overview lacks the request
// throughput, an output or total throughput, or a latency — or whose last
// breakdown is empty — and that ends without its closing rule was cut off:
// an error naming the line. An overview without any breakdown after it (as
// NVIDIA's blog posts and docs paste it, with the older labels or the
// newer Total Token Throughput and "[w/ ctx] (tps/user)") is kept with a
// warning, unless its last line is the input's last and has no line break. Sections without an overview (a configuration
// printed alone) are no result.

func init() {
	RegisterText(TextFormat{
		Name: "trtllm-bench",
		Desc: "TensorRT-LLM trtllm-bench throughput/latency report (= PERFORMANCE OVERVIEW)",
		New:  func(file string) LineParser { return &trtParser{file: file} },
	})
}

type trtParser struct {
	file    string
	prevEq  bool // the previous line was a '=' rule
	in      bool
	res     Result
	start   int
	last    int
	section string          // upper-case title of the current section
	seen    map[string]bool // section titles of this report
	sub     string          // "-- ... --" heading, as printed
	subN    int             // statistics read under sub
	subMax  int             // most statistics under an earlier heading
	perf    bool
	// breakdown: a "-- ... --" heading was read (the statistics after the overview)
	breakdown bool
	closed    bool // the last report line was a '=' rule
	cut       int  // the last line of the input when it has no line break
}

func (p *trtParser) lastUnterminated(n int) { p.cut = n }

var trtMetrics = map[string]struct {
	name  string
	scale float64
}{
	"request throughput (req/sec)":              {"request_throughput", 1},
	"total output throughput (tokens/sec)":      {"output_throughput", 1},
	"token throughput (tokens/sec)":             {"output_throughput", 1},
	"total token throughput (tokens/sec)":       {"total_token_throughput", 1},
	"total latency (ms)":                        {"duration", 1e-3},
	"total latency (seconds)":                   {"duration", 1},
	"average request latency (ms)":              {"mean_e2el_ms", 1},
	"average time-to-first-token [ttft] (ms)":   {"mean_ttft_ms", 1},
	"average time-to-first-token (ms)":          {"mean_ttft_ms", 1},
	"average time-per-output-token [tpot] (ms)": {"mean_tpot_ms", 1},
	"average time-per-output-token (ms)":        {"mean_tpot_ms", 1},
	"number of requests":                        {"completed", 1},
	"number of concurrent requests":             {"concurrency", 1},
}

var trtLabels = map[string]string{
	"model": "model", "tensorrt-llm version": "engine_version", "tensorrt llm version": "engine_version", "dtype": "dtype", "kv cache dtype": "kv_cache_dtype",
	"quantization": "quantization", "tp size": "tp", "pp size": "pp", "ep size": "ep",
	"max runtime batch size": "max_batch_size", "max runtime tokens": "max_num_tokens",
	"scheduling policy": "scheduling_policy", "dataset path": "dataset", "backend": "backend",
}

// trtBreakdownStats is how many statistics a breakdown prints: MINIMUM,
// MAXIMUM, AVERAGE, P50, P90, P95, P99.
const trtBreakdownStats = 7

var trtKinds = map[string]string{"latency": "e2el", "ttft": "ttft", "tpot": "tpot", "itl": "itl"}

// trtTags names the speculative-decoding breakdowns of a DECODING
// STATISTICS section (per-request draft tokens, accepted draft tokens,
// draft acceptance rate, acceptance length); they keep the spec_decode_
// prefix vLLM's spec-decoding metrics have.
var trtTags = map[string]string{
	"dt":  "spec_decode_draft_tokens",
	"adt": "spec_decode_accepted_tokens",
	"dar": "spec_decode_acceptance_rate",
	"al":  "spec_decode_acceptance_length",
}

// trtStrip drops a "[date] [TRT-LLM] [I] " log prefix and blanks.
func trtStrip(line string) string {
	s := strings.TrimSpace(line)
	if len(s) > 0 && s[0] == '[' {
		if i := strings.Index(s, "] [TRT-LLM] ["); i > 0 {
			if j := strings.IndexByte(s[i+len("] [TRT-LLM] ["):], ']'); j >= 0 {
				s = strings.TrimSpace(s[i+len("] [TRT-LLM] [")+j+1:])
			}
		}
	}
	return s
}

// trtTitle returns the title of a "= TITLE" line.
func trtTitle(s string) (string, bool) {
	if len(s) < 4 || s[0] != '=' || s[1] != ' ' {
		return "", false
	}
	t := strings.TrimSpace(s[2:])
	head := t
	if i := strings.Index(t, " ("); i > 0 && strings.HasSuffix(t, ")") {
		head = t[:i] // "DECODING STATISTICS (Eagle3)": the mode is not upper case
	}
	if head == "" || strings.ToUpper(head) != head || strings.Trim(head, "=") == "" {
		return "", false
	}
	return t, true
}

func trtRule(s string, c byte) bool {
	return len(s) >= 10 && strings.Trim(s, string(c)) == ""
}

func (p *trtParser) Line(n int, line string, emit Emit) error {
	s := trtStrip(line)
	prevEq := p.prevEq
	p.prevEq = trtRule(s, '=')
	if !p.in {
		if title, ok := trtTitle(s); ok && prevEq {
			p.begin(n - 1)
			p.enter(title)
		}
		return nil
	}
	switch {
	case s == "":
		return nil
	case p.prevEq:
		p.closed, p.last = true, n
		return nil
	}
	if title, ok := trtTitle(s); ok {
		if p.seen[title] {
			// The same section again: the next run's report.
			if err := p.finish(n, emit); err != nil {
				return err
			}
			p.begin(n - 1)
		}
		p.enter(title)
		p.last = n
		return nil
	}
	if strings.HasPrefix(s, "--") {
		p.closed = false
		if err := p.checkSub(n); err != nil {
			return err
		}
		p.subMax = max(p.subMax, p.subN)
		p.sub = strings.TrimSpace(strings.Trim(s, "- "))
		p.subN = 0
		p.breakdown = true
		p.last = n
		return nil
	}
	if s[0] == '[' {
		if ok := p.stat(s); ok {
			p.last, p.closed = n, false
			return nil
		}
	} else if p.item(n, s) {
		p.last, p.closed = n, false
		return nil
	}
	if p.section == "DATASET DETAILS" && !strings.Contains(s, "[") {
		p.last, p.closed = n, false // the dataset's percentile table
		return nil
	}
	if p.section == "MACHINE DETAILS" && !strings.Contains(s, "[") {
		// "NVIDIA H100 80GB HBM3, memory 79.65 GB, 2.62 GHz" or
		// "No GPU info available".
		if name, _, ok := strings.Cut(s, ", memory "); ok && strings.TrimSpace(name) != "" {
			p.res.SetLabel("gpu", strings.TrimSpace(name))
		}
		p.last, p.closed = n, false
		return nil
	}
	// Other output: the report ended on the previous line.
	return p.finish(n, emit)
}

func (p *trtParser) End(n int, emit Emit) error {
	if p.in {
		return p.finish(n, emit)
	}
	return nil
}

func (p *trtParser) begin(n int) {
	p.in, p.start, p.last = true, n, n
	p.res = NewResult("trtllm-bench", n)
	p.seen = map[string]bool{}
	p.perf, p.closed, p.sub, p.subN, p.subMax, p.breakdown = false, false, "", 0, 0, false
}

func (p *trtParser) enter(title string) {
	p.seen[title] = true
	p.section = title
	p.subMax = max(p.subMax, p.subN)
	p.sub, p.subN = "", 0
	switch {
	case title == "PERFORMANCE OVERVIEW", title == "STATISTICS":
		p.perf = true
	case strings.Contains(title, "PYTORCH"):
		p.res.SetLabel("backend", "pytorch")
	case strings.HasPrefix(title, "DECODING STATISTICS ("):
		mode := strings.TrimSuffix(title[len("DECODING STATISTICS ("):], ")")
		if !IsAbsent(mode) {
			p.res.SetLabel("spec_decode", mode)
		}
		p.section = "DECODING STATISTICS"
	}
}

// item reads a "Label: value" line.
func (p *trtParser) item(n int, s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon <= 0 {
		return false
	}
	label := strings.TrimSpace(s[:colon])
	if !vsLooksLikeLabel(strings.NewReplacer("[", "", "]", "").Replace(label)) {
		return false
	}
	value := strings.TrimSpace(s[colon+1:])
	key := vsNormLabel(label)
	if lbl, ok := trtLabels[key]; ok {
		if lbl == "dataset" {
			value = path.Base(value)
		}
		if !IsAbsent(value) {
			p.res.SetLabel(lbl, value)
		}
		return true
	}
	switch p.section {
	case "PERFORMANCE OVERVIEW", "STATISTICS", "REQUEST DETAILS", "STREAMING STATISTICS", "LATENCY STATISTICS":
	default:
		return true // configuration the vocabulary has no label for
	}
	if IsAbsent(value) {
		return true
	}
	v, unit, ok := ParseQuantity(value)
	if !ok {
		return true
	}
	if m, ok := trtMetrics[key]; ok {
		docSetScaled(&p.res, m.name, v, m.scale)
		return true
	}
	name, lunit := docSplitUnit(label)
	if i := strings.IndexByte(name, '['); i > 0 {
		name = strings.TrimSpace(name[:i])
	}
	if lunit == "" {
		lunit = unit
	}
	base := metric.Sanitize(name)
	if base == "" {
		return true
	}
	if lunit != "" && lunit != "%" {
		if scale, ok := docTimeScale(lunit); ok {
			docSetScaled(&p.res, base+"_ms", v, scale)
			return true
		}
	}
	p.res.Set(base, v)
	return true
}

// stat reads a "[Latency] P50    : 3936.3022" line.
func (p *trtParser) stat(s string) bool {
	end := strings.IndexByte(s, ']')
	colon := strings.LastIndexByte(s, ':')
	if end < 2 || colon < end {
		return false
	}
	tag := strings.TrimSpace(s[1:end])
	word, ok := docStatWord(strings.TrimSpace(s[end+1 : colon]))
	if !ok {
		return false
	}
	value := strings.TrimSpace(s[colon+1:])
	p.subN++
	if IsAbsent(value) {
		return true
	}
	v, vunit, ok := ParseQuantity(value)
	if !ok {
		return false
	}
	_, unit := docSplitUnit(p.sub)
	if unit == "" {
		unit = vunit
	}
	scale, isTime := docTimeScale(unit)
	if kind, ok := trtKinds[strings.ToLower(tag)]; ok && isTime {
		docSetScaled(&p.res, metric.Latency(word, kind), v, scale)
		return true
	}
	if name, ok := trtTags[strings.ToLower(tag)]; ok && p.section == "DECODING STATISTICS" {
		p.res.Set(word+"_"+name, v)
		return true
	}
	base := metric.Sanitize(tag)
	if base == "" {
		return false
	}
	if isTime && unit != "" {
		docSetScaled(&p.res, word+"_"+base+"_ms", v, scale)
	} else {
		p.res.Set(word+"_"+base, v)
	}
	return true
}

// checkSub reports a breakdown heading with no statistics under it,
// followed by more of the report: the output was damaged.
func (p *trtParser) checkSub(n int) error {
	if p.sub != "" && p.subN == 0 && strings.Contains(strings.ToLower(p.sub), "breakdown") {
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("trtllm-bench report that starts at line %d has an empty %s; copy the complete report", p.start, Quote(p.sub))}
	}
	return nil
}

func (p *trtParser) finish(n int, emit Emit) error {
	p.in = false
	if !p.perf {
		return nil
	}
	r := p.res
	has := func(names ...string) bool {
		for _, k := range names {
			if _, ok := r.Metrics[k]; ok {
				return true
			}
		}
		return false
	}
	var miss []string
	if !has("request_throughput") {
		miss = append(miss, `"Request Throughput"`)
	}
	if !has("output_throughput", "total_token_throughput") {
		miss = append(miss, "an output or total token throughput")
	}
	if !has("duration", "mean_e2el_ms") {
		miss = append(miss, "a latency")
	}
	if p.sub != "" && p.subN == 0 && strings.Contains(strings.ToLower(p.sub), "breakdown") {
		miss = append(miss, "the statistics under "+Quote(p.sub))
	}
	if !p.closed && p.subN > 0 && p.subN < max(p.subMax, trtBreakdownStats) {
		miss = append(miss, "part of "+Quote(p.sub))
	}
	if !p.closed && p.cut > 0 && p.last == p.cut {
		miss = append(miss, "the end of its last line (line "+fmt.Sprint(p.cut)+" has no line break: the input ends inside it)")
	}
	if len(miss) > 0 {
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("trtllm-bench report that starts at line %d is cut off: it lacks %s; copy the complete report or re-run the benchmark", p.start, strings.Join(miss, ", "))}
	}
	if !p.closed {
		what := "it looks complete"
		if !p.breakdown {
			// Blog posts and docs paste the overview alone, with the older
			// labels and the newer ones alike.
			what = "it holds the overview without a latency breakdown, as documents paste it"
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("trtllm-bench report that starts at line %d has no closing \"=====\" line after line %d; %s, and was kept", p.start, p.last, what))
	}
	emit(r)
	return nil
}
