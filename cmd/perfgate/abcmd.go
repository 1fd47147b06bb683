package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, abCommand) }

func abCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "ab",
		Usage:     "run the benchmark on two commits interleaved on this machine and gate head against base, pair by pair",
		ArgsUsage: "-- CMD [ARGS...]",
		Description: "For runners whose speed varies from run to run (shared or thermally throttled machines,\n" +
			"noisy neighbours), where a history of single runs cannot tell a regression from a slow day.\n" +
			"--base and --head are checked out in temporary directories (your checkout, branch and files\n" +
			"are never touched; with uncommitted changes, the committed --head is what runs) and CMD runs\n" +
			"there --repeat times each, interleaved A B B A A B ...; every run is stored under its commit.\n" +
			"Each head run is compared with the base run next to it (log ratio): the shift is their\n" +
			"Hodges-Lehmann estimate and a one-sided paired t test at 0.01 says whether it is real. A rule\n" +
			"fails when the shift is beyond its limit and significant, and is inconclusive when it is beyond\n" +
			"but not significant (run more pairs); the report's verdict then follows inconclusive: of the\n" +
			"rules, as check's does. Rules come from .perfgate.yml (or --rules) and --rule. Every run records\n" +
			"the testbed (--testbed, else as run derives it). CMD's environment, without GitHub tokens, gains\n" +
			"PERFGATE_COMMIT and PERFGATE_AB_SIDE (base or head). Exit 1 when the gate fails, 3 when a run\n" +
			"fails (the runs that finished are stored)." + serveHelp + "\n" +
			"ab runs the setup in both checkouts first, then one server at a time, restarted at each switch\n" +
			"of side (A B B A: the accelerators hold one engine); --ab-servers both keeps a server of each\n" +
			"side up side by side, each on its own port, and alternates the client between them.",
		Flags: append(append([]cli.Flag{
			runAliasFlag(),
			&cli.StringFlag{Name: "base", Usage: "the reference revision `REV` (required), e.g. main"},
			&cli.StringFlag{Name: "head", Value: "HEAD", Usage: "the revision `REV` under test"},
			&cli.IntFlag{Name: "repeat", Value: 5, Usage: "runs `N` of each commit (pairs)"},
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "benchmark `NAME` (required)"},
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE`; repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "benchmark format to parse the command's output as (auto detects): " + strings.Join(ingest.Formats(), ", ")},
			&cli.StringFlag{Name: "workdir", Usage: "`DIR` for the temporary checkouts (default: the system's temporary directory)"},
			testbedFlag(),
			rulesFileFlag(),
			ruleFlag(""),
			&cli.StringFlag{Name: "ab-servers", Value: "one", Usage: "with --server: `one` server at a time, restarted at each switch of side, or both side by side"},
		}, serveFlags()...), reportFlags()...),
		Action: func(c *cli.Context) error { return runAB(c, e) },
	}
}

func runAB(c *cli.Context, e *env) error {
	if _, err := checkOutput(c, "text", "markdown", "md", "json"); err != nil {
		return err
	}
	name := c.String("name")
	if name == "" {
		return usageErrorf("ab: --name is required: the benchmark name results are stored under (for example --name serving-qwen)")
	}
	if c.String("base") == "" {
		return usageErrorf("ab: --base is required: the revision to compare against, e.g. --base main")
	}
	argv, err := commandArgv(c, "ab")
	if err != nil {
		return err
	}
	n := c.Int("repeat")
	if n < 2 {
		return usageErrorf("--repeat %d: ab needs at least 2 runs of each commit to measure the noise (5 or more to decide a small change)", n)
	}
	labels, err := parseLabels(c.StringSlice("label"))
	if err != nil {
		return err
	}
	serve, err := parseServe(c, e)
	if err != nil {
		return err
	}
	both := false
	switch v := c.String("ab-servers"); v {
	case "one":
	case "both":
		both = true
	default:
		return usageErrorf("--ab-servers %q: choose one (a server at a time) or both (side by side)", v)
	}
	if c.IsSet("ab-servers") && (serve == nil || serve.Server == "") {
		return usageErrorf("--ab-servers is about the servers of --server; pass --server 'CMD' too, or leave --ab-servers out")
	}
	if serve != nil {
		serve.Live = e.live
	}
	repo, cfg, err := openRepoConfig(c)
	if err != nil {
		return err
	}
	defer repo.Close()
	setLogDir(serve, c, repo)
	m, err := detectMachine(c, e, repo)
	if err != nil {
		return err
	}
	base, err := repo.Resolve(c.String("base"))
	if err != nil {
		return gitError(fmt.Errorf("--base: %w", err))
	}
	head, err := repo.Resolve(c.String("head"))
	if err != nil {
		return gitError(fmt.Errorf("--head: %w", err))
	}
	if base == head {
		return usageErrorf("--base %s and --head %s are the same commit %s; ab compares two different commits", c.String("base"), c.String("head"), short(head))
	}
	if !c.IsSet("head") {
		if dirty, derr := repo.Dirty(c.Context); derr == nil && dirty {
			fmt.Fprintf(e.stderr, "perfgate: ab: the working tree has uncommitted changes; ab measures the committed HEAD %s (commit your changes to measure them)\n", short(head))
		}
	}
	ab := &runner.AB{
		Worktree: &runner.Worktree{Repo: repo, Dir: c.String("workdir"), Grace: runGrace},
		Base:     base, Head: head, N: n,
		Command:  runner.Command{Argv: argv, Format: c.String("format"), Live: e.live, KeepRaw: true},
		Spec:     m.spec(runner.Spec{Name: name, Labels: labels}),
		Progress: e.stderr,
		Serve:    serve, Both: both,
	}
	if err := parseResultFile(c, &ab.Command); err != nil {
		return err
	}
	got, runErr := ab.Run(c.Context)
	// A history that cannot be written does not cost the verdict: the
	// runs are saved aside (with the command that stores them) and the
	// report is made from memory; the exit is then 3 unless the gate fails.
	var saveErr error
	if len(got.Runs) > 0 {
		added, err := saver(c, repo).Save(got.Runs, got.Raw...)
		if err != nil {
			saveErr = storeError(err)
			fmt.Fprintf(e.stderr, "perfgate: ab: %v\n", err)
		} else {
			fmt.Fprintf(e.stderr, "perfgate: ab: stored %d of %d results (%d at base %s, %d at head %s)\n",
				added, len(got.Runs), countAt(got.Runs, base), short(base), countAt(got.Runs, head), short(head))
		}
	} else {
		got.Discard()
	}
	if runErr != nil {
		var intr *runner.Interrupted
		if errors.As(runErr, &intr) {
			return envError(fmt.Errorf("%v; the runs that finished are stored", runErr))
		}
		if errors.Is(runErr, store.ErrBadInput) {
			return &exitError{code: exitBad, err: runErr}
		}
		return gitError(runErr)
	}
	rep := gate.CheckPaired(got.GatePairs(), gate.PairedOptions{Head: head, Base: base, BaseRef: c.String("base"), Config: cfg})
	if serve.Active() {
		rep.Notes = append(rep.Notes, servedNote(serve, ab))
	}
	if err := writeReport(c, e, rep); err != nil {
		return err
	}
	if rep.Failed() {
		return errGateFailed
	}
	if saveErr != nil {
		return &exitError{code: exitCode(saveErr), err: errors.New("ab: the runs were not stored in the history (see above)")}
	}
	return nil
}

// countAt counts the runs of a commit.
func countAt(runs []store.Run, sha string) int {
	n := 0
	for _, r := range runs {
		if r.Commit == sha {
			n++
		}
	}
	return n
}

// servedNote says in ab's report how the commits were served.
func servedNote(s *runner.Serve, ab *runner.AB) string {
	var parts []string
	if s.Setup != "" {
		parts = append(parts, fmt.Sprintf("setup %q in each checkout", s.Setup))
	}
	if s.Server != "" {
		how := "one at a time, restarted at each switch of side"
		if ab.Both {
			how = "both side by side"
		}
		parts = append(parts, fmt.Sprintf("server %q (%s; ready in %s at base, %s at head)", s.Server, how,
			ab.Ready[0].Round(time.Millisecond), ab.Ready[1].Round(time.Millisecond)))
		if s.Warmup > 0 {
			parts = append(parts, fmt.Sprintf("%d warm-up run(s) per server start, not stored", s.Warmup))
		}
	}
	return "served: " + strings.Join(parts, "; ")
}
