package gate

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLoadMarkdownCurvesOfTwoModels: one benchmark swept for two models
// whose names carry markdown ("a|b", "<img>") is two curves in the PR
// comment; each chart's title names its curve as its heading does (two
// charts titled alike could not be told apart), and the headings'
// code spans, outside any table, keep "|" without the backslash a table
// cell needs (GitHub would show "a\|b").
func TestLoadMarkdownCurvesOfTwoModels(t *testing.T) {
	rep, s := modelsReport(t, "a|b", "<img src=x>")
	if len(rep.Load) != 2 {
		t.Fatalf("%d load curves, want 2: %+v", len(rep.Load), rep.Load)
	}
	_, load, _ := strings.Cut(s, "**Load curves**")
	for _, want := range []string{"\n`serve [by max_concurrency,model=a|b]`, SLO", "\n`serve [by max_concurrency,model=<img src=x>]`, SLO"} {
		if !strings.Contains(load, want) {
			t.Errorf("the load section lacks the heading %q:\n%s", want, load)
		}
	}
	titles := regexp.MustCompile(`(?m)^    title "(.*)"$`).FindAllStringSubmatch(load, -1)
	var curves []string
	for _, m := range titles {
		if strings.HasSuffix(m[1], ": p99_tpot_ms") {
			curves = append(curves, m[1])
		}
	}
	slices.Sort(curves)
	want := []string{"serve [by max_concurrency,model=a|b]: p99_tpot_ms", "serve [by max_concurrency,model=‹img src=x›]: p99_tpot_ms"}
	if strings.Join(curves, "\n") != strings.Join(want, "\n") {
		t.Errorf("the curves' charts are titled %q, want %q", curves, want)
	}
}

// modelsReport is the check of one benchmark swept for each model, a
// commit whose engine decodes 10% slower, and its markdown.
func modelsReport(t *testing.T, models ...string) (*Report, string) {
	both := func(slow float64) []Sample {
		s := standIn{slots: 32, base: 10, perReq: 0.5 * slow, tokens: 100}
		var out []Sample
		for _, m := range models {
			for _, x := range s.sweep(nil) {
				x.Labels["model"] = m
				out = append(out, x)
			}
		}
		return out
	}
	rep := newWorld(6, func(int) []Sample { return both(1) }, both(1/0.9)).checkCfg(t, sloConfig(t, sloRules))
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	return rep, md.String()
}
