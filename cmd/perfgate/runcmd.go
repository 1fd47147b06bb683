package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/ingest"
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
			"If any repetition fails, nothing is stored.",
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
			var runs []store.Run
			for i := 1; i <= n; i++ {
				if n > 1 {
					fmt.Fprintf(e.stderr, "perfgate: run %d of %d: %s\n", i, n, strings.Join(argv, " "))
				}
				results, err := runOnce(c, e, argv, c.String("format"), i)
				if err != nil {
					return err
				}
				rs, err := toRuns(results, runSpec{root: repo.Root(), name: name, labels: labels, commit: commit, dirty: dirty, time: time.Now(), command: argv})
				if err != nil {
					return err
				}
				runs = append(runs, rs...)
			}
			return storeRuns(c, e, repo, runs, out)
		},
	}
}

// runOnce runs the command, streaming its combined output to stderr while
// capturing it, then parses what it printed.
func runOnce(c *cli.Context, e *env, argv []string, format string, rep int) ([]ingest.Result, error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(c.Context, argv[0], argv[1:]...)
	w := io.MultiWriter(&buf, e.stderr)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Stdin = nil
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			how := fmt.Sprintf("exited with code %d", ee.ExitCode())
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				how = fmt.Sprintf("was killed by signal %d (%v)", ws.Signal(), ws.Signal())
			}
			return nil, envError(fmt.Errorf("run: the benchmark command %q %s (repetition %d); nothing was stored. Fix the command, or run it by hand and use perfgate ingest", argv[0], how, rep))
		}
		return nil, envError(fmt.Errorf("run: cannot start %q: %v; check the command and PATH", argv[0], err))
	}
	name := fmt.Sprintf("output of %s (run %d)", argv[0], rep)
	r := ingest.NewReader(&buf, name, ingest.Options{Format: format})
	var res []ingest.Result
	for r.Scan() {
		res = append(res, r.Result())
	}
	if err := r.Err(); err != nil {
		return nil, &exitError{code: exitBad, err: fmt.Errorf("%w; nothing was stored", err)}
	}
	return res, nil
}
