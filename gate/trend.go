package gate

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/perfgate/perfgate/metric"

	"github.com/perfgate/perfgate/internal/mdtext"

	"github.com/perfgate/perfgate/internal/robust"

	"github.com/perfgate/perfgate/internal/suggest"
)

// TrendOptions selects a metric of a benchmark over first-parent commits.
type TrendOptions struct {
	From      string            // full id of the newest commit (a branch tip, HEAD)
	Ref       string            // its name, for the report
	Benchmark string            // benchmark name
	Metric    string            // canonical name or display label
	Labels    map[string]string // only series whose identity labels include these
	Limit     int               // measured commits to show (default 30)
	MaxWalk   int               // first-parent commits to read at most (default 5000)
	// IgnoreLabels are labels that do not identify a series, beyond
	// DescriptiveLabels.
	IgnoreLabels []string
	// Accepted are the recorded acceptances; the trend lists those of its
	// benchmark and metric on the commits it covers.
	Accepted []Acceptance
}

// Trend is a metric over commits, one series per set of identity labels.
type Trend struct {
	From      string        `json:"from"`
	Ref       string        `json:"ref,omitempty"`
	Benchmark string        `json:"benchmark"`
	Metric    string        `json:"metric"`
	Label     string        `json:"label"`
	Direction string        `json:"direction"`
	Series    []TrendSeries `json:"series"`
	// Accepted are the changes of this metric accepted on the commits
	// shown (perfgate accept), newest first.
	Accepted []Acceptance `json:"accepted,omitempty"`
}

// TrendSeries is the metric of one series, oldest commit first.
type TrendSeries struct {
	Labels map[string]string `json:"labels,omitempty"`
	Points []TrendPoint      `json:"points"`
}

// TrendPoint is the metric at one commit.
type TrendPoint struct {
	Commit  string    `json:"commit"`
	Subject string    `json:"subject"`
	Time    time.Time `json:"time"`
	Value   float64   `json:"value"` // median of the commit's runs
	Runs    int       `json:"runs"`
	Change  *float64  `json:"change"`            // percent against the previous valid point
	Invalid string    `json:"invalid,omitempty"` // why the result is invalid; left out of changes
}

// ReadTrend reads the metric of a benchmark over the first-parent commits
// from opts.From until Limit commits with a value are found, and returns
// them oldest first. Dirty results are left out (they did not measure
// their commit); invalid ones are shown but left out of the changes.
func ReadTrend(ctx context.Context, g Graph, h History, opts TrendOptions) (*Trend, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = 30
	}
	name := strings.TrimSpace(opts.Metric)
	if in, ok := metric.Lookup(name); ok {
		name = in.Name
	} else {
		name = metric.Sanitize(name)
	}
	info := metric.Get(name)
	id := newIdentity(opts.IgnoreLabels)
	tr := &Trend{From: opts.From, Ref: opts.Ref, Benchmark: opts.Benchmark, Metric: name, Label: info.Label, Direction: info.Direction.String()}

	match := func(s *Sample) bool {
		if s.Dirty || s.Benchmark != opts.Benchmark {
			return false
		}
		if _, ok := s.Metrics[name]; !ok {
			return false
		}
		for k, v := range opts.Labels {
			if k == TestbedLabel && s.Labels[k] == "" {
				if s.Testbed != v {
					return false
				}
				continue
			}
			if s.Labels[k] != v {
				return false
			}
		}
		return true
	}
	w := newWalker(g, h, id, opts.From, opts.MaxWalk)
	need := 2*limit + 10
	measured := 0
	for {
		if err := w.extend(ctx, need); err != nil {
			return nil, err
		}
		measured = 0
		for _, c := range w.commits {
			for _, k := range w.samples[c.SHA] {
				if match(k.s) {
					measured++
					break
				}
			}
			if measured >= limit {
				break
			}
		}
		if measured >= limit || w.capped() {
			break
		}
		need *= 2
	}
	if measured == 0 {
		if opts.Benchmark == "" {
			// No --name: a history of one benchmark needs none.
			if only := onlyBenchmark(w); only != "" {
				opts.Benchmark = only
				return ReadTrend(ctx, g, h, opts)
			}
		}
		return nil, trendMiss(w, opts, name)
	}

	type acc struct {
		labels map[string]string
		pts    []TrendPoint // newest first
	}
	bySeries := map[string]*acc{}
	var keys []string
	count := 0
	for _, c := range w.commits {
		if count >= limit {
			break
		}
		for _, a := range opts.Accepted {
			if a.Commit == c.SHA && a.Covers(opts.Benchmark, name) {
				tr.Accepted = append(tr.Accepted, a)
			}
		}
		runs := map[string][]*Sample{}
		var order []string
		for _, k := range w.samples[c.SHA] {
			if !match(k.s) {
				continue
			}
			if runs[k.key] == nil {
				order = append(order, k.key)
			}
			runs[k.key] = append(runs[k.key], k.s)
		}
		if len(order) == 0 {
			continue
		}
		count++
		for _, key := range order {
			a := bySeries[key]
			if a == nil {
				a = &acc{labels: id.displayLabels(runs[key][0])}
				bySeries[key] = a
				keys = append(keys, key)
			}
			var valid, invalid []float64
			why := ""
			for _, s := range runs[key] {
				if r := selfInvalid(s); r != "" {
					invalid = append(invalid, s.Metrics[name])
					why = r
					continue
				}
				valid = append(valid, s.Metrics[name])
			}
			p := TrendPoint{Commit: c.SHA, Subject: c.Subject, Time: c.Time}
			if len(valid) > 0 {
				p.Value, p.Runs = robust.Median(valid), len(valid)
			} else {
				p.Value, p.Runs, p.Invalid = robust.Median(invalid), len(invalid), why
			}
			a.pts = append(a.pts, p)
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		a := bySeries[key]
		pts := make([]TrendPoint, len(a.pts))
		for i, p := range a.pts {
			pts[len(pts)-1-i] = p
		}
		prev := math.NaN()
		for i := range pts {
			if pts[i].Invalid != "" {
				continue
			}
			if !math.IsNaN(prev) && prev != 0 {
				pts[i].Change = num(100 * (pts[i].Value/prev - 1))
			}
			prev = pts[i].Value
		}
		tr.Series = append(tr.Series, TrendSeries{Labels: a.labels, Points: pts})
	}
	return tr, nil
}

// onlyBenchmark returns the benchmark of the walked commits' clean results
// when there is exactly one, else "".
func onlyBenchmark(w *walker) string {
	only := ""
	for _, c := range w.commits {
		for _, k := range w.samples[c.SHA] {
			if k.s.Dirty {
				continue
			}
			if only != "" && k.s.Benchmark != only {
				return ""
			}
			only = k.s.Benchmark
		}
	}
	return only
}

// trendMiss explains why no point was found: the benchmark, the metric or
// the labels.
func trendMiss(w *walker, opts TrendOptions, name string) error {
	benches := map[string]bool{}
	metrics := map[string]bool{}
	labelSets := map[string]bool{}
	for _, c := range w.commits {
		for _, k := range w.samples[c.SHA] {
			if k.s.Dirty {
				continue
			}
			benches[k.s.Benchmark] = true
			if k.s.Benchmark != opts.Benchmark {
				continue
			}
			for m := range k.s.Metrics {
				metrics[m] = true
			}
			if _, ok := k.s.Metrics[name]; ok {
				labelSets[labelString(w.id.labels(k.s.Labels))] = true
			}
		}
	}
	where := fmt.Sprintf("the last %d first-parent commits of %s", len(w.commits), trendRef(opts))
	switch {
	case len(benches) == 0:
		return noResultsf("no stored results in %s; store some first (perfgate ingest or perfgate run)", where)
	case opts.Benchmark == "":
		return noSuchf("several benchmarks are stored in %s: %s; pick one with --name", where, strings.Join(quoteAll(sortedKeys(benches)), ", "))
	case !benches[opts.Benchmark]:
		list := sortedKeys(benches)
		msg := fmt.Sprintf("no results of benchmark %q in %s", opts.Benchmark, where)
		if s := suggest.Closest(opts.Benchmark, list); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return noSuchf("%s; benchmarks stored there: %s (pick one with --name)", msg, strings.Join(quoteAll(list), ", "))
	case !metrics[name]:
		list := sortedKeys(metrics)
		msg := fmt.Sprintf("benchmark %q has no metric %q in %s", opts.Benchmark, opts.Metric, where)
		if s := suggest.Closest(name, list); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return noSuchf("%s; its metrics: %s (pick one with --metric)", msg, strings.Join(list, ", "))
	}
	return noSuchf("no series of benchmark %q has the labels %s in %s; its series: %s",
		opts.Benchmark, labelString(opts.Labels), where, strings.Join(quoteAll(sortedKeys(labelSets)), ", "))
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf("%q", x)
	}
	return out
}

func trendRef(o TrendOptions) string {
	if o.Ref != "" {
		return o.Ref
	}
	return shortSHA(o.From)
}

func (t *Trend) title() string {
	dir := ""
	switch t.Direction {
	case "lower":
		dir = ", lower is better"
	case "higher":
		dir = ", higher is better"
	}
	return fmt.Sprintf("%s of %s on %s (oldest first%s)", t.Label, t.Benchmark, trendRef(TrendOptions{From: t.From, Ref: t.Ref}), dir)
}

func validValues(pts []TrendPoint) []float64 {
	var vs []float64
	for _, p := range pts {
		if p.Invalid == "" {
			vs = append(vs, p.Value)
		}
	}
	return vs
}

// WriteText renders each series as a sparkline and a table, oldest first.
func (t *Trend) WriteText(w io.Writer, color bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", paint(color, ansiBold, t.title()))
	for _, s := range t.Series {
		b.WriteString("\n")
		if len(s.Labels) > 0 {
			fmt.Fprintf(&b, "series %s\n", labelString(s.Labels))
		}
		vs := validValues(s.Points)
		if len(vs) > 0 {
			lo, hi := vs[0], vs[0]
			for _, v := range vs {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
			fmt.Fprintf(&b, "%s  min %s  max %s  last %s\n\n", sparkline(vs), fmtNum(lo), fmtNum(hi), fmtNum(vs[len(vs)-1]))
		}
		tb := &table{header: []string{"COMMIT", "DATE", "VALUE", "CHANGE", "SUBJECT"}, right: []bool{false, false, true, true, false}}
		for _, p := range s.Points {
			ch := fmtChange(p.Change)
			if p.Invalid != "" {
				ch = "invalid"
			}
			tb.add("", shortSHA(p.Commit), fmtDate(p.Time), fmtNum(p.Value), ch, oneLine(p.Subject, 60))
		}
		if err := tb.write(&b, color); err != nil {
			return err
		}
		for _, p := range s.Points {
			if p.Invalid != "" {
				fmt.Fprintf(&b, "  %s invalid: %s\n", shortSHA(p.Commit), p.Invalid)
			}
		}
	}
	if len(t.Accepted) > 0 {
		b.WriteString("\n")
		for _, a := range t.Accepted {
			fmt.Fprintf(&b, "%s  change at %s %s\n", paint(color, ansiCyan, "accepted"), shortSHA(a.Commit), a.Text())
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtDate(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// WriteMarkdown renders each series as a mermaid chart and a table.
func (t *Trend) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n", mdtext.Escape(t.title()))
	for _, s := range t.Series {
		b.WriteString("\n")
		if len(s.Labels) > 0 {
			fmt.Fprintf(&b, "Series %s\n\n", mdtext.CodeSpan(labelString(s.Labels)))
		}
		var pts []Point
		for _, p := range s.Points {
			if p.Invalid == "" {
				pts = append(pts, Point{Commit: p.Commit, Value: p.Value})
			}
		}
		if len(pts) > 1 {
			b.WriteString(mermaidChart(t.Benchmark+": "+t.Label, t.Label, pts, ""))
			b.WriteString("\n")
		}
		b.WriteString("| Commit | Date | Value | Change | Subject |\n|---|---|--:|--:|---|\n")
		for _, p := range s.Points {
			ch := fmtChange(p.Change)
			if p.Invalid != "" {
				ch = "invalid: " + mdtext.Escape(p.Invalid)
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", shortSHA(p.Commit), fmtDate(p.Time), fmtNum(p.Value), ch, mdtext.Escape(oneLine(p.Subject, 80)))
		}
	}
	if len(t.Accepted) > 0 {
		b.WriteString("\n")
		for _, a := range t.Accepted {
			fmt.Fprintf(&b, "☑️ Change at %s %s.  \n", mdtext.Code(shortSHA(a.Commit)), mdtext.Escape(a.Text()))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the trend as indented JSON.
func (t *Trend) WriteJSON(w io.Writer) error { return writeJSON(w, t) }

// WriteCSV writes one row per point: series labels, commit, time,
// subject, value, runs, change (percent) and the invalid reason.
func (t *Trend) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"benchmark", "metric", "labels", "commit", "time", "subject", "value", "runs", "change_pct", "invalid"}); err != nil {
		return err
	}
	for _, s := range t.Series {
		for _, p := range s.Points {
			ch := ""
			if p.Change != nil {
				ch = fmt.Sprintf("%.4f", *p.Change)
			}
			tm := ""
			if !p.Time.IsZero() {
				tm = p.Time.UTC().Format(time.RFC3339)
			}
			if err := cw.Write([]string{t.Benchmark, t.Metric, labelString(s.Labels), p.Commit, tm, p.Subject,
				fmt.Sprint(p.Value), fmt.Sprint(p.Runs), ch, p.Invalid}); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
