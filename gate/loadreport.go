package gate

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/mdtext"
	"github.com/perfgate/perfgate/metric"
)

// curveName names a load curve in reports: "B {labels} by LOAD".
func (lc LoadCurve) curveName() string {
	return seriesName(lc.Benchmark, lc.Labels) + " by " + lc.LoadLabel
}

// loadName names a load curve in the load section the way the checks'
// table names its capacity series (names are displayNames(r.Checks)),
// so one series reads one way in both; curveName when the table has no
// such series.
func (r *Report) loadName(lc LoadCurve, names []string) string {
	for i, c := range r.Checks {
		if i < len(names) && c.Benchmark == lc.Benchmark && c.Labels[LoadLabelKey] == lc.LoadLabel &&
			labelString(withoutKey(c.Labels, LoadLabelKey)) == labelString(lc.Labels) {
			return names[i]
		}
	}
	return lc.curveName()
}

// capacityLine says both capacities at the SLO and their change, and the
// capacity rule's reference when it is not the baseline commit's; ""
// when head's is unknown.
func (lc LoadCurve) capacityLine() string {
	if lc.Capacity == nil {
		return ""
	}
	s := "capacity at SLO: head " + capDesc(*lc.Capacity, lc.LoadLabel)
	if b := lc.BaselineCapacity; b != nil {
		s += ", baseline "
		if lc.BaselineCommit != "" {
			s += shortSHA(lc.BaselineCommit) + " "
		}
		s += capDesc(*b, lc.LoadLabel)
		if b.Requests > 0 && lc.Capacity.Status != CapacityNone {
			s += fmt.Sprintf(" (%+.1f%%)", 100*(lc.Capacity.Requests/b.Requests-1))
		}
	}
	if r := lc.CapacityReference; r != nil {
		s += fmt.Sprintf("; the capacity rule compares head with its reference, %s req/s: the median of ", fmtNum(*r))
		if lc.CapacityValues > 0 {
			s += fmt.Sprintf("%d ", lc.CapacityValues)
		}
		s += "base-branch capacities, not the baseline commit's alone"
	}
	return s
}

// capDesc renders one capacity with how it was found, its loads named
// with the curve's load label.
func capDesc(c CapacityAt, label string) string {
	switch c.Status {
	case CapacityNone:
		return fmt.Sprintf("none (no swept point meets it; the lowest load is %s=%s)", label, c.Above)
	case CapacityBeyond:
		return fmt.Sprintf("at least %s req/s (beyond the swept range: every point meets it)", fmtNum(c.Requests))
	case CapacityInterpolated:
		return fmt.Sprintf("%s req/s (interpolated between %s=%s and %s)", fmtNum(c.Requests), label, c.Below, c.Above)
	}
	return fmt.Sprintf("%s req/s (at %s=%s)", fmtNum(c.Requests), label, c.Below)
}

// pointRows returns the points of both curves by load: load, head's and
// the baseline's req/s and metric.
func (lc LoadCurve) pointRows() [][]string {
	var loads []string
	for _, p := range lc.Baseline {
		loads = append(loads, p.Load)
	}
	for _, p := range lc.Head {
		if !contains(loads, p.Load) {
			loads = append(loads, p.Load)
		}
	}
	find := func(pts []LoadPoint, load string) *LoadPoint {
		for i := range pts {
			if pts[i].Load == load {
				return &pts[i]
			}
		}
		return nil
	}
	cell := func(p *LoadPoint, f func(*LoadPoint) (float64, bool)) string {
		if p == nil {
			return "-"
		}
		if v, ok := f(p); ok {
			return fmtNum(v)
		}
		return "-"
	}
	req := func(p *LoadPoint) (float64, bool) { return p.Requests, p.Requests > 0 }
	lat := func(p *LoadPoint) (float64, bool) { v, ok := p.Latency[lc.Metric]; return v, ok }
	baseMax := 0.0
	for _, p := range lc.Baseline {
		baseMax = max(baseMax, p.Requests)
	}
	matched := func(load string) string {
		for _, m := range lc.Matched {
			if m.Load == load {
				return fmtNum(m.Baseline)
			}
		}
		if h := find(lc.Head, load); h != nil && h.Requests > baseMax*(1+matchTolerance) {
			return "beyond" // the baseline never served this much, beyond the noise
		}
		return "-"
	}
	rows := make([][]string, 0, len(loads))
	for _, l := range loads {
		h, b := find(lc.Head, l), find(lc.Baseline, l)
		row := []string{l, cell(b, req), cell(h, req)}
		if lc.Metric != "" {
			row = append(row, cell(b, lat), cell(h, lat))
		}
		if len(lc.Matched) > 0 {
			row = append(row, matched(l))
		}
		rows = append(rows, row)
	}
	return rows
}

// pointHeader names pointRows' columns; the last, when the curves were
// compared at matched load, is the baseline curve's latency interpolated
// at head's achieved throughput.
func (lc LoadCurve) pointHeader() []string {
	h := []string{strings.ToUpper(lc.LoadLabel), "BASE REQ/S", "HEAD REQ/S"}
	if lc.Metric != "" {
		l := metric.Get(lc.Metric).Label // "P99 TPOT (ms)", as the checks' table names it
		h = append(h, "BASE "+l, "HEAD "+l)
	}
	if len(lc.Matched) > 0 {
		h = append(h, "BASE AT HEAD'S REQ/S")
	}
	return h
}

// writeLoadText writes the load curves section of the terminal report.
func (r *Report) writeLoadText(b *strings.Builder, color bool) {
	if len(r.Load) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s\n", paint(color, ansiBold, "Load curves"))
	// A check's load note is said in Why with the check (reasons): the
	// terminal shows both sections, so it is not said again here.
	saidInWhy := map[string]bool{}
	for _, c := range r.Checks {
		saidInWhy[c.LoadNote] = c.LoadNote != ""
	}
	names := displayNames(r.Checks)
	for _, lc := range r.Load {
		fmt.Fprintf(b, "  %s", r.loadName(lc, names))
		if lc.SLO != "" {
			fmt.Fprintf(b, ", SLO %s", lc.SLO)
		}
		b.WriteString("\n")
		if l := lc.capacityLine(); l != "" {
			fmt.Fprintf(b, "    %s\n", l)
		}
		if lc.Relation != "" {
			fmt.Fprintf(b, "    curve on %s at matched load: head's %s\n", lc.Metric, relText(lc.Relation))
		}
		if s := lc.saturatedLine(); s != "" {
			fmt.Fprintf(b, "    %s\n", s)
		}
		t := &table{header: lc.pointHeader()}
		for _, row := range lc.pointRows() {
			t.add("", row...)
		}
		var tb strings.Builder
		_ = t.write(&tb, color)
		for _, l := range strings.SplitAfter(strings.TrimRight(tb.String(), "\n"), "\n") {
			fmt.Fprintf(b, "    %s", l)
		}
		b.WriteString("\n")
		for _, n := range lc.Notes {
			if !saidInWhy[n] {
				fmt.Fprintf(b, "    - %s\n", n)
			}
		}
	}
}

// mdLoad writes the load curves of a markdown report: capacity at the
// SLO, the points, and a mermaid chart of both curves' latency by load.
func (r *Report) mdLoad(b *strings.Builder) {
	if len(r.Load) == 0 {
		return
	}
	b.WriteString("\n**Load curves**\n\n")
	names := displayNames(r.Checks)
	for _, lc := range r.Load {
		name := r.loadName(lc, names)
		fmt.Fprintf(b, "%s", mdtext.CodeSpan(name))
		if lc.SLO != "" {
			fmt.Fprintf(b, ", SLO %s", mdtext.CodeSpan(lc.SLO))
		}
		b.WriteString("  \n")
		if l := lc.capacityLine(); l != "" {
			fmt.Fprintf(b, "%s  \n", mdtext.Escape(l))
		}
		if lc.Relation != "" {
			fmt.Fprintf(b, "Curve on %s at matched load: head's %s.  \n", mdtext.CodeSpan(lc.Metric), mdtext.Escape(relText(lc.Relation)))
		}
		if s := lc.saturatedLine(); s != "" {
			fmt.Fprintf(b, "%s\n", mdtext.Escape(s))
		}
		b.WriteString("\n")
		hdr := lc.pointHeader()
		for i := range hdr {
			hdr[i] = mdtext.Escape(hdr[i])
		}
		fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(hdr, " | "), strings.Repeat("--:|", len(hdr)))
		for _, row := range lc.pointRows() {
			for i := range row {
				row[i] = mdtext.Escape(row[i])
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
		}
		b.WriteString("\n")
		for _, n := range lc.Notes {
			fmt.Fprintf(b, "- %s\n", mdtext.Escape(n))
		}
		if ch := lc.mermaid(name); ch != "" {
			b.WriteString("\n" + ch)
		}
		b.WriteString("\n")
	}
}

// mermaid charts both curves' latency (Metric) by load, over the loads
// both have (head's alone without a baseline): the first line is the
// baseline's, the second head's, titled with the curve's name in the
// report (name), so that the charts of one benchmark's curves for two
// models tell apart. "" with fewer than two such loads.
func (lc LoadCurve) mermaid(name string) string {
	if lc.Metric == "" {
		return ""
	}
	var xs, hs, bs []string
	for _, h := range lc.Head {
		hv, ok := h.Latency[lc.Metric]
		if !ok {
			continue
		}
		bv, bok := 0.0, false
		for _, p := range lc.Baseline {
			if p.Load == h.Load {
				bv, bok = p.Latency[lc.Metric]
			}
		}
		if len(lc.Baseline) > 0 && !bok {
			continue
		}
		xs = append(xs, fmt.Sprintf("%q", mermaidText(h.Load)))
		hs = append(hs, fmtNum(hv))
		bs = append(bs, fmtNum(bv))
	}
	if len(xs) < 2 {
		return ""
	}
	var lines string
	if len(lc.Baseline) > 0 {
		lines = "    line [" + strings.Join(bs, ", ") + "]\n"
	}
	lines += "    line [" + strings.Join(hs, ", ") + "]\n"
	caption := "head"
	if len(lc.Baseline) > 0 {
		caption = "first line: baseline, second: head"
	}
	return fmt.Sprintf("```mermaid\nxychart-beta\n    title \"%s\"\n    x-axis \"%s\" [%s]\n    y-axis \"%s\"\n%s```\n%s\n",
		mermaidText(name+": "+lc.Metric), mermaidText(lc.LoadLabel), strings.Join(xs, ", "), mermaidText(lc.Metric), lines, mdtext.Escape("("+caption+")"))
}

// saturatedLine names the loads at which head or the baseline achieved
// under 90% of the configured rate; "" when none.
func (lc LoadCurve) saturatedLine() string {
	var head, base []string
	for _, p := range lc.Head {
		if p.Saturated() {
			head = append(head, p.Load)
		}
	}
	for _, p := range lc.Baseline {
		if p.Saturated() {
			base = append(base, p.Load)
		}
	}
	if len(head) == 0 && len(base) == 0 {
		return ""
	}
	s := "saturated (under 90% of the configured rate achieved):"
	if len(head) > 0 {
		s += " head at " + strings.Join(head, ", ")
	}
	if len(base) > 0 {
		if len(head) > 0 {
			s += ";"
		}
		s += " baseline at " + strings.Join(base, ", ")
	}
	return s
}
