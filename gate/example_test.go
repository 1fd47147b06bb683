package gate_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/perfgate/perfgate/gate"
)

// linearGit is the smallest Graph: a first-parent chain held in a slice,
// oldest first. The CLI's adapter answers the same two questions with
// go-git.
type linearGit []gate.Commit

func (g linearGit) index(sha string) int {
	for i, c := range g {
		if c.SHA == sha {
			return i
		}
	}
	return -1
}

func (g linearGit) MergeBase(a, b string) (string, error) {
	i, j := g.index(a), g.index(b)
	if i < 0 || j < 0 {
		return "", errors.New("unknown commit")
	}
	return g[min(i, j)].SHA, nil
}

func (g linearGit) FirstParents(from string, n int) ([]gate.Commit, error) {
	var out []gate.Commit
	for i := g.index(from); i >= 0 && len(out) < n; i-- {
		out = append(out, g[i])
	}
	return out, nil
}

// memStore is the smallest History. The CLI's adapter reads bbolt.
type memStore map[string][]gate.Sample

func (m memStore) Samples(commits []string) (map[string][]gate.Sample, error) {
	out := map[string][]gate.Sample{}
	for _, c := range commits {
		out[c] = m[c]
	}
	return out, nil
}

func Example() {
	git := linearGit{}
	store := memStore{}
	ttft := []float64{101, 99, 100, 102, 98, 100, 101, 99, 100, 100}
	for i, v := range ttft {
		sha := fmt.Sprintf("%02d%038x", i+1, 0xabc)
		git = append(git, gate.Commit{SHA: sha, Subject: fmt.Sprintf("change %d", i+1)})
		store[sha] = []gate.Sample{{Commit: sha, Benchmark: "serving", Labels: map[string]string{"model": "llama"},
			Metrics: map[string]float64{"mean_ttft_ms": v, "completed": 1000, "failed": 0}}}
	}
	main := git[len(git)-1].SHA

	// A working-tree run of the tip of main, 12% slower.
	run := gate.Sample{Benchmark: "serving", Labels: map[string]string{"model": "llama"}, Dirty: true,
		Metrics: map[string]float64{"mean_ttft_ms": 112, "completed": 1000, "failed": 0}}

	cfg := gate.DefaultConfig()
	rule, err := gate.ParseRuleFlag("Mean TTFT:3%")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.Rules = append(cfg.Rules, rule)
	rep, err := gate.Check(context.Background(), git, store, gate.CheckOptions{
		Head: main, HeadSamples: []gate.Sample{run}, Base: main, BaseRef: "main", Config: cfg,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	gate.Write(os.Stdout, rep, "text", false)
	fmt.Println("exit code", map[bool]int{true: 1, false: 0}[rep.Failed()])
	// Output:
	// FAIL  1 of 1 check failed
	// head      1000000 (with uncommitted changes)
	// baseline  1000000, head's commit on main (its committed results)
	// rules     1 from --rule flags; noise window 20 commits, max distance 50
	// warning   1 rule is finer than the noise lets one run see, so only larger changes can fail: Mean TTFT (ms) at 3% (serving {model=llama}): one run resolves 6.9% here; 14 runs resolve 3%
	// warning   head's results were measured on a working tree with uncommitted changes, not on a commit
	//
	// BENCHMARK  METRIC          REFERENCE  CURRENT   CHANGE  RULE                  N  VERDICT
	// serving    Mean TTFT (ms)        100      112  +12.00%  max_regression 3%  10/1  FAIL
	// N: values behind reference/current. REFERENCE: the median head is compared with, not one commit's.
	//
	// Why
	//   serving Mean TTFT (ms): fail: +12.00% against the reference (median of 10 results), beyond the 3% limit and outside the noise band (z = 5.1, noise 2.1%)
	// exit code 1
}
