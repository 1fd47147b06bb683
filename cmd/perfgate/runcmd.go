package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, runCommand) }

func runCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a benchmark command, stream its output, parse it and store it under HEAD",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: "The command's output (stdout and stderr) is shown live on stderr and parsed when it\n" +
			"exits. A run on a working tree with uncommitted changes is marked dirty, so a local\n" +
			"pre-merge check compares it with main:  perfgate run --name B -- CMD && perfgate check\n" +
			"With --repeat N, a repetition that fails (non-zero exit, unreadable output) does not discard\n" +
			"the others: the rest still run, every repetition with a result is stored, and perfgate says\n" +
			"which failed and exits 3. The command's stdin is /dev/null and it runs in a process group of\n" +
			"its own: Ctrl-C (or SIGTERM) stops it and whatever it started (SIGTERM, then SIGKILL after\n" +
			"10s, or at once on a second Ctrl-C), stores the repetitions that finished before and exits 3.\n" +
			"The history is opened only to store the results; if it cannot be written then, they are\n" +
			"saved to a file (with the raw output) and perfgate prints the import command that stores them.\n\n" +
			"--repeat auto runs once, stores the run and evaluates check (--base, --rules, --rule as check\n" +
			"takes them); it runs again only while a check is undecided (inconclusive, or a pass or fail\n" +
			"that more runs could still change; a fail needs 4 runs), up to --max-runs, and reports the\n" +
			"runs it spent (-o json: runs_spent, decided, verdict)." + serveHelp,
		Flags: append([]cli.Flag{
			runAliasFlag(),
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "benchmark `NAME` (required)"},
			&cli.StringFlag{Name: "repeat", Value: "1", Usage: "run the command `N` times (each repetition is one sample), or auto: run again only while check's verdict is undecided"},
			&cli.IntFlag{Name: "max-runs", Value: runner.DefaultMaxRuns, Usage: "with --repeat auto, the run budget `N`"},
			&cli.StringFlag{Name: "base", Usage: "with --repeat auto, the base branch check compares with (default: baseline.branch of the rules, else main)"},
			rulesFileFlag(),
			ruleFlag("with --repeat auto, "),
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE`; repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "benchmark format to parse the command's output as (auto detects): " + strings.Join(ingest.Formats(), ", ")},
			testbedFlag(),
			outputFlag("text", "json"),
		}, serveFlags()...),
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			name := c.String("name")
			if name == "" {
				return usageErrorf("run: --name is required: the benchmark name results are stored under (for example --name serving-qwen)")
			}
			argv, err := commandArgv(c, "run")
			if err != nil {
				return err
			}
			n, auto, err := parseRepeat(c)
			if err != nil {
				return err
			}
			labels, err := parseLabels(c.StringSlice("label"))
			if err != nil {
				return err
			}
			serve, err := parseServe(c, e)
			if err != nil {
				return err
			}
			repo, err := openRepo(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			o, err := measureOrigin(c, e, repo, "HEAD", true, nil, "commit them (or ignore the files in .gitignore) to measure HEAD itself")
			if err != nil {
				return err
			}
			rep := &runner.Repeat{
				Command:  runner.Command{Argv: argv, Format: c.String("format"), Live: e.live, Grace: runGrace, KeepRaw: true},
				Spec:     o.spec(runner.Spec{Root: repo.Root(), Name: name, Labels: labels}),
				N:        n,
				Progress: e.stderr,
			}
			if err := parseResultFile(c, &rep.Command); err != nil {
				return err
			}
			setLogDir(serve, c, repo)
			srv, err := beginServe(c.Context, serve, rep.Command, e.live)
			defer srv.Stop()
			if err != nil {
				return runError(err)
			}
			rep.Serve, rep.Server = serve, srv
			if auto {
				return runAdaptive(c, e, repo, rep, o, out)
			}
			got, runErr := rep.Run(c.Context)
			if len(got.Good) == 0 {
				got.Discard()
				return runError(runErr)
			}
			warnTreeChanged(c, e, repo, o)
			// What finished is stored, also when other repetitions failed.
			added, err := saver(c, repo).Save(got.Runs, got.Raw...)
			if err != nil {
				return storeError(err)
			}
			if err := reportServed(e, got.Runs, added, out, nil); err != nil {
				return err
			}
			return runError(runErr)
		},
	}
}

// parseRepeat reads --repeat N or --repeat auto (with --max-runs).
func parseRepeat(c *cli.Context) (n int, auto bool, err error) {
	v := strings.TrimSpace(c.String("repeat"))
	if strings.EqualFold(v, "auto") {
		if m := c.Int("max-runs"); m < 1 {
			return 0, false, usageErrorf("--max-runs %d: the run budget must be at least 1 (default %d)", m, runner.DefaultMaxRuns)
		}
		return 1, true, nil
	}
	if c.IsSet("max-runs") {
		return 0, false, usageErrorf("--max-runs is the budget of --repeat auto; with --repeat %s it does nothing: pass --repeat auto, or leave --max-runs out", v)
	}
	n, err = strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, false, usageErrorf("--repeat %q: must be a whole number of runs, at least 1, or auto", v)
	}
	return n, false, nil
}

// runAdaptive is run --repeat auto: one run at a time, each stored at
// once (so check sees it), until check's verdict is decided or --max-runs
// runs are spent (runner.Adaptive).
func runAdaptive(c *cli.Context, e *env, repo *gitrepo.Repo, rep *runner.Repeat, o origin, out string) error {
	cfg, err := loadConfig(c, repo)
	if err != nil {
		return err
	}
	rules := cfg.Rules
	if len(rules) == 0 {
		rules = gate.DefaultRules()
	}
	max := c.Int("max-runs")
	var runs []store.Run
	added := 0
	a := &runner.Adaptive{
		Max: max, Rules: rules, Progress: e.stderr,
		Measure: func(ctx context.Context, i int) error {
			fmt.Fprintf(e.stderr, "perfgate: run %d (at most %d): %s\n", i, max, strings.Join(rep.Command.Argv, " "))
			one := *rep
			one.First, one.Progress = i, nil
			got, err := one.Run(ctx)
			if len(got.Good) == 0 {
				got.Discard()
				return runError(err)
			}
			n, serr := saver(c, repo).Save(got.Runs, got.Raw...)
			if serr != nil {
				return storeError(serr)
			}
			runs, added = append(runs, got.Runs...), added+n
			if i == 1 {
				// check evaluates the tree as it is now: say so at
				// once if the command changed it.
				warnTreeChanged(c, e, repo, o)
			}
			return nil
		},
		Evaluate: func(context.Context) (*gate.Report, error) {
			return checkHead(c, e, repo, cfg, "HEAD", true)
		},
	}
	res, err := a.Run(c.Context)
	state := "decided"
	if !res.Decided {
		state = "undecided"
	}
	if res.Report != nil {
		fmt.Fprintf(e.stderr, "perfgate: run: spent %d of at most %d runs; check's verdict is %s (%s); perfgate check shows the report\n", res.Runs, max, res.Report.Verdict, state)
	}
	if len(runs) > 0 {
		extra := map[string]any{"runs_spent": res.Runs, "max_runs": max, "decided": res.Decided}
		if res.Report != nil {
			extra["verdict"] = string(res.Report.Verdict)
		}
		if len(res.Open) > 0 {
			extra["undecided"] = res.Open
		}
		if werr := reportServed(e, runs, added, out, extra); werr != nil {
			return werr
		}
	}
	return err
}

// runGrace is how long a stopped benchmark command has between SIGTERM
// and SIGKILL; tests shorten it.
var runGrace = runner.DefaultGrace

// runError maps failed repetitions to the exit code and message.
func runError(err error) error {
	var intr *runner.Interrupted
	var inc *runner.Incomplete
	var ee *runner.ExitError
	var se *runner.StartError
	var srvErr *runner.ServerError
	var setupErr *runner.SetupError
	var warmErr *runner.WarmupError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &intr):
		if intr.Finished > 0 {
			return envError(fmt.Errorf("%v; the %d repetition(s) that finished before are stored", err, intr.Finished))
		}
		return envError(fmt.Errorf("%v and stored nothing", err))
	case errors.As(err, &inc):
		return envError(fmt.Errorf("%v\nthe good repetitions are stored; run again for more samples", err))
	case errors.As(err, &ee):
		return envError(fmt.Errorf("%v; nothing was stored. Fix the command, or run it by hand and use perfgate ingest", err))
	case errors.As(err, &se):
		return envError(fmt.Errorf("run: %v", err))
	case errors.As(err, &srvErr) || errors.As(err, &setupErr) || errors.As(err, &warmErr):
		return envError(fmt.Errorf("run: %v; nothing was stored", err))
	}
	if errors.Is(err, store.ErrBadInput) {
		return &exitError{code: exitBad, err: fmt.Errorf("%w; nothing was stored", err)}
	}
	return storeError(err)
}

// reportServed is reportStored, with how the runs were served (the
// setup and server commands, the time to ready, the server's exit): in
// -o json as "serving", in text as lines after the summary.
func reportServed(e *env, runs []store.Run, added int, out string, extra map[string]any) error {
	facts := map[string]string{}
	for _, r := range runs {
		for _, l := range []string{runner.FactSetup, runner.FactServer, runner.FactReady, runner.FactServerExit} {
			if v, ok := r.Env[l]; ok {
				facts[l] = v
			}
		}
	}
	if len(facts) > 0 && out == "json" {
		if extra == nil {
			extra = map[string]any{}
		}
		extra["serving"] = servedJSON(facts)
	}
	if err := reportStored(e, runs, added, out, extra); err != nil || out == "json" {
		return err
	}
	for _, l := range servedFacts(facts) {
		fmt.Fprintf(e.stdout, "  %s\n", l)
	}
	return nil
}
