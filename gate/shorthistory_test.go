package gate

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// seedMeanTTFT reads the first Mean TTFT of each section of the user's
// vllm-ascend optimisation log (the repository's copy, the demo's input):
// 945.18 before the optimisations, then 817-840.
func seedMeanTTFT(t *testing.T) []float64 {
	b, err := os.ReadFile("../testdata/vllm-ascend-multimodal-optimizations.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, sec := range regexp.MustCompile(`(?m)^## `).Split(string(b), -1)[1:] {
		m := regexp.MustCompile(`Mean TTFT \(ms\):\s+([0-9.]+)`).FindStringSubmatch(sec)
		if m == nil {
			t.Fatalf("a section of the seed has no Mean TTFT")
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// oneRunCheck checks one run of mean_ttft_ms at head against a base branch
// whose commits measured window (oldest first), under rule.
func oneRunCheck(t *testing.T, window []float64, head float64, rule string) CheckResult {
	t.Helper()
	repo := newFakeRepo()
	parent := repo.commit("", "root")
	for _, v := range window {
		parent = repo.commit(parent, "main")
		repo.add(parent, "serving", nil, map[string]float64{"mean_ttft_ms": v})
	}
	h := repo.commit(parent, "pr")
	repo.add(h, "serving", nil, map[string]float64{"mean_ttft_ms": head})
	cfg := DefaultConfig()
	r, err := ParseRuleFlag(rule)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Rules = []Rule{r}
	rep, err := Check(context.Background(), repo, repo, CheckOptions{Head: h, Base: parent, BaseRef: "main", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Checks[0]
}

// A short history: five measured commits, the oldest before an
// optimisation. A level at the start of the window is a level, not a
// tail event, so a +9.2% head fails a 3% rule; the same values with the
// high one in the middle are an outlier main shows, and one run this far
// off stays inconclusive.
func TestCheckShortHistoryLeadingLevel(t *testing.T) {
	seed := seedMeanTTFT(t)
	if len(seed) != 5 || seed[0] != 945.18 {
		t.Fatalf("seed Mean TTFT = %v, want five sections starting at 945.18", seed)
	}
	spike := []float64{seed[1], seed[2], seed[0], seed[3], seed[4]}
	for _, tc := range []struct {
		name    string
		history []float64
		head    float64
		want    Verdict
	}{
		{"the seed: a level before the optimisation, then a +9.2% head", seed, 912, Fail},
		{"a lone +13% spike in the middle still protects one run", spike, 912, Inconclusive},
		{"the seed, head unchanged", seed, 831, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := oneRunCheck(t, tc.history, tc.head, "mean_ttft_ms:3%")
			t.Log(c.Reason)
			if c.Verdict != tc.want {
				t.Errorf("verdict %s (%s), want %s", c.Verdict, c.Reason, tc.want)
			}
		})
	}
}

// A window with a fast mode (some runs land 20% below main's usual level):
// one run 12% better than the usual level may be a fast-mode run made 10%
// worse, so it is inconclusive, not a pass; a run at either level passes.
func TestCheckFastMode(t *testing.T) {
	usual := []float64{100, 101, 99, 100.5, 80, 99.5, 100, 101, 80.5, 100, 99, 100.5, 100, 79.5, 99.5, 101, 100, 80, 99, 100}
	for _, tc := range []struct {
		head float64
		want Verdict
	}{
		{88, Inconclusive},
		{100.5, Pass},
		{80.2, Pass},
	} {
		c := oneRunCheck(t, usual, tc.head, "mean_ttft_ms:5%")
		if c.Verdict != tc.want && !(tc.want == Pass && c.Verdict == Improved) {
			t.Errorf("head %g: verdict %s (%s), want %s", tc.head, c.Verdict, c.Reason, tc.want)
		}
	}
}

// main dropped 20% six commits ago: a head back at the level before is
// either main's excursion ending or the PR undoing the change, which one
// run cannot tell, so it is inconclusive, not a fail; a head at the new
// level passes, and one well above both fails.
func TestCheckBackAtEarlierLevel(t *testing.T) {
	var window []float64
	for i := 0; i < 14; i++ {
		window = append(window, 100+float64(i%3)-1)
	}
	for i := 0; i < 6; i++ {
		window = append(window, 80+float64(i%3)-1)
	}
	for _, tc := range []struct {
		head float64
		want Verdict
	}{
		{100, Inconclusive},
		{80.5, Pass},
		{125, Fail},
	} {
		if c := oneRunCheck(t, window, tc.head, "mean_ttft_ms:5%"); c.Verdict != tc.want {
			t.Errorf("head %g: verdict %s (%s), want %s", tc.head, c.Verdict, c.Reason, tc.want)
		}
	}
}
