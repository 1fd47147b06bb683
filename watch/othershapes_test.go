package watch

import (
	"math"
	"math/rand/v2"
)

// otherCases are series of the kinds public change-point collections
// hold rather than benchmark histories (economics, demographics,
// epidemics, traffic, sensors), written from their descriptions, not from
// any collection's data: monthly seasons with trends, growth whose rate
// changes, weekly and daily cycles of counts, short series, well-log-like
// outliers. They check that what watch learned on benchmark shapes
// carries over; the truth is where the behaviour of the series changes.
// The last six (from the random walk with a crash on) were written after
// the method and measured before anything was changed for them.
var otherCases = []corpusCase{
	{"monthly: trend + season 12 + recession step", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 120 + r.IntN(240)
		at := n/3 + r.IntN(n/3)
		amp := 0.03 + 0.05*r.Float64()
		s := stepsAt([]int{at}, []float64{0.85})
		return levels(r, n, func(i int) float64 {
			return s(i) * (1 + 0.3*float64(i)/float64(n)) * (1 + amp*math.Sin(2*math.Pi*float64(i)/12))
		}, gauss(r, 0.01)), []int{at}
	}},
	{"monthly: trend + season 12, no change", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 120 + r.IntN(240)
		amp := 0.03 + 0.05*r.Float64()
		return levels(r, n, func(i int) float64 {
			return (1 + 0.3*float64(i)/float64(n)) * (1 + amp*math.Sin(2*math.Pi*float64(i)/12))
		}, gauss(r, 0.01)), nil
	}},
	{"yearly growth whose rate halves", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 50 + r.IntN(50)
		at := n/3 + r.IntN(n/3)
		g := 0.02 + 0.02*r.Float64()
		lv := 0.0
		x := make([]float64, n)
		for i := range x {
			if i >= at {
				lv += g / 4
			} else {
				lv += g
			}
			x[i] = 1e6 * math.Exp(lv+0.003*r.NormFloat64())
		}
		return x, []int{at}
	}},
	{"daily counts, weekly cycle, level jump", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 150 + r.IntN(150)
		at := n/4 + r.IntN(n/2)
		x := make([]float64, n)
		for i := range x {
			l := 60.0
			if i >= at {
				l = 100
			}
			l *= 1 + 0.3*math.Sin(2*math.Pi*float64(i)/7)
			x[i] = math.Round(l + math.Sqrt(l)*r.NormFloat64())
		}
		return x, []int{at}
	}},
	{"daily counts, weekly cycle, no change", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 150 + r.IntN(150)
		x := make([]float64, n)
		for i := range x {
			l := 60 * (1 + 0.3*math.Sin(2*math.Pi*float64(i)/7))
			x[i] = math.Round(l + math.Sqrt(l)*r.NormFloat64())
		}
		return x, nil
	}},
	{"hourly traffic, daily cycle, level drop", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 400 + r.IntN(200)
		at := n/4 + r.IntN(n/2)
		s := stepsAt([]int{at}, []float64{0.7})
		return levels(r, n, func(i int) float64 {
			return s(i) * (1 + 0.4*math.Sin(2*math.Pi*float64(i)/24))
		}, gauss(r, 0.05)), []int{at}
	}},
	{"short n=30-50, two large steps", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 30 + r.IntN(21)
		at := []int{n/3 + r.IntN(3), 2*n/3 + r.IntN(3)}
		return levels(r, n, stepsAt(at, []float64{1.3, 0.8}), gauss(r, 0.03)), at
	}},
	{"flat, then rising (slope change)", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 150 + r.IntN(100)
		at := n/3 + r.IntN(n/3)
		return levels(r, n, func(i int) float64 {
			if i < at {
				return 1
			}
			return 1 + 0.004*float64(i-at)
		}, gauss(r, 0.01)), []int{at}
	}},
	{"sensor: piecewise levels with outliers", 6, func(r *rand.Rand) ([]float64, []int) {
		n := 600 + r.IntN(400)
		k := 4 + r.IntN(4)
		at := make([]int, 0, k)
		for p := 40 + r.IntN(60); p < n-40 && len(at) < k; p += 60 + r.IntN(120) {
			at = append(at, p)
		}
		f := make([]float64, len(at))
		for i := range f {
			f[i] = math.Exp((0.05 + 0.1*r.Float64()) * float64(1-2*r.IntN(2)))
		}
		x := levels(r, n, stepsAt(at, f), gauss(r, 0.01))
		for j := 0; j < n/50; j++ {
			x[r.IntN(n)] *= 1.5 + r.Float64()
		}
		return x, at
	}},
	{"AR(1) rho 0.5, two steps of 8 noise units", 6, func(r *rand.Rand) ([]float64, []int) {
		at := []int{80 + r.IntN(40), 200 + r.IntN(40)}
		e := 0.0
		return levels(r, 300, stepsAt(at, []float64{1.08, 0.93}), func() float64 {
			e = 0.5*e + 0.01*r.NormFloat64()
			return e
		}), at
	}},
	{"smooth wander (integrated AR), no change", 6, func(r *rand.Rand) ([]float64, []int) {
		v, w := 0.0, 0.0
		return levels(r, 300, func(int) float64 { return 1 }, func() float64 {
			v = 0.9*v + 0.002*r.NormFloat64()
			w += v
			return w + 0.005*r.NormFloat64()
		}), nil
	}},
	{"step with variance change at once", 6, func(r *rand.Rand) ([]float64, []int) {
		at := 60 + r.IntN(180)
		x := make([]float64, 300)
		for i := range x {
			l, s := 10.0, 1.0
			if i >= at {
				l, s = 16, 2.5
			}
			x[i] = l + s*r.NormFloat64()
		}
		return x, []int{at}
	}},
	{"small step 3% (8 noise units) under the 5% default", 6, func(r *rand.Rand) ([]float64, []int) {
		at := 50 + r.IntN(150)
		return levels(r, 250, stepsAt([]int{at}, []float64{1.03}), gauss(r, 0.004)), []int{at}
	}},
	{"price random walk with a crash", 8, func(r *rand.Rand) ([]float64, []int) {
		n := 300 + r.IntN(400)
		at := n/4 + r.IntN(n/2)
		w := 0.0
		x := make([]float64, n)
		for i := range x {
			w += 0.015 * r.NormFloat64()
			if i == at {
				w -= 0.35
			}
			x[i] = 100 * math.Exp(w)
		}
		return x, []int{at}
	}},
	{"price random walk, no change", 8, func(r *rand.Rand) ([]float64, []int) {
		n := 300 + r.IntN(400)
		w := 0.0
		x := make([]float64, n)
		for i := range x {
			w += 0.015 * r.NormFloat64()
			x[i] = 100 * math.Exp(w)
		}
		return x, nil
	}},
	{"monthly passengers: growth, season, drop", 8, func(r *rand.Rand) ([]float64, []int) {
		n := 144 + r.IntN(100)
		at := n/3 + r.IntN(n/3)
		x := make([]float64, n)
		for i := range x {
			l := math.Exp(0.006*float64(i)) * (1 + 0.15*math.Sin(2*math.Pi*float64(i)/12))
			if i >= at {
				l *= 0.75
			}
			x[i] = 1000 * l * math.Exp(0.02*r.NormFloat64())
		}
		return x, []int{at}
	}},
	{"nile-like: n=100, -20% at 28, 12% noise", 8, func(r *rand.Rand) ([]float64, []int) {
		x := make([]float64, 100)
		for i := range x {
			l := 1100.0
			if i >= 28 {
				l = 850
			}
			x[i] = l + 130*r.NormFloat64()
		}
		return x, []int{28}
	}},
	{"epidemic bursts, no level change", 8, func(r *rand.Rand) ([]float64, []int) {
		n := 400
		x := make([]float64, n)
		for i := range x {
			l := 20.0
			ph := math.Mod(float64(i), 52)
			if ph < 8 {
				l += 200 * math.Sin(math.Pi*ph/8)
			}
			x[i] = math.Round(l + math.Sqrt(l)*r.NormFloat64())
			if x[i] < 0 {
				x[i] = 0
			}
		}
		return x, nil
	}},
	{"quality control: 3 shifts of 1.5-3 sigma", 8, func(r *rand.Rand) ([]float64, []int) {
		at := []int{100 + r.IntN(50), 250 + r.IntN(50), 400 + r.IntN(50)}
		x := make([]float64, 500)
		for i := range x {
			l := 0.0
			for k, a := range at {
				if i >= a {
					l += []float64{2, -3, 1.5}[k]
				}
			}
			x[i] = l + r.NormFloat64()
		}
		return x, at
	}},
}

// otherCorpus is the other shapes' series, the same on every run.
func otherCorpus() []labelled { return generate(otherCases, 7000, 91) }
