package ingest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/metric"
)

// MLPerf Inference's LoadGen writes mlperf_log_summary.txt after every
// run (mlcommons/inference loadgen/results.cc; submissions keep it under
// results/<system>/<model>/<Scenario>/performance/run_1/):
//
//	================================================
//	MLPerf Results Summary
//	================================================
//	SUT name : llama2-70b-Server-SUT
//	Scenario : Server
//	Mode     : PerformanceOnly
//	Completed samples per second    : 100.35
//	Completed tokens per second: 29228.22
//	Result is : VALID
//	  Performance constraints satisfied : Yes
//	...
//	================================================
//	Additional Stats
//	================================================
//	Min latency (ns)                : 196445828
//	50.00 percentile latency (ns)   : 31107282906
//	Mean First Token latency (ns)               : 198269106
//	99.00 percentile time to output token (ns)   : 146040006
//	...
//	================================================
//	Test Parameters Used
//	================================================
//	target_qps : 101
//	...
//	No warnings encountered during test.
//
//	No errors encountered during test.
//
// Each summary is one result. Mapping:
//   - Samples per second (Offline), Completed samples per second (Server)
//     -> request_throughput; Tokens per second, Completed tokens per
//     second (LLM benchmarks) -> output_throughput; Scheduled samples per
//     second -> scheduled_samples_per_second.
//   - latencies in ns become ms: "Min/Max/Mean latency" and "NN.NN
//     percentile latency" (and SingleStream's and MultiStream's headline
//     "90th/99th percentile latency") -> {min,max,mean,median,pNN}_e2el_ms;
//     the "First Token latency" lines -> *_ttft_ms; the "Time to Output
//     Token" lines -> *_tpot_ms. Other numeric lines of the summary and
//     its Additional Stats keep sanitized names (qps_w_o_loadgen_overhead),
//     with _ms (converted) when in ns.
//   - labels: scenario, mode, sut (SUT name), and target_qps and
//     target_latency_ns from the Test Parameters Used.
//   - "Result is : INVALID" makes the result invalid (Result.Invalid),
//     naming the constraints LoadGen says were not satisfied: perfgate
//     ingest stores it, never as a baseline. A summary that reports
//     errors ("N ERRORS encountered") is kept with a warning.
//
// The summary ends at LoadGen's "No errors encountered during test." (or
// "N ERROR(s) encountered") line. One that ends before it (a summary
// pasted into a page, cut after its Results Summary) is kept with a
// warning when it holds the scenario, the headline result and the
// validity, and, when its Additional Stats began, their last latency
// percentile (99.90); otherwise it was cut off: an error. HTML tags some
// pages wrap lines in (<b>, <pre>) are ignored.
func init() {
	RegisterText(TextFormat{
		Name: "mlperf",
		Desc: "MLPerf Inference LoadGen mlperf_log_summary.txt",
		New:  func(file string) LineParser { return &mlperfParser{file: file} },
	})
}

type mlperfParser struct {
	file    string
	res     *Result
	section string // "summary", "stats", "params"
	last    int    // last line of the block
	result  string // "VALID", "INVALID" or ""
	unmet   []string
	head    bool // the scenario's headline result was read
	inStats bool // Additional Stats began
	p999    bool // ... and reached their 99.90 percentile latency
}

var (
	mlperfHTMLRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`</?[a-zA-Z]+[^<>]*>`) })
	mlperfPctRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(\d+(?:\.\d+)?)(?:th)? percentile (latency|first token latency|time to output token)$`)
	})
	mlperfStatRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(min|max|mean) (latency|first token latency|time to output token)$`)
	})
	mlperfEndRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(no|\d+) errors? encountered`) })
	mlperfWarnRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(no|\d+) warnings? encountered`) })
)

var mlperfKinds = map[string]string{"latency": "e2el", "first token latency": "ttft", "time to output token": "tpot"}

var mlperfRates = map[string]string{
	"samples per second":           "request_throughput",
	"completed samples per second": "request_throughput",
	"tokens per second":            "output_throughput",
	"completed tokens per second":  "output_throughput",
	"scheduled samples per second": "scheduled_samples_per_second",
}

func (p *mlperfParser) Line(n int, line string, emit Emit) error {
	if p.res == nil && !mlperfStart(line) {
		return nil // the common case: a look at the end of the line
	}
	t := line
	if strings.IndexByte(t, '<') >= 0 {
		t = mlperfHTMLRE().ReplaceAllString(t, "")
	}
	t = strings.TrimSpace(t)
	if t == "MLPerf Results Summary" {
		if err := p.close(n-1, false, emit); err != nil {
			return err
		}
		r := NewResult("mlperf", n)
		p.res, p.section, p.last = &r, "summary", n
		return nil
	}
	if p.res == nil {
		return nil
	}
	switch {
	case t == "" || strings.Trim(t, "=") == "" || strings.HasPrefix(t, "*"):
		p.last = n
		return nil
	case t == "Additional Stats":
		p.section, p.inStats, p.last = "stats", true, n
		return nil
	case t == "Test Parameters Used":
		p.section, p.last = "params", n
		return nil
	case mlperfEndRE().MatchString(t):
		if !strings.HasPrefix(strings.ToLower(t), "no ") {
			p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("line %d: LoadGen reports %s", n, Quote(t)))
		}
		p.last = n
		return p.close(n, true, emit)
	case mlperfWarnRE().MatchString(t):
		if !strings.HasPrefix(strings.ToLower(t), "no ") {
			p.res.Warnings = append(p.res.Warnings, fmt.Sprintf("line %d: LoadGen reports %s", n, Quote(t)))
		}
		p.last = n
		return nil
	}
	key, val, ok := strings.Cut(t, ":")
	if !ok || !mlperfKeyStart(key) {
		// Other output follows the summary (a log line starts with a
		// time or a bracket, prose has no colon): it has ended.
		return p.close(p.last, false, emit)
	}
	p.last = n
	return p.field(n, strings.Join(strings.Fields(key), " "), strings.TrimSpace(val))
}

func (p *mlperfParser) End(n int, emit Emit) error { return p.close(p.last, false, emit) }

// field reads one "key : value" line.
func (p *mlperfParser) field(n int, key, val string) error {
	r := p.res
	lk := strings.ToLower(key)
	switch {
	case val == "":
		return nil // "Recommendations:", "TTFT Early Stopping Result:"
	case p.section == "params":
		switch lk {
		case "target_qps":
			r.SetLabel("target_qps", val)
		case "target_latency (ns)":
			r.SetLabel("target_latency_ns", val)
		}
		return nil
	case lk == "sut name":
		r.SetLabel("sut", val)
		return nil
	case lk == "scenario":
		r.SetLabel("scenario", val)
		return nil
	case lk == "mode":
		r.SetLabel("mode", val)
		return nil
	case lk == "result is":
		p.result = strings.ToUpper(val)
		return nil
	case strings.HasSuffix(lk, " satisfied"):
		if strings.EqualFold(val, "no") {
			p.unmet = append(p.unmet, strings.ToLower(strings.TrimSuffix(key, " satisfied")))
		}
		return nil
	}
	v, _, isNum := ParseQuantity(val)
	if !isNum {
		return nil // prose such as "Early Stopping Result: ..."
	}
	name, unit := docSplitUnit(lk)
	if strings.Contains(name, "percentile estimate") {
		unit = "ns" // "Early stopping 90th percentile estimate", in ns
	}
	if m, ok := mlperfRates[name]; ok {
		r.Set(m, v)
		p.head = p.head || p.section == "summary"
		return nil
	}
	base := mlperfName(name)
	if base == "" {
		return nil // no letters or digits: not a metric line
	}
	if unit != "ns" {
		r.Set(base, v)
		return nil
	}
	ms := mlperfMs(v)
	if m := mlperfStatRE().FindStringSubmatch(name); m != nil {
		r.Set(metric.Latency(m[1], mlperfKinds[m[2]]), ms)
		return nil
	}
	if m := mlperfPctRE().FindStringSubmatch(name); m != nil {
		pct, err := strconv.ParseFloat(m[1], 64)
		if err != nil || pct <= 0 || pct >= 100 {
			return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("MLPerf summary: percentile %s is not between 0 and 100; fix the line", Quote(m[1]))}
		}
		stat := metric.Percentile(pct)
		if pct == 50 {
			stat = "median"
		}
		r.Set(metric.Latency(stat, mlperfKinds[m[2]]), ms)
		if p.section == "summary" {
			p.head = true
		}
		if p.inStats && pct == 99.9 && m[2] == "latency" {
			p.p999 = true
		}
		return nil
	}
	r.Set(base+"_ms", ms)
	return nil
}

// close ends the open summary at line last; ended says LoadGen's closing
// line was seen.
func (p *mlperfParser) close(last int, ended bool, emit Emit) error {
	r := p.res
	if r == nil {
		return nil
	}
	p.res = nil
	defer func() { p.result, p.unmet, p.head, p.inStats, p.p999 = "", nil, false, false, false }()
	if !ended {
		var miss []string
		if _, ok := r.Labels["scenario"]; !ok {
			miss = append(miss, "the Scenario line")
		}
		if !p.head {
			miss = append(miss, "the scenario's result (samples per second or percentile latency)")
		}
		if p.result == "" {
			miss = append(miss, `"Result is"`)
		}
		if p.inStats && !p.p999 {
			miss = append(miss, "the 99.90 percentile latency of its Additional Stats")
		}
		if len(miss) > 0 {
			return &Error{File: p.file, Line: last, Msg: fmt.Sprintf("MLPerf summary starting at line %d is cut off after line %d: it lacks %s; give the whole mlperf_log_summary.txt", r.Line, last, strings.Join(miss, ", "))}
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("MLPerf summary ends after line %d without LoadGen's closing \"No errors encountered during test.\" line", last))
	}
	if p.result == "INVALID" {
		why := "MLPerf LoadGen: Result is INVALID"
		if len(p.unmet) > 0 {
			why += " (not satisfied: " + strings.Join(p.unmet, ", ") + ")"
		}
		r.Invalid = why
	}
	emit(*r)
	return nil
}

// mlperfStart reports whether line may start a summary: it ends with
// "MLPerf Results Summary" (or with a tag, as in "<b>MLPerf Results
// Summary</b>"). Only the end of the line is looked at, so the lines of a
// long log cost next to nothing.
func mlperfStart(line string) bool {
	t := strings.TrimRight(line, " \t")
	if strings.HasSuffix(t, ">") {
		return strings.Contains(t, "MLPerf Results Summary")
	}
	return strings.HasSuffix(t, "MLPerf Results Summary")
}

// mlperfKeyStart reports whether key can be a summary line's name: it
// starts with a letter (SUT name, 50.00 percentile ..., target_qps) or with
// a percentile ("90.00 percentile latency"), never a time or a bracket.
func mlperfKeyStart(key string) bool {
	key = strings.TrimSpace(key)
	if key == "" {
		return false
	}
	c := key[0]
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
		return true
	}
	return mlperfPctRE().MatchString(strings.ToLower(strings.Join(strings.Fields(strings.TrimSuffix(key, "(ns)")), " ")))
}

// mlperfMs converts nanoseconds to milliseconds, rounded to 15
// significant digits so 1391706720834 ns is 1391706.720834 ms exactly as
// printed (LoadGen's nanosecond counts have up to 13 digits).
func mlperfMs(ns float64) float64 {
	ms := ns / 1e6
	if f, err := strconv.ParseFloat(strconv.FormatFloat(ms, 'g', 15, 64), 64); err == nil {
		return f
	}
	return ms
}

// mlperfName names a numeric line the vocabulary does not know: "QPS w/
// loadgen overhead" -> qps_with_loadgen_overhead.
func mlperfName(key string) string {
	key = strings.ReplaceAll(key, "w/o ", "without ")
	key = strings.ReplaceAll(key, "w/ ", "with ")
	return metric.Sanitize(key)
}
