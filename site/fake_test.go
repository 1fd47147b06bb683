package site

import (
	"crypto/sha1"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/perfgate/perfgate/gate"
)

// fakeHistory is a gate.History in memory.
type fakeHistory map[string][]gate.Sample

func (f fakeHistory) Samples(commits []string) (map[string][]gate.Sample, error) {
	out := make(map[string][]gate.Sample, len(commits))
	for _, c := range commits {
		if s, ok := f[c]; ok {
			out[c] = s
		}
	}
	return out, nil
}

// shape of a generated history.
type shape struct {
	commits, benches, metrics, reps int
}

var knownMetrics = []string{"mean_ttft_ms", "output_throughput", "p99_ttft_ms", "mean_tpot_ms", "request_throughput"}

func metricName(k int) string {
	if k < len(knownMetrics) {
		return knownMetrics[k]
	}
	return fmt.Sprintf("custom_metric_%02d", k)
}

// genHistory makes a deterministic history: every benchmark measured at
// most commits (every 7th commit is skipped), reps runs each, a level
// shift of +30% in mean_ttft_ms of bench-0 at three quarters, and at the
// tip a regression of bench-0's mean_ttft_ms; bench-1 has two series (two
// hardware labels); some runs are invalid and one is dirty.
func genHistory(sh shape) ([]gate.Commit, fakeHistory) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commits := make([]gate.Commit, sh.commits)
	h := fakeHistory{}
	for i := range commits {
		sha := fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprint("commit ", i))))
		commits[i] = gate.Commit{SHA: sha, Subject: fmt.Sprintf("change %d: tune <scheduler> & batching", i), Time: t0.Add(time.Duration(i) * time.Hour)}
		if i%7 == 3 && i != sh.commits-1 {
			continue
		}
		for b := 0; b < sh.benches; b++ {
			hws := []string{"H100"}
			if b == 1 {
				hws = append(hws, "910B")
			}
			for hi, hw := range hws {
				for r := 0; r < sh.reps; r++ {
					s := gate.Sample{
						Commit: sha, Benchmark: fmt.Sprintf("bench-%d", b),
						Labels:  map[string]string{"model": "qwen2.5-7b", "hardware": hw, "run_id": fmt.Sprint(r)},
						Metrics: map[string]float64{}, Time: commits[i].Time, Testbed: "ci-" + hw,
					}
					for k := 0; k < sh.metrics; k++ {
						level := 100 * float64(k+1) * float64(hi+1)
						if b == 0 && k == 0 && i >= sh.commits*3/4 {
							level *= 1.3
						}
						if b == 0 && k == 0 && i == sh.commits-1 {
							level *= 1.5
						}
						v := level * (1 + 0.01*rng.NormFloat64())
						s.Metrics[metricName(k)] = math.Round(v*1000) / 1000
					}
					if i%29 == 5 && r == 0 {
						s.Invalid = "514 of 1000 requests failed"
					}
					if i == 11 && r == 0 && b == 0 {
						s.Dirty = true
					}
					h[sha] = append(h[sha], s)
				}
			}
		}
	}
	return commits, h
}

// stepHistory is the new user's history: n commits of one serving
// benchmark, one run each with about 1% noise, whose mean TTFT steps up
// by pct percent back commits before the tip (throughput stays flat).
func stepHistory(n, back int, pct float64) ([]gate.Commit, fakeHistory) {
	rng := rand.New(rand.NewPCG(3, 4))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commits := make([]gate.Commit, n)
	h := fakeHistory{}
	for i := range commits {
		sha := fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprint("step commit ", i))))
		commits[i] = gate.Commit{SHA: sha, Subject: fmt.Sprintf("change %d", i), Time: t0.Add(time.Duration(i) * time.Hour)}
		ttft := 100.0
		if i >= n-back {
			ttft *= 1 + pct/100
		}
		h[sha] = []gate.Sample{{Commit: sha, Benchmark: "serving", Testbed: "ci", Time: commits[i].Time,
			Labels: map[string]string{"model": "qwen2.5-7b"},
			Metrics: map[string]float64{
				"mean_ttft_ms":      math.Round(ttft*(1+0.01*rng.NormFloat64())*1000) / 1000,
				"output_throughput": math.Round(300*(1+0.01*rng.NormFloat64())*1000) / 1000,
			}}}
	}
	return commits, h
}

// sweepHistory is a serving benchmark swept at 5 concurrencies on the
// last two of n commits (one run per load; the commits before have a
// single-load result of another benchmark): the newer commit serves 10%
// fewer requests per second, each with 20% more TTFT. A label and the
// subjects carry markup, to be shown as text.
func sweepHistory(n int) ([]gate.Commit, fakeHistory) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	commits := make([]gate.Commit, n)
	h := fakeHistory{}
	loads := []string{"1", "2", "4", "8", "16"}
	req := []float64{1.9, 3.7, 7, 11.5, 13}
	p99TTFT := []float64{60, 80, 120, 260, 900}
	meanTPOT := []float64{20, 22, 26, 34, 48}
	for i := range commits {
		sha := fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprint("sweep commit ", i))))
		commits[i] = gate.Commit{SHA: sha, Subject: fmt.Sprintf("change %d: <img src=x onerror=alert(1)> batching", i), Time: t0.Add(time.Duration(i) * time.Hour)}
		h[sha] = append(h[sha], gate.Sample{Commit: sha, Benchmark: "unit", Testbed: "ci", Time: commits[i].Time,
			Metrics: map[string]float64{"mean_ttft_ms": 10 + float64(i)}})
		if i < n-2 {
			continue
		}
		slower := 1.0
		if i == n-1 {
			slower = 1.1
		}
		for k, l := range loads {
			h[sha] = append(h[sha], gate.Sample{Commit: sha, Benchmark: "serving", Testbed: "ci", Time: commits[i].Time,
				Labels: map[string]string{"model": "qwen2.5-7b <b>", "max_concurrency": l},
				Metrics: map[string]float64{
					"request_throughput": math.Round(req[k]/slower*1000) / 1000,
					"output_throughput":  math.Round(req[k]/slower*128*1000) / 1000,
					"mean_ttft_ms":       math.Round(0.6*p99TTFT[k]*slower*slower*1000) / 1000,
					"p99_ttft_ms":        math.Round(p99TTFT[k]*slower*slower*1000) / 1000,
					"mean_tpot_ms":       meanTPOT[k],
					"p99_tpot_ms":        math.Round(1.3*meanTPOT[k]*1000) / 1000,
				}})
		}
	}
	return commits, h
}

// sweepRules is an SLO of p99 TTFT 200 ms and p99 TPOT 50 ms.
func sweepRules() *gate.Config {
	cfg := gate.DefaultConfig()
	cfg.SLOs = []gate.SLO{{TTFTMs: 200, TPOTMs: 50}}
	return cfg
}
