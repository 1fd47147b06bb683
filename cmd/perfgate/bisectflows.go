package main

import (
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
)

// The flows of bisect and bisect-step that people stumble on (issue 15
// item 5): a script that is not committed, a --baseline without a usable
// stored result. The logic is package runner's (runner/flows.go); these
// helpers open the history, read the flags and print the messages, called
// from bisectcmd.go.

// dirtyAt counts the stored runs of the benchmark at sha that carry the
// metric but were left out because they were made in a dirty working tree
// (runner.DirtyRuns). A history that cannot be read counts none.
func dirtyAt(c *cli.Context, repo *gitrepo.Repo, sp runner.Target, sha string) int {
	s, err := openStore(c, repo, true)
	if err != nil || s == nil {
		return 0
	}
	defer s.Close()
	runs, err := s.ByBenchmark(sp.Name, []string{sha})
	if err != nil {
		return 0
	}
	return runner.DirtyRuns(runs[sha], sp)
}

// measureBaseline runs the benchmark once at the --baseline commit, in a
// temporary checkout, and stores the run (runner.MeasureBaseline), saying
// so when the script is one of the working tree (runner.LocalScript). It
// returns the metric's value there.
func measureBaseline(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, sha string, argv []string, serve *runner.Serve) (float64, error) {
	cmdline, note := runner.LocalScript(repo, runner.CommandLine(argv), sha)
	if note != "" {
		fmt.Fprintf(e.stderr, "perfgate: bisect-step: %s\n", note)
	}
	return runner.MeasureBaseline(c.Context, &runner.Worktree{Repo: repo}, saver(c, repo), sp, sha, cmdline, e.live, serve)
}

// baselineFallback is bisect-step's reference when --baseline has no
// usable stored result: it says why (none stored, or only runs from a
// dirty working tree), measures the baseline once in a temporary checkout
// and stores it; when that fails, it prints the command that stores one.
func baselineFallback(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, rev, sha string, argv []string, serve *runner.Serve) (float64, error) {
	why := fmt.Sprintf("no stored %s result with %s", sp.Name, sp.Metric.Name)
	if n := dirtyAt(c, repo, sp, sha); n > 0 {
		why = fmt.Sprintf("its %d stored %s result(s) were made in a dirty working tree (a tracked file was modified), and a dirty run is never a reference", n, sp.Name)
	}
	if c.Bool("no-store") {
		return 0, stepConfigErrorf("--baseline %s: %s; with --no-store it is not measured here (every step would run it again): store a result there before git bisect start:\n  %s\nor pass --reference VALUE", rev, why, runner.BaselineHint(rev, sp, argv))
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: --baseline %s: %s; measuring %s once in a temporary checkout\n", rev, why, repo.Short(sha))
	v, err := measureBaseline(c, e, repo, sp, sha, argv, serve)
	if err != nil {
		return 0, stepConfigErrorf("--baseline %s: %s, and measuring it failed: %v; store a result there before git bisect start:\n  %s\nor pass --reference VALUE", rev, why, err, runner.BaselineHint(rev, sp, argv))
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: --baseline %s: %s %s, stored for the next steps\n", rev, sp.Metric.Name, strconv.FormatFloat(v, 'g', 6, 64))
	return v, nil
}

// historyShape returns the stored runs outside the searched range (shas)
// that teach the search the noise's shape (runner.HistoryShape, with the
// runs invalidated on record left out), and says how many it found. A
// history that cannot be read gives nil; the search does without.
func historyShape(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, shas []string) [][]float64 {
	s, err := openStore(c, repo, true)
	if err != nil || s == nil {
		return nil
	}
	defer s.Close()
	history, n, err := runner.HistoryShape(s, sp, shas, func(runs map[string][]store.Run) error { return markInvalidated(s, runs) })
	if err != nil {
		return nil
	}
	if len(history) > 0 {
		fmt.Fprintf(e.stderr, "perfgate: bisect: the noise's shape also learns from %d stored runs at %d commits outside the range\n", n, len(history))
	}
	return history
}
