package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/internal/proc"
	"github.com/perfgate/perfgate/slo"
	"github.com/perfgate/perfgate/store"
)

// AB runs a benchmark on two commits interleaved on one machine (perfgate
// ab): each commit is checked out once into a temporary directory (never
// the user's checkout), and the command runs N times in each, in the
// order A B B A A B B A ..., so that pair k is runs 2k and 2k+1: adjacent
// in time, with the order inside a pair alternating, so a machine whose
// speed drifts over the session moves both runs of a pair alike and the
// drift cancels in their ratio.
type AB struct {
	Worktree *Worktree
	// Base and Head are the full commit ids.
	Base, Head string
	// Command is the benchmark; its Dir is set to each checkout, and its
	// environment (perfgate's without its tokens, proc.Environ, when nil) gains PERFGATE_COMMIT (the full id) and PERFGATE_AB_SIDE
	// (base or head).
	Command Command
	// Spec says what results are stored as; Commit, Time and Command are
	// set for each run.
	Spec Spec
	// N is the number of runs of each commit (pairs).
	N int
	// Progress gets one line before each run; nil is silent.
	Progress io.Writer
	// Serve is the setup and server (nil for a plain benchmark): the setup
	// runs once in each checkout before any run; one server runs at a
	// time, restarted at each switch of side, unless Both, which keeps
	// one server of each side up side by side (each its own port).
	Serve *Serve
	Both  bool
	// Ready is each side's server's time to ready (base, head): the
	// latest start's.
	Ready [2]time.Duration
}

// ABPair is one base run and the head run next to it.
type ABPair struct {
	Base, Head []store.Run
}

// ABOutcome is what an A/B session measured.
type ABOutcome struct {
	Pairs []ABPair // complete pairs
	// Runs are every run that produced results, in the order they ran,
	// including the half of a pair the session did not complete.
	Runs []store.Run
	Raw  []string // raw output files (Command.KeepRaw)
}

// Discard removes the raw output files.
func (o *ABOutcome) Discard() {
	for _, f := range o.Raw {
		os.Remove(f)
	}
	o.Raw = nil
}

// GatePairs returns the pairs as gate sees them.
func (o *ABOutcome) GatePairs() []gate.Pair {
	out := make([]gate.Pair, len(o.Pairs))
	for i, p := range o.Pairs {
		out[i] = gate.Pair{Base: Samples(p.Base), Head: Samples(p.Head)}
	}
	return out
}

// Samples converts runs to gate's samples.
func Samples(runs []store.Run) []gate.Sample {
	out := make([]gate.Sample, len(runs))
	for i, r := range runs {
		out[i] = gate.Sample{Commit: r.Commit, Benchmark: r.Benchmark, Labels: r.Labels, Metrics: r.Metrics, Time: r.Time, Dirty: r.Dirty, Invalid: r.Invalid, Testbed: r.Testbed}
		if len(r.Requests) > 0 {
			out[i].Requests = slo.Lazy(r.Requests)
		}
	}
	return out
}

// ABOrder returns which side runs at step i of the session: false for the
// base (A), true for the head (B), in the order A B B A A B B A ...
func ABOrder(i int) bool {
	return (i%2 == 1) != ((i/2)%2 == 1)
}

// Run checks both commits out, runs the session and removes the
// checkouts. It stops at the first run that fails (the error says which,
// as Repeat's do) or at an interrupt (*Interrupted); the runs that
// finished are in the outcome in every case, to be stored.
func (ab *AB) Run(ctx context.Context) (*ABOutcome, error) {
	sctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	o := &ABOutcome{}
	var cos [2]*Checkout
	defer func() {
		for _, co := range cos {
			if co != nil {
				co.Remove()
			}
		}
	}()
	for i, rev := range []string{ab.Base, ab.Head} {
		co, err := ab.Worktree.Checkout(sctx, rev)
		if err != nil {
			return o, err
		}
		cos[i] = co
	}
	argv := ab.Command.Argv
	interrupted := func(pair int) error {
		return &Interrupted{Cmd: "ab", Program: ProgramName(argv), Rep: pair, N: ab.N, SIGTERM: ctx.Err() == nil, Finished: len(o.Pairs)}
	}
	var srv [2]*Server
	defer func() { srv[0].Stop(); srv[1].Stop() }()
	for side, co := range cos {
		if err := ab.Serve.RunSetup(sctx, co.Dir, ab.env(side, co), ab.where(side, co)); err != nil {
			if sctx.Err() != nil {
				return o, interrupted(1)
			}
			return o, err
		}
	}
	var pending []store.Run // the first run of the current pair
	for i := range 2 * ab.N {
		side, name := 0, "base"
		if ABOrder(i) {
			side, name = 1, "head"
		}
		co := cos[side]
		pair := i/2 + 1
		if err := ab.serve(sctx, &srv, side, cos); err != nil {
			if sctx.Err() != nil {
				return o, interrupted(pair)
			}
			return o, err
		}
		if ab.Progress != nil {
			fmt.Fprintf(ab.Progress, "perfgate: ab: pair %d of %d, %s %s: %s\n", pair, ab.N, name, co.SHA[:min(12, len(co.SHA))], strings.Join(argv, " "))
		}
		c := ab.Command
		c.Dir = co.Dir
		c.Source = fmt.Sprintf("output of %s (%s, pair %d)", ProgramName(argv), name, pair)
		c.Env = srv[side].Env(ab.env(side, co))
		out, err := Exec(sctx, c)
		if sctx.Err() != nil {
			out.Discard()
			return o, interrupted(pair)
		}
		if serr := srv[side].Died(fmt.Sprintf("pair %d of the benchmark", pair), err != nil || out.ExitCode != 0 || out.ParseErr != nil); serr != nil {
			out.Discard()
			return o, serr
		}
		if err != nil {
			out.Discard()
			return o, err
		}
		if out.ExitCode != 0 {
			out.Discard()
			return o, fmt.Errorf("ab: the benchmark command %q %s at the %s commit %s (pair %d of %d); its output ended with:\n%s",
				ProgramName(argv), out.Failure(), name, co.SHA[:min(12, len(co.SHA))], pair, ab.N, out.TailLines(15))
		}
		if out.ParseErr != nil {
			out.Discard()
			return o, &ParseError{out.ParseErr}
		}
		if len(out.Results) == 0 {
			out.Discard()
			return o, &inputError{fmt.Sprintf("ab: the output of %q at the %s commit (pair %d) has no benchmark result; check that the command prints one (or pass --format)", ProgramName(argv), name, pair)}
		}
		spec := WithFacts(ab.Spec, ab.Serve.Facts(srv[side]))
		spec.Commit, spec.Time, spec.Command = co.SHA, time.Now(), argv
		runs, err := ToRuns(out.Results, spec)
		if err != nil {
			out.Discard()
			return o, err
		}
		if out.RawFile != "" {
			o.Raw = append(o.Raw, out.RawFile)
		}
		o.Runs = append(o.Runs, runs...)
		if i%2 == 0 {
			pending = runs
			continue
		}
		p := ABPair{Base: pending, Head: runs}
		if side == 0 {
			p = ABPair{Base: runs, Head: pending}
		}
		o.Pairs = append(o.Pairs, p)
	}
	return o, nil
}

// env is the environment of a side's commands: perfgate's without its
// tokens, with PERFGATE_COMMIT and PERFGATE_AB_SIDE.
func (ab *AB) env(side int, co *Checkout) []string {
	env := ab.Command.Env
	if env == nil {
		env = proc.Environ()
	}
	name := [2]string{"base", "head"}[side]
	return append(env[:len(env):len(env)], "PERFGATE_COMMIT="+co.SHA, "PERFGATE_AB_SIDE="+name)
}

// where names a side's checkout in messages: " at base 1234abcd5678".
func (ab *AB) where(side int, co *Checkout) string {
	return fmt.Sprintf(" at %s %s", [2]string{"base", "head"}[side], co.SHA[:min(12, len(co.SHA))])
}

// serve makes sure side's server runs before its run: with one server at
// a time, the other side's is stopped first (it frees the accelerators
// and the memory); with Both, both are started at the first run.
func (ab *AB) serve(ctx context.Context, srv *[2]*Server, side int, cos [2]*Checkout) error {
	if ab.Serve == nil || ab.Serve.Server == "" || srv[side] != nil {
		return nil
	}
	sides := []int{side}
	if ab.Both {
		sides = []int{0, 1}
	} else {
		srv[1-side].Stop()
		srv[1-side] = nil
	}
	for _, k := range sides {
		if srv[k] != nil {
			continue
		}
		s, err := ab.Serve.StartWarm(ctx, cos[k].Dir, ab.env(k, cos[k]), ab.client(k, cos[k]), ab.where(k, cos[k]))
		if err != nil {
			return err
		}
		srv[k], ab.Ready[k] = s, s.ReadyIn
	}
	return nil
}

// client is the benchmark command as a side's warm-up runs it.
func (ab *AB) client(side int, co *Checkout) Command {
	c := ab.Command
	c.Dir, c.Env = co.Dir, ab.env(side, co)
	return c
}
