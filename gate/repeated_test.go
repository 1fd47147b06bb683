package gate

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sessionsCheck checks head's runs against a main whose every commit has
// five runs; slow(i, r) says whether run r of main commit i is in a slow
// mode 25% off.
func sessionsCheck(t *testing.T, head []float64, slow func(i, r int) bool) CheckResult {
	t.Helper()
	rng := rand.New(rand.NewPCG(38, 2))
	repo := newFakeRepo()
	parent := repo.commit("", "root")
	for i := range 20 {
		parent = repo.commit(parent, "main")
		for r := range 5 {
			v := 100 * math.Exp(0.02*rng.NormFloat64())
			if slow(i, r) {
				v *= 1.25
			}
			repo.add(parent, "bench", nil, map[string]float64{"mean_ttft_ms": v})
		}
	}
	h := repo.commit(parent, "pr")
	for _, v := range head {
		repo.add(h, "bench", nil, map[string]float64{"mean_ttft_ms": v})
	}
	cfg := DefaultConfig()
	rule, err := ParseRuleFlag("mean_ttft_ms:5%")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Rules = []Rule{rule}
	rep, err := Check(context.Background(), repo, repo, CheckOptions{Head: h, Base: parent, BaseRef: "main", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) != 1 {
		t.Fatalf("%d checks", len(rep.Checks))
	}
	return rep.Checks[0]
}

// TestCheckRepeatedWindow: with five runs on every main commit, head's
// five runs are judged against the level of main's sessions (the noise
// band), not against the baseline commit's five runs alone; and when
// main's single runs show a slow mode that its commits' medians hide, a
// head whose runs mostly fell in it is inconclusive, not a regression.
func TestCheckRepeatedWindow(t *testing.T) {
	never := func(int, int) bool { return false }
	cr := sessionsCheck(t, []float64{111, 109, 110, 112, 110}, never)
	if cr.Method != MethodNoiseBand || cr.Verdict != Fail {
		t.Errorf("10%% regression on a clean main of five runs a commit: method %q verdict %s (%s), want %s fail", cr.Method, cr.Verdict, cr.Reason, MethodNoiseBand)
	}
	// Two runs in five of every third commit 25% slow: the medians stay
	// at the level, the runs do not.
	hidden := func(i, r int) bool { return i%3 == 0 && r < 2 }
	cr = sessionsCheck(t, []float64{125, 124, 126, 100, 101}, hidden)
	if cr.Verdict != Inconclusive || !strings.Contains(cr.Reason, "single results") {
		t.Errorf("three of five head runs in main's hidden slow mode: verdict %s (%s), want inconclusive naming main's slow runs", cr.Verdict, cr.Reason)
	}
	cr = sessionsCheck(t, []float64{125, 124, 126, 100, 101}, never)
	if cr.Verdict != Fail {
		t.Errorf("the same head on a main without a slow mode: verdict %s (%s), want fail", cr.Verdict, cr.Reason)
	}
}
