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
			"If any repetition fails, nothing is stored. The command's stdin is /dev/null and it runs in a\n" +
			"process group of its own: Ctrl-C (or SIGTERM) stops it and whatever it started (SIGTERM, then\n" +
			"SIGKILL after 10s), stores nothing and exits 3.",
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
				Command:  runner.Command{Argv: argv, Format: c.String("format"), Live: e.stderr, Grace: runGrace},
				Spec:     runner.Spec{Root: repo.Root(), Name: name, Labels: labels, Commit: commit, Dirty: dirty},
				N:        n,
				Progress: e.stderr,
			}
			runs, err := rep.Run(c.Context)
			if err != nil {
				return runError(err)
			}
			return storeRuns(c, e, repo, runs, out)
		},
	}
}

// runGrace is how long a stopped benchmark command has between SIGTERM
// and SIGKILL; tests shorten it.
var runGrace = runner.DefaultGrace

// runError maps a failed repetition to its exit code and message.
func runError(err error) error {
	var intr *runner.Interrupted
	var ee *runner.ExitError
	var se *runner.StartError
	switch {
	case errors.As(err, &intr):
		return envError(fmt.Errorf("%v and stored nothing", err))
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
