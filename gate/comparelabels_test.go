package gate

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestCompareLabels: two label values of one commit side by side (issue
// 26, item 15); the picking label leaves the identity, the others stay.
func TestCompareLabels(t *testing.T) {
	f := newFakeRepo()
	sha := f.commit("", "log")
	for _, s := range []struct {
		section, conc string
		ttft          float64
	}{{"Baseline", "16", 945.18}, {"Baseline", "64", 2000}, {"Merge rope", "16", 817.56}, {"Merge rope", "64", 1900}, {"Revert pad", "16", 900}} {
		f.add(sha, "serving", map[string]string{"section": s.section, "max_concurrency": s.conc}, map[string]float64{"mean_ttft_ms": s.ttft})
	}
	cmp, err := CompareLabels(context.Background(), f, CompareLabelsOptions{Commit: sha,
		A: LabelSide{"section", "Baseline"}, B: LabelSide{"section", "Merge rope"}})
	if err != nil {
		t.Fatal(err)
	}
	if cmp.ALabel != "section=Baseline" || cmp.BLabel != "section=Merge rope" || len(cmp.Rows) != 2 {
		t.Fatalf("%+v", cmp)
	}
	for _, r := range cmp.Rows {
		if _, ok := r.Labels["section"]; ok || r.A == nil || r.B == nil || r.Assessment != "better" {
			t.Errorf("row %+v", r)
		}
	}
	var b strings.Builder
	if err := cmp.WriteText(&b, false); err != nil || !strings.Contains(b.String(), "A  "+sha[:7]+" section=Baseline\nB  "+sha[:7]+" section=Merge rope") {
		t.Errorf("text %q, %v", b.String(), err)
	}

	_, err = CompareLabels(context.Background(), f, CompareLabelsOptions{Commit: sha,
		A: LabelSide{"section", "Baseline"}, B: LabelSide{"section", "Nope"}})
	if !errors.Is(err, ErrNoSuchSeries) || !strings.Contains(err.Error(), `"Baseline", "Merge rope", "Revert pad"`) {
		t.Errorf("unknown value: %v", err)
	}
	_, err = CompareLabels(context.Background(), f, CompareLabelsOptions{Commit: sha,
		A: LabelSide{"engine", "a"}, B: LabelSide{"engine", "b"}})
	if !errors.Is(err, ErrNoSuchSeries) || !strings.Contains(err.Error(), "none (no result has the label") {
		t.Errorf("unknown key: %v", err)
	}
	_, err = CompareLabels(context.Background(), f, CompareLabelsOptions{Commit: f.commit(sha, "unmeasured"),
		A: LabelSide{"section", "Baseline"}, B: LabelSide{"section", "Merge rope"}})
	if !errors.Is(err, ErrNoResults) {
		t.Errorf("unmeasured commit: %v", err)
	}
}
