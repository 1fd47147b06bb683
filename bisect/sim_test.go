package bisect

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// simulation is a range of n commits whose metric steps from 100 to
// 100*exp(step*sigma) at commit culprit, with Gaussian noise of relative
// standard deviation sigma on every run (on the log scale), untestable
// commits, and optionally wild runs: with probability outliers a run is
// off by +-30%.
type simulation struct {
	n, culprit int
	sigma      float64
	step       float64 // in units of sigma; negative is a drop
	skip       map[int]bool
	outliers   float64
	// noise draws one run's deviation from its level on the log scale in
	// place of the Gaussian of standard deviation sigma (nil: Gaussian).
	noise func(r *rand.Rand) float64
	// known are values stored before the search (not counted as runs).
	known map[int][]float64
	rng   *rand.Rand
	runs  int
}

func newSimulation(n, culprit int, sigma, step float64, seed uint64) *simulation {
	return &simulation{n: n, culprit: culprit, sigma: sigma, step: step, rng: rand.New(rand.NewPCG(seed, uint64(n)))}
}

// randomCulprit is a simulation with the step at a commit drawn from the
// seed, as the accuracy trials use.
func randomCulprit(n int, sigma, step float64, seed uint64) *simulation {
	sm := newSimulation(n, 0, sigma, step, seed)
	sm.culprit = 1 + sm.rng.IntN(n)
	return sm
}

// tally counts the outcomes of accuracy trials: right (the named or best
// guessed commit is the culprit), found (confidence reached) and wrong
// (found, but not the culprit).
type tally struct{ trials, right, found, wrong, runs int }

// trial runs one Search over sm and counts its outcome.
func (ty *tally) trial(tb testing.TB, sm *simulation, opts Options) *Result {
	tb.Helper()
	res, err := Search(context.Background(), sm.n, sm.known, sm, opts)
	if err != nil {
		tb.Fatal(err)
	}
	ty.trials++
	ty.runs += res.Runs
	if res.Culprit == sm.culprit {
		ty.right++
	}
	if res.Verdict == Found {
		ty.found++
		if res.Culprit != sm.culprit {
			ty.wrong++
		}
	}
	return res
}

func (sm *simulation) value(i int) float64 {
	level := math.Log(100)
	if i >= sm.culprit {
		level += sm.step * sm.sigma
	}
	var v float64
	if sm.noise != nil {
		v = level + sm.noise(sm.rng)
	} else {
		v = level + sm.sigma*sm.rng.NormFloat64()
	}
	if sm.outliers > 0 && sm.rng.Float64() < sm.outliers {
		v += 0.3 * float64(1-2*sm.rng.IntN(2))
	}
	return math.Exp(v)
}

func (sm *simulation) Measure(_ context.Context, i int) ([]float64, error) {
	sm.runs++
	if sm.skip[i] {
		return nil, &SkipError{Reason: "exit code 125"}
	}
	return []float64{sm.value(i)}, nil
}

// classic is git bisect with one run per step: each end once, then every
// midpoint once, judged by the nearer of the two end values; a skipped
// midpoint moves to its next testable neighbour, as git bisect does.
func (sm *simulation) classic() (culprit, runs int) { return sm.medianBisect(1) }

// medianBisect is git bisect with the median of perStep runs a step: each
// end and every midpoint is run perStep times and its median judged by the
// nearer of the ends' medians.
func (sm *simulation) medianBisect(perStep int) (culprit, runs int) {
	at := func(i int) float64 {
		vs := make([]float64, perStep)
		for j := range vs {
			vs[j] = sm.value(i)
		}
		runs += perStep
		sort.Float64s(vs)
		return vs[perStep/2]
	}
	g, b := at(0), at(sm.n)
	lo, hi := 0, sm.n
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		for sm.skip[mid] && mid+1 < hi {
			mid++
		}
		if sm.skip[mid] {
			break
		}
		v := at(mid)
		if math.Abs(math.Log(v/b)) < math.Abs(math.Log(v/g)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, runs
}
