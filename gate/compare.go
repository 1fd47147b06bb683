package gate

import (
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/metric"

	"github.com/perfgate/perfgate/internal/mdtext"
	"github.com/perfgate/perfgate/internal/natsort"

	"github.com/perfgate/perfgate/internal/robust"
)

// CompareOptions names the two sides of a comparison.
type CompareOptions struct {
	A, B string // full commit ids
	// ASamples and BSamples, when not nil, replace the stored results of
	// A and B (for example a working-tree run).
	ASamples, BSamples []Sample
	IgnoreLabels       []string // beyond DescriptiveLabels
	// Graph, when set, lets an unmeasured A fall back, as check's
	// baseline does, to its nearest measured first-parent ancestor within
	// MaxDistance commits (default DefaultConfig's), with a note.
	Graph       Graph
	MaxDistance int
}

// Comparison is the side-by-side table of two commits' results, without
// rules or verdicts.
type Comparison struct {
	A string `json:"a"`
	// ARequested is the commit asked for as A when it has no results and
	// A is its nearest measured first-parent ancestor.
	ARequested string `json:"a_requested,omitempty"`
	B          string `json:"b"`
	// ALabel and BLabel, when set, are the labels ("section=Baseline")
	// that picked each side within one commit (CompareLabels).
	ALabel     string       `json:"a_label,omitempty"`
	BLabel     string       `json:"b_label,omitempty"`
	Rows       []CompareRow `json:"rows"`
	Mismatches []Mismatch   `json:"mismatches,omitempty"`
	Notes      []string     `json:"notes,omitempty"`
}

// CompareRow is one metric of one series on both sides.
type CompareRow struct {
	Benchmark string            `json:"benchmark"`
	Labels    map[string]string `json:"labels,omitempty"`
	Metric    string            `json:"metric"`
	Label     string            `json:"label"`
	A         *float64          `json:"a"` // median of A's runs
	B         *float64          `json:"b"`
	Change    *float64          `json:"change"` // percent, B against A
	Samples   struct {
		A int `json:"a"`
		B int `json:"b"`
	} `json:"samples"`
	// P is the two-sided Mann-Whitney p-value when both sides have four
	// or more runs.
	P *float64 `json:"p,omitempty"`
	// Assessment is "better" or "worse" in the metric's direction, "" when
	// equal or the direction is unknown.
	Assessment string `json:"assessment,omitempty"`
}

// Compare reads the results of two commits and lays them side by side.
func Compare(ctx context.Context, h History, opts CompareOptions) (*Comparison, error) {
	var want []string
	if opts.ASamples == nil {
		want = append(want, opts.A)
	}
	if opts.BSamples == nil && opts.B != opts.A {
		want = append(want, opts.B)
	}
	if len(want) > 0 {
		got, err := h.Samples(want)
		if err != nil {
			return nil, fmt.Errorf("reading stored results: %w", err)
		}
		if opts.ASamples == nil {
			opts.ASamples = preferClean(got[opts.A])
		}
		if opts.BSamples == nil {
			opts.BSamples = preferClean(got[opts.B])
		}
	}
	requested, distance := "", 0
	if len(opts.ASamples) == 0 && opts.Graph != nil {
		sha, ss, d, err := nearestMeasured(h, opts.Graph, opts.A, opts.MaxDistance)
		if err != nil {
			return nil, err
		}
		if sha != "" {
			requested, distance = opts.A, d
			opts.A, opts.ASamples = sha, ss
		}
	}
	for _, side := range []struct {
		sha string
		s   []Sample
	}{{opts.A, opts.ASamples}, {opts.B, opts.BSamples}} {
		if len(side.s) == 0 {
			return nil, noResultsf("commit %s has no stored results; measure it first (perfgate run or perfgate ingest --commit %s)",
				shortSHA(side.sha), shortSHA(side.sha))
		}
	}
	cmp := CompareSamples(opts.A, opts.B, opts.ASamples, opts.BSamples, opts.IgnoreLabels)
	if requested != "" {
		cmp.ARequested = requested
		cmp.Notes = append([]string{fmt.Sprintf("A: %s has no stored results; A is its nearest measured first-parent ancestor, %s, %d commit(s) before it (as check picks a baseline)",
			shortSHA(requested), shortSHA(opts.A), distance)}, cmp.Notes...)
	}
	return cmp, nil
}

// nearestMeasured walks the first parents of from (itself excluded) up to
// maxDistance commits and returns the first with stored results.
func nearestMeasured(h History, g Graph, from string, maxDistance int) (string, []Sample, int, error) {
	if maxDistance <= 0 {
		maxDistance = DefaultConfig().Baseline.MaxDistance
	}
	commits, err := g.FirstParents(from, maxDistance+1)
	if err != nil && len(commits) == 0 {
		return "", nil, 0, fmt.Errorf("first parents of %s: %w", shortSHA(from), err)
	}
	shas := make([]string, 0, len(commits))
	for _, c := range commits[min(1, len(commits)):] {
		shas = append(shas, c.SHA)
	}
	got, err := h.Samples(shas)
	if err != nil {
		return "", nil, 0, fmt.Errorf("reading stored results: %w", err)
	}
	for i, sha := range shas {
		var clean []Sample // as a baseline: no working-tree run
		for _, s := range got[sha] {
			if !s.Dirty {
				clean = append(clean, s)
			}
		}
		if len(clean) > 0 {
			return sha, clean, i + 1, nil
		}
	}
	return "", nil, 0, nil
}

// preferClean returns the clean samples, or all of them when none is.
func preferClean(ss []Sample) []Sample {
	var out []Sample
	for _, s := range ss {
		if !s.Dirty {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return ss
	}
	return out
}

// CompareSamples compares two sets of results; a and b name them.
func CompareSamples(a, b string, as, bs []Sample, ignoreLabels []string) *Comparison {
	id := newIdentity(ignoreLabels)
	type group struct {
		bench  string
		labels map[string]string
		a, b   []Sample
	}
	groups := map[string]*group{}
	var keys []string
	adopted, nLegacy := adoptLegacy(id, as, bs)
	as, bs = adopted[0], adopted[1]
	add := func(ss []Sample, side string) {
		for _, s := range ss {
			k := id.key(&s)
			g := groups[k]
			if g == nil {
				g = &group{bench: s.Benchmark, labels: id.displayLabels(&s)}
				groups[k] = g
				keys = append(keys, k)
			}
			if side == "a" {
				g.a = append(g.a, s)
			} else {
				g.b = append(g.b, s)
			}
		}
	}
	add(as, "a")
	add(bs, "b")
	// A sweep's points in the order of their loads (8 before 16).
	sort.Slice(keys, func(i, j int) bool { return natsort.Less(keys[i], keys[j]) })
	cmp := &Comparison{A: a, B: b}
	if nLegacy > 0 {
		cmp.Notes = append(cmp.Notes, fmt.Sprintf("%d result(s) have no testbed (stored before perfgate recorded one) and are shown with the testbed of the other results of their series", nLegacy))
	}

	// Benchmarks measured on both sides, but never under the same labels.
	byBench := map[string][]*group{}
	for _, k := range keys {
		g := groups[k]
		byBench[g.bench] = append(byBench[g.bench], g)
	}
	for _, bench := range sortedKeys(byBench) {
		var onlyA, onlyB *group
		both := false
		for _, g := range byBench[bench] {
			switch {
			case len(g.a) > 0 && len(g.b) > 0:
				both = true
			case len(g.a) > 0 && onlyA == nil:
				onlyA = g
			case len(g.b) > 0 && onlyB == nil:
				onlyB = g
			}
		}
		if !both && onlyA != nil && onlyB != nil {
			cmp.Mismatches = append(cmp.Mismatches, Mismatch{Benchmark: bench, HeadLabels: onlyB.labels, BaselineLabels: onlyA.labels,
				Commit: a, Diff: labelDiff(onlyB.labels, onlyA.labels)})
			cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s: measured under different labels (%s); shown as separate series, not compared",
				bench, strings.ReplaceAll(strings.ReplaceAll(labelDiff(onlyB.labels, onlyA.labels), "(head)", "(B)"), "(baseline)", "(A)")))
		}
	}

	for _, k := range keys {
		g := groups[k]
		for _, side := range []struct {
			name string
			ss   []Sample
		}{{"A", g.a}, {"B", g.b}} {
			for i := range side.ss {
				if why := selfInvalid(&side.ss[i]); why != "" {
					cmp.Notes = append(cmp.Notes, fmt.Sprintf("%s on %s (%s) is invalid: %s", seriesName(g.bench, g.labels), side.name, shortSHA(side.ss[i].Commit), why))
				}
			}
		}
		names := map[string]bool{}
		for _, s := range append(append([]Sample(nil), g.a...), g.b...) {
			for n := range s.Metrics {
				names[n] = true
			}
		}
		ordered := sortedKeys(names)
		sortMetrics(ordered)
		for _, n := range ordered {
			av, bv := values(g.a, n), values(g.b, n)
			row := CompareRow{Benchmark: g.bench, Labels: g.labels, Metric: n, Label: metric.Get(n).Label}
			row.Samples.A, row.Samples.B = len(av), len(bv)
			if len(av) > 0 {
				row.A = num(robust.Median(av))
			}
			if len(bv) > 0 {
				row.B = num(robust.Median(bv))
			}
			if row.A != nil && row.B != nil {
				if *row.A != 0 {
					row.Change = num(100 * (*row.B / *row.A - 1))
				}
				switch d := metric.Get(n).Direction; {
				case *row.A == *row.B:
				case d == metric.LowerIsBetter:
					row.Assessment = map[bool]string{true: "better", false: "worse"}[*row.B < *row.A]
				case d == metric.HigherIsBetter:
					row.Assessment = map[bool]string{true: "better", false: "worse"}[*row.B > *row.A]
				}
			}
			if len(av) >= 4 && len(bv) >= 4 {
				row.P = num(mwuTwoSided(bv, av))
			}
			cmp.Rows = append(cmp.Rows, row)
		}
	}
	return cmp
}

func mwuTwoSided(x, y []float64) float64 {
	return math.Min(1, 2*math.Min(mwu(x, y, true), mwu(x, y, false)))
}

var latencyNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(mean|median|std|min|max|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2el)_ms$`)
})

// metricRank orders metrics the way results are read: counts and duration,
// throughputs, then latencies by kind (TTFT, TPOT, ITL, E2EL) and
// statistic; unknown metrics last, by name.
func metricRank(n string) float64 {
	fixed := []string{"completed", "failed", "duration", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput", "input_throughput", "output_throughput", "total_token_throughput",
		"max_output_tokens_per_s", "max_concurrent_requests"}
	for i, f := range fixed {
		if n == f {
			return float64(i)
		}
	}
	if m := latencyNameRE().FindStringSubmatch(n); m != nil {
		kind := map[string]float64{"ttft": 0, "tpot": 1, "itl": 2, "e2el": 3}[m[3]]
		stat := map[string]float64{"mean": 0, "median": 1, "std": 2, "min": 3, "max": 4}[m[1]]
		if m[2] != "" {
			p, _ := strconv.ParseFloat(m[2], 64)
			stat = 5 + p/1000
		}
		return 100 + kind*10 + stat
	}
	return 1000
}

func sortMetrics(names []string) {
	sort.SliceStable(names, func(i, j int) bool {
		ri, rj := metricRank(names[i]), metricRank(names[j])
		if ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
}

// WriteText renders the comparison as an aligned table; color marks
// changes for the better green and for the worse red.
func (c *Comparison) WriteText(w io.Writer, color bool) error {
	var b strings.Builder
	a := c.sideName(c.A, c.ALabel)
	if c.ARequested != "" {
		a += fmt.Sprintf(" (nearest measured first-parent ancestor of %s, which has no stored results)", shortSHA(c.ARequested))
	}
	fmt.Fprintf(&b, "A  %s\nB  %s\n\n", a, c.sideName(c.B, c.BLabel))
	if len(c.Rows) > 0 {
		t := &table{header: []string{"BENCHMARK", "METRIC", "A", "B", "N", "P", "CHANGE", "B IS"}, right: []bool{false, false, true, true, true, true, true, false}}
		names := compareNames(c.Rows)
		for i, r := range c.Rows {
			col := ""
			switch r.Assessment {
			case "better":
				col = ansiGreen
			case "worse":
				col = ansiRed
			}
			t.add(col, names[i], r.Label, fmtPtr(r.A), fmtPtr(r.B), fmt.Sprintf("%d/%d", r.Samples.A, r.Samples.B), fmtP(r.P), fmtChange(r.Change), assessment(r))
		}
		if err := t.write(&b, color); err != nil {
			return err
		}
		b.WriteString("N: runs on A/B; values are medians. P: two-sided Mann-Whitney, with four or more runs on both sides.\n" +
			"B IS: better or worse than A in the metric's direction (- when equal, unmeasured or of no known direction).\n")
	}
	if len(c.Notes) > 0 {
		fmt.Fprintf(&b, "\n%s\n", paint(color, ansiBold, "Notes"))
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// assessment is a row's "better" or "worse", "-" when it has none.
func assessment(r CompareRow) string {
	if r.Assessment == "" {
		return "-"
	}
	return r.Assessment
}

func fmtP(p *float64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%.3g", *p)
}

func compareNames(rows []CompareRow) []string {
	checks := make([]CheckResult, len(rows))
	for i, r := range rows {
		checks[i] = CheckResult{Benchmark: r.Benchmark, Labels: r.Labels}
	}
	return displayNames(checks)
}

// WriteMarkdown renders the comparison as a markdown table.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### perfgate compare %s → %s\n\n", mdtext.CodeSpan(c.sideName(c.A, c.ALabel)), mdtext.CodeSpan(c.sideName(c.B, c.BLabel)))
	if len(c.Rows) > 0 {
		b.WriteString("| Benchmark | Metric | A | B | Change | Runs (A/B) | p |\n|---|---|--:|--:|--:|--:|--:|\n")
		names := compareNames(c.Rows)
		for i, r := range c.Rows {
			ch := fmtChange(r.Change)
			switch r.Assessment {
			case "better":
				ch += " 🟢 better"
			case "worse":
				ch += " 🔴 worse"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d/%d | %s |\n", mdtext.Code(names[i]), mdtext.Escape(r.Label), fmtPtr(r.A), fmtPtr(r.B), ch, r.Samples.A, r.Samples.B, fmtP(r.P))
		}
	}
	if len(c.Notes) > 0 {
		b.WriteString("\n**Notes:**\n\n")
		for _, n := range c.Notes {
			fmt.Fprintf(&b, "- %s\n", mdtext.Escape(n))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the comparison as indented JSON.
func (c *Comparison) WriteJSON(w io.Writer) error { return writeJSON(w, c) }
