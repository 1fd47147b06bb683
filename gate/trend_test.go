package gate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestReadTrend(t *testing.T) {
	at := func(i int) []Sample {
		if i%2 == 1 {
			return nil // every other commit is unmeasured
		}
		out := []Sample{
			{Benchmark: "serving", Labels: map[string]string{"request_rate": "1"}, Metrics: map[string]float64{"mean_ttft_ms": 100 + float64(i), "completed": 1000, "failed": 0}},
			{Benchmark: "serving", Labels: map[string]string{"request_rate": "8"}, Metrics: map[string]float64{"mean_ttft_ms": 400, "completed": 1000, "failed": 0}},
		}
		if i == 4 {
			out[0].Metrics["failed"], out[0].Metrics["completed"] = 600, 400
		}
		return out
	}
	w := newWorld(10, at, nil)
	dirty := Sample{Commit: w.main[8], Benchmark: "serving", Labels: map[string]string{"request_rate": "1"}, Metrics: map[string]float64{"mean_ttft_ms": 9999}, Dirty: true}
	w.repo.samples[w.main[8]] = append(w.repo.samples[w.main[8]], dirty)

	tr, err := ReadTrend(context.Background(), w.repo, w.repo, TrendOptions{From: w.tip, Ref: "main", Benchmark: "serving", Metric: "Mean TTFT (ms)", Limit: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Series) != 2 || tr.Metric != "mean_ttft_ms" || tr.Direction != "lower" {
		t.Fatalf("%d series of %s (%s)", len(tr.Series), tr.Metric, tr.Direction)
	}
	pts := tr.Series[0].Points
	if len(pts) != 4 || pts[0].Commit != w.main[2] || pts[3].Commit != w.main[8] {
		t.Fatalf("points %+v; want main 2, 4, 6, 8 oldest first", pts)
	}
	if pts[3].Value != 108 {
		t.Errorf("the dirty run leaked in: %v", pts[3].Value)
	}
	if pts[1].Invalid == "" || pts[1].Change != nil {
		t.Errorf("invalid point %+v: want a reason and no change", pts[1])
	}
	if pts[2].Change == nil || *pts[2].Change < 3.88 || *pts[2].Change > 3.93 {
		t.Errorf("main 6 change %v, want +3.9%% against main 2 (main 4 is invalid)", pts[2].Change)
	}
	var b bytes.Buffer
	if err := tr.WriteText(&b, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "▁") || !strings.Contains(b.String(), "invalid: 600 of 1000 requests failed") {
		t.Errorf("text lacks the sparkline or the invalid reason:\n%s", b.String())
	}

	// Label filter.
	tr, err = ReadTrend(context.Background(), w.repo, w.repo, TrendOptions{From: w.tip, Benchmark: "serving", Metric: "mean_ttft_ms", Labels: map[string]string{"request_rate": "8"}})
	if err != nil || len(tr.Series) != 1 || tr.Series[0].Points[0].Value != 400 {
		t.Errorf("filtered trend %+v, %v", tr, err)
	}

	errs := []struct {
		opts TrendOptions
		want string
	}{
		{TrendOptions{Benchmark: "servng", Metric: "mean_ttft_ms"}, `no results of benchmark "servng" in the last 13 first-parent commits of main; did you mean "serving"?`},
		{TrendOptions{Benchmark: "serving", Metric: "mean_tpot_ms"}, `benchmark "serving" has no metric "mean_tpot_ms"`},
		{TrendOptions{Benchmark: "serving", Metric: "mean_ttfx_ms"}, `did you mean "mean_ttft_ms"?`},
		{TrendOptions{Benchmark: "serving", Metric: "mean_ttft_ms", Labels: map[string]string{"request_rate": "3"}}, `no series of benchmark "serving" has the labels request_rate=3`},
	}
	for _, e := range errs {
		e.opts.From, e.opts.Ref = w.tip, "main"
		_, err := ReadTrend(context.Background(), w.repo, w.repo, e.opts)
		// A name the caller typed that the history does not hold.
		if err == nil || !errors.Is(err, ErrNoSuchSeries) || errors.Is(err, ErrNoResults) || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%+v: %v\nwant an ErrNoSuchSeries containing %s", e.opts, err, e.want)
		}
	}
}

func TestSparkline(t *testing.T) {
	if got := sparkline([]float64{1, 2, 3, 4, 5, 6, 7, 8}); got != "▁▂▃▄▅▆▇█" {
		t.Errorf("sparkline = %q", got)
	}
	if got := sparkline([]float64{5, 5}); got != "▁▁" {
		t.Errorf("flat sparkline = %q", got)
	}
}
