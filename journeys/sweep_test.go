package journeys

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sweepServer is a stand-in engine with a known capacity: slots requests
// decode at once, a request taking prefill + tokens x tpot seconds;
// closed-loop clients beyond the slots queue.
type sweepServer struct {
	slots          int
	prefill, tpot  float64 // s
	tokens, prompt int
}

// result is what vllm bench serve --save-result --save-detailed writes
// for max concurrency c and n prompts, with each request's latencies;
// rng jitters them by 1.5% as runs on one machine do.
func (s sweepServer) result(c, n int, rng *rand.Rand) []byte {
	service := s.prefill + float64(s.tokens)*s.tpot
	wait := max(0, float64(c)/float64(s.slots)-1) * service
	jit := func() float64 { return 1 + 0.015*(2*rng.Float64()-1) }
	ttfts := make([]float64, n)
	itls := make([][]float64, n)
	for i := range ttfts {
		ttfts[i] = (wait + s.prefill) * jit()
		itls[i] = make([]float64, s.tokens-1)
		for k := range itls[i] {
			itls[i][k] = s.tpot * jit()
		}
	}
	duration := float64(n) / (float64(min(c, s.slots)) / service) * jit()
	tpots := make([]float64, n)
	e2els := make([]float64, n)
	for i := range ttfts {
		sum := 0.0
		for _, x := range itls[i] {
			sum += x
		}
		tpots[i], e2els[i] = sum/float64(len(itls[i])), ttfts[i]+sum
	}
	doc := map[string]any{
		"backend": "vllm", "model_id": "Qwen/Qwen2.5-1.5B-Instruct", "num_prompts": n, "max_concurrency": c,
		"duration": duration, "completed": n, "total_input_tokens": n * s.prompt, "total_output_tokens": n * s.tokens,
		"request_throughput": float64(n) / duration, "output_throughput": float64(n*s.tokens) / duration,
		"input_lens": repeat(s.prompt, n), "output_lens": repeat(s.tokens, n), "errors": repeat("", n),
		"ttfts": ttfts, "itls": itls,
	}
	// The summary vLLM prints and saves beside the arrays (with
	// --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 99).
	for name, xs := range map[string][]float64{"ttft": ttfts, "tpot": tpots, "e2el": e2els} {
		sorted := slices.Sorted(slices.Values(xs))
		doc["mean_"+name+"_ms"] = 1000 * mean(sorted)
		doc["p99_"+name+"_ms"] = 1000 * sorted[int(math.Ceil(0.99*float64(n)))-1]
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return b
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

var sweepLoads = []int{4, 8, 16, 32, 64}

const sweepRules = `slo:
  ttft_ms: 1000
  tpot_ms: 50
  e2el_ms: 10000
rules:
  - metric: capacity
    max_regression: 5%
`

// TestJourneyServingSweep: the README's "Serving: load curves and SLOs"
// on a laptop: each commit swept at five concurrencies, each point's
// --save-result file ingested with its load label, an SLO and a capacity
// rule in the rules file. A branch whose engine decodes 12% slower loses
// about 10% of its capacity at the SLO and fails the capacity rule; an
// unchanged branch passes, and its curve matches the baseline's (past
// saturation too, where several loads share one throughput).
func TestJourneyServingSweep(t *testing.T) {
	m := laptop(t)
	repo := m.repo()
	results := t.TempDir()
	rng := rand.New(rand.NewPCG(35, 33))
	ref := sweepServer{slots: 16, prefill: 0.05, tpot: 0.02, tokens: 64, prompt: 256}
	sweep := func(name string, s sweepServer) {
		for _, c := range sweepLoads {
			f := writeFile(t, filepath.Join(results, name, fmt.Sprintf("c%d.json", c)), string(s.result(c, 10*c, rng)))
			m.must(repo, "ingest", "--name", "serving-qwen", "--label", "max_concurrency="+strconv.Itoa(c), f)
		}
	}
	m.commit(repo, "rules", map[string]string{".perfgate.yml": sweepRules})
	sweep("main0", ref)
	for i := 1; i < 5; i++ {
		m.commit(repo, "engine change", map[string]string{"engine.txt": strings.Repeat("x", i)})
		sweep(fmt.Sprint("main", i), ref)
	}
	slow := ref
	slow.tpot *= 1.12
	for _, tt := range []struct {
		name  string
		s     sweepServer
		code  int
		wants []string
	}{
		{"capacity -10%", slow, 1, []string{"Capacity at SLO (req/s)", "is dominated by the baseline's"}},
		{"unchanged", ref, 0, []string{"Capacity at SLO (req/s)", "head's matches the baseline's"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m.git(repo, "checkout", "-q", "-b", "pr-"+strings.Fields(tt.name)[0], "main")
			m.commit(repo, "the change", map[string]string{"engine.txt": tt.name})
			sweep("pr-"+tt.name, tt.s)
			r := m.perfgate(repo, "check")
			if r.code != tt.code || (tt.code == 1) != failsOn(r.stdout, "Capacity at SLO") {
				t.Errorf("check: want exit %d with capacity failing=%v; got %s", tt.code, tt.code == 1, r)
			}
			for _, want := range tt.wants {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the report lacks %q:\n%s", want, r.stdout)
				}
			}
		})
	}
}
