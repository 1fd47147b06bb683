package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/internal/proc"
	"github.com/perfgate/perfgate/slo"
)

// DefaultGrace is how long a stopped command has between SIGTERM and
// SIGKILL.
const DefaultGrace = 10 * time.Second

// TailSize is how much of a command's output Output keeps: the last 64
// KiB, enough for the lines a failure message shows, however much the
// command prints.
const TailSize = 64 << 10

// RawMax bounds the raw output Exec keeps in a file (Command.KeepRaw):
// beyond it, the rest is only parsed and shown.
const RawMax = 256 << 20

// Command is one command to run.
type Command struct {
	Argv []string // the program and its arguments; run without a shell
	Dir  string   // working directory; "" is perfgate's
	Env  []string // the environment; nil is perfgate's without the tokens it reads (proc.Environ)
	// Format is the output's format for ingest ("auto" or "" detects).
	Format string
	// Source names the output in parse errors ("output of bench.sh (run 2)").
	Source string
	// Live shows the output as it comes; nil hides it. perfgate's own
	// notices about stopping the command go there too.
	Live io.Writer
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace when 0).
	Grace time.Duration
	// KeepRaw keeps the output (up to RawMax bytes) in a temporary file,
	// Output.RawFile.
	KeepRaw bool
	// ResultFile, when set, is a path or glob, relative to Dir, of the
	// file(s) the command writes its result to (see resultfile.go): read
	// after it exits with status 0, preferred over its output.
	ResultFile string
	// SLO is the objective whose goodput and attainment are computed from
	// the requests of a result that carries them (ingest.Options.SLO).
	SLO *slo.Objective

	quiet bool // no parser and no notices: the output goes to Live only (Worktree.Run)
}

// Output is what a command did.
type Output struct {
	// Results are the benchmark results parsed from the output; ParseErr
	// is the parser's positioned error, if any.
	Results  []ingest.Result
	ParseErr error
	// ExitCode is the exit status; 128+N when signal N killed it.
	ExitCode int
	Signal   int
	// Leftover: the command exited but left processes holding its output
	// open; they were killed after the grace period.
	Leftover bool
	// Tail is the end of the output (stdout and stderr interleaved as
	// written), up to TailSize bytes; Written counts all of it.
	Tail    []byte
	Written int64
	// RawFile holds the whole output (KeepRaw); the caller removes it
	// (Discard) or keeps it.
	RawFile string
}

// Discard removes the raw output file, if any.
func (o *Output) Discard() {
	if o != nil && o.RawFile != "" {
		os.Remove(o.RawFile)
		o.RawFile = ""
	}
}

// StartError is a command that could not be started (not found, not
// executable).
type StartError struct {
	Program string
	Err     error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("cannot start %q: %v; check the command and PATH", e.Program, e.Err)
}
func (e *StartError) Unwrap() error { return e.Err }

// Exec runs the command in a process group of its own with /dev/null as
// stdin, its combined output streamed to c.Live and to the parser. When
// ctx is cancelled the group gets SIGTERM, then SIGKILL after the grace
// period, and Exec returns ctx's error (with what the output held so far);
// nothing of the group outlives Exec. A non-zero exit is not an error: it
// is in Output.ExitCode. The error is a *StartError when the command could
// not start.
func Exec(ctx context.Context, c Command) (*Output, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("runner.Exec: no command")
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	out := &Output{}
	tail := &tailBuffer{max: TailSize}
	writers := []io.Writer{tail}
	var parser *StreamParser
	if !c.quiet {
		parser = newStreamParser(c.Source, ingest.Options{Format: c.Format, SLO: c.SLO})
		writers = append(writers, parser)
	}
	var before map[string]fileStamp
	start := time.Now()
	if c.ResultFile != "" && !c.quiet {
		before, _ = c.resultFiles() // a bad pattern is reported after the run
	}
	var live *lastByteWriter
	if c.Live != nil && !c.quiet {
		live = &lastByteWriter{w: c.Live} // also written by Cancel's goroutine
		writers = append(writers, live)
	} else if c.Live != nil {
		writers = append(writers, c.Live)
	}
	var raw *rawFile
	if c.KeepRaw {
		f, err := os.CreateTemp("", "perfgate-output-*.log")
		if err == nil {
			raw = &rawFile{f: f}
			writers = append(writers, raw)
			out.RawFile = f.Name()
		}
	}
	w := io.MultiWriter(writers...)
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	if cmd.Env == nil {
		// A benchmark, often a pull request's code, gets no GitHub token.
		cmd.Env = proc.Environ()
	}
	// One writer for both: exec then calls it from one goroutine at a time.
	cmd.Stdout, cmd.Stderr = w, w
	cmd.Stdin = nil // /dev/null: a benchmark that reads stdin gets EOF, never perfgate's input
	proc.SetGroup(cmd, grace)
	stopGroup := cmd.Cancel
	cmd.Cancel = func() error {
		if live != nil {
			fmt.Fprintf(live, "\nperfgate: stopping the benchmark command (SIGTERM to its process group, SIGKILL in %v)\n", grace)
		}
		return stopGroup()
	}
	err := cmd.Run()
	// Nothing of the group may outlive perfgate: not what the command
	// left running in the background, not what a cancelled one started.
	proc.KillGroup(cmd)
	if parser != nil {
		out.Results, out.ParseErr = parser.Finish()
	}
	out.Tail, out.Written = bytes.Clone(tail.Bytes()), tail.written
	if out.ParseErr != nil && out.Written == 0 {
		// "Unrecognised benchmark output" of no output at all sends
		// the user to the formats; the command is what to look at.
		out.ParseErr = &silentError{msg: fmt.Sprintf("%s: the command printed nothing (no output on stdout or stderr); check that it runs the benchmark and prints its result", c.sourceName()), err: out.ParseErr}
	}
	if raw != nil {
		raw.close()
	}
	if live != nil && live.last != 0 && live.last != '\n' {
		fmt.Fprintln(c.Live)
	}
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		// The command itself exited; what it left running was killed.
		out.Leftover = true
		if live != nil {
			fmt.Fprintf(c.Live, "perfgate: the benchmark command exited but left processes holding its output open for %v; killed them\n", grace)
		}
		err = nil
		if st := cmd.ProcessState; st != nil && !st.Success() {
			err = &exec.ExitError{ProcessState: st}
		}
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			out.Discard()
			return out, &StartError{Program: c.Argv[0], Err: startError(err)}
		}
		out.ExitCode = ee.ExitCode()
		if sig := proc.Signal(ee); sig != 0 {
			out.Signal = sig
			out.ExitCode = 128 + sig
		}
	}
	if c.ResultFile != "" && !c.quiet && out.ExitCode == 0 {
		// The file's results, the requests included, replace the
		// summary the command printed.
		out.Results, out.ParseErr = c.readResultFiles(before, start)
	}
	return out, nil
}

// silentError is the parse error of a command that printed nothing: its
// own message, the parser's error underneath (errors.Is still matches).
type silentError struct {
	msg string
	err error
}

func (e *silentError) Error() string { return e.msg }
func (e *silentError) Unwrap() error { return e.err }

// sourceName names the output in messages.
func (c Command) sourceName() string {
	if c.Source != "" {
		return c.Source
	}
	return "output of " + ProgramName(c.Argv)
}

// Failure describes a non-zero exit for a message: "exited with code 1",
// "was killed by signal 9 (killed)", with the shell's meaning of 126/127.
func (o *Output) Failure() string {
	if o.Signal != 0 {
		return fmt.Sprintf("was killed by signal %d (%v)", o.Signal, syscall.Signal(o.Signal))
	}
	how := fmt.Sprintf("exited with code %d", o.ExitCode)
	switch o.ExitCode {
	case 126:
		how += " (the shell's 'cannot execute': check the file's permissions)"
	case 127:
		how += " (the shell's 'command not found': check the command and PATH)"
	}
	return how
}

// TailLines returns the last n lines of the output, indented for a
// message; a line cut by the start of the kept tail is left out, and so is
// the part of a very long line beyond tailLineMax.
func (o *Output) TailLines(n int) string {
	out := o.Tail
	if o.Written > int64(len(out)) {
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			out = out[i+1:]
		}
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "  (no output)"
	}
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for i, l := range lines {
		if len(l) > tailLineMax {
			l = append(l[:tailLineMax:tailLineMax], "…"...)
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  | ")
		b.Write(l)
	}
	return b.String()
}

// tailLineMax is the longest output line a failure message shows in full.
const tailLineMax = 1000

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

// StreamParser parses a command's output as the command writes it: writes
// go through a pipe to an ingest.Reader, so memory stays bounded however
// much the command prints. Writes never fail: once the parser stops
// reading (a malformed block), the rest is discarded, so the output still
// flows to the terminal. It is not safe for concurrent writes; exec.Cmd
// with one writer as Stdout and Stderr writes from one goroutine at a
// time.
type StreamParser struct {
	pw   *io.PipeWriter
	w    forgivingWriter
	done chan struct{}
	res  []ingest.Result
	err  error
}

// NewStreamParser starts parsing; name names the output in errors. Call
// Finish once the output has ended.
func NewStreamParser(name, format string) *StreamParser {
	return newStreamParser(name, ingest.Options{Format: format})
}

// newStreamParser is NewStreamParser with ingest's options (the SLO).
func newStreamParser(name string, opts ingest.Options) *StreamParser {
	if opts.Format == "" {
		opts.Format = "auto"
	}
	pr, pw := io.Pipe()
	s := &StreamParser{pw: pw, w: forgivingWriter{w: pw}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		r := ingest.NewReader(pr, name, opts)
		for r.Scan() {
			s.res = append(s.res, r.Result())
		}
		s.err = r.Err()
		if s.err == nil && len(s.res) == 0 {
			// Every document was one that holds no result (a tool's
			// aggregate of runs): say so rather than store nothing.
			s.err = &ingest.Error{File: name, Err: ingest.ErrUnrecognized,
				Msg: "no benchmark result in the output: " + strings.Join(r.Notes(), "; ")}
		}
		pr.Close() // the rest of the output is only shown
	}()
	return s
}

func (s *StreamParser) Write(p []byte) (int, error) { return s.w.Write(p) }

// Finish ends the output and returns what the parser found in it.
func (s *StreamParser) Finish() ([]ingest.Result, error) {
	s.pw.Close()
	<-s.done
	return s.res, s.err
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

// rawFile keeps the output in a file, up to RawMax bytes; it never fails
// a write (a full disk must not stop the benchmark).
type rawFile struct {
	f       *os.File
	n       int64
	failed  bool
	cutNote bool
}

func (r *rawFile) Write(p []byte) (int, error) {
	if r.failed {
		return len(p), nil
	}
	q := p
	if rest := RawMax - r.n; int64(len(q)) > rest {
		q = q[:max(rest, 0)]
	}
	if len(q) > 0 {
		if _, err := r.f.Write(q); err != nil {
			r.failed = true
		}
		r.n += int64(len(q))
	}
	if len(q) < len(p) && !r.cutNote {
		r.cutNote = true
		fmt.Fprintf(r.f, "\n[perfgate: output cut here at %d MiB]\n", RawMax>>20)
	}
	return len(p), nil
}

func (r *rawFile) close() { r.f.Close() }
