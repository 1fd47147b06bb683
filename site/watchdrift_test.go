package site

import (
	"context"
	"crypto/sha1"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/gate"
)

// creepHistory is n commits of serving's mean_ttft_ms, flat up to
// commit from, then 30% worse linearly over the rest (1% noise).
func creepHistory(n, from int) ([]gate.Commit, fakeHistory) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commits := make([]gate.Commit, n)
	h := fakeHistory{}
	for i := range commits {
		sha := fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprint("creep commit ", i))))
		commits[i] = gate.Commit{SHA: sha, Subject: fmt.Sprintf("change %d", i), Time: t0.Add(time.Duration(i) * time.Hour)}
		ttft := 100.0
		if i >= from {
			ttft *= 1 + 0.3*float64(i-from)/float64(n-from)
		}
		h[sha] = []gate.Sample{{Commit: sha, Benchmark: "serving", Testbed: "ci", Time: commits[i].Time,
			Labels:  map[string]string{"model": "qwen2.5-7b"},
			Metrics: map[string]float64{"mean_ttft_ms": math.Round(ttft*(1+0.01*rng.NormFloat64())*1000) / 1000}}}
	}
	return commits, h
}

// Issue 38: the site shows watch's creep as a drift (its rate per 100
// commits, still moving), flagged; accepted at the commit where it began
// to move, it is not flagged.
func TestGenerateShowsWatchDrift(t *testing.T) {
	const n, from = 300, 100
	commits, h := creepHistory(n, from)
	dir := t.TempDir()
	sum, err := Generate(context.Background(), commits, h, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(filepath.Join(dir, "data", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(string(index), "\n") {
		if strings.Contains(l, `"m":"mean_ttft_ms"`) {
			row = l
		}
	}
	if sum.OpenRegressions != 1 || !strings.Contains(row, `"flag":"regression"`) || !strings.Contains(row, `"drift":true,"per100":`) || !strings.Contains(row, `"moving":true`) {
		t.Fatalf("open %d; row %s\nwant flagged, carrying a drift still moving", sum.OpenRegressions, row)
	}
	// The drift's first commit, where the level began to move.
	i := strings.Index(row, `"sha":"`)
	sha := row[i+7 : i+47]
	pos := -1
	for k, c := range commits {
		if c.SHA == sha {
			pos = k
		}
	}
	if pos < from-20 || pos > from+20 {
		t.Errorf("drift's first commit at %d, want within 20 of %d", pos, from)
	}
	acc := []gate.Acceptance{{Commit: sha, Benchmark: "serving", Metric: "mean_ttft_ms", By: "ana", Reason: "growing workload"}}
	sum, err = Generate(context.Background(), commits, h, t.TempDir(), Options{Accepted: acc})
	if err != nil {
		t.Fatal(err)
	}
	if sum.OpenRegressions != 0 {
		t.Errorf("accepted drift: open regressions %d, want 0", sum.OpenRegressions)
	}
}

// A creep that stopped carries its end, the first commit at its new
// level, so the site says "stopped at abc1234" as watch's report does,
// not a bare "stopped"; one still moving carries none.
func TestGenerateDriftStoppedAt(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop int // the commit from which the level holds; 0: still moving
	}{
		{"stopped", 250},
		{"still moving", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			commits, h := creepHistory(400, 100)
			if tc.stop > 0 {
				rng := rand.New(rand.NewPCG(7, 8))
				for _, c := range commits[tc.stop:] {
					h[c.SHA][0].Metrics["mean_ttft_ms"] = 100 * (1 + 0.3*float64(tc.stop-100)/300) * (1 + 0.01*rng.NormFloat64())
				}
			}
			dir := t.TempDir()
			if _, err := Generate(context.Background(), commits, h, dir, Options{}); err != nil {
				t.Fatal(err)
			}
			index, err := os.ReadFile(filepath.Join(dir, "data", "index.js"))
			if err != nil {
				t.Fatal(err)
			}
			row := ""
			for _, l := range strings.Split(string(index), "\n") {
				if strings.Contains(l, `"m":"mean_ttft_ms"`) {
					row = l
				}
			}
			if !strings.Contains(row, `"drift":true`) {
				t.Fatalf("row %s\nwant watch's drift", row)
			}
			i := strings.Index(row, `"end":"`)
			switch {
			case tc.stop == 0 && i >= 0:
				t.Errorf("a drift still moving carries an end: %s", row)
			case tc.stop > 0 && i < 0:
				t.Errorf("a stopped drift carries no end: %s", row)
			case tc.stop > 0:
				pos := -1
				for k, c := range commits {
					if c.SHA == row[i+7:i+47] {
						pos = k
					}
				}
				if pos < tc.stop-20 || pos > tc.stop+20 {
					t.Errorf("drift's end at commit %d, want within 20 of %d", pos, tc.stop)
				}
			}
		})
	}
}

// A chart draws no change point inside watch's open drift: the gate's
// segmentation reads a creep as a staircase of steps, dashed lines that
// contradicted watch's one drift. A step elsewhere keeps its line.
func TestGenerateNoChangePointsInsideDrift(t *testing.T) {
	commits, h := creepHistory(300, 100)
	dir := t.TempDir()
	if _, err := Generate(context.Background(), commits, h, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "data", "s", "serving", "mean_ttft_ms.js"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), `"cps":[`)
	if i < 0 {
		t.Fatalf("no cps in %s", data)
	}
	cps := string(data[i+7:])
	cps = cps[:strings.Index(cps, "]")]
	for _, c := range strings.Split(cps, ",") {
		var x int
		if _, err := fmt.Sscan(c, &x); err == nil && x > 90 {
			t.Errorf("change point at commit %d inside watch's drift from about 100 on (cps %s)", x, cps)
		}
	}
}
