package gate

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/robust"
)

// Load curves and capacity at an SLO.
//
// Results of one benchmark measured at several loads in one commit (a
// sweep: labels max_concurrency, concurrency, request_rate, rate, qps or
// streams taking several values, the other identity labels equal, and the
// same load labels present: runs at a concurrency and runs at a rate are
// two curves) form a latency-throughput curve: x is the achieved request throughput
// (request_throughput, else completed/duration), y the latencies the SLO
// bounds (p99_ttft_ms ...).
// Its capacity at the SLO is the highest achieved throughput whose
// latencies meet every objective, interpolated linearly (in throughput)
// between the last swept point that meets the SLO and the next one, which
// does not. When every swept point meets it the capacity is the highest
// throughput measured, a lower bound ("beyond the swept range"); when none
// does it is 0 ("no swept point meets it").
//
// Capacity is derived per commit as a result of its own (DeriveCapacity):
// benchmark B, the curve's labels without the load label (and without
// num_prompts, which sweeps scale with the load), plus load_label naming
// the swept label, and metrics capacity (req/s) and capacity_tokens
// (output tok/s at the same point), higher is better. The gate's
// statistics then apply to it unchanged: its base-branch history gives
// its noise. It is computed at check time from the stored points under
// the rules file's current SLO, so a changed SLO never compares a
// capacity computed under another.

// LoadLabels are the labels that name the load a result was measured at,
// in the order a curve prefers them when several vary.
var LoadLabels = []string{"max_concurrency", "concurrency", "request_rate", "rate", "qps", "streams"}

// perPointLabels vary with the load in a sweep without naming another
// series: vLLM sweeps send num_prompts in proportion to the concurrency.
var perPointLabels = []string{"num_prompts"}

// LoadLabelKey is the label a derived capacity result names its curve's
// swept label with.
const LoadLabelKey = "load_label"

// Capacity statuses.
const (
	CapacityInterpolated = "interpolated" // between two swept points
	CapacityAtPoint      = "at a swept point"
	CapacityBeyond       = "beyond the swept range" // every point meets the SLO: a lower bound
	CapacityNone         = "no swept point meets it"
)

// LoadPoint is one load of a curve: the medians of its runs.
type LoadPoint struct {
	Load     string  `json:"load"`               // the load label's value
	Requests float64 `json:"request_throughput"` // achieved req/s
	Tokens   float64 `json:"output_throughput,omitempty"`
	Total    float64 `json:"total_token_throughput,omitempty"`
	// Configured is the request rate the run was configured with
	// (request_rate, rate, qps), 0 when unknown or unbounded.
	Configured float64            `json:"configured_rate,omitempty"`
	Latency    map[string]float64 `json:"latency,omitempty"` // latency metrics, ms
	Runs       int                `json:"runs"`
	load       float64
	runs       []*Sample // the point's runs, for percentiles from their requests
}

// Saturated reports whether the server could not keep up with the
// configured rate: it achieved less than 90% of it, so its capacity is
// about the achieved rate and its latencies are mostly queueing.
func (p LoadPoint) Saturated() bool {
	return p.Configured > 0 && p.Requests > 0 && p.Requests < 0.9*p.Configured
}

// Curve is one benchmark's results at several loads in one commit.
type Curve struct {
	Benchmark string
	Labels    map[string]string // identity labels without the load and per-point labels
	LoadLabel string
	Testbed   string
	Dirty     bool
	Commit    string
	Before    string
	Time      time.Time
	Points    []LoadPoint // in load order
	key       string
}

// CapacityAt is a curve's capacity at an SLO.
type CapacityAt struct {
	Requests float64 `json:"requests"`         // req/s
	Tokens   float64 `json:"tokens,omitempty"` // output tok/s
	Status   string  `json:"status"`
	// Below and Above are the loads the capacity lies between (Above ""
	// beyond the swept range).
	Below string `json:"below,omitempty"`
	Above string `json:"above,omitempty"`
}

// Capacity computes the curve's capacity at slo; ok is false when a point
// lacks a latency the SLO bounds (in its results and, see
// WithRequestLatencies, in its stored requests) or an achieved throughput
// (nothing can be said then).
func (c Curve) Capacity(slo SLO) (CapacityAt, bool) {
	c, _ = c.WithRequestLatencies(slo)
	objs := slo.objectives()
	if len(objs) == 0 || len(c.Points) == 0 {
		return CapacityAt{}, false
	}
	for _, p := range c.Points {
		if p.Requests <= 0 {
			return CapacityAt{}, false
		}
		for _, o := range objs {
			if _, ok := p.Latency[o.Metric]; !ok {
				return CapacityAt{}, false
			}
		}
	}
	meets := func(p LoadPoint) bool {
		for _, o := range objs {
			if p.Latency[o.Metric] > o.Limit {
				return false
			}
		}
		return true
	}
	best := -1
	for i, p := range c.Points {
		if meets(p) && (best < 0 || p.Requests > c.Points[best].Requests) {
			best = i
		}
	}
	if best < 0 {
		return CapacityAt{Status: CapacityNone, Above: c.Points[0].Load}, true
	}
	a := c.Points[best]
	out := CapacityAt{Requests: a.Requests, Tokens: a.Tokens, Status: CapacityAtPoint, Below: a.Load}
	if best == len(c.Points)-1 {
		out.Status = CapacityBeyond
		return out, true
	}
	b := c.Points[best+1]
	out.Above = b.Load
	if meets(b) || b.Requests <= a.Requests {
		// Throughput no longer grows past a: a is the capacity.
		return out, true
	}
	t := 1.0
	for _, o := range objs {
		la, lb := a.Latency[o.Metric], b.Latency[o.Metric]
		if lb > o.Limit && lb > la {
			t = math.Min(t, (o.Limit-la)/(lb-la))
		}
	}
	t = math.Max(0, t)
	out.Requests = a.Requests + t*(b.Requests-a.Requests)
	if a.Tokens > 0 && b.Tokens > 0 {
		out.Tokens = a.Tokens + t*(b.Tokens-a.Tokens)
	}
	out.Status = CapacityInterpolated
	return out, true
}

// LatencyAt interpolates the curve's latency metric at an achieved
// throughput x along the curve in load order, on the lowest load whose
// segment reaches x (past saturation the throughput stops growing while
// the latency keeps rising, so the curve is not a function of
// throughput); ok is false outside the swept throughputs or when a point
// lacks the metric.
func (c Curve) LatencyAt(name string, x float64) (float64, bool) {
	pts := make([]LoadPoint, 0, len(c.Points))
	for _, p := range c.Points {
		if _, ok := p.Latency[name]; ok && p.Requests > 0 {
			pts = append(pts, p)
		}
	}
	for i := range pts {
		if pts[i].Requests == x {
			return pts[i].Latency[name], true
		}
		if i == 0 {
			continue
		}
		a, b := pts[i-1], pts[i]
		if lo, hi := math.Min(a.Requests, b.Requests), math.Max(a.Requests, b.Requests); lo < x && x < hi {
			t := (x - a.Requests) / (b.Requests - a.Requests)
			return a.Latency[name] + t*(b.Latency[name]-a.Latency[name]), true
		}
	}
	return 0, false
}

// sameLoadLatency is the curve's latency at head point p's load when the
// curve is saturated there (its point achieved no more than a lower
// load's, within matchTolerance) and achieved p's throughput within
// matchTolerance: past saturation several loads share one throughput and
// only the load tells their queueing apart.
func (c Curve) sameLoadLatency(name string, p LoadPoint) (float64, bool) {
	for i, q := range c.Points {
		if q.Load != p.Load || q.Requests <= 0 {
			continue
		}
		l, ok := q.Latency[name]
		if !ok || math.Abs(p.Requests-q.Requests) > matchTolerance*q.Requests {
			return 0, false
		}
		for _, lower := range c.Points[:i] {
			if lower.Requests >= q.Requests*(1-matchTolerance) {
				return l, true
			}
		}
		return 0, false
	}
	return 0, false
}

// Curves groups samples of one commit into load curves: results of one
// benchmark (a guidellm "constant@5.00" counts as "constant") under the
// same identity labels but for the load label, which takes its values.
// ignore lists labels that do not identify a series (the rules file's
// ignore_labels). Invalid results are left out. A group without a load
// label is no curve.
func Curves(samples []Sample, ignore []string) []Curve {
	return curvesOf(samples, newIdentity(ignore))
}

func curvesOf(samples []Sample, id identity) []Curve {
	type group struct {
		c    Curve
		runs []*Sample
	}
	byKey := map[string]*group{}
	var order []string
	for i := range samples {
		s := &samples[i]
		if selfInvalid(s) != "" || !hasLoadLabel(s.Labels) {
			continue
		}
		labels := curveLabels(id.labels(s.Labels))
		bench := curveBenchmark(s)
		// Runs at a concurrency and runs at a request rate are two
		// experiments, never one curve: the load labels present are
		// part of the key.
		key := bench + "\x00" + labelString(labels) + "\x00" + loadSet(s.Labels) + "\x00" + id.testbed(s) + "\x00" + strconv.FormatBool(s.Dirty)
		g := byKey[key]
		if g == nil {
			g = &group{c: Curve{Benchmark: bench, Labels: labels, Testbed: s.Testbed, Dirty: s.Dirty, Commit: s.Commit, Before: s.Before, key: key}}
			byKey[key] = g
			order = append(order, key)
		}
		if s.Time.After(g.c.Time) {
			g.c.Time = s.Time
		}
		g.runs = append(g.runs, s)
	}
	sort.Strings(order)
	out := make([]Curve, 0, len(order))
	for _, k := range order {
		g := byKey[k]
		g.c.LoadLabel = pickLoadLabel(g.runs)
		g.c.Points = loadPoints(g.runs, g.c.LoadLabel)
		if len(g.c.Points) > 0 {
			out = append(out, g.c)
		}
	}
	return out
}

// loadSet names the load labels a result has, in LoadLabels order.
func loadSet(l map[string]string) string {
	var b strings.Builder
	for _, k := range LoadLabels {
		if l[k] != "" {
			b.WriteString(k)
			b.WriteByte(',')
		}
	}
	return b.String()
}

func hasLoadLabel(l map[string]string) bool {
	for _, k := range LoadLabels {
		if l[k] != "" {
			return true
		}
	}
	return false
}

// curveLabels drops the load and per-point labels.
func curveLabels(l map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		if !contains(LoadLabels, k) && !contains(perPointLabels, k) {
			out[k] = v
		}
	}
	return out
}

// curveBenchmark is the benchmark a result's curve is named after:
// guidellm names each load's benchmark after it ("constant@5.00",
// "concurrent@8"), so the part before "@" names the curve.
func curveBenchmark(s *Sample) string {
	if s.Labels["strategy"] != "" {
		if i := strings.IndexByte(s.Benchmark, '@'); i > 0 && s.Benchmark[:i] == s.Labels["strategy"] {
			return s.Benchmark[:i]
		}
	}
	return s.Benchmark
}

// pickLoadLabel is the first load label that takes several values among
// runs, else the first that any run has.
func pickLoadLabel(runs []*Sample) string {
	first := ""
	for _, k := range LoadLabels {
		vals := map[string]bool{}
		for _, s := range runs {
			if v := s.Labels[k]; v != "" {
				vals[v] = true
			}
		}
		if len(vals) > 1 {
			return k
		}
		if len(vals) == 1 && first == "" {
			first = k
		}
	}
	return first
}

// loadNum reads a load value; "inf" (vLLM's unbounded rate) is +Inf.
func loadNum(v string) (float64, bool) {
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(x) {
		return 0, false
	}
	return x, true
}

// loadPoints makes one point per load value, the medians of its runs, in
// load order.
func loadPoints(runs []*Sample, label string) []LoadPoint {
	byLoad := map[string][]*Sample{}
	for _, s := range runs {
		byLoad[s.Labels[label]] = append(byLoad[s.Labels[label]], s)
	}
	out := make([]LoadPoint, 0, len(byLoad))
	for load, rs := range byLoad {
		p := LoadPoint{Load: load, Runs: len(rs), Latency: map[string]float64{}, runs: rs}
		x, ok := loadNum(load)
		if !ok {
			x = math.Inf(1)
		}
		p.load = x
		p.Requests = medianOf(rs, "request_throughput")
		if math.IsNaN(p.Requests) {
			// SGLang's JSONL has no request throughput: completed
			// requests over the run's duration are what it achieved.
			p.Requests = achievedRate(rs)
		}
		p.Tokens = medianOf(rs, "output_throughput")
		p.Total = medianOf(rs, "total_token_throughput")
		for _, k := range []string{"request_rate", "rate", "qps"} {
			if r, ok := loadNum(rs[0].Labels[k]); ok && r > 0 && !math.IsInf(r, 0) {
				p.Configured = r
				break
			}
		}
		for name := range rs[0].Metrics {
			if latencyMetric(name) {
				if v := medianOf(rs, name); !math.IsNaN(v) {
					p.Latency[name] = v
				}
			}
		}
		if math.IsNaN(p.Requests) {
			p.Requests = 0
		}
		if math.IsNaN(p.Tokens) {
			p.Tokens = 0
		}
		if math.IsNaN(p.Total) {
			p.Total = 0
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].load != out[j].load {
			return out[i].load < out[j].load
		}
		if out[i].Requests != out[j].Requests {
			return out[i].Requests < out[j].Requests
		}
		return out[i].Load < out[j].Load
	})
	return out
}

// latencyMetric reports whether a metric is a request latency of the
// vocabulary ({stat}_{ttft,tpot,itl,e2el}_ms).
func latencyMetric(name string) bool {
	if !strings.HasSuffix(name, "_ms") {
		return false
	}
	for _, k := range []string{"_ttft_ms", "_tpot_ms", "_itl_ms", "_e2el_ms"} {
		if strings.HasSuffix(name, k) {
			return true
		}
	}
	return false
}

// medianOf is the median of a metric's finite values over runs; NaN when
// none has it.
func medianOf(runs []*Sample, name string) float64 {
	vs := pvalues(runs, name)
	if len(vs) == 0 {
		return math.NaN()
	}
	return robust.Median(vs)
}

// DeriveCapacity returns, for every load curve of samples (see Curves)
// with at least two loads and an SLO that applies to its benchmark, one
// result holding its capacity and capacity_tokens at that SLO. samples
// may span commits; each commit's curves are its own. check, history and
// watch read these beside the stored results, so capacity is a series
// like any other.
func DeriveCapacity(samples []Sample, slos []SLO, ignore []string) []Sample {
	if len(slos) == 0 {
		return nil
	}
	return deriveCapacity(samples, slos, newIdentity(ignore))
}

func deriveCapacity(samples []Sample, slos []SLO, id identity) []Sample {
	if len(slos) == 0 {
		return nil
	}
	byCommit := map[string][]Sample{}
	var commits []string
	for _, s := range samples {
		if !hasLoadLabel(s.Labels) {
			continue
		}
		if byCommit[s.Commit] == nil {
			commits = append(commits, s.Commit)
		}
		byCommit[s.Commit] = append(byCommit[s.Commit], s)
	}
	var out []Sample
	for _, commit := range commits {
		for _, c := range curvesOf(byCommit[commit], id) {
			if s, ok := capacitySample(c, slos); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// capacitySample is a curve's derived result; ok is false for a curve of
// one load, without an SLO, or lacking a latency the SLO bounds.
func capacitySample(c Curve, slos []SLO) (Sample, bool) {
	if len(c.Points) < 2 {
		return Sample{}, false
	}
	slo, ok := sloFor(slos, c.Benchmark)
	if !ok {
		return Sample{}, false
	}
	capa, ok := c.Capacity(slo)
	if !ok {
		return Sample{}, false
	}
	labels := make(map[string]string, len(c.Labels)+1)
	for k, v := range c.Labels {
		labels[k] = v
	}
	labels[LoadLabelKey] = c.LoadLabel
	m := map[string]float64{"capacity": capa.Requests}
	if capa.Tokens > 0 || capa.Status == CapacityNone {
		m["capacity_tokens"] = capa.Tokens
	}
	return Sample{Commit: c.Commit, Benchmark: c.Benchmark, Labels: labels, Metrics: m, Time: c.Time,
		Dirty: c.Dirty, Testbed: c.Testbed, Before: c.Before, Derived: true}, true
}

// capacityHistory adds each commit's derived capacity results to a
// History's samples.
type capacityHistory struct {
	h    History
	slos []SLO
	id   identity
}

// WithCapacity wraps h so that each commit's results include its derived
// capacity results at slos (see DeriveCapacity); h itself when slos is
// empty.
func WithCapacity(h History, slos []SLO, ignore []string) History {
	if len(slos) == 0 {
		return h
	}
	return capacityHistory{h: h, slos: slos, id: newIdentity(ignore)}
}

func (c capacityHistory) Samples(commits []string) (map[string][]Sample, error) {
	got, err := c.h.Samples(commits)
	if err != nil {
		return nil, err
	}
	for commit, ss := range got {
		if d := deriveCapacity(ss, c.slos, c.id); len(d) > 0 {
			got[commit] = append(ss[:len(ss):len(ss)], d...)
		}
	}
	return got, nil
}

// achievedRate is the median over runs of completed requests per second
// of duration; NaN when no run has both.
func achievedRate(runs []*Sample) float64 {
	var rates []float64
	for _, s := range runs {
		c, cok := s.Metrics["completed"]
		d, dok := s.Metrics["duration"]
		if cok && dok && d > 0 && finite(c) && finite(d) {
			rates = append(rates, c/d)
		}
	}
	if len(rates) == 0 {
		return math.NaN()
	}
	return robust.Median(rates)
}

// WithRequestLatencies returns the curve with each latency the SLO bounds
// that a point's results lack (vLLM's default --percentile-metrics has no
// e2el, so no p99_e2el_ms) computed from its runs' stored requests: the
// SLO's percentile of each run's summary (an attainment target is its
// percentile: 90% of requests within the objective is a P90 within it),
// the median over the runs. A metric is filled only when every point of
// the curve can have it, so one curve never mixes the tool's percentiles
// with perfgate's. filled names the metrics filled, in the SLO's order;
// c itself when none.
func (c Curve) WithRequestLatencies(slo SLO) (out Curve, filled []string) {
	type fill struct {
		metric string
		vals   []float64
	}
	var fills []fill
	for _, o := range slo.objectives() {
		p, kind, ok := percentileMetric(o.Metric)
		if !ok {
			continue // a mean has no percentile of the requests
		}
		vals := make([]float64, len(c.Points))
		lacking := false
		for i, pt := range c.Points {
			if v, has := pt.Latency[o.Metric]; has {
				vals[i] = v
				continue
			}
			lacking = true
			v, ok := requestsPercentile(pt.runs, p, kind)
			if !ok {
				lacking, vals = false, nil
				break
			}
			vals[i] = v
		}
		if lacking {
			fills = append(fills, fill{o.Metric, vals})
		}
	}
	if len(fills) == 0 {
		return c, nil
	}
	out = c
	out.Points = make([]LoadPoint, len(c.Points))
	for i, pt := range c.Points {
		lat := make(map[string]float64, len(pt.Latency)+len(fills))
		for k, v := range pt.Latency {
			lat[k] = v
		}
		for _, f := range fills {
			lat[f.metric] = f.vals[i]
		}
		pt.Latency = lat
		out.Points[i] = pt
	}
	for _, f := range fills {
		filled = append(filled, f.metric)
	}
	return out, filled
}

// requestsPercentile is the median over runs of percentile p of kind
// from each run's request summary; ok is false when no run has one.
func requestsPercentile(runs []*Sample, p float64, kind string) (float64, bool) {
	var vs []float64
	for _, s := range runs {
		if s == nil || s.Requests == nil {
			continue
		}
		q, err := s.Requests.Percentile(kind, p, requestConf)
		if err != nil || !finite(q.Value) {
			continue
		}
		vs = append(vs, q.Value)
	}
	if len(vs) == 0 {
		return 0, false
	}
	return robust.Median(vs), true
}
