package site

import (
	"slices"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/gate"
)

// Load curves per commit.
//
// Results of one benchmark at several loads in one commit (a sweep: see
// gate.Curves, which groups them) form a latency-throughput curve. The
// site keeps every commit's curve of each sweep (a curve of at least two
// loads, clean runs only) and writes one file per sweep:
//
//	data/c/ID.js   the sweep's curve at each commit that measured it: its
//	               points (load, achieved req/s and tok/s, the medians of
//	               its latencies) and its capacity at the rules file's SLO
//	               (gate.Curve.Capacity: the site does not interpolate on
//	               its own), with the SLO's objectives
//
// The viewer draws a commit's curve (latency against achieved
// throughput) beside the previous measured commit's, the SLO's bound as
// a line and the capacity at the SLO as a mark, at #~curve/ID/SHA.

// sweep is one load curve's history: the benchmark, its identity labels
// without the load label, and the curve at each commit.
type sweep struct {
	key       string
	id        string
	bench     string
	labels    map[string]string
	loadLabel string
	testbed   string
	slo       *gate.SLO
	at        []sweepAt
}

// sweepAt is a sweep's curve at one commit.
type sweepAt struct {
	x      int32
	points []gate.LoadPoint
	capa   *gate.CapacityAt
}

// hasLoad reports whether any sample names a load: only then are a
// commit's results grouped into curves (a history without sweeps pays
// one label look-up per run).
func hasLoad(ss []gate.Sample) bool {
	for i := range ss {
		for _, k := range gate.LoadLabels {
			if ss[i].Labels[k] != "" {
				return true
			}
		}
	}
	return false
}

// addCurves adds a commit's load curves to the sweeps.
func addCurves(sweeps map[string]*sweep, ss []gate.Sample, at int32, opts Options) {
	if !hasLoad(ss) {
		return
	}
	var sel []gate.Sample
	for i := range ss {
		if opts.matchBenchmark(ss[i].Benchmark) && !ss[i].Dirty {
			sel = append(sel, ss[i])
		}
	}
	for _, c := range gate.Curves(sel, opts.IgnoreLabels) {
		if len(c.Points) < 2 {
			continue
		}
		key := c.Benchmark + "\x00" + labelKey(c.Labels) + "\x00" + c.LoadLabel + "\x00" + c.Testbed
		sw := sweeps[key]
		if sw == nil {
			sw = &sweep{key: key, bench: c.Benchmark, labels: c.Labels, loadLabel: c.LoadLabel, testbed: c.Testbed}
			if opts.Rules != nil {
				if slo, ok := gate.SLOFor(opts.Rules.SLOs, c.Benchmark); ok {
					sw.slo = &slo
				}
			}
			sweeps[key] = sw
		}
		if n := len(sw.at); n > 0 && sw.at[n-1].x == at {
			continue // two curves of one key at a commit (testbeds told apart by ignore_labels): the first
		}
		if sw.slo != nil {
			// A latency the SLO bounds that the results lack (vLLM's
			// default prints no p99_e2el_ms) from the stored requests,
			// as the check report takes it.
			c, _ = c.WithRequestLatencies(*sw.slo)
		}
		a := sweepAt{x: at, points: c.Points}
		if sw.slo != nil {
			if capa, ok := c.Capacity(*sw.slo); ok {
				a.capa = &capa
			}
		}
		sw.at = append(sw.at, a)
	}
}

func labelKey(l map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(l) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}

// sweepList orders the sweeps, names their files and renumbers their
// commits after trimUnmeasured dropped first of them.
func sweepList(sweeps map[string]*sweep, first int32) []*sweep {
	out := make([]*sweep, 0, len(sweeps))
	for _, sw := range sweeps {
		kept := sw.at[:0]
		for _, a := range sw.at {
			if a.x -= first; a.x >= 0 { // a commit before the first drawn (--metric) is not listed
				kept = append(kept, a)
			}
		}
		if sw.at = kept; len(kept) > 0 {
			out = append(out, sw)
		}
	}
	slices.SortFunc(out, func(a, b *sweep) int { return strings.Compare(a.key, b.key) })
	used := map[string]bool{}
	for _, sw := range out {
		parts := []string{slug(sw.bench)}
		for _, k := range sortedKeys(sw.labels) {
			parts = append(parts, slug(sw.labels[k]))
		}
		parts = append(parts, "by", slug(sw.loadLabel))
		if sw.testbed != "" {
			parts = append(parts, slug(sw.testbed))
		}
		base := slug(strings.Join(parts, "."))
		id := base
		for n := 2; used[id]; n++ {
			id = base + "-" + strconv.Itoa(n)
		}
		used[id] = true
		sw.id = id
	}
	return out
}

// latencyNames are the latency metrics a sweep's points have, sorted.
func (sw *sweep) latencyNames() []string {
	seen := map[string]bool{}
	for _, a := range sw.at {
		for _, p := range a.points {
			for k := range p.Latency {
				seen[k] = true
			}
		}
	}
	return sortedKeys(seen)
}

// curveFile appends a sweep's data: its identity, the SLO's objectives,
// and per commit the points and the capacity.
func curveFile(buf []byte, sw *sweep) []byte {
	names := sw.latencyNames()
	buf = append(buf, `{"id":`...)
	buf = append(buf, jstr(sw.id)...)
	buf = append(buf, `,"bench":`...)
	buf = append(buf, jstr(sw.bench)...)
	buf = append(buf, `,"labels":`...)
	buf = append(buf, jval(nonNil(sw.labels))...)
	buf = append(buf, `,"load":`...)
	buf = append(buf, jstr(sw.loadLabel)...)
	buf = append(buf, `,"testbed":`...)
	buf = append(buf, jstr(sw.testbed)...)
	buf = append(buf, `,"slo":`...)
	buf = sloJSON(buf, sw.slo)
	buf = append(buf, `,"metrics":`...)
	buf = append(buf, jval(names)...)
	buf = append(buf, "\n,\"at\":["...)
	for i, a := range sw.at {
		if i > 0 {
			buf = append(buf, ",\n"...)
		}
		buf = append(buf, `{"x":`...)
		buf = strconv.AppendInt(buf, int64(a.x), 10)
		buf = append(buf, `,"cap":`...)
		buf = capJSON(buf, a.capa)
		buf = append(buf, `,"pts":[`...)
		for j, p := range a.points {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = pointJSON(buf, p, names)
		}
		buf = append(buf, "]}"...)
	}
	return append(buf, "]}"...)
}

func sloJSON(buf []byte, slo *gate.SLO) []byte {
	if slo == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, `{"text":`...)
	buf = append(buf, jstr(slo.String())...)
	buf = append(buf, `,"obj":[`...)
	for i, o := range slo.Objectives() {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"m":`...)
		buf = append(buf, jstr(o.Metric)...)
		buf = append(buf, `,"v":`...)
		buf = num(buf, o.Limit)
		buf = append(buf, '}')
	}
	return append(buf, "]}"...)
}

func capJSON(buf []byte, c *gate.CapacityAt) []byte {
	if c == nil {
		return append(buf, "null"...)
	}
	buf = append(buf, `{"req":`...)
	buf = num(buf, c.Requests)
	buf = append(buf, `,"tok":`...)
	buf = num(buf, c.Tokens)
	buf = append(buf, `,"status":`...)
	buf = append(buf, jstr(c.Status)...)
	buf = append(buf, `,"below":`...)
	buf = append(buf, jstr(c.Below)...)
	buf = append(buf, `,"above":`...)
	buf = append(buf, jstr(c.Above)...)
	return append(buf, '}')
}

// pointJSON is one point: its load, achieved req/s and output tok/s,
// and its latencies in the order of names (null where it has none).
func pointJSON(buf []byte, p gate.LoadPoint, names []string) []byte {
	buf = append(buf, `{"load":`...)
	buf = append(buf, jstr(p.Load)...)
	buf = append(buf, `,"req":`...)
	buf = num(buf, p.Requests)
	buf = append(buf, `,"tok":`...)
	buf = num(buf, p.Tokens)
	if p.Saturated() {
		buf = append(buf, `,"sat":true`...)
	}
	buf = append(buf, `,"lat":[`...)
	for i, n := range names {
		if i > 0 {
			buf = append(buf, ',')
		}
		v, ok := p.Latency[n]
		if !ok {
			buf = append(buf, "null"...)
			continue
		}
		buf = num(buf, v)
	}
	buf = append(buf, `],"runs":`...)
	buf = strconv.AppendInt(buf, int64(p.Runs), 10)
	return append(buf, '}')
}

// curveRow is a sweep's row in the overview: its latest commit's
// capacity and how many commits measured it.
func curveRow(sw *sweep) []byte {
	buf := make([]byte, 0, 256)
	buf = append(buf, `{"id":`...)
	buf = append(buf, jstr(sw.id)...)
	buf = append(buf, `,"b":`...)
	buf = append(buf, jstr(sw.bench)...)
	buf = append(buf, `,"l":`...)
	buf = append(buf, jval(nonNil(sw.labels))...)
	buf = append(buf, `,"load":`...)
	buf = append(buf, jstr(sw.loadLabel)...)
	buf = append(buf, `,"n":`...)
	buf = strconv.AppendInt(buf, int64(len(sw.at)), 10)
	last := sw.at[len(sw.at)-1]
	buf = append(buf, `,"at":`...)
	buf = strconv.AppendInt(buf, int64(last.x), 10)
	buf = append(buf, `,"pts":`...)
	buf = strconv.AppendInt(buf, int64(len(last.points)), 10)
	buf = append(buf, `,"cap":`...)
	buf = capJSON(buf, last.capa)
	if len(sw.at) > 1 {
		buf = append(buf, `,"prev":`...)
		buf = capJSON(buf, sw.at[len(sw.at)-2].capa)
	}
	return append(buf, '}')
}
