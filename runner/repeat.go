package runner

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/store"
)

// Repeat runs one benchmark command N times in the current checkout
// (perfgate run); each repetition is one sample.
type Repeat struct {
	Command Command
	// Spec says what the results are stored as; Time is set to each
	// repetition's end.
	Spec Spec
	N    int
	// Progress gets "perfgate: run i of N: CMD" before each repetition
	// when N > 1; nil is silent.
	Progress io.Writer
}

// Interrupted is a repetition stopped by Ctrl-C or SIGTERM.
type Interrupted struct {
	Program  string
	Rep, N   int
	SIGTERM  bool // terminated rather than interrupted
	Finished int  // repetitions that had finished with a result
}

func (e *Interrupted) Error() string {
	what := "interrupted"
	if e.SIGTERM {
		what = "terminated (SIGTERM)"
	}
	return fmt.Sprintf("run: %s; stopped the benchmark command %q in repetition %d of %d", what, e.Program, e.Rep, e.N)
}

// Is makes errors.Is(err, context.Canceled) true.
func (e *Interrupted) Is(target error) bool { return target == context.Canceled }

// ExitError is a benchmark command that exited non-zero.
type ExitError struct {
	Program string
	Rep, N  int
	Output  *Output
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("run: the benchmark command %q %s (repetition %d of %d)", e.Program, e.Output.Failure(), e.Rep, e.N)
}

// Run runs the repetitions and returns their runs. It stops at the first
// repetition that fails (the command could not start, exited non-zero,
// printed output the parser rejects, or was interrupted) and returns its
// error; the runs of the repetitions before it are returned with it.
func (r *Repeat) Run(ctx context.Context) ([]store.Run, error) {
	// SIGTERM (a CI job cancelled) stops the command as Ctrl-C does.
	sctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	argv := r.Command.Argv
	var all []store.Run
	for i := 1; i <= r.N; i++ {
		if r.N > 1 && r.Progress != nil {
			fmt.Fprintf(r.Progress, "perfgate: run %d of %d: %s\n", i, r.N, strings.Join(argv, " "))
		}
		c := r.Command
		c.Source = fmt.Sprintf("output of %s (run %d)", argv[0], i)
		out, err := Exec(sctx, c)
		if err != nil {
			out.Discard()
			if sctx.Err() != nil {
				return all, &Interrupted{Program: argv[0], Rep: i, N: r.N, SIGTERM: ctx.Err() == nil, Finished: i - 1}
			}
			return all, err
		}
		out.Discard()
		if out.ExitCode != 0 {
			return all, &ExitError{Program: argv[0], Rep: i, N: r.N, Output: out}
		}
		if out.ParseErr != nil {
			return all, &ParseError{out.ParseErr}
		}
		spec := r.Spec
		spec.Time = time.Now()
		spec.Command = argv
		runs, err := ToRuns(out.Results, spec)
		if err != nil {
			return all, err
		}
		all = append(all, runs...)
	}
	return all, nil
}

// ParseError is output the parser rejected: bad input,
// errors.Is(err, store.ErrBadInput).
type ParseError struct{ Err error }

func (e *ParseError) Error() string        { return e.Err.Error() }
func (e *ParseError) Unwrap() error        { return e.Err }
func (e *ParseError) Is(target error) bool { return target == store.ErrBadInput }
