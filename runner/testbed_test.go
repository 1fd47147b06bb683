package runner

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/store"
)

// TestExecHidesTokens: a command run with perfgate's environment (Env
// nil: run, ab, bisect, bisect-step) gets no GitHub token, and keeps the
// rest.
func TestExecHidesTokens(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "ghs_secret1")
	t.Setenv("PERFGATE_GITHUB_TOKEN", "secret2")
	t.Setenv("PERFGATE_RUNNER_TEST_KEEP", "kept")
	var live bytes.Buffer
	out, err := Exec(context.Background(), Command{Argv: []string{"sh", "-c", "env"}, Live: &live, quiet: true})
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("Exec: %v, exit %d", err, out.ExitCode)
	}
	for _, s := range []string{"secret1", "secret2"} {
		if strings.Contains(live.String(), s) {
			t.Errorf("the command saw a token (%s)", s)
		}
	}
	if !strings.Contains(live.String(), "PERFGATE_RUNNER_TEST_KEEP=kept") {
		t.Errorf("the command lost the rest of the environment:\n%s", live.String())
	}
}

// TestToRunsRecordsMachine: every run records the spec's testbed,
// environment and working-tree hash.
func TestToRunsRecordsMachine(t *testing.T) {
	results := []ingest.Result{{Name: "a", Format: "generic", File: "-", Metrics: map[string]float64{"mean_ttft_ms": 1}}, {Name: "b", Format: "generic", File: "-", Metrics: map[string]float64{"mean_ttft_ms": 2}}}
	env := map[string]string{"os": "linux"}
	runs, err := ToRuns(results, Spec{Name: "s", Commit: strings.Repeat("a", 40), Dirty: true, Tree: "t1", Testbed: "ci-910b", Env: env, Time: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.Testbed != "ci-910b" || r.Tree != "t1" || r.Env["os"] != "linux" || !r.Dirty {
			t.Errorf("run %s: testbed %q, tree %q, env %v, dirty %v", r.Benchmark, r.Testbed, r.Tree, r.Env, r.Dirty)
		}
	}
}

// TestStoredTestbeds: bisect reuses stored runs of its own testbed,
// never another testbed's; runs without a testbed take the testbed of the
// other runs of their setup when those share one; without a testbed
// (--stored) two testbeds are two setups, and --label testbed=NAME picks
// one.
func TestStoredTestbeds(t *testing.T) {
	shas := []string{strings.Repeat("a", 40), strings.Repeat("b", 40)}
	run := func(sha, tb string, v float64) store.Run {
		return store.Run{Commit: sha, Benchmark: "serving", Testbed: tb, Metrics: map[string]float64{"mean_ttft_ms": v}}
	}
	twoBeds := func() map[string][]store.Run {
		return map[string][]store.Run{
			shas[0]: {run(shas[0], "laptop", 10), run(shas[0], "ci", 20)},
			shas[1]: {run(shas[1], "ci", 21)},
		}
	}
	target := Target{Name: "serving", Metric: metric.Get("mean_ttft_ms"), Typed: "mean_ttft_ms"}

	ci := target
	ci.Testbed = "ci"
	known, _, err := Stored(twoBeds(), ci, shas)
	if err != nil {
		t.Fatal(err)
	}
	if len(known[0]) != 1 || known[0][0] != 20 || len(known[1]) != 1 {
		t.Errorf("on testbed ci: known %v, want [20] [21]", known)
	}

	legacy := map[string][]store.Run{shas[0]: {run(shas[0], "ci", 20)}, shas[1]: {run(shas[1], "", 22)}}
	known, _, err = Stored(legacy, ci, shas)
	if err != nil {
		t.Fatal(err)
	}
	if len(known[1]) != 1 || known[1][0] != 22 {
		t.Errorf("a run without a testbed: known %v, want it reused at 1", known)
	}

	_, _, err = Stored(twoBeds(), target, shas)
	if !errors.Is(err, store.ErrBadInput) || !strings.Contains(err.Error(), `on testbed "laptop"`) || !strings.Contains(err.Error(), `on testbed "ci"`) {
		t.Errorf("--stored with two testbeds: %v; want bad input naming both", err)
	}

	picked := target
	picked.Labels = map[string]string{"testbed": "laptop"}
	known, _, err = Stored(twoBeds(), picked, shas)
	if err != nil {
		t.Fatal(err)
	}
	if len(known[0]) != 1 || known[0][0] != 10 || len(known[1]) != 0 {
		t.Errorf("--label testbed=laptop: known %v, want [10] at 0 only", known)
	}
}
