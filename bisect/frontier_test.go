package bisect

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
)

var frontierTrials = flag.Int("frontier-trials", 300, "trials per clear scenario of BenchmarkIssueFrontier (the bimodal one gets 10/3 as many)")

// frontierVariant is one row of BenchmarkIssueFrontier: a change to the
// search's policy (Options.variant) and whether the bad end's first run
// is free (an oracle: a value stored before the search, which no search
// without a history has).
type frontierVariant struct {
	name    string
	v       variant
	freeBad bool
}

var frontierVariants = []frontierVariant{
	{name: "the search as documented (issue 27: the culprit's lone run always run again, a leaning pair run again)"},
	{name: "before issue 27: a lone run of the culprit trusted, no leaning pair rerun", v: variant{trustLone: true, noLeanPair: true}},
	{name: "option (c) alone: no leaning pair rerun", v: variant{noLeanPair: true}},
	{name: "noise prior's tilt stops at the noise estimate", v: variant{tiltCap: 1}},
	{name: "tilt stopped, no rerun of a leaning lone run", v: variant{tiltCap: 1, noLean: true}},
	{name: "oracle: the bad end's first run free", freeBad: true},
}

// BenchmarkIssueFrontier measures what issue 27's targets trade against
// each other: mean runs in the first and third scenarios (targets 10.0 and
// 12.6, 1.3 times git bisect's 7.7 and 9.7) against
// the share of wrong answers among those found at 95% in the bimodal one
// (target 5.5% over 1,000 trials), for the search as documented and for
// the policy changes that would buy one target with another. Seeds start at
// 500000, apart from the tests' and BenchmarkIssueScenarios'. It ignores
// b.N:
//
//	go test ./bisect -run '^$' -bench IssueFrontier -benchtime 1x -v
//
// -args -frontier-trials T sets the trials of the clear scenarios (300;
// the bimodal one gets 10/3 as many, about 1000, since its wrong answers
// are what is measured).
func BenchmarkIssueFrontier(b *testing.B) {
	const seed0 = 500000
	clear := *frontierTrials
	bimodal := clear * 10 / 3
	var rows []string
	for _, fv := range frontierVariants {
		opts := Options{variant: fv.v}
		var cells []string
		right := 1.0
		for si, sc := range issueScenarios[:5] {
			sc.storedBad = fv.freeBad
			trials := clear
			if si == 4 {
				trials = bimodal
			}
			st := runScenario(b, sc, trials, seed0, opts)
			if si < 4 {
				right = math.Min(right, st.right())
			}
			switch si {
			case 0, 2:
				cells = append(cells, fmt.Sprintf("%.2f", st.meanRuns()))
			case 4:
				found, wrong := st.found()
				cells = append(cells, fmt.Sprintf("%.1f%% (%d of %d)", 100*float64(wrong)/float64(max(found, 1)), wrong, found))
			}
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %.1f%% | %s |", fv.name, cells[0], cells[1], 100*right, cells[2]))
	}
	b.Logf("\n| policy | runs, scenario 1 (target 10.0, 1.3x git bisect) | runs, scenario 3 (target 12.6, 1.3x git bisect) | right, scenarios 1-4 (lowest) | wrong among found at 95%%, bimodal (target 5.5%%) |\n|---|--:|--:|--:|--:|\n%s", strings.Join(rows, "\n"))
}
