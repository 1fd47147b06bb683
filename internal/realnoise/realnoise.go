// Package realnoise reads the real benchmark histories of
// ../shared/realnoise (public CI results, one series a file, with the
// indices of their real level shifts) for the quality experiments of gate,
// runner, watch and bisect, and holds what those experiments share: the
// step-free stretches, the head positions in them, the regime of a series
// and a change made "worse" in its direction. It is test support: nothing
// of perfgate's runs on it, and the folder is never copied into the
// repository.
package realnoise

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Series is one history, oldest first.
type Series struct {
	ID        string    `json:"-"` // the file name without .json
	Source    string    `json:"-"` // the part of ID before "--": mjwarp, django, ...
	Direction string    `json:"direction"`
	Values    []float64 `json:"values"`
	Steps     []int     `json:"steps"` // where a real level shift starts
	Noise     struct {
		PointSigmaPct float64 `json:"point_sigma_pct"`   // one run's noise, percent
		OutliersGT4   float64 `json:"outliers_gt4sigma"` // share of points four noise scales out
	} `json:"noise"`
}

// Dir returns the first of the folders that exists (relative to a test's
// package: "../../shared/realnoise", then "../shared/realnoise"); "" when
// none does.
func Dir() string {
	for _, d := range []string{"../../shared/realnoise", "../shared/realnoise"} {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	return ""
}

// Load reads dir/series/*.json in name order.
func Load(dir string) ([]Series, error) {
	files, err := filepath.Glob(filepath.Join(dir, "series", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no series in %s", dir)
	}
	sort.Strings(files)
	var out []Series
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s Series
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		if s.Direction != "lower" && s.Direction != "higher" {
			return nil, fmt.Errorf("%s: direction %q; want lower or higher", f, s.Direction)
		}
		s.ID = strings.TrimSuffix(filepath.Base(f), ".json")
		s.Source, _, _ = strings.Cut(s.ID, "--")
		out = append(out, s)
	}
	return out, nil
}

// TwoLevelShare: a series with at least this share of its points more than
// four noise scales out (django's runners, 20-33% of results 15-40% slow for
// blocks of commits; three GPU step timings) is two-level, else one-level.
const TwoLevelShare = 0.15

// Regime is "two-level" or "one-level" (TwoLevelShare).
func (s Series) Regime() string {
	if s.Noise.OutliersGT4 >= TwoLevelShare {
		return "two-level"
	}
	return "one-level"
}

// Stretches returns the step-free [start, end) ranges of the series.
func (s Series) Stretches() [][2]int {
	cuts := append([]int{0}, s.Steps...)
	cuts = append(cuts, len(s.Values))
	var out [][2]int
	for i := 0; i+1 < len(cuts); i++ {
		if cuts[i+1] > cuts[i] {
			out = append(out, [2]int{cuts[i], cuts[i+1]})
		}
	}
	return out
}

// StretchStart is the first index of k's step-free stretch.
func (s Series) StretchStart(k int) int {
	start := 0
	for _, st := range s.Steps {
		if st <= k {
			start = st
		}
	}
	return start
}

// Worse makes v worse by frac in the series' direction.
func (s Series) Worse(v, frac float64) float64 {
	if s.Direction == "higher" {
		return v / (1 + frac)
	}
	return v * (1 + frac)
}

// Positions picks about n evenly spaced positions in [lo, hi).
func Positions(lo, hi, n int) []int {
	if hi <= lo {
		return nil
	}
	var out []int
	step := math.Max(1, float64(hi-lo)/float64(n))
	for x := float64(lo); int(x) < hi; x += step {
		if k := int(x); len(out) == 0 || out[len(out)-1] != k {
			out = append(out, k)
		}
	}
	return out
}

// ForTest loads the series for a test, which it skips when the folder is
// absent (it is never copied into the repository) and fails on a bad one.
func ForTest(t testing.TB) []Series {
	t.Helper()
	dir := Dir()
	if dir == "" {
		t.Skip("../shared/realnoise is absent")
	}
	series, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return series
}
