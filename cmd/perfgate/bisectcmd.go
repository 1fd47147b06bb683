package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/bisect"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"

	"github.com/perfgate/perfgate/internal/suggest"
)

func init() { commandSet = append(commandSet, bisectCommand, bisectStepCommand) }

func bisectCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "bisect",
		Usage:     "find the commit that changed a metric, with as few benchmark runs as possible",
		ArgsUsage: "[-- CMD [ARGS...]]",
		Description: "Walks the first-parent commits after --good up to --bad. With --run, each commit the search\n" +
			"chooses is checked out in a temporary directory (your checkout, branch and files are never\n" +
			"touched) and CMD runs there; its output is parsed and stored, so later bisects and\n" +
			"checks reuse it, and commits already in the history are not run again. Exit code 125 from CMD\n" +
			"means \"cannot test this commit\" (as with git bisect run). With --stored, no runs: the change\n" +
			"is located in the recorded history alone.\n\n" +
			"The ends are measured until their levels and the noise are known; then the search keeps a\n" +
			"posterior over the culprit and measures where it splits the probability in half, repeating\n" +
			"a commit whose result is ambiguous, until one commit reaches --confidence or the runs reach\n" +
			"--max-runs. If good and bad do not differ beyond the noise, it says so instead of naming a\n" +
			"commit. Exit codes: 0 a culprit, 4 no step, 5 budget ran out (a range), 6 untestable.\n\n" +
			"The command is given as run takes it, after --: its words, no shell (perfgate run -- CMD ARGS).\n" +
			"--run 'CMD' is the same as a shell line (sh -c), for pipes and &&; both work everywhere a\n" +
			"benchmark command is taken (run, ab, bisect, bisect-step).\n\n" +
			"  perfgate bisect --good v0.9.0 --bad main --metric 'Mean TTFT' --name serving -- ./bench.sh\n" +
			"  perfgate bisect --good v0.9.0 --metric 'Mean TTFT' --name serving \\\n" +
			"      --run 'pip install -e . && vllm bench serve --model M ...'" + serveHelp + "\n" +
			"In bisect, a commit whose --setup fails is skipped (as exit code 125); a server that fails\n" +
			"stops the bisect unless --skip-failures (then the commit is skipped).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "good", Usage: "a commit at the old level (any revision; required)"},
			&cli.StringFlag{Name: "bad", Value: "HEAD", Usage: "a commit at the new level, descending from --good"},
			&cli.StringFlag{Name: "metric", Usage: "the `METRIC` that changed, by name or label, e.g. mean_ttft_ms or 'Mean TTFT' (required)"},
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "benchmark `NAME` the results are stored under (required)"},
			&cli.StringFlag{Name: "run", Usage: "the benchmark as a shell line `CMD` (sh -c), run in the commit's checkout; or give the command's words after --"},
			&cli.BoolFlag{Name: "stored", Usage: "no runs: search the stored results alone"},
			&cli.StringFlag{Name: "testbed", EnvVars: []string{"PERFGATE_TESTBED"}, Usage: "testbed `NAME`: with --stored, search only its runs; with a command, reuse only its stored runs and store the new ones under it (default: testbed: in .perfgate.yml, else derived from the machine)"},
			&cli.StringFlag{Name: "threshold", Value: "0", Usage: "smallest change between good and bad that counts, in `PERCENT` (e.g. 5%)"},
			&cli.IntFlag{Name: "max-runs", Usage: "run budget `N`", DefaultText: "12 + 4*log2(commits)"},
			&cli.StringFlag{Name: "confidence", Value: "0.95", Usage: "stop when one commit has posterior probability `P` (0.95 or 95%)"},
			&cli.IntFlag{Name: "end-runs", Value: bisect.DefaultEndRuns, Usage: "runs `N` of each end before the search starts (more while the step is not established)"},
			&cli.BoolFlag{Name: "skip-failures", Usage: "skip commits where CMD fails or prints no result, instead of stopping"},
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE`: stored results must match it, new ones get it; repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "benchmark format to parse the output of CMD as (auto detects): " + strings.Join(ingest.Formats(), ", ")},
			&cli.StringFlag{Name: "workdir", Usage: "`DIR` for the temporary checkouts (default: the system's temporary directory)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "show CMD's output on stderr as it runs"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "report format: text, markdown, json"},
			&cli.StringFlag{Name: "out", Usage: "write the report to `FILE` (unless -o text, a text copy also goes to stdout)"},
		}, serveFlags()...),
		Action: func(c *cli.Context) error { return runBisect(c, e) },
	}
}

func parseSpec(c *cli.Context) (runner.Target, error) {
	sp := runner.Target{Name: c.String("name"), Typed: c.String("metric"), Format: c.String("format")}
	if sp.Name == "" {
		return sp, usageErrorf("%s: --name is required: the benchmark name results are stored under (for example --name serving)", c.Command.Name)
	}
	if sp.Typed == "" {
		return sp, usageErrorf("%s: --metric is required: the metric that changed, e.g. --metric mean_ttft_ms or --metric 'Mean TTFT'", c.Command.Name)
	}
	if info, ok := metric.Lookup(sp.Typed); ok {
		sp.Metric = info
	} else {
		sp.Metric = metric.Get(metric.Sanitize(sp.Typed))
	}
	if sp.Metric.Name == "" {
		return sp, usageErrorf("--metric %q is not a metric name; use a canonical name such as mean_ttft_ms", sp.Typed)
	}
	var err error
	if sp.Labels, err = parseLabels(c.StringSlice("label")); err != nil {
		return sp, err
	}
	var files runner.Command
	if err := parseResultFile(c, &files); err != nil {
		return sp, err
	}
	sp.ResultFile, sp.SLO = files.ResultFile, files.SLO
	return sp, nil
}

// parsePercent reads "5%", "5" (both 5%) or "0.5%".
func parsePercent(flag, s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, usageErrorf("%s %q is not a percentage; write it like 5%% (or 5)", flag, s)
	}
	return v / 100, nil
}

// parseConfidence reads "0.95" or "95%".
func parseConfidence(s string) (float64, error) {
	t := strings.TrimSpace(s)
	pct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err == nil && (pct || v > 1) {
		v /= 100
	}
	if err != nil || !(v > 0.5 && v < 1) {
		return 0, usageErrorf("--confidence %q must be a probability between 0.5 and 1, e.g. 0.95 or 95%%", s)
	}
	return v, nil
}

func runBisect(c *cli.Context, e *env) error {
	start := time.Now()
	format := strings.ToLower(c.String("output"))
	switch format {
	case "text", "markdown", "md", "json":
	default:
		return usageErrorf("-o %q is not valid for bisect; choose one of: text, markdown, json", c.String("output"))
	}
	sp, err := parseSpec(c)
	if err != nil {
		return err
	}
	if c.String("good") == "" {
		return usageErrorf("bisect: --good is required: a commit where %s was still at its old level (a tag, branch or SHA)", sp.Metric.Name)
	}
	cmdline, stored := c.String("run"), c.Bool("stored")
	if c.NArg() > 0 {
		if cmdline != "" {
			return usageErrorf("bisect: give the command either as --run 'CMD' (a shell line) or after -- (its words), not both")
		}
		// The words after --, as run takes them: quoted for the shell
		// the checkout runs them with, so no word is split or expanded.
		cmdline = runner.ShellJoin(c.Args().Slice())
	}
	if (cmdline == "") == !stored {
		return usageErrorf("bisect: pass exactly one of --run CMD (run the benchmark where needed) or --stored (search the stored results alone)")
	}
	serve, err := parseServe(c, e)
	if err != nil {
		return err
	}
	if stored && serve != nil {
		return usageErrorf("bisect: --stored runs nothing: --setup and --server go with --run CMD")
	}
	threshold, err := parsePercent("--threshold", c.String("threshold"))
	if err != nil {
		return err
	}
	confidence, err := parseConfidence(c.String("confidence"))
	if err != nil {
		return err
	}
	if c.Int("max-runs") < 0 {
		return usageErrorf("--max-runs %d: the run budget must be positive; omit it for the default, 12 + 4*log2(commits)", c.Int("max-runs"))
	}
	if c.Int("end-runs") < 1 {
		return usageErrorf("--end-runs %d: each end needs at least 1 run", c.Int("end-runs"))
	}
	if mr := c.Int("max-runs"); mr > 0 && mr <= 2*c.Int("end-runs") && !stored {
		return usageErrorf("--max-runs %d leaves no run for the search after %d runs of each end (--end-runs); give it at least %d", mr, c.Int("end-runs"), 2*c.Int("end-runs")+1)
	}
	repo, err := openRepo(c)
	if err != nil {
		return err
	}
	defer repo.Close()
	if !stored {
		m, err := detectMachine(c, e, repo)
		if err != nil {
			return err
		}
		sp.Testbed, sp.Env = m.testbed, m.env
	} else if tb := strings.TrimSpace(c.String("testbed")); tb != "" {
		sp.Testbed = tb // the stored runs of this testbed alone
	}
	good, err := repo.Resolve(c.String("good"))
	if err != nil {
		return gitError(fmt.Errorf("--good: %w", err))
	}
	bad, err := repo.Resolve(c.String("bad"))
	if err != nil {
		return gitError(fmt.Errorf("--bad: %w", err))
	}
	if good == bad {
		return usageErrorf("--good and --bad are the same commit %s; --bad must be a later commit where %s changed", short(good), sp.Metric.Name)
	}
	chain, err := repo.FirstParents(good, bad)
	if err != nil {
		if errors.Is(err, gitrepo.ErrShallow) || errors.Is(err, gitrepo.ErrMissingObject) || errors.Is(err, gitrepo.ErrUnknownRevision) {
			return gitError(err)
		}
		return usageErrorf("%v", err)
	}
	if len(chain) == 0 {
		return usageErrorf("no first-parent commits lead from --good %s to --bad %s; pick a --good on --bad's first-parent history", short(good), short(bad))
	}
	shas := append([]string{good}, chain...)
	commits := make([]bisect.Commit, len(shas))
	for i, sha := range shas {
		ci, err := repo.Commit(sha)
		if err != nil {
			return gitError(err)
		}
		commits[i] = bisect.Commit{SHA: sha, Short: ci.Short, Subject: ci.Subject}
	}
	known, err := loadStored(c, repo, sp, shas, stored)
	if err != nil {
		return err
	}
	n := len(shas) - 1
	opts := bisect.Options{
		Confidence: confidence, MaxRuns: c.Int("max-runs"), EndRuns: c.Int("end-runs"), Threshold: threshold,
		Progress: progressPrinter(e, commits, sp, start),
		History:  historyShape(c, e, repo, sp, shas),
	}
	var m bisect.Measurer
	if !stored {
		var note string
		if cmdline, note = runner.LocalScript(repo, cmdline, shas[0], shas[len(shas)-1]); note != "" {
			fmt.Fprintf(e.stderr, "perfgate: bisect: %s\n", note)
		}
		live := io.Writer(nil)
		if c.Bool("verbose") {
			live = e.live
		}
		if serve != nil {
			serve.Live = live
			setLogDir(serve, c, repo)
		}
		cm := &runner.CommitMeasurer{
			Worktree: &runner.Worktree{Repo: repo, Dir: c.String("workdir")},
			Saver:    saver(c, repo),
			Target:   sp, Commits: commits, Cmdline: cmdline, Live: live,
			SkipFailures: c.Bool("skip-failures"),
			Serve:        serve,
		}
		// The last commit's server and checkout, kept up for its
		// repeats, go when the search ends.
		defer cm.Close()
		m = &bisectMeasurer{cm}
		if opts.MaxRuns == 0 {
			opts.MaxRuns = bisect.DefaultBudget(n)
		}
		fmt.Fprintf(e.stderr, "perfgate: bisect: %d commits from %s to %s, %s of %s, budget %d runs\n",
			n, commits[0].Short, commits[n].Short, sp.Metric.Name, sp.Name, opts.MaxRuns)
	}
	res, err := bisect.Search(c.Context, n, known, m, opts)
	if err != nil {
		return bisectError(err, commits, known, stored, sp)
	}
	rep := &bisect.Report{
		Benchmark: sp.Name, Metric: sp.Metric.Name, Label: sp.Metric.Label, Unit: sp.Metric.Unit,
		Commits: commits, Stored: stored, Target: confidence, Threshold: threshold,
		Elapsed: time.Since(start), Result: res,
	}
	switch sp.Metric.Direction {
	case metric.LowerIsBetter:
		rep.Direction = "lower"
	case metric.HigherIsBetter:
		rep.Direction = "higher"
	}
	if err := writeBisectReport(c, e, rep, format); err != nil {
		return err
	}
	return bisectExit(res.Verdict)
}

// Exit codes of a bisect that printed its report: a script tells found
// from not found without -o json.
const (
	exitBisectNoStep     = 4 // good and bad do not differ beyond the noise (or threshold)
	exitBisectBudget     = 5 // the budget ran out: a range with its probability, no single commit
	exitBisectUntestable = 6 // every candidate was skipped
)

func bisectExit(v bisect.Verdict) error {
	code := 0
	switch v {
	case bisect.NoStep:
		code = exitBisectNoStep
	case bisect.OutOfRuns:
		code = exitBisectBudget
	case bisect.Untestable:
		code = exitBisectUntestable
	}
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: errQuiet}
}

func writeBisectReport(c *cli.Context, e *env, rep *bisect.Report, format string) error {
	if p := c.String("out"); p != "" {
		if err := writeOutFile(p, func(w io.Writer) error { return rep.Write(w, format) }); err != nil {
			return err
		}
		if format == "text" {
			return nil
		}
		return rep.WriteText(e.stdout)
	}
	return rep.Write(e.stdout, format)
}

// bisectError explains a search that could not finish.
func bisectError(err error, commits []bisect.Commit, known map[int][]float64, stored bool, sp runner.Target) error {
	if errors.Is(err, context.Canceled) {
		return envError(fmt.Errorf("bisect: interrupted; the temporary checkout was removed, and the runs already made are stored and reused by the next bisect"))
	}
	var ee *bisect.EndError
	if errors.As(err, &ee) {
		flag, i := "--bad", len(commits)-1
		if ee.Good {
			flag, i = "--good", 0
		}
		if stored {
			return usageErrorf("--stored: %s %s has no stored %s results with %s%s; pass a measured commit as %s, or bisect with --run",
				flag, commits[i].Short, sp.Name, sp.Metric.Name, nearestMeasured(commits, known, ee.Good), flag)
		}
		if errors.Is(err, bisect.ErrSkip) {
			return usageErrorf("%s %s cannot be tested (%v); pick another %s", flag, commits[i].Short, ee.Err, flag)
		}
		return err
	}
	return err
}

// nearestMeasured lists the measured commits nearest to an end.
func nearestMeasured(commits []bisect.Commit, known map[int][]float64, good bool) string {
	var idx []int
	for i := range known {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	if !good {
		sort.Sort(sort.Reverse(sort.IntSlice(idx)))
	}
	if len(idx) == 0 {
		return " (no commit in the range has any)"
	}
	var parts []string
	for _, i := range idx[:min(3, len(idx))] {
		parts = append(parts, fmt.Sprintf("%s (commit %d of %d)", commits[i].Short, i, len(commits)-1))
	}
	return "; the nearest measured commits are " + strings.Join(parts, ", ")
}

// loadStored returns the stored values of the metric at each commit of
// the range: valid runs of the benchmark, measured on a clean checkout,
// whose labels match --label. Runs of several identities (two models, two
// machines) are not mixed: that is an error asking for --label.
func loadStored(c *cli.Context, repo *gitrepo.Repo, sp runner.Target, shas []string, required bool) (map[int][]float64, error) {
	s, err := openStore(c, repo, true)
	if err != nil {
		return nil, err
	}
	if s == nil {
		if required {
			path, _ := dbPath(c, repo)
			return nil, usageErrorf("--stored: there is no history at %s yet; ingest results first, or bisect with --run", path)
		}
		return map[int][]float64{}, nil
	}
	runs, err := s.ByBenchmark(sp.Name, shas)
	if err == nil {
		err = markInvalidated(s, runs)
	}
	var benches []string
	if err == nil && required && len(runs) == 0 {
		benches, err = s.Benchmarks()
	}
	s.Close()
	if err != nil {
		return nil, storeError(err)
	}
	known, have, err := runner.Stored(runs, sp, shas)
	if err != nil {
		return nil, storeError(err)
	}
	if required && len(known) == 0 {
		if len(have) > 0 {
			return nil, storeError(sp.UnknownMetric(fmt.Sprintf("the %s results stored in this range", sp.Name), have))
		}
		msg := fmt.Sprintf("--stored: no stored %s results in the %d commits from --good to --bad", sp.Name, len(shas))
		if !slices.Contains(benches, sp.Name) && len(benches) > 0 {
			if sug := suggest.Closest(sp.Name, benches); sug != "" {
				msg += fmt.Sprintf("; did you mean --name %q?", sug)
			}
			msg += fmt.Sprintf(" (benchmarks in the history: %s)", strings.Join(benches, ", "))
		}
		return nil, usageErrorf("%s; ingest some, or bisect with --run", msg)
	}
	return known, nil
}

// bisectMeasurer maps the runner's errors to exit codes; a skip, an
// interrupt and the search's own errors pass through.
type bisectMeasurer struct{ m *runner.CommitMeasurer }

func (b *bisectMeasurer) Measure(ctx context.Context, i int) ([]float64, error) {
	v, err := b.m.Measure(ctx, i)
	var skip *bisect.SkipError
	if err == nil || errors.As(err, &skip) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return v, err
	}
	return v, storeError(err)
}

// progressPrinter reports each run on stderr: which commit, run n of the
// budget, the time spent, then what it measured.
func progressPrinter(e *env, commits []bisect.Commit, sp runner.Target, start time.Time) func(bisect.Progress) {
	n := len(commits) - 1
	return func(p bisect.Progress) {
		elapsed := time.Since(start).Round(time.Second)
		cm := commits[p.Index]
		what := fmt.Sprintf("commit %d of %d", p.Index, n)
		switch p.Index {
		case 0:
			what = "the good end"
		case n:
			what = "the bad end"
		}
		if !p.Done {
			fmt.Fprintf(e.stderr, "perfgate: bisect: run %d of %d (%s elapsed): %s %s %q\n", p.Run, p.Budget, elapsed, what, cm.Short, oneLineSubject(cm.Subject))
			return
		}
		if p.Skip != "" {
			fmt.Fprintf(e.stderr, "perfgate: bisect:   %s skipped: %s\n", cm.Short, p.Skip)
			return
		}
		vals := make([]string, len(p.Values))
		for i, v := range p.Values {
			vals[i] = strconv.FormatFloat(v, 'g', 6, 64)
		}
		unit := ""
		if sp.Metric.Unit != "" {
			unit = " " + sp.Metric.Unit
		}
		msg := fmt.Sprintf("perfgate: bisect:   %s: %s %s%s", cm.Short, sp.Metric.Name, strings.Join(vals, " "), unit)
		if !p.Ends {
			msg += fmt.Sprintf("; P(bad) %.3f, best candidate %.1f%%", p.PBad, 100*p.Confidence)
		}
		fmt.Fprintln(e.stderr, msg)
	}
}

func oneLineSubject(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// Exit codes of bisect-step, the contract of git bisect run.
const (
	stepGood  = 0
	stepBad   = 1
	stepSkip  = 125
	stepAbort = 255 // above 127: git bisect run stops
)

func bisectStepCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "bisect-step",
		Usage:     "run the benchmark once and exit 0 good, 1 bad, 125 skip: a helper for git bisect run",
		ArgsUsage: "[-- CMD [ARGS...]]",
		Description: "For those who prefer git's own bisect. It runs the benchmark in the current directory (the\n" +
			"commit git bisect checked out), compares the metric with a reference and exits 0 when it is\n" +
			"not worse by more than --threshold, 1 when it is, 125 when the commit cannot be tested (the\n" +
			"command exited 125, or its result is invalid; any failure with --skip-failures), and 255,\n" +
			"which stops git bisect, on any other error. The result is stored under HEAD unless --no-store.\n\n" +
			"  git bisect start BAD GOOD\n" +
			"  git bisect run perfgate bisect-step --name serving --metric mean_ttft_ms \\\n" +
			"      --baseline GOOD --threshold 6% --run 'vllm bench serve --model M ...'\n\n" +
			"With --setup and --server, bisect-step runs the setup (a failure exits 125: skip), starts the\n" +
			"server, runs the benchmark against it once and stops it; a server that fails is a failure\n" +
			"of the benchmark (255, or 125 with --skip-failures).",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "benchmark `NAME` (required)"},
			&cli.StringFlag{Name: "metric", Usage: "the `METRIC` to judge, by name or label (required)"},
			&cli.StringFlag{Name: "threshold", Usage: "how much worse than the reference is bad, in `PERCENT`, e.g. 6% (required; half the regression you chase is a good choice)"},
			&cli.StringFlag{Name: "reference", Usage: "the good `VALUE` of the metric"},
			&cli.StringFlag{Name: "baseline", Usage: "take the reference from the stored results of this `REV` (their median); without any, measure it once in a temporary checkout"},
			&cli.StringFlag{Name: "direction", Usage: "which way is better, lower or higher (default: the metric's own)"},
			&cli.StringFlag{Name: "run", Usage: "the benchmark as a shell line `CMD` (sh -c); or give the command's words after --, as run takes them"},
			&cli.BoolFlag{Name: "skip-failures", Usage: "exit 125 instead of 255 when the command fails or prints no result"},
			&cli.BoolFlag{Name: "no-store", Usage: "do not store the result in the history"},
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE`; repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "benchmark format to parse the command's output as (auto detects): " + strings.Join(ingest.Formats(), ", ")},
		}, serveFlags()...),
		OnUsageError: func(cc *cli.Context, err error, _ bool) error {
			return &exitError{code: stepAbort, err: fmt.Errorf("bisect-step: %s%s (see perfgate bisect-step --help)", dashedFlags(err), flagSuggestion(err, cc.Command.Flags))}
		},
		Action: func(c *cli.Context) error {
			code, err := runBisectStep(c, e)
			if err != nil {
				if errors.Is(err, context.Canceled) {
					err = errors.New("interrupted")
				}
				if !strings.HasPrefix(err.Error(), "bisect-step") {
					err = fmt.Errorf("bisect-step: %w", err)
				}
				fmt.Fprintf(e.stderr, "perfgate: %v\n", err)
				if c.Bool("skip-failures") && errors.Is(err, errStepFailure) {
					return &exitError{code: stepSkip, err: errQuiet}
				}
				return &exitError{code: stepAbort, err: errQuiet}
			}
			if code == stepGood {
				return nil
			}
			return &exitError{code: code, err: errQuiet}
		},
	}
}

// errQuiet marks an exit whose message was already printed.
var errQuiet = errGateFailed

// errStepFailure marks a benchmark that failed at this commit, which
// --skip-failures turns into a skip; every other error (flags, git, the
// history) stops git bisect, since it would repeat at every commit.
var errStepFailure = errors.New("the benchmark failed")

type stepFailure struct{ err error }

func (f stepFailure) Error() string        { return f.err.Error() }
func (f stepFailure) Unwrap() error        { return f.err }
func (f stepFailure) Is(target error) bool { return target == errStepFailure }

func stepConfigErrorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func runBisectStep(c *cli.Context, e *env) (int, error) {
	sp, err := parseSpec(c)
	if err != nil {
		return 0, stepConfigErrorf("%v", err)
	}
	if c.String("threshold") == "" {
		return 0, stepConfigErrorf("--threshold is required: how much worse than the reference counts as bad, e.g. --threshold 6%% (half the regression you are chasing)")
	}
	threshold, err := parsePercent("--threshold", c.String("threshold"))
	if err != nil {
		return 0, stepConfigErrorf("%v", err)
	}
	dir := sp.Metric.Direction
	if d := c.String("direction"); d != "" {
		if dir, err = metric.ParseDirection(d); err != nil {
			return 0, stepConfigErrorf("--direction: %v", err)
		}
	}
	if dir != metric.LowerIsBetter && dir != metric.HigherIsBetter {
		return 0, stepConfigErrorf("perfgate does not know whether lower or higher %s is better; pass --direction lower or --direction higher", sp.Metric.Name)
	}
	var argv []string
	switch {
	case c.String("run") != "" && c.NArg() > 0:
		return 0, stepConfigErrorf("give the command either as --run CMD or after --, not both")
	case c.String("run") != "":
		argv = []string{"sh", "-c", c.String("run")}
	case c.NArg() > 0:
		argv = c.Args().Slice()
	default:
		return 0, stepConfigErrorf("no command: pass --run CMD, or the command after --")
	}
	if (c.String("reference") == "") == (c.String("baseline") == "") {
		return 0, stepConfigErrorf("pass exactly one of --reference VALUE (the good value of %s) or --baseline REV (a commit with stored results)", sp.Metric.Name)
	}
	serve, err := parseServe(c, e)
	if err != nil {
		return 0, stepConfigErrorf("%v", err)
	}
	if serve != nil {
		serve.Live = e.live
	}
	repo, err := openRepo(c)
	if err != nil {
		return 0, err
	}
	defer repo.Close()
	m, err := detectMachine(c, e, repo)
	if err != nil {
		return 0, stepConfigErrorf("%v", err)
	}
	sp.Testbed, sp.Env = m.testbed, m.env
	setLogDir(serve, c, repo)
	ref, err := stepReference(c, e, repo, sp, argv, serve)
	if err != nil {
		return 0, err
	}
	head, dirty, err := resolveCommit(c, repo, "HEAD", true)
	if err != nil {
		return 0, err
	}
	// Run the benchmark here, its output shown as git bisect run shows it
	// and parsed as it comes, so memory stays bounded.
	spec := runner.Spec{Commit: head, Dirty: dirty}
	if dirty {
		// The runs record the tree they measured, so that check on this
		// tree uses them.
		wt, err := workingTree(c, e, repo, outputsAt(c, repo, head, nil))
		if err != nil {
			return 0, err
		}
		spec.Tree = wt.Hash
	}
	res, err := runner.Step(c.Context, argv, sp, spec, e.live, serve)
	if err != nil {
		var sf *runner.StepFailure
		var se *runner.StartError
		switch {
		case errors.As(err, &sf):
			return 0, stepFailure{sf.Err}
		case errors.As(err, &se):
			return 0, fmt.Errorf("cannot run %q: %v", argv[0], se.Err)
		case errors.Is(err, store.ErrBadInput):
			return 0, stepConfigErrorf("%v", err)
		}
		return 0, err
	}
	if res.Skip != "" && res.Runs == nil {
		fmt.Fprintf(e.stderr, "perfgate: bisect-step: %s: %s: skip\n", short(head), res.Skip)
		return stepSkip, nil
	}
	if !c.Bool("no-store") {
		if _, err := saver(c, repo).Save(res.Runs); err != nil {
			fmt.Fprintf(e.stderr, "perfgate: warning: bisect-step: the result was not stored: %v\n", err)
		}
	}
	if res.Skip != "" {
		fmt.Fprintf(e.stderr, "perfgate: bisect-step: %s: %s: skip\n", short(head), res.Skip)
		return stepSkip, nil
	}
	values := res.Values
	v := medianOf(values)
	change := v/ref - 1
	worse := change
	if dir == metric.HigherIsBetter {
		worse = -change
	}
	verdict, code := "good", stepGood
	if worse > threshold {
		verdict, code = "bad", stepBad
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: %s: %s %s against %s (%+.1f%%; bad beyond %.3g%% worse): %s\n",
		short(head), sp.Metric.Name, strconv.FormatFloat(v, 'g', 6, 64), strconv.FormatFloat(ref, 'g', 6, 64), 100*change, 100*threshold, verdict)
	return code, nil
}

// stepReference is the good value bisect-step compares with.
func stepReference(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, argv []string, serve *runner.Serve) (float64, error) {
	if s := c.String("reference"); s != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) {
			return 0, stepConfigErrorf("--reference %q is not a positive number; give the good value of %s, e.g. --reference 512.3", s, sp.Metric.Name)
		}
		return v, nil
	}
	rev := c.String("baseline")
	sha, err := repo.Resolve(rev)
	if err != nil {
		return 0, stepConfigErrorf("--baseline: %v", err)
	}
	known, err := loadStored(c, repo, sp, []string{sha}, false)
	if err != nil {
		return 0, stepConfigErrorf("%v", err)
	}
	if len(known[0]) == 0 {
		return baselineFallback(c, e, repo, sp, rev, sha, argv, serve)
	}
	return medianOf(known[0]), nil
}

func medianOf(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
