package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/bisect"
	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/internal/proc"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/slo"
	"github.com/perfgate/perfgate/store"
)

// Target is what a bisect measures: one metric of one benchmark.
type Target struct {
	Name   string
	Metric metric.Info
	Typed  string // --metric as typed
	Labels map[string]string
	Format string
	// ResultFile and SLO are the Command's (perfgate run --result-file,
	// --slo): the file the benchmark writes its result to, and the
	// objective goodput is computed for.
	ResultFile string
	SLO        *slo.Objective
	// Testbed and Env are the machine the runs are made on: new runs
	// record them, and stored runs of another testbed are not reused
	// (runs without a testbed, stored before perfgate recorded one, are).
	// With Testbed "" (bisect --stored) every testbed's runs are read,
	// each testbed a setup of its own.
	Testbed string
	Env     map[string]string
}

// UnknownMetric is the error for a metric no result has (bad input).
func (t Target) UnknownMetric(where string, have map[string]bool) error {
	names := make([]string, 0, len(have))
	for n := range have {
		names = append(names, n)
	}
	sort.Strings(names)
	msg := fmt.Sprintf("--metric %q: %s: no metric %q", t.Typed, where, t.Metric.Name)
	if s := metric.Suggest(t.Typed); s != "" && have[s] {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	if len(names) > 0 {
		msg += "; it has: " + strings.Join(names, ", ")
	}
	return &inputError{msg}
}

// Stored returns the stored values of the target's metric at each commit
// of shas (indexed as in shas): valid runs of the benchmark, measured on a
// clean checkout, whose labels (with the testbed as the label "testbed")
// match the target's, on the target's testbed (see Target.Testbed), and
// the metric names those runs have. Runs of several setups (two models,
// two testbeds) are not mixed: that is bad input asking for --label. Runs
// without a testbed take that of the other runs of their setup when they
// all share one.
func Stored(runs map[string][]store.Run, t Target, shas []string) (known map[int][]float64, have map[string]bool, err error) {
	index := make(map[string]int, len(shas))
	for i, sha := range shas {
		index[sha] = i
	}
	known = map[int][]float64{}
	identities := map[string]int{}
	have = map[string]bool{}
	adoptLegacyTestbed(runs)
	for sha, rs := range runs {
		for _, r := range rs {
			if r.Dirty || r.Invalid != "" || !labelsMatch(withTestbed(r), t.Labels) || !accepts(t.Testbed, r) {
				continue
			}
			for k := range r.Metrics {
				have[k] = true
			}
			v, ok := r.Metrics[t.Metric.Name]
			if !ok {
				continue
			}
			identities[setupKey(r)]++
			known[index[sha]] = append(known[index[sha]], v)
		}
	}
	if len(identities) > 1 {
		keys := setupNames(identities)
		return nil, nil, &inputError{fmt.Sprintf("the stored %s results in this range come from %d different setups (%s); pick one with --label KEY=VALUE",
			t.Name, len(identities), strings.Join(keys, "; "))}
	}
	return known, have, nil
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// identityKey renders the labels that identify a series (as the gate
// compares them), sorted.
func identityKey(labels map[string]string) string {
	skip := map[string]bool{}
	for _, l := range gate.DescriptiveLabels {
		skip[l] = true
	}
	var parts []string
	for k, v := range labels {
		if !skip[k] {
			parts = append(parts, k+"="+v)
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// CommitMeasurer is the bisect.Measurer of perfgate bisect --run: it runs
// the shell command line at a commit of the range in a temporary checkout
// (Worktree), stores what it printed and returns the metric's values.
type CommitMeasurer struct {
	Worktree *Worktree
	Saver    *Saver
	Target   Target
	Commits  []bisect.Commit
	Cmdline  string
	// Live shows the command's output as it runs; nil hides it.
	Live io.Writer
	// SkipFailures turns a failing command or an output without a result
	// into a skipped commit instead of an error.
	SkipFailures bool
	// Serve is the setup and server (nil for a plain benchmark): at each
	// commit, the setup runs once in its checkout (a failure skips the
	// commit, as exit code 125 does) and the server is started there and
	// kept up, with the checkout, while the search measures that commit
	// again; it is stopped before another commit's starts, and by Close.
	Serve *Serve

	cur *servedCommit
}

// servedCommit is the checkout of the commit being measured, with its
// running server.
type servedCommit struct {
	sha  string
	co   *Checkout
	srv  *Server
	fail error // the setup or server failed here: every measure of it does
}

func (m *CommitMeasurer) server() *Server {
	if m.cur == nil {
		return nil
	}
	return m.cur.srv
}

// Close stops the running server and removes its checkout.
func (m *CommitMeasurer) Close() error {
	cur := m.cur
	if cur == nil {
		return nil
	}
	m.cur = nil
	cur.srv.Stop()
	return cur.co.Remove()
}

// served runs c at commit cm against the commit's server, starting it
// (after the setup, in a fresh checkout) when another commit's runs.
func (m *CommitMeasurer) served(ctx context.Context, cm bisect.Commit, c Command) (*Output, error) {
	if m.cur == nil || m.cur.sha != cm.SHA {
		if err := m.Close(); err != nil {
			return nil, err
		}
		co, err := m.Worktree.Checkout(ctx, cm.SHA)
		if err != nil {
			return nil, err
		}
		m.cur = &servedCommit{sha: cm.SHA, co: co}
		env := append(proc.Environ(), "PERFGATE_BISECT_COMMIT="+co.SHA)
		client := c
		client.Dir, client.Env = co.Dir, env
		m.cur.srv, m.cur.fail = m.Serve.Begin(ctx, co.Dir, env, client, " at "+cm.Short)
		var setup *SetupError
		if errors.As(m.cur.fail, &setup) {
			if m.Serve.Progress != nil {
				fmt.Fprintf(m.Serve.Progress, "perfgate: %s: %v\n", m.Serve.Cmd, setup)
			}
			m.cur.fail = &bisect.SkipError{Reason: setup.Reason()}
		}
	}
	if m.cur.fail != nil {
		return nil, m.cur.fail
	}
	c.Dir = m.cur.co.Dir
	c.Env = m.cur.srv.Env(append(proc.Environ(), "PERFGATE_BISECT_COMMIT="+m.cur.sha))
	if c.Grace == 0 {
		c.Grace = m.Worktree.Grace
	}
	out, err := Exec(ctx, c)
	if serr := m.cur.srv.Died("the benchmark's run", err != nil || out.ExitCode != 0 || out.ParseErr != nil); serr != nil && ctx.Err() == nil {
		out.Discard()
		m.cur.fail = serr
		return nil, serr
	}
	return out, err
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Measure runs the benchmark at commit i.
func (m *CommitMeasurer) Measure(ctx context.Context, i int) ([]float64, error) {
	cm := m.Commits[i]
	where := fmt.Sprintf("%s (commit %d of %d)", cm.Short, i, len(m.Commits)-1)
	// The output is parsed as it comes; only its tail is kept.
	c := Command{
		Argv: []string{"sh", "-c", m.Cmdline}, Format: m.Target.Format,
		ResultFile: m.Target.ResultFile, SLO: m.Target.SLO,
		Source: "output of --run at " + cm.Short, Live: m.Live, KeepRaw: true,
	}
	var out *Output
	var err error
	if m.Serve.Active() {
		out, err = m.served(ctx, cm, c)
	} else {
		out, _, err = m.Worktree.Exec(ctx, cm.SHA, c, "PERFGATE_BISECT_COMMIT=%s")
	}
	defer out.Discard() // unless Save kept it beside unsaved runs
	var skip *bisect.SkipError
	var serr *ServerError
	var werr *WarmupError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &skip):
		return nil, err
	case errors.As(err, &serr) || errors.As(err, &werr):
		if m.SkipFailures {
			return nil, &bisect.SkipError{Reason: firstLine(err.Error())}
		}
		return nil, fmt.Errorf("bisect: at %s: %v\nfix the server, or pass --skip-failures to skip the commits where it fails", where, err)
	default:
		var se *StartError
		if errors.As(err, &se) {
			err = fmt.Errorf("cannot run the command with sh -c: %v", se.Err)
		}
		return nil, fmt.Errorf("bisect: at %s: %v", where, err)
	}
	if out.ExitCode == 125 {
		return nil, &bisect.SkipError{Reason: "exit code 125"}
	}
	if out.ExitCode != 0 {
		if m.SkipFailures {
			return nil, &bisect.SkipError{Reason: fmt.Sprintf("exit code %d", out.ExitCode)}
		}
		return nil, fmt.Errorf("bisect: --run failed at %s with exit code %d; its output ended with:\n%s\n"+
			"fix the command, make it exit 125 where a commit cannot be tested, or pass --skip-failures", where, out.ExitCode, out.TailLines(15))
	}
	err = out.ParseErr
	if err == nil && len(out.Results) == 0 {
		err = fmt.Errorf("the output of --run at %s has no benchmark result", where)
	}
	if err != nil {
		if m.SkipFailures {
			return nil, &bisect.SkipError{Reason: "no result in the output"}
		}
		return nil, &inputError{fmt.Sprintf("bisect: %v\nits output ended with:\n%s\ncheck that --run prints the benchmark's result (or pass --format), or pass --skip-failures", err, out.TailLines(15))}
	}
	runs, chosen, err := m.toRuns(out.Results, cm.SHA, where, m.Serve.Facts(m.server()))
	if err != nil {
		return nil, err
	}
	values, invalid, have := metricValues(chosen, m.Target.Metric.Name)
	if len(values) == 0 && invalid == "" {
		return nil, m.Target.UnknownMetric("the output of --run at "+where, have)
	}
	if _, err := m.Saver.Save(runs, out.RawFile); err != nil {
		return nil, err
	}
	if len(values) == 0 {
		return nil, &bisect.SkipError{Reason: "invalid result: " + invalid}
	}
	return values, nil
}

// metricValues returns the metric's values in the valid runs, why the
// last invalid run with the metric is invalid, and the metric names seen.
func metricValues(runs []store.Run, name string) (values []float64, invalid string, have map[string]bool) {
	have = map[string]bool{}
	for _, r := range runs {
		for k := range r.Metrics {
			have[k] = true
		}
		v, ok := r.Metrics[name]
		switch {
		case !ok:
		case r.Invalid != "":
			invalid = r.Invalid
		default:
			values = append(values, v)
		}
	}
	return values, invalid, have
}

// toRuns turns the parsed output into runs, stored as ingest would store
// them, and picks those of the benchmark: named --name, or, for output
// whose results carry names of their own (--name PREFIX/RESULT), those
// stored under that full name.
func (m *CommitMeasurer) toRuns(results []ingest.Result, sha, where string, facts map[string]string) (all, chosen []store.Run, err error) {
	name := m.Target.Name
	candidates := []string{name}
	if i := strings.LastIndex(name, "/"); i > 0 {
		candidates = append(candidates, name[:i])
	}
	var names []string
	for _, prefix := range candidates {
		runs, err := ToRuns(results, WithFacts(Spec{Name: prefix, Labels: m.Target.Labels, Commit: sha, Time: time.Now(),
			Testbed: m.Target.Testbed, Env: m.Target.Env, Command: []string{"sh", "-c", m.Cmdline}}, facts))
		if err != nil {
			return nil, nil, err
		}
		for _, r := range runs {
			if r.Benchmark == name {
				chosen = append(chosen, r)
			}
			if prefix == name {
				names = append(names, strconv.Quote(r.Benchmark))
			}
		}
		if len(chosen) > 0 {
			return runs, chosen, nil
		}
	}
	return nil, nil, &inputError{fmt.Sprintf("the output of --run at %s has no result for --name %q; it has %s: pass one of those as --name",
		where, name, strings.Join(names, ", "))}
}

// StepResult is what one bisect-step measured at the current checkout.
type StepResult struct {
	Skip    string    // why the commit cannot be tested ("" when it can)
	Values  []float64 // the metric's values in the valid runs
	Runs    []store.Run
	Invalid string
}

// StepFailure is a benchmark that failed at this commit, which
// bisect-step --skip-failures turns into a skip.
type StepFailure struct{ Err error }

func (f *StepFailure) Error() string { return f.Err.Error() }
func (f *StepFailure) Unwrap() error { return f.Err }

// Step runs the benchmark command once in the current directory (the
// commit git bisect checked out), its output shown on live and parsed as
// it comes, and returns the target's values. spec gives the commit, the
// dirty flag and the working tree's hash; the runs record the target's
// testbed. serve, when active, runs the setup first (a failure is a skip,
// as exit code 125) and the command against its server, stopped before
// Step returns (a server that fails is a *StepFailure). It stores nothing.
func Step(ctx context.Context, argv []string, t Target, spec Spec, live io.Writer, serve *Serve) (*StepResult, error) {
	c := Command{Argv: argv, Format: t.Format, ResultFile: t.ResultFile, SLO: t.SLO, Source: "output of " + ProgramName(argv), Live: live}
	srv, err := serve.Begin(ctx, "", nil, c, "")
	defer srv.Stop()
	var setup *SetupError
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &setup):
		return &StepResult{Skip: setup.Reason() + ":\n" + setup.Error()}, nil
	case err != nil:
		return nil, &StepFailure{err}
	}
	c.Env = srv.Env(nil)
	out, err := Exec(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if serr := srv.Died("the benchmark's run", out.ExitCode != 0 || out.ParseErr != nil); serr != nil {
		return nil, &StepFailure{serr}
	}
	spec = WithFacts(spec, serve.Facts(srv))
	short := spec.Commit
	if len(short) > 12 {
		short = short[:12]
	}
	if out.ExitCode == 125 {
		return &StepResult{Skip: "the command exited 125"}, nil
	}
	if out.ExitCode != 0 {
		return nil, &StepFailure{fmt.Errorf("the benchmark failed at %s with exit code %d; make it exit 125 where a commit cannot be tested, or pass --skip-failures", short, out.ExitCode)}
	}
	err = out.ParseErr
	if err == nil && len(out.Results) == 0 {
		err = errors.New("the command printed no benchmark result")
	}
	if err != nil {
		return nil, &StepFailure{err}
	}
	spec.Name, spec.Labels, spec.Time, spec.Command = t.Name, t.Labels, time.Now(), argv
	spec.Testbed = t.Testbed
	spec.Env = WithFacts(Spec{Env: t.Env}, spec.Env).Env
	runs, err := ToRuns(out.Results, spec)
	if err != nil {
		return nil, err
	}
	var mine []store.Run
	for _, r := range runs {
		if r.Benchmark == t.Name {
			mine = append(mine, r)
		}
	}
	values, invalid, have := metricValues(mine, t.Metric.Name)
	if len(values) == 0 && invalid == "" {
		return nil, t.UnknownMetric("the benchmark's output", have)
	}
	res := &StepResult{Values: values, Runs: runs, Invalid: invalid}
	if len(values) == 0 {
		res.Skip = fmt.Sprintf("the result is invalid (%s)", invalid)
	}
	return res, nil
}
