package site

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/internal/suggest"
	"github.com/perfgate/perfgate/metric"
)

// Run flags in a chart's data.
const (
	flagValid   = 0
	flagInvalid = 1 // gate.InvalidReason: drawn apart, left out of medians
	flagDirty   = 2 // measured a working tree with changes
)

// model is the history as the site shows it.
type model struct {
	commits []gate.Commit
	series  []*series // by key
	alerts  map[alertKey][]openAlert
	sweeps  []*sweep // load curves per commit, by key (curves.go)
	// runs is how many stored runs the charts draw (a run is drawn on
	// one chart per metric it has, and counted once), measured how many
	// commits they are at.
	runs, measured int
}

// series is one benchmark + identity labels + testbed.
type series struct {
	key    string
	id     string // file and link id
	bench  string
	labels map[string]string
	charts map[string]*chart
}

// chart is one metric of a series: every run, in commit order.
type chart struct {
	metric string
	x      []int32 // commit index
	y      []float64
	f      []uint8
	why    map[int]string // run index -> why it is invalid
}

// collect reads the results of commits in batches and groups them into
// series and charts.
func collect(ctx context.Context, commits []gate.Commit, h gate.History, opts Options) (*model, error) {
	want, err := metricSet(opts.Metrics)
	if err != nil {
		return nil, err
	}
	id := gate.NewSeriesIdentity(opts.IgnoreLabels)
	bySeries := map[string]*series{}
	benches := map[string]bool{}
	seen := map[string]bool{}
	runs, measured := 0, 0
	sweeps := map[string]*sweep{}
	shas := make([]string, 0, batchSize)
	for start := 0; start < len(commits); start += batchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(start+batchSize, len(commits))
		shas = shas[:0]
		for _, c := range commits[start:end] {
			shas = append(shas, c.SHA)
		}
		got, err := h.Samples(shas)
		if err != nil {
			return nil, err
		}
		for i := start; i < end; i++ {
			drawn := 0
			for k := range got[commits[i].SHA] {
				s := &got[commits[i].SHA][k]
				benches[s.Benchmark] = true
				if !opts.matchBenchmark(s.Benchmark) {
					continue
				}
				if addSample(bySeries, id, s, int32(i), want, seen) && !s.Derived {
					drawn++
				}
			}
			addCurves(sweeps, got[commits[i].SHA], int32(i), opts)
			runs += drawn
			if drawn > 0 {
				measured++
			}
		}
	}
	if err := checkSelection(opts, want, benches, seen, bySeries); err != nil {
		return nil, err
	}
	m := &model{commits: trimUnmeasured(commits, bySeries), runs: runs, measured: measured}
	if len(m.commits) > 0 {
		m.sweeps = sweepList(sweeps, int32(len(commits)-len(m.commits)))
	}
	for _, s := range bySeries {
		if len(s.charts) > 0 {
			m.series = append(m.series, s)
		}
	}
	sort.Slice(m.series, func(i, j int) bool { return m.series[i].key < m.series[j].key })
	assignIDs(m.series)
	return m, nil
}

// metricSet resolves --metric names to canonical ones; nil means all.
func metricSet(names []string) (map[string]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, badf("--metric \"\": give a metric name, e.g. --metric mean_ttft_ms")
		}
		if in, ok := metric.Lookup(n); ok {
			want[in.Name] = true
		} else {
			want[metric.Sanitize(n)] = true
		}
	}
	return want, nil
}

// addSample adds a run's values to its series' charts and reports
// whether any chart drew it (--metric may select none of its metrics).
func addSample(bySeries map[string]*series, id gate.SeriesIdentity, s *gate.Sample, at int32, want, seen map[string]bool) bool {
	key := id.Key(s)
	sr := bySeries[key]
	if sr == nil {
		sr = &series{key: key, bench: s.Benchmark, labels: id.Labels(s), charts: map[string]*chart{}}
		bySeries[key] = sr
	}
	flag, why := uint8(flagValid), ""
	if s.Dirty {
		flag = flagDirty
	} else if why = gate.InvalidReason(s); why != "" {
		flag = flagInvalid
	}
	drawn := false
	for name, v := range s.Metrics {
		c := sr.charts[name]
		if c == nil {
			seen[name] = true // once a chart has it, seen has it
			if want != nil && !want[name] {
				continue
			}
			c = &chart{metric: name}
			sr.charts[name] = c
		}
		if why != "" {
			if c.why == nil {
				c.why = map[int]string{}
			}
			c.why[len(c.y)] = why
		}
		c.x = append(c.x, at)
		c.y = append(c.y, v)
		c.f = append(c.f, flag)
		drawn = true
	}
	return drawn
}

// checkSelection turns a --benchmark or --metric that matched nothing into
// an error that lists what there is.
func checkSelection(opts Options, want, benches, seen map[string]bool, bySeries map[string]*series) error {
	if len(benches) == 0 {
		return nil // an empty history is an empty site
	}
	if len(bySeries) == 0 {
		list := sortedKeys(benches)
		msg := fmt.Sprintf("--benchmark %q matches none of the stored benchmarks", opts.Benchmark)
		if s := suggest.Closest(opts.Benchmark, list); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return badf("%s: %s", msg, strings.Join(list, ", "))
	}
	for name := range want {
		if seen[name] {
			continue
		}
		msg := fmt.Sprintf("--metric %q: no stored result has it", name)
		if s := suggest.Closest(name, sortedKeys(seen)); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return badf("%s (see perfgate history --help for metric names)", msg)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// assignIDs gives each series a readable, unique id: the benchmark alone
// when it has one series, else the benchmark and its label values.
func assignIDs(ss []*series) {
	perBench := map[string]int{}
	for _, s := range ss {
		perBench[s.bench]++
	}
	used := map[string]bool{}
	for _, s := range ss {
		base := slug(s.bench)
		if perBench[s.bench] > 1 {
			var parts []string
			for _, k := range sortedKeys(s.labels) {
				parts = append(parts, s.labels[k])
			}
			base = slug(s.bench + "." + strings.Join(parts, "."))
		}
		idv := base
		for n := 2; used[idv]; n++ {
			idv = fmt.Sprintf("%s-%d", base, n)
		}
		used[idv] = true
		s.id = idv
	}
}

// trimUnmeasured drops the commits older than the first one with a shown
// result, so that the site does not list a long unmeasured past, and
// renumbers the charts' commit indexes.
func trimUnmeasured(commits []gate.Commit, bySeries map[string]*series) []gate.Commit {
	first := int32(len(commits))
	for _, s := range bySeries {
		for _, c := range s.charts {
			if len(c.x) > 0 && c.x[0] < first {
				first = c.x[0]
			}
		}
	}
	if first == int32(len(commits)) {
		return nil
	}
	if first == 0 {
		return commits
	}
	for _, s := range bySeries {
		for _, c := range s.charts {
			for i := range c.x {
				c.x[i] -= first
			}
		}
	}
	return commits[first:]
}
