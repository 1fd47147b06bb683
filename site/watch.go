package site

import (
	"context"
	"errors"
	"math"
	"strconv"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/watch"
)

// The overview agrees with perfgate watch: Generate runs watch over the
// same commits, with the same rules and acceptances, and a chart with an
// open regression of watch's (a change of level the series has not
// recovered from, not accepted) is flagged as a regression, as is one
// whose latest median is beyond the band in the worse direction.

// openAlert is one of watch's open regressions, placed on the site's
// commits.
type openAlert struct {
	LastGood, FirstBad string
	At                 int32 // index of FirstBad in the site's commits (-1: before them)
	Before, After      float64
	Pct, Confidence    float64
	Drift              bool
	Moving             bool    // a drift still under way
	DriftEnd           string  // a stopped drift's first commit at its new level
	EndAt              int32   // a drift's end in the site's commits (the last one while it still moves)
	PerHundred         float64 // a drift's change in percent per 100 commits
}

// alertKey names a chart: series key and metric.
type alertKey struct{ series, metric string }

// commitGraph is the walked first-parent chain (oldest first) as a
// gate.Graph for watch.
type commitGraph []gate.Commit

func (g commitGraph) MergeBase(a, b string) (string, error) {
	return "", errors.New("site: no merge base on a first-parent chain")
}

func (g commitGraph) FirstParents(from string, n int) ([]gate.Commit, error) {
	i := len(g) - 1
	for i >= 0 && g[i].SHA != from {
		i--
	}
	if i < 0 {
		return nil, errors.New("site: commit " + from + " is not on the walked chain")
	}
	out := make([]gate.Commit, 0, min(n, i+1))
	for ; i >= 0 && len(out) < n; i-- {
		out = append(out, g[i])
	}
	return out, nil
}

// watchOpen runs watch over commits (oldest first) and returns its open
// regressions by chart, and the report.
func watchOpen(ctx context.Context, commits []gate.Commit, h gate.History, opts Options) (map[alertKey][]openAlert, *watch.Report, error) {
	if len(commits) == 0 {
		return nil, nil, nil
	}
	cfg := gate.DefaultConfig()
	if opts.Rules != nil {
		c := *opts.Rules
		cfg = &c
	}
	cfg.IgnoreLabels = opts.IgnoreLabels
	wo := watch.Options{From: commits[len(commits)-1].SHA, Ref: opts.Ref, Bench: opts.Benchmark, Config: cfg,
		Accepted: watch.Acceptances(opts.Accepted)}
	if len(opts.Metrics) == 1 {
		if in, ok := metric.Lookup(opts.Metrics[0]); ok {
			wo.Metric = in.Name
		}
	}
	rep, err := watch.Watch(ctx, commitGraph(commits), h, wo)
	if err != nil {
		return nil, nil, err
	}
	out := map[alertKey][]openAlert{}
	for _, c := range rep.Regressions() {
		k := alertKey{c.SeriesKey(), c.Metric}
		out[k] = append(out[k], openAlert{LastGood: c.LastGood, FirstBad: c.FirstBad, At: -1, Before: c.Before, After: c.After,
			Pct: c.ChangePct, Confidence: c.Confidence, Drift: c.Drift,
			Moving: c.Moving, PerHundred: c.PerHundred, DriftEnd: c.DriftEnd})
	}
	return out, rep, nil
}

// alertsJSON appends a chart's open regressions: the commit index and
// id of the change's first commit at the new level (at -1 when it lies
// before the site's first commit), the last at the old one, the levels,
// the change in percent and the confidence.
func alertsJSON(buf []byte, as []openAlert) []byte {
	buf = append(buf, '[')
	for i, a := range as {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"at":`...)
		buf = strconv.AppendInt(buf, int64(a.At), 10)
		buf = append(buf, `,"sha":`...)
		buf = append(buf, jstr(a.FirstBad)...)
		buf = append(buf, `,"good":`...)
		buf = append(buf, jstr(a.LastGood)...)
		buf = append(buf, `,"before":`...)
		buf = num(buf, a.Before)
		buf = append(buf, `,"after":`...)
		buf = num(buf, a.After)
		buf = append(buf, `,"pct":`...)
		buf = num(buf, math.Round(a.Pct*10)/10)
		buf = append(buf, `,"conf":`...)
		buf = num(buf, math.Round(a.Confidence*1000)/1000)
		if a.Drift {
			// A drift: its first commit off the old level is sha, its
			// change per 100 commits, and whether it still moves, or
			// where it stopped (end: its first commit at the new level).
			buf = append(buf, `,"drift":true,"per100":`...)
			buf = num(buf, math.Round(a.PerHundred*10)/10)
			if a.Moving {
				buf = append(buf, `,"moving":true`...)
			} else if a.DriftEnd != "" {
				buf = append(buf, `,"end":`...)
				buf = append(buf, jstr(a.DriftEnd)...)
			}
		}
		buf = append(buf, '}')
	}
	return append(buf, ']')
}

// placeAlerts sets each alert's commit index on the site's commits.
func placeAlerts(alerts map[alertKey][]openAlert, commits []gate.Commit) {
	if len(alerts) == 0 {
		return
	}
	at := make(map[string]int32, len(commits))
	for i, c := range commits {
		at[c.SHA] = int32(i)
	}
	for _, as := range alerts {
		for i := range as {
			if x, ok := at[as[i].FirstBad]; ok {
				as[i].At = x
			}
			as[i].EndAt = as[i].At
			if as[i].Drift {
				as[i].EndAt = int32(len(commits) - 1)
				if x, ok := at[as[i].DriftEnd]; ok && !as[i].Moving {
					as[i].EndAt = x
				}
			}
		}
	}
}

// outsideDrifts drops the change points that fall inside one of watch's
// open drifts (after its first commit off the old level, up to its end):
// the gate's segmentation reads a creep as a staircase of steps, which
// the chart would draw as dashed lines where watch reports one drift.
func outsideDrifts(cps []int32, open []openAlert) []int32 {
	out := cps[:0]
	for _, c := range cps {
		inside := false
		for _, a := range open {
			inside = inside || (a.Drift && a.At >= 0 && c > a.At && c <= a.EndAt)
		}
		if !inside {
			out = append(out, c)
		}
	}
	return out
}
