package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

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
			"10s), stores the repetitions that finished before and exits 3. The history is opened only to\n" +
			"store the results; if it cannot be written then, they are saved to a file (with the raw\n" +
			"output) and perfgate prints the perfgate import command that stores them.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "benchmark `NAME` (required)"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run the command `N` times; each repetition is one sample"},
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE`; repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "output format of the command: " + strings.Join(ingest.Formats(), ", ")},
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			name := c.String("name")
			if name == "" {
				return usageErrorf("run: --name is required: the benchmark name results are stored under (for example --name serving-qwen)")
			}
			argv := c.Args().Slice()
			if len(argv) == 0 {
				return usageErrorf("run: no command given; write it after --, for example: perfgate run --name B -- vllm bench serve --model M")
			}
			n := c.Int("repeat")
			if n < 1 {
				return usageErrorf("--repeat %d: must be at least 1", n)
			}
			labels, err := parseLabels(c.StringSlice("label"))
			if err != nil {
				return err
			}
			repo, err := openRepo(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			commit, dirty, err := resolveCommit(c, repo, "HEAD", true)
			if err != nil {
				return err
			}
			rep := &runner.Repeat{
				Command:  runner.Command{Argv: argv, Format: c.String("format"), Live: e.stderr, Grace: runGrace, KeepRaw: true},
				Spec:     runner.Spec{Root: repo.Root(), Name: name, Labels: labels, Commit: commit, Dirty: dirty},
				N:        n,
				Progress: e.stderr,
			}
			got, runErr := rep.Run(c.Context)
			if len(got.Good) == 0 {
				got.Discard()
				return runError(runErr)
			}
			// What finished is stored, also when other repetitions failed.
			if err := storeRuns(c, e, repo, got.Runs, out, got.Raw...); err != nil {
				return err
			}
			return runError(runErr)
		},
	}
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
	}
	if errors.Is(err, store.ErrBadInput) {
		return &exitError{code: exitBad, err: fmt.Errorf("%w; nothing was stored", err)}
	}
	return storeError(err)
}
