package gate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/slo"
)

// Percentiles from requests.
//
// A latency percentile a benchmark tool reports (p99_ttft_ms) is one order
// statistic of the run's requests: a P99 of 200 requests is decided by the
// 2 slowest. When a run stored its per-request summary (Sample.Requests),
// each check of a percentile metric says what head's and the baseline's
// percentile rests on and its 95% interval from the requests themselves
// (the order-statistic interval of package slo), in
// CheckResult.RequestPercentiles. When a side's percentile rests on fewer
// than slo.MinTail requests beyond it, or its interval reaches beyond the
// slowest request, the check also carries RequestNote and the report a
// warning saying so: a caveat on the number, never a change of verdict.

// RequestSummary gives a run's latency percentiles from its requests;
// *slo.Summary and *slo.Stored (decoded on first use) implement it.
type RequestSummary interface {
	Percentile(kind string, p, conf float64) (slo.Quantile, error)
}

// requestConf is the confidence of the percentiles' intervals.
const requestConf = 0.95

// RequestPercentile is the percentile of a check's metric computed from one
// side's requests, with its interval.
type RequestPercentile struct {
	Side       string  `json:"side"`       // "head" or "baseline"
	Percentile float64 `json:"percentile"` // e.g. 99
	Requests   int     `json:"requests"`   // latencies it is a percentile of
	// Tail counts the latencies above it: what it rests on.
	Tail int `json:"tail"`
	// Runs counts the side's runs with a request summary; with several, the
	// one with the fewest requests is shown (Same: they all have as many).
	Runs  int      `json:"runs"`
	Same  bool     `json:"-"`
	Value float64  `json:"value"` // ms, nearest rank of the summary
	Lo    float64  `json:"lo"`    // ms
	Hi    *float64 `json:"hi"`    // ms; null: beyond the slowest request
	Conf  float64  `json:"conf"`  // of [Lo, Hi]
}

var percentileMetricRE = regexp.MustCompile(`^(median|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2el)_ms$`)

// percentileMetric parses a latency percentile metric name: p99_ttft_ms is
// (99, "ttft"), median_tpot_ms (50, "tpot").
func percentileMetric(name string) (p float64, kind string, ok bool) {
	m := percentileMetricRE.FindStringSubmatch(name)
	if m == nil {
		return 0, "", false
	}
	p = 50
	if m[2] != "" {
		var err error
		if p, err = strconv.ParseFloat(m[2], 64); err != nil || !(p > 0 && p < 100) {
			return 0, "", false
		}
	}
	return p, m[3], true
}

// requestPercentiles fills a percentile check's RequestPercentiles and
// RequestNote from the runs' request summaries.
func requestPercentiles(cr *CheckResult, head, base []*Sample) {
	p, kind, ok := percentileMetric(cr.Metric)
	if !ok {
		return
	}
	var notes []string
	for _, side := range []struct {
		name string
		runs []*Sample
	}{{"head", head}, {"baseline", base}} {
		rp, ok := sidePercentile(side.name, side.runs, p, kind)
		if !ok {
			continue
		}
		cr.RequestPercentiles = append(cr.RequestPercentiles, rp)
		if rp.fragile() {
			notes = append(notes, rp.note(kind))
		}
	}
	if len(notes) > 0 {
		cr.RequestNote = strings.Join(notes, "; ") + fmt.Sprintf(": measure at least %d requests for a P%s to rest on %d (a caveat on the number, not the verdict)",
			int(math.Ceil(slo.MinTail/(1-p/100)-1e-9)), strconv.FormatFloat(p, 'f', -1, 64), slo.MinTail)
	}
}

// sidePercentile computes percentile p of kind for the run of runs with a
// request summary and the fewest requests.
func sidePercentile(side string, runs []*Sample, p float64, kind string) (RequestPercentile, bool) {
	rp := RequestPercentile{Side: side, Percentile: p, Conf: requestConf}
	var best slo.Quantile
	rp.Same = true
	for _, s := range runs {
		if s == nil || s.Requests == nil {
			continue
		}
		q, err := s.Requests.Percentile(kind, p, requestConf)
		if err != nil {
			continue // no such latency per request, or an unreadable summary
		}
		rp.Runs++
		if rp.Runs > 1 && q.N != best.N {
			rp.Same = false
		}
		if rp.Runs == 1 || q.N < best.N {
			best = q
		}
	}
	if rp.Runs == 0 {
		return rp, false
	}
	rp.Requests, rp.Tail, rp.Value, rp.Lo = best.N, best.Tail, best.Value, best.Lo
	if !math.IsInf(best.Hi, 1) {
		hi := best.Hi
		rp.Hi = &hi
	}
	return rp, true
}

// fragile reports a percentile that rests on fewer than slo.MinTail
// requests beyond it, or whose interval has no upper bound in the sample.
func (rp RequestPercentile) fragile() bool { return rp.Tail < slo.MinTail || rp.Hi == nil }

// note says what the percentile rests on: "head's P99 TTFT of 200 requests
// rests on the 2 slowest; 95% interval 812-1020 ms".
func (rp RequestPercentile) note(kind string) string {
	who := "head's"
	if rp.Side == "baseline" {
		who = "the baseline's"
	}
	name := fmt.Sprintf("%s P%s %s", who, strconv.FormatFloat(rp.Percentile, 'f', -1, 64), strings.ToUpper(kind))
	if kind == "itl" {
		name += fmt.Sprintf(" of %d inter-token latencies", rp.Requests)
	} else {
		name += fmt.Sprintf(" of %d requests", rp.Requests)
	}
	switch {
	case rp.Runs > 1 && rp.Same:
		name += fmt.Sprintf(" (each of %d runs)", rp.Runs)
	case rp.Runs > 1:
		name += fmt.Sprintf(" (the smallest of %d runs)", rp.Runs)
	}
	var rests string
	switch rp.Tail {
	case 0:
		rests = "is the slowest one"
	case 1:
		rests = "rests on the slowest one"
	default:
		rests = fmt.Sprintf("rests on the %d slowest", rp.Tail)
	}
	interval := fmt.Sprintf("%g%% interval %s-%s ms", rp.Conf*100, fmtMs(rp.Lo), fmtMs(derefOr(rp.Hi, 0)))
	if rp.Hi == nil {
		interval = fmt.Sprintf("%g%% interval from %s ms to beyond the slowest", rp.Conf*100, fmtMs(rp.Lo))
	}
	return name + " " + rests + "; " + interval
}

func derefOr(v *float64, or float64) float64 {
	if v == nil {
		return or
	}
	return *v
}

// fmtMs writes a latency from a summary (1% relative error) with three
// significant digits, whole milliseconds from 100 ms.
func fmtMs(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmtNum(v)
	}
	if math.Abs(v) >= 100 {
		return fmtNum(math.Round(v))
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return fmtNum(r)
}

// requestWarnings repeats each check's RequestNote as a report warning,
// once per check, naming the series and metric. Beyond maxRequestWarnings
// (a sweep of 6 loads x 3 benchmarks with two percentile rules has 36,
// a third of a PR comment's room), the first ones are kept and one more
// warning counts the rest and names their metrics: each check's
// request_note (-o json) still says what its percentile rests on.
func requestWarnings(checks []CheckResult) []string {
	var noted []CheckResult
	for _, c := range checks {
		if c.RequestNote != "" {
			noted = append(noted, c)
		}
	}
	keep := len(noted)
	if keep > maxRequestWarnings {
		keep = maxRequestWarnings - 1
	}
	var out []string
	for _, c := range noted[:keep] {
		out = append(out, fmt.Sprintf("%s %s: %s", seriesName(c.Benchmark, c.Labels), c.Metric, c.RequestNote))
	}
	if rest := noted[keep:]; len(rest) > 0 {
		metrics := map[string]bool{}
		for _, c := range rest {
			metrics[c.Metric] = true
		}
		out = append(out, fmt.Sprintf("%d more checks (%s) have a percentile resting on few requests (fewer than %d beyond it, or an interval reaching beyond the slowest), as above: "+
			"each check's request_note (-o json) says what it rests on; measure more requests per run (a caveat on the numbers, not the verdicts)",
			len(rest), strings.Join(sortedKeys(metrics), ", "), slo.MinTail))
	}
	return out
}

// maxRequestWarnings bounds the warnings of percentiles resting on few
// requests, the last one counting the others.
const maxRequestWarnings = 4
