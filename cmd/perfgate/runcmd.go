package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/internal/proc"
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
			testbedFlag(),
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
			o, err := measureOrigin(c, e, repo, "HEAD", true, nil, "commit them (or ignore the files in .gitignore) to measure HEAD itself")
			if err != nil {
				return err
			}
			var runs []store.Run
			for i := 1; i <= n; i++ {
				if n > 1 {
					fmt.Fprintf(e.stderr, "perfgate: run %d of %d: %s\n", i, n, strings.Join(argv, " "))
				}
				results, err := runOnce(c, e, argv, c.String("format"), i, n)
				if err != nil {
					return err
				}
				rs, err := toRuns(results, o.spec(runSpec{root: repo.Root(), name: name, labels: labels, time: time.Now(), command: argv}))
				if err != nil {
					return err
				}
				runs = append(runs, rs...)
			}
			if o.tree != "" {
				warnTreeChanged(c, e, repo, o)
			}
			return storeRuns(c, e, repo, runs, out)
		},
	}
}

// runGrace is how long a stopped benchmark command has between SIGTERM
// and SIGKILL; tests shorten it.
var runGrace = 10 * time.Second

// runOnce runs the command in a process group of its own, streaming its
// combined output to stderr and, through a pipe, to the parser as it comes
// (memory stays bounded however much it prints). Its stdin is /dev/null.
// Ctrl-C (SIGINT) or SIGTERM stops the whole group: SIGTERM, then SIGKILL
// after runGrace.
func runOnce(c *cli.Context, e *env, argv []string, format string, rep, reps int) ([]ingest.Result, error) {
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGTERM)
	defer stop()
	parser := newStreamParser(fmt.Sprintf("output of %s (run %d)", argv[0], rep), format)
	live := &lastByteWriter{w: e.stderr} // also written by Cancel's goroutine
	w := io.MultiWriter(live, parser)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Stdin = nil // /dev/null: a benchmark that reads stdin gets EOF, never perfgate's input
	cmd.Env = proc.Environ()
	proc.SetGroup(cmd, runGrace)
	stopGroup := cmd.Cancel
	cmd.Cancel = func() error {
		fmt.Fprintf(live, "\nperfgate: stopping the benchmark command (SIGTERM to its process group, SIGKILL in %v)\n", runGrace)
		return stopGroup()
	}
	err := cmd.Run()
	if ctx.Err() != nil || errors.Is(err, exec.ErrWaitDelay) {
		// Stopped, or exited leaving something that holds its output
		// open: nothing of the group may outlive perfgate.
		proc.KillGroup(cmd)
	}
	results, perr := parser.Finish()
	if live.last != 0 && live.last != '\n' {
		fmt.Fprintln(e.stderr)
	}
	if ctx.Err() != nil {
		what := "interrupted"
		if c.Context.Err() == nil {
			what = "terminated (SIGTERM)"
		}
		return nil, envError(fmt.Errorf("run: %s; stopped the benchmark command %q in repetition %d of %d and stored nothing", what, argv[0], rep, reps))
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command itself exited; what it left running was killed.
		fmt.Fprintf(e.stderr, "perfgate: the benchmark command exited but left processes holding its output open for %v; killed them\n", runGrace)
		err = nil
		if st := cmd.ProcessState; st != nil && !st.Success() {
			err = &exec.ExitError{ProcessState: st}
		}
	}
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			how := fmt.Sprintf("exited with code %d", ee.ExitCode())
			switch ee.ExitCode() {
			case 126:
				how += " (the shell's 'cannot execute': check the file's permissions)"
			case 127:
				how += " (the shell's 'command not found': check the command and PATH)"
			}
			if sig := proc.Signal(ee); sig != 0 {
				how = fmt.Sprintf("was killed by signal %d (%v)", sig, syscall.Signal(sig))
			}
			return nil, envError(fmt.Errorf("run: the benchmark command %q %s (repetition %d of %d); nothing was stored. Fix the command, or run it by hand and use perfgate ingest", argv[0], how, rep, reps))
		}
		return nil, envError(fmt.Errorf("run: cannot start %q: %v; check the command and PATH", argv[0], startError(err)))
	}
	if perr != nil {
		return nil, &exitError{code: exitBad, err: fmt.Errorf("%w; nothing was stored", perr)}
	}
	return results, nil
}

// streamParser parses a command's output as the command writes it: writes
// go through a pipe to an ingest.Reader, so memory stays bounded however
// much the command prints (perfgate run, bisect --run, bisect-step).
// Writes never fail: once the parser stops reading (a malformed block),
// the rest is discarded, so the output still flows to the terminal. It is
// not safe for concurrent writes; exec.Cmd with one writer as Stdout and
// Stderr writes from one goroutine at a time.
type streamParser struct {
	pw   *io.PipeWriter
	w    forgivingWriter
	done chan struct{}
	res  []ingest.Result
	err  error
}

// newStreamParser starts parsing; name names the output in errors. Call
// Finish once the command has exited.
func newStreamParser(name, format string) *streamParser {
	pr, pw := io.Pipe()
	s := &streamParser{pw: pw, w: forgivingWriter{w: pw}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		r := ingest.NewReader(pr, name, ingest.Options{Format: format})
		for r.Scan() {
			s.res = append(s.res, r.Result())
		}
		s.err = r.Err()
		pr.Close() // the rest of the output is only shown
	}()
	return s
}

func (s *streamParser) Write(p []byte) (int, error) { return s.w.Write(p) }

// Finish ends the output and returns what the parser found in it.
func (s *streamParser) Finish() ([]ingest.Result, error) {
	s.pw.Close()
	<-s.done
	return s.res, s.err
}

// startError drops exec's "fork/exec NAME: " and "exec: NAME: " prefixes,
// which repeat the command the message already names.
func startError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// lastByteWriter remembers the last byte written, so that perfgate's own
// messages start on a line of their own after output without a final
// newline.
type lastByteWriter struct {
	mu   sync.Mutex
	w    io.Writer
	last byte
}

func (l *lastByteWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(p) > 0 {
		l.last = p[len(p)-1]
	}
	return l.w.Write(p)
}

// forgivingWriter writes to w until the first error, then discards: the
// parser may stop reading early (a malformed block), and the command's
// output must still flow to the terminal.
type forgivingWriter struct {
	w      io.Writer
	failed bool
}

func (f *forgivingWriter) Write(p []byte) (int, error) {
	if !f.failed {
		if _, err := f.w.Write(p); err != nil {
			f.failed = true
		}
	}
	return len(p), nil
}
