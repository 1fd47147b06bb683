package gate

import (
	"fmt"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/robust"
)

// LoadCurve is head's load curve of one benchmark beside the baseline's,
// as a check report shows it (see the package comment, "Load curves").
type LoadCurve struct {
	Benchmark string            `json:"benchmark"`
	Labels    map[string]string `json:"labels,omitempty"` // without the load label
	LoadLabel string            `json:"load_label"`
	// SLO is the SLO capacity was computed under ("" without one).
	SLO            string      `json:"slo,omitempty"`
	BaselineCommit string      `json:"baseline_commit,omitempty"`
	Head           []LoadPoint `json:"head"`
	Baseline       []LoadPoint `json:"baseline,omitempty"`
	// Capacity and BaselineCapacity are the curves' capacities at SLO.
	Capacity         *CapacityAt `json:"capacity,omitempty"`
	BaselineCapacity *CapacityAt `json:"baseline_capacity,omitempty"`
	// CapacityReference is the value the capacity rule compared head's
	// capacity with (the median of CapacityValues of the base branch's)
	// when it is not BaselineCapacity's.
	CapacityReference *float64 `json:"capacity_reference,omitempty"`
	CapacityValues    int      `json:"capacity_reference_values,omitempty"`
	// Metric is the latency compared at matched load (the SLO's first
	// objective, else a mean latency both curves have); Relation says how
	// head's curve moved against the baseline's on it: "dominates", "is
	// dominated", "crosses: better at low load, worse at high", "crosses:
	// worse at low load, better at high", "crosses several times" or
	// "matches".
	Metric   string    `json:"metric,omitempty"`
	Relation string    `json:"relation,omitempty"`
	Matched  []Matched `json:"matched,omitempty"`
	// Notes name the trade-offs and saturated points, one sentence each.
	Notes []string `json:"notes,omitempty"`

	base  Curve
	headC Curve
}

// Matched is head's latency at one point against the baseline curve
// interpolated at head's achieved throughput (latency at matched load).
type Matched struct {
	Load     string  `json:"load"`
	Requests float64 `json:"request_throughput"`
	Head     float64 `json:"head"`
	Baseline float64 `json:"baseline"`
}

// Curve relations.
const (
	RelDominates   = "dominates"
	RelDominated   = "is dominated"
	RelCrossBetter = "crosses: better at low load, worse at high"
	RelCrossWorse  = "crosses: worse at low load, better at high"
	RelCrossMany   = "crosses several times"
	RelMatches     = "matches"
)

// matchTolerance: latencies (and highest throughputs) within 2% at
// matched load are the same, or within three times the noise the
// metric's checks on the curve measured, when that is more.
const matchTolerance = 0.02

// relation compares head's curve with the baseline's on a latency metric
// at matched load: each head point against the baseline interpolated at
// its throughput (the same when within tol of the baseline's latency
// anywhere within tol of that throughput), or, where the baseline is
// saturated (several loads at one throughput), its point at the same
// load when that achieved head's throughput. A head point beyond the baseline's highest throughput
// counting as better (it serves load the baseline never reached) and a
// baseline reaching beyond head's highest as worse at high load.
func relation(head, base Curve, name string, tol float64) (string, []Matched) {
	var signs []int
	var matched []Matched
	baseMax, headMax := 0.0, 0.0
	for _, p := range base.Points {
		if _, ok := p.Latency[name]; ok {
			baseMax = math.Max(baseMax, p.Requests)
		}
	}
	if baseMax == 0 {
		return "", nil
	}
	for _, p := range head.Points {
		hl, ok := p.Latency[name]
		if !ok || p.Requests <= 0 {
			continue
		}
		headMax = math.Max(headMax, p.Requests)
		if p.Requests > baseMax*(1+tol) {
			signs = append(signs, 1)
			continue
		}
		bl, same := base.sameLoadLatency(name, p)
		lo, hi := bl, bl
		if !same {
			var ok bool
			if bl, ok = base.LatencyAt(name, p.Requests); !ok {
				continue
			}
			lo, hi = base.latencyRange(name, p.Requests, tol, bl)
		}
		matched = append(matched, Matched{Load: p.Load, Requests: p.Requests, Head: hl, Baseline: bl})
		switch {
		case lo > 0 && hl >= lo*(1-tol) && hl <= hi*(1+tol):
		case hl < bl:
			signs = append(signs, 1)
		default:
			signs = append(signs, -1)
		}
	}
	if headMax == 0 {
		return "", nil
	}
	if baseMax > headMax*(1+tol) {
		signs = append(signs, -1)
	}
	return relationOf(signs), matched
}

// latencyRange is the span of the curve's latency over achieved
// throughputs within tol of x (bl, its latency at x, where the curve does
// not reach): a head point's throughput is measured with noise too, and
// where the curve turns steep a throughput 1% lower reads as a latency
// far lower.
func (c Curve) latencyRange(name string, x, tol, bl float64) (lo, hi float64) {
	lo, hi = bl, bl
	for _, xx := range []float64{x * (1 - tol), x * (1 + tol)} {
		if l, ok := c.LatencyAt(name, xx); ok {
			lo, hi = math.Min(lo, l), math.Max(hi, l)
		}
	}
	return lo, hi
}

// relationOf names a sequence of better (+1) and worse (-1) signs in
// throughput order.
func relationOf(signs []int) string {
	if len(signs) == 0 {
		return RelMatches
	}
	changes := 0
	for i := 1; i < len(signs); i++ {
		if signs[i] != signs[i-1] {
			changes++
		}
	}
	switch {
	case changes == 0 && signs[0] > 0:
		return RelDominates
	case changes == 0:
		return RelDominated
	case changes == 1 && signs[0] > 0:
		return RelCrossBetter
	case changes == 1:
		return RelCrossWorse
	}
	return RelCrossMany
}

// curveIdent names a curve without its testbed and dirtiness, to pair
// head's with the baseline's.
func curveIdent(bench string, labels map[string]string) string {
	return bench + "\x00" + labelString(labels)
}

// loadCurves pairs head's curves with the baseline's and names the
// trade-offs, saturated points and capacity changes; it turns a latency
// failure into a trade-off only as the package comment says.
func (c *checker) loadCurves(head []Sample) {
	heads := curvesOf(head, c.id)
	if len(heads) == 0 {
		return
	}
	// Each check's curve, once: a check of a point (its labels without
	// the load) or of a derived capacity (without load_label).
	c.checkCurve = make([]string, len(c.rep.Checks))
	for i, cr := range c.rep.Checks {
		c.checkCurve[i] = curveIdent(curveBenchmarkOf(cr.Benchmark, cr.Labels), curveLabels(withoutKey(cr.Labels, LoadLabelKey)))
	}
	for _, hc := range heads {
		lc := c.pairCurve(hc)
		if lc == nil {
			continue
		}
		c.annotate(lc)
		if len(lc.Head) < 2 && len(lc.Notes) == 0 {
			// One load is no curve: only a saturated server or a
			// trade-off at it says something.
			continue
		}
		c.rep.Load = append(c.rep.Load, *lc)
	}
}

// pairCurve finds the baseline's curve of hc and fills the comparison.
func (c *checker) pairCurve(hc Curve) *LoadCurve {
	slo, hasSLO := sloFor(c.cfg.SLOs, hc.Benchmark)
	var headFilled, baseFilled []string
	if hasSLO {
		hc, headFilled = hc.WithRequestLatencies(slo)
	}
	lc := &LoadCurve{Benchmark: hc.Benchmark, Labels: hc.Labels, LoadLabel: hc.LoadLabel, Head: hc.Points, headC: hc}
	ident := curveIdent(hc.Benchmark, hc.Labels)
	sha := c.curveBaseline(hc, ident)
	if sha != "" {
		var base []Sample
		for _, k := range c.w.samples[sha] {
			if !k.s.Dirty {
				base = append(base, *k.s)
			}
		}
		for _, bc := range curvesOf(base, c.id) {
			if curveIdent(bc.Benchmark, bc.Labels) == ident && bc.LoadLabel == hc.LoadLabel {
				if hasSLO {
					bc, baseFilled = bc.WithRequestLatencies(slo)
				}
				lc.base, lc.Baseline, lc.BaselineCommit = bc, bc.Points, sha
				break
			}
		}
	}
	if n := requestsNote(headFilled, baseFilled); n != "" {
		lc.addNote(n)
	}
	if hasSLO {
		lc.SLO = slo.String()
		if ca, ok := hc.Capacity(slo); ok && len(hc.Points) > 1 {
			lc.Capacity = &ca
		} else if miss := missingObjectives(hc, slo); len(miss) > 0 && len(hc.Points) > 1 {
			c.loadWarnings = append(c.loadWarnings, fmt.Sprintf("%s: capacity at the SLO not computed: head's points lack %s, which the SLO (%s) bounds, and not every point stored its requests to compute them from; measure them (vLLM: --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 99, or --save-result --save-detailed with perfgate run --result-file) or set the SLO's percentile to one the results have",
				lc.curveName(), strings.Join(miss, ", "), slo.Origin))
		}
		if ca, ok := lc.base.Capacity(slo); ok && len(lc.base.Points) > 1 {
			lc.BaselineCapacity = &ca
		}
	}
	if len(lc.Baseline) == 0 {
		lc.Metric = c.matchMetric(hc, hc) // head's points alone
	} else {
		lc.Metric = c.matchMetric(hc, lc.base)
		if lc.Metric != "" {
			lc.Relation, lc.Matched = relation(hc, lc.base, lc.Metric, c.tolerance(lc, lc.Metric))
		}
	}
	return lc
}

// curveBaseline is the baseline commit of a curve: the one its capacity
// or point checks compared with, else the report's.
func (c *checker) curveBaseline(hc Curve, ident string) string {
	for i, cr := range c.rep.Checks {
		if cr.BaselineCommit != "" && c.checkCurve[i] == ident {
			return cr.BaselineCommit
		}
	}
	return c.rep.Baseline.Commit
}

// curveBenchmarkOf is curveBenchmark for a check's benchmark and labels.
func curveBenchmarkOf(bench string, labels map[string]string) string {
	return curveBenchmark(&Sample{Benchmark: bench, Labels: labels})
}

func withoutKey(l map[string]string, key string) map[string]string {
	if _, ok := l[key]; !ok {
		return l
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// matchMetric is the latency compared at matched load: the SLO's first
// objective both curves have, else the first of the mean latencies.
func (c *checker) matchMetric(hc, bc Curve) string {
	var cands []string
	if slo, ok := sloFor(c.cfg.SLOs, hc.Benchmark); ok {
		for _, o := range slo.objectives() {
			cands = append(cands, o.Metric)
		}
	}
	cands = append(cands, "mean_ttft_ms", "mean_tpot_ms", "mean_e2el_ms", "mean_itl_ms")
	for _, name := range cands {
		if curveHas(hc, name) && curveHas(bc, name) {
			return name
		}
	}
	return ""
}

func curveHas(c Curve, name string) bool {
	for _, p := range c.Points {
		if _, ok := p.Latency[name]; !ok {
			return false
		}
	}
	return len(c.Points) > 0
}

// minTradeMove is the least throughput change (percent) at a load point
// that a trade-off is named for; the latency must have moved by its rule
// (its check did not pass).
const minTradeMove = 2.0

// anySaturated reports whether a point of either side is saturated.
func anySaturated(a, b []LoadPoint) bool {
	for _, p := range append(a[:len(a):len(a)], b...) {
		if p.Saturated() {
			return true
		}
	}
	return false
}

// annotate names, on the curve and on the checks of its points, the
// saturated loads and the trade-offs, and decides the latency failures a
// raised capacity explains.
func (c *checker) annotate(lc *LoadCurve) {
	capChecks := c.capacityChecks(lc)
	capRaised, capDecided := capacityVerdict(capChecks)
	if b := lc.BaselineCapacity; b != nil && b.Status != CapacityNone {
		for _, cr := range capChecks {
			if cr.Metric == "capacity" && cr.Baseline != nil && math.Abs(*cr.Baseline-b.Requests) > 1e-9*b.Requests {
				ref := *cr.Baseline
				lc.CapacityReference, lc.CapacityValues = &ref, cr.Samples.Baseline
				break
			}
		}
	}
	ident := curveIdent(lc.Benchmark, lc.Labels)
	for i := range c.rep.Checks {
		cr := &c.rep.Checks[i]
		if cr.Labels[lc.LoadLabel] == "" || c.checkCurve[i] != ident {
			continue
		}
		hp, bp, ok := lc.pointPair(cr.Labels[lc.LoadLabel])
		if !ok {
			continue
		}
		if !latencyMetric(cr.Metric) {
			continue
		}
		if s := saturationNote(lc.LoadLabel, hp, bp); s != "" {
			cr.LoadNote = s
			lc.addNote(s)
			continue
		}
		if cr.Change == nil {
			continue
		}
		tput, dt := throughputChange(hp, bp)
		dl := *cr.Change
		if h, b := hp.Latency[cr.Metric], bp.Latency[cr.Metric]; h > 0 && b > 0 {
			// The point's own change, as the throughput's: the
			// check's is against the window's reference.
			dl = 100 * (h/b - 1)
		}
		if math.Abs(dt) < minTradeMove || cr.Verdict == Pass || cr.Verdict == New || (dt > 0) != (dl > 0) {
			// Not a trade: the latency or the throughput did not move.
			continue
		}
		rel, _ := relation(lc.headC, lc.base, cr.Metric, c.tolerance(lc, cr.Metric))
		note := fmt.Sprintf("a trade-off at %s=%s: %s %+.1f%%, %s %+.1f%%; the curve %s", lc.LoadLabel, hp.Load, tput, dt, cr.Metric, dl, relText(rel))
		if lc.Capacity != nil && lc.BaselineCapacity != nil {
			note += "; " + capacityNote(lc)
		}
		switch {
		case cr.Verdict != Fail && cr.Verdict != Inconclusive:
		case dt > 0 && capDecided && capRaised && lc.BaselineCapacity != nil && lc.BaselineCapacity.Status == CapacityBeyond:
			note += "; the baseline's capacity is a lower bound (every swept point met the SLO), so a raised capacity is not established and the latency rule's verdict stands: sweep to a load that crosses the SLO"
		case dt > 0 && capDecided && capRaised && rel != RelDominated && rel != RelMatches && rel != "" && lc.Capacity != nil && lc.Capacity.Status != CapacityNone:
			note += fmt.Sprintf("; the capacity rule (%s) passes with a raised capacity, so this %s verdict of %s at one load is reported as a trade-off, not a failure", capChecks[0].Origin, cr.Verdict, cr.Metric)
			cr.TradeOff, cr.Verdict = true, Pass
		case len(capChecks) == 0 && lc.SLO == "":
			note += "; no capacity rule decides it, so the latency rule's verdict stands (set an slo: in the rules file and add a rule on capacity to let capacity at the SLO decide)"
		case len(capChecks) == 0:
			note += "; no capacity rule decides it, so the latency rule's verdict stands (add a rule on capacity to let capacity at the SLO decide)"
		default:
			note += "; the capacity rule does not show a raised capacity, so the latency rule's verdict stands"
		}
		cr.LoadNote = note
		lc.addNote(note)
	}
}

// requestsNote says which latencies of the curves' points were computed
// from the stored requests because the results lack them; "" when none.
func requestsNote(head, base []string) string {
	var parts []string
	for _, m := range head {
		who := "head's points"
		if contains(base, m) {
			who = "head's and the baseline's points"
		}
		parts = append(parts, m+" of "+who)
	}
	for _, m := range base {
		if !contains(head, m) {
			parts = append(parts, m+" of the baseline's points")
		}
	}
	if len(parts) == 0 {
		return ""
	}
	lack := "it"
	if len(parts) > 1 {
		lack = "them"
	}
	return strings.Join(parts, ", ") + " taken from the stored requests (the results lack " + lack + "; the SLO's percentile of each run's requests, the median over the runs)"
}

func (lc *LoadCurve) addNote(s string) {
	if !contains(lc.Notes, s) {
		lc.Notes = append(lc.Notes, s)
	}
}

// pointPair returns head's and the baseline's point at a load.
func (lc *LoadCurve) pointPair(load string) (hp, bp LoadPoint, ok bool) {
	var hok, bok bool
	for _, p := range lc.Head {
		if p.Load == load {
			hp, hok = p, true
		}
	}
	for _, p := range lc.Baseline {
		if p.Load == load {
			bp, bok = p, true
		}
	}
	return hp, bp, hok && bok
}

// throughputChange is the percent change of the point's achieved
// throughput: request_throughput, else output_throughput.
func throughputChange(hp, bp LoadPoint) (string, float64) {
	if hp.Requests > 0 && bp.Requests > 0 && hp.Requests != bp.Requests {
		return "request_throughput", 100 * (hp.Requests/bp.Requests - 1)
	}
	if hp.Tokens > 0 && bp.Tokens > 0 && hp.Tokens != bp.Tokens {
		return "output_throughput", 100 * (hp.Tokens/bp.Tokens - 1)
	}
	if hp.Total > 0 && bp.Total > 0 {
		return "total_token_throughput", 100 * (hp.Total/bp.Total - 1)
	}
	return "", 0
}

// saturationNote says, for a load at which head or the baseline could not
// keep up with the configured rate, that the change is one of capacity;
// "" when neither is saturated.
func saturationNote(label string, hp, bp LoadPoint) string {
	if !hp.Saturated() && !bp.Saturated() {
		return ""
	}
	change := ""
	if bp.Requests > 0 {
		change = fmt.Sprintf(" (%+.1f%%)", 100*(hp.Requests/bp.Requests-1))
	}
	return fmt.Sprintf("saturated at %s=%s: the server achieved %s req/s at head and %s at the baseline of %s configured, so its capacity is about the achieved rate: capacity %s -> %s req/s%s; latency at this load is mostly queueing and moves with capacity",
		label, hp.Load, fmtNum(hp.Requests), fmtNum(bp.Requests), fmtNum(hp.Configured), fmtNum(bp.Requests), fmtNum(hp.Requests), change)
}

// capacityNote says how capacity at the SLO moved.
func capacityNote(lc *LoadCurve) string {
	h, b := lc.Capacity, lc.BaselineCapacity
	if h.Status == CapacityNone && b.Status == CapacityNone {
		return fmt.Sprintf("capacity at the SLO (%s): no swept point meets it, at head or at the baseline", lc.SLO)
	}
	change := ""
	if b.Requests > 0 {
		change = fmt.Sprintf(" (%+.1f%%)", 100*(h.Requests/b.Requests-1))
	}
	return fmt.Sprintf("capacity at the SLO (%s) %s -> %s req/s%s, head's %s", lc.SLO, capText(*b), capText(*h), change, h.Status)
}

func capText(c CapacityAt) string {
	if c.Status == CapacityNone {
		return "none"
	}
	return fmtNum(c.Requests)
}

func relText(rel string) string {
	switch rel {
	case RelDominates:
		return "dominates the baseline's (better wherever the two differ at matched load, worse nowhere)"
	case RelDominated:
		return "is dominated by the baseline's (worse wherever the two differ at matched load, better nowhere)"
	case RelMatches:
		return "matches the baseline's (the same at every matched load, within the noise)"
	case "":
		return "cannot be compared at matched load"
	}
	return rel
}

// capacityChecks are the checks of rules on capacity of the curve's
// derived series.
func (c *checker) capacityChecks(lc *LoadCurve) []CheckResult {
	var out []CheckResult
	ident := curveIdent(lc.Benchmark, lc.Labels)
	for i, cr := range c.rep.Checks {
		if (cr.Metric != "capacity" && cr.Metric != "capacity_tokens") || cr.Labels[LoadLabelKey] != lc.LoadLabel || c.checkCurve[i] != ident {
			continue
		}
		out = append(out, cr)
	}
	return out
}

// capacityVerdict: raised is true when every capacity check passed or
// improved with a higher capacity than the baseline's; decided when there
// is at least one.
func capacityVerdict(checks []CheckResult) (raised, decided bool) {
	if len(checks) == 0 {
		return false, false
	}
	for _, cr := range checks {
		if (cr.Verdict != Pass && cr.Verdict != Improved) || cr.Change == nil || *cr.Change <= 0 {
			return false, true
		}
	}
	return true, true
}

// capacityWarning says that rules on capacity need an SLO; "" when fine.
func (c *checker) capacityWarning() string {
	if len(c.cfg.SLOs) > 0 {
		return ""
	}
	for _, r := range c.rules {
		if r.Metric == "capacity" || r.Metric == "capacity_tokens" {
			return fmt.Sprintf("rule %s %s (%s) needs an SLO to compute capacity from the load curves, and the rules file sets none; add slo: {ttft_ms: 200, tpot_ms: 50} (see perfgate's README, \"Serving: load curves and SLOs\")", r.Metric, r, r.Origin)
		}
	}
	return ""
}

// sloNote names the SLO capacity was computed under.
func (c *checker) sloNote() string {
	if len(c.cfg.SLOs) == 0 || len(c.rep.Load) == 0 {
		return ""
	}
	var parts []string
	for _, s := range c.cfg.SLOs {
		where := "all benchmarks"
		if s.Benchmark != "" {
			where = fmt.Sprintf("benchmarks %q", s.Benchmark)
		}
		parts = append(parts, fmt.Sprintf("%s for %s (%s)", s, where, s.Origin))
	}
	return "capacity computed from the stored load points under the current SLO, head and baseline alike: " + strings.Join(parts, "; ")
}

// missingObjectives lists the SLO's metrics some point of the curve
// lacks.
func missingObjectives(c Curve, slo SLO) []string {
	var out []string
	for _, o := range slo.objectives() {
		if !curveHas(c, o.Metric) {
			out = append(out, o.Metric)
		}
	}
	return out
}

// tolerance is how far apart two latencies of a curve's metric may be
// and still be the same at matched load: matchTolerance, or three times
// the median noise (one run's standard deviation) the checks of that
// metric on the curve's points measured, when more.
func (c *checker) tolerance(lc *LoadCurve, name string) float64 {
	var noise []float64
	ident := curveIdent(lc.Benchmark, lc.Labels)
	for i, cr := range c.rep.Checks {
		if cr.Metric != name || cr.Noise == nil || cr.Labels[lc.LoadLabel] == "" || c.checkCurve[i] != ident {
			continue
		}
		noise = append(noise, *cr.Noise/100)
	}
	if len(noise) == 0 {
		return matchTolerance
	}
	return math.Max(matchTolerance, 3*robust.Median(noise))
}
