package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
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
	// First numbers the first repetition in messages and source names
	// (1 when 0), for sessions that run one repetition at a time.
	First int
	// Progress gets "perfgate: run i of N: CMD" before each repetition
	// when N > 1; nil is silent.
	Progress io.Writer
	// Serve and Server are the setup and the running server the
	// repetitions measure (Serve.Begin): the command's environment gains
	// PERFGATE_PORT, the runs record Serve.Facts, and a server that exits
	// ends the session with a *ServerError. Both nil for a plain benchmark.
	Serve  *Serve
	Server *Server
}

// Interrupted is a repetition stopped by Ctrl-C or SIGTERM.
type Interrupted struct {
	Cmd      string // the perfgate command, "run" when empty
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
	cmd, unit := "run", "repetition"
	if e.Cmd != "" {
		cmd, unit = e.Cmd, "pair"
	}
	if e.N <= 1 {
		return fmt.Sprintf("%s: %s; stopped the benchmark command %q in %s %d", cmd, what, e.Program, unit, e.Rep)
	}
	return fmt.Sprintf("%s: %s; stopped the benchmark command %q in %s %d of %d", cmd, what, e.Program, unit, e.Rep, e.N)
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
	if e.N <= 1 {
		return fmt.Sprintf("run: the benchmark command %q %s (run %d)", e.Program, e.Output.Failure(), e.Rep)
	}
	return fmt.Sprintf("run: the benchmark command %q %s (repetition %d of %d)", e.Program, e.Output.Failure(), e.Rep, e.N)
}

// Outcome is what the repetitions produced.
type Outcome struct {
	Runs []store.Run
	// Raw holds the raw output files of the good repetitions
	// (Command.KeepRaw); Saver keeps them when the history cannot be
	// written, Discard removes them.
	Raw []string
	// Good are the repetitions (numbered from First) that produced runs.
	Good []int
	// Failed are the repetitions that failed, with why.
	Failed []Failure
}

// Failure is one repetition that failed, or the repetitions Rep to
// Through (when above Rep) that could not run.
type Failure struct {
	Rep     int
	Through int
	Err     error
}

// reps is how many repetitions the failure covers.
func (f Failure) reps() int { return max(f.Through-f.Rep, 0) + 1 }

// Discard removes the raw output files.
func (o *Outcome) Discard() {
	for _, f := range o.Raw {
		os.Remove(f)
	}
	o.Raw = nil
}

// Incomplete is a Repeat where some repetitions failed and others
// produced runs: the good ones are in the Outcome, and are to be stored.
type Incomplete struct {
	N      int
	Good   []int
	Failed []Failure
}

func (e *Incomplete) Error() string {
	var b strings.Builder
	failed := 0
	for _, f := range e.Failed {
		failed += f.reps()
	}
	fmt.Fprintf(&b, "run: %d of %d repetitions failed, %s kept:", failed, e.N, repList(e.Good))
	for _, f := range e.Failed {
		if f.Through > f.Rep {
			fmt.Fprintf(&b, "\n  repetitions %d to %d: %v", f.Rep, f.Through, f.Err)
			continue
		}
		fmt.Fprintf(&b, "\n  repetition %d: %v", f.Rep, f.Err)
	}
	return b.String()
}

// Unwrap returns the failures' errors.
func (e *Incomplete) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f.Err
	}
	return errs
}

func repList(reps []int) string {
	parts := make([]string, len(reps))
	for i, r := range reps {
		parts[i] = fmt.Sprint(r)
	}
	if len(reps) == 1 {
		return "repetition " + parts[0]
	}
	return "repetitions " + strings.Join(parts, ", ")
}

// Run runs the repetitions. A repetition that fails (the command exited
// non-zero, or printed output the parser rejects) does not discard the
// others: the rest still run, and the error is an *Incomplete listing the
// failures while the Outcome holds the good repetitions' runs. When no
// repetition produced runs, the error is the first failure's. A command
// that cannot start stops at once (it would fail every time), and so does
// an interrupt (Ctrl-C, SIGTERM: an *Interrupted); the repetitions that
// finished before are kept in both cases.
func (r *Repeat) Run(ctx context.Context) (*Outcome, error) {
	// SIGTERM (a CI job cancelled) stops the command as Ctrl-C does.
	sctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	argv := r.Command.Argv
	o := &Outcome{}
	for i := 1; i <= r.N; i++ {
		if r.N > 1 && r.Progress != nil {
			fmt.Fprintf(r.Progress, "perfgate: run %d of %d: %s\n", i, r.N, strings.Join(argv, " "))
		}
		runs, raw, err := r.once(sctx, i)
		if serr := r.Server.Died(fmt.Sprintf("run %d of the benchmark", r.num(i)), err != nil); serr != nil && sctx.Err() == nil {
			// The server's death, not the client's failure it caused,
			// is the news; a result printed before it is kept and says so.
			if err == nil {
				for k := range runs {
					env := maps.Clone(runs[k].Env)
					if env == nil {
						env = map[string]string{}
					}
					env[FactServerExit] = serr.Exit
					runs[k].Env = env
				}
				o.Runs, o.Good = append(o.Runs, runs...), append(o.Good, r.num(i))
				if raw != "" {
					o.Raw = append(o.Raw, raw)
				}
				if i == r.N {
					if r.Progress != nil {
						fmt.Fprintf(r.Progress, "perfgate: warning: %v\nthe run's result is kept; it records the server's exit\n", serr)
					}
					break
				}
				// The repetitions left cannot run: they are listed as
				// not run, the server having died during this one.
				o.Failed = append(o.Failed, Failure{Rep: r.num(i + 1), Through: r.num(r.N), Err: fmt.Errorf("not run: %w", serr)})
				break
			}
			o.Failed = append(o.Failed, Failure{Rep: r.num(i), Err: serr})
			break
		}
		if err == nil {
			o.Runs = append(o.Runs, runs...)
			o.Good = append(o.Good, r.num(i))
			if raw != "" {
				o.Raw = append(o.Raw, raw)
			}
			continue
		}
		if sctx.Err() != nil {
			return o, &Interrupted{Program: ProgramName(argv), Rep: r.num(i), N: r.N, SIGTERM: ctx.Err() == nil, Finished: len(o.Good)}
		}
		o.Failed = append(o.Failed, Failure{Rep: r.num(i), Err: err})
		var se *StartError
		if errors.As(err, &se) {
			break
		}
		if r.N > 1 && r.Progress != nil {
			fmt.Fprintf(r.Progress, "perfgate: run %d of %d failed: %v\n", i, r.N, err)
		}
	}
	switch {
	case len(o.Failed) == 0:
		return o, nil
	case len(o.Good) == 0:
		return o, o.Failed[0].Err
	}
	return o, &Incomplete{N: r.N, Good: o.Good, Failed: o.Failed}
}

// num is repetition i's number in messages (First counts on).
func (r *Repeat) num(i int) int { return i + max(r.First, 1) - 1 }

// once runs repetition i and returns its runs and raw output file.
func (r *Repeat) once(ctx context.Context, i int) ([]store.Run, string, error) {
	argv := r.Command.Argv
	c := r.Command
	c.Source = fmt.Sprintf("output of %s (run %d)", ProgramName(argv), r.num(i))
	c.Env = r.Server.Env(c.Env)
	out, err := Exec(ctx, c)
	if err != nil {
		out.Discard()
		return nil, "", err
	}
	if out.ExitCode != 0 {
		out.Discard()
		return nil, "", &ExitError{Program: ProgramName(argv), Rep: r.num(i), N: r.N, Output: out}
	}
	if out.ParseErr != nil {
		out.Discard()
		return nil, "", &ParseError{out.ParseErr}
	}
	spec := WithFacts(r.Spec, r.Serve.Facts(r.Server))
	if c.ResultFile != "" {
		spec = WithFacts(spec, map[string]string{FactResultFile: factText(c.ResultFile)})
	}
	spec.Time = time.Now()
	spec.Command = argv
	runs, err := ToRuns(out.Results, spec)
	if err != nil {
		out.Discard()
		return nil, "", err
	}
	return runs, out.RawFile, nil
}

// ParseError is output the parser rejected: bad input,
// errors.Is(err, store.ErrBadInput).
type ParseError struct{ Err error }

func (e *ParseError) Error() string        { return e.Err.Error() }
func (e *ParseError) Unwrap() error        { return e.Err }
func (e *ParseError) Is(target error) bool { return target == store.ErrBadInput }
