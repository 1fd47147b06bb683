package gate

import (
	"context"
	"strings"
	"testing"
)

// Runs at the baseline commit far from the others there are named in the
// warnings (a forged or late run moves the baseline); runs that agree
// within the window's noise are not.
func TestCheckBaselineRunsDisagree(t *testing.T) {
	cases := []struct {
		name   string
		base   []float64 // runs at the baseline commit
		window bool      // earlier commits measured
		want   string    // in the warnings; "" for none
	}{
		{"one forged run of three", []float64{100, 101, 5000}, true, "run 00000002 5000 against the median 101 of its 3 runs"},
		{"a pair far apart without a window", []float64{100, 290}, false, "run 00000000 100, run 00000001 290"},
		{"runs within the noise", []float64{100, 103, 98}, true, ""},
		{"a pair within a factor of two, no window", []float64{100, 150}, false, ""},
		{"one run", []float64{5000}, true, ""},
		{"a zero run does not silence a forged one", []float64{100, 101, 0, 5000}, true, "run 00000003 5000 against"},
		{"a zero run is named", []float64{100, 101, 0}, true, "run 00000002 0 (not positive)"},
		{"every run zero", []float64{0, 0}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeRepo()
			parent := f.commit("", "root")
			if tc.window {
				for i := 0; i < 8; i++ {
					parent = f.commit(parent, "main")
					f.add(parent, "serving", nil, map[string]float64{"mean_ttft_ms": 100 + float64(i%3)})
				}
			}
			base := f.commit(parent, "base")
			for i, v := range tc.base {
				f.add(base, "serving", nil, map[string]float64{"mean_ttft_ms": v})
				f.samples[base][i].ID = strings.Repeat("0", 7) + string(rune('0'+i)) + strings.Repeat("a", 24)
			}
			head := f.commit(base, "pr")
			f.add(head, "serving", nil, map[string]float64{"mean_ttft_ms": 101})
			cfg := DefaultConfig()
			cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%")}
			rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: base, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			w := strings.Join(rep.Warnings, "\n")
			if has := strings.Contains(w, "runs at the baseline commit disagree"); has != (tc.want != "") {
				t.Fatalf("warnings %q: disagreement reported %v, want %v", rep.Warnings, has, tc.want != "")
			}
			if tc.want != "" && !strings.Contains(w, tc.want) {
				t.Errorf("warnings %q do not name %q", rep.Warnings, tc.want)
			}
		})
	}
}

// On real histories (../shared/realnoise), runs that belong together are
// not reported as disagreeing: three successive points of a step-free
// stretch stand for three runs at the baseline commit, after a window of
// single runs. The warning is a call to look at the history branch, so
// it must stay rare on honest data (measured: go test ./gate -run
// TestRealNoiseDisagreeRate -v).
func TestRealNoiseDisagreeRate(t *testing.T) {
	series := loadRealNoise(t)
	trials, warned := 0, 0
	for _, s := range series {
		for _, pos := range s.pick(perStretch, rnMode{3, 1}) {
			k, start := pos[0], pos[1]
			lo := max(start, k-3-20)
			repo := newFakeRepo()
			parent := repo.commit("", "root")
			for i := lo; i < k-3; i++ {
				parent = repo.commit(parent, "main")
				repo.add(parent, "bench", nil, map[string]float64{"value": s.Values[i]})
			}
			base := repo.commit(parent, "base")
			for i := k - 3; i < k; i++ {
				repo.add(base, "bench", nil, map[string]float64{"value": s.Values[i]})
			}
			head := repo.commit(base, "pr")
			repo.add(head, "bench", nil, map[string]float64{"value": s.Values[k]})
			rep, err := Check(context.Background(), repo, repo, CheckOptions{Head: head, Base: base, BaseRef: "main", Config: s.config(t)})
			if err != nil {
				t.Fatal(err)
			}
			trials++
			if strings.Contains(strings.Join(rep.Warnings, "\n"), "runs at the baseline commit disagree") {
				warned++
				if testing.Verbose() {
					t.Logf("%s at %d: %v | %v", s.ID, k, s.Values[k-3:k], s.Values[max(lo, k-8):k-3])
				}
			}
		}
	}
	rate := 100 * float64(warned) / float64(trials)
	t.Logf("baseline runs reported as disagreeing on honest real data: %d of %d trials (%.2f%%)", warned, trials, rate)
	if rate > 1 {
		t.Errorf("%.2f%% of honest baselines are reported as disagreeing; the ceiling is 1%%", rate)
	}
}

// Runs at the head commit are compared with each other as the baseline's
// are: a run written onto the history branch at the pull request's own
// commit is named (issue 34).
func TestCheckHeadRunsDisagree(t *testing.T) {
	f := newFakeRepo()
	parent := f.commit("", "root")
	for i := 0; i < 8; i++ {
		parent = f.commit(parent, "main")
		f.add(parent, "serving", nil, map[string]float64{"mean_ttft_ms": 100 + float64(i%3)})
	}
	base := f.commit(parent, "base")
	f.add(base, "serving", nil, map[string]float64{"mean_ttft_ms": 100})
	head := f.commit(base, "pr")
	for i, v := range []float64{150, 40, 41, 42} {
		f.add(head, "serving", nil, map[string]float64{"mean_ttft_ms": v})
		f.samples[head][i].ID = strings.Repeat("0", 7) + string(rune('0'+i)) + strings.Repeat("b", 24)
	}
	cfg := DefaultConfig()
	cfg.Rules = []Rule{mustRule(t, "mean_ttft_ms:5%")}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: base, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(w, "runs at the head commit disagree") || !strings.Contains(w, "run 00000000 150") {
		t.Errorf("warnings %q do not name the head run far from the others", rep.Warnings)
	}
	if strings.Contains(w, "runs at the baseline commit disagree") {
		t.Errorf("warnings %q name the baseline", rep.Warnings)
	}
}
