package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/perfgate/perfgate/internal/proc"
)

// The three steps of a serving benchmark (issue 27): --setup builds or
// installs the engine once per checkout, --server starts it and perfgate
// waits until it is ready, and the client (the benchmark command as run
// takes it) runs against it, --repeat times, after --warmup runs that are
// not stored. run, ab, bisect and bisect-step share this file.

// DefaultReadyTimeout is how long a server has to become ready: weights
// load and graphs compile in minutes.
const DefaultReadyTimeout = 15 * time.Minute

// DefaultNotFoundGrace is how long a ready URL may answer 404 throughout
// before perfgate says its path is wrong.
const DefaultNotFoundGrace = 30 * time.Second

// PortVar is the environment variable that gives the server its port; the
// --ready URL and the client's environment get it too.
const PortVar = "PERFGATE_PORT"

// The keys of a run's Env (store.Run.Env) that say how it was served.
const (
	FactSetup      = "serve_setup"         // the --setup command line
	FactServer     = "serve_server"        // the --server command line
	FactReady      = "serve_ready_seconds" // the server's time to ready
	FactServerExit = "serve_server_exit"   // how the server ended, when it died during the run
	FactReadyURL   = "serve_ready"         // the --ready URL, as given ($PERFGATE_PORT unexpanded)
	FactReadyLog   = "serve_ready_log"     // the --ready-log pattern
	FactResultFile = "result_file"         // the --result-file the results were read from
)

// Serve is the setup and server steps around a benchmark command. A nil
// *Serve, or one with neither Setup nor Server, is a plain benchmark.
type Serve struct {
	// Setup is a shell line (sh -c, as --run) run once in each checkout
	// before any run; "" for none.
	Setup string
	// Server is a shell line (sh -c) that starts the server, in a process
	// group of its own with PERFGATE_PORT set to a free port; "" for none.
	Server string
	// Ready is the URL that answers HTTP 200 once the server is ready,
	// $PERFGATE_PORT (or ${PERFGATE_PORT}) replaced by the port; or
	// ReadyLog, a regular expression a line of the server's output
	// matches once it is ready.
	Ready    string
	ReadyLog *regexp.Regexp
	// ReadyTimeout bounds the wait (DefaultReadyTimeout when 0).
	ReadyTimeout time.Duration
	// NotFoundGrace is how long Ready may answer HTTP 404 on every probe
	// before the wait ends with the path being wrong (DefaultNotFoundGrace
	// when 0): a server that answers is up, and one that keeps answering
	// 404 does not have the path.
	NotFoundGrace time.Duration
	// Warmup is the number of client runs after each server start that
	// are not stored.
	Warmup int
	// Grace is the time between SIGTERM and SIGKILL (DefaultGrace when 0).
	Grace time.Duration
	// LogDir is where the server's logs are kept (made when missing): the
	// CLI passes a "logs" directory next to the history, as unsaved runs
	// and their raw output go next to it; "" (or a directory that cannot
	// be made) is the system's temporary directory. Each server start
	// writes a log of its own, up to RawMax bytes, and keeps it.
	LogDir string
	// Live shows the setup's and the warm-up runs' output as it comes; nil
	// hides it.
	Live io.Writer
	// Progress gets perfgate's notices (server ready, stopped); nil is
	// silent. Cmd names the perfgate command in them ("run").
	Progress io.Writer
	Cmd      string
}

// Active reports whether there is a setup or server step at all.
func (s *Serve) Active() bool { return s != nil && (s.Setup != "" || s.Server != "") }

func (s *Serve) grace() time.Duration {
	if s.Grace > 0 {
		return s.Grace
	}
	return DefaultGrace
}

func (s *Serve) notef(format string, args ...any) {
	if s.Progress != nil {
		fmt.Fprintf(s.Progress, "perfgate: %s: %s\n", s.Cmd, fmt.Sprintf(format, args...))
	}
}

// SetupError is a --setup that failed (or could not start): bisect skips
// the commit, the other commands stop with exit code 3.
type SetupError struct {
	Cmd    string
	Where  string // " at base 1234abcd", "" for the current checkout
	Output *Output
	Err    error // the setup could not start
}

func (e *SetupError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("--setup %q%s could not start: %v", e.Cmd, e.Where, e.Err)
	}
	return fmt.Sprintf("--setup %q%s %s; its output ended with:\n%s\nfix the setup (it runs once in each checkout before the benchmark)", e.Cmd, e.Where, e.Output.Failure(), e.Output.TailLines(15))
}

func (e *SetupError) Unwrap() error { return e.Err }

// Reason is the skip reason bisect reports.
func (e *SetupError) Reason() string {
	if e.Err != nil {
		return "--setup could not start"
	}
	return "--setup " + e.Output.Failure()
}

// RunSetup runs the setup in dir (perfgate's directory when "") with env
// (nil: proc.Environ). where names the checkout in messages.
func (s *Serve) RunSetup(ctx context.Context, dir string, env []string, where string) error {
	if s == nil || s.Setup == "" {
		return nil
	}
	s.notef("setup%s: %s", where, s.Setup)
	out, err := Exec(ctx, Command{Argv: []string{"sh", "-c", s.Setup}, Dir: dir, Env: env, Live: s.Live, Grace: s.Grace, quiet: true})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var se *StartError
	if errors.As(err, &se) {
		return &SetupError{Cmd: s.Setup, Where: where, Err: se.Err}
	}
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return &SetupError{Cmd: s.Setup, Where: where, Output: out}
	}
	return nil
}

// ServerError is a server that could not start, never became ready, or
// exited while the benchmark ran: the message says which, with the end of
// the server's log, never "the benchmark printed nothing".
type ServerError struct {
	Cmd   string
	Where string // " at base 1234abcd", "" for the current checkout
	What  string // "exited with code 1 before it was ready", ...
	Log   string // the server's log file, kept
	Tail  string // the end of the log, indented
	// Exit describes how the server ended ("exited with code 1"), ""
	// while it runs (a timeout).
	Exit string
}

func (e *ServerError) Error() string {
	log := ""
	if e.Log != "" {
		log = fmt.Sprintf(" (the whole log is kept in %s)", e.Log)
	}
	return fmt.Sprintf("the server --server %q%s %s; last lines of its log%s:\n%s", e.Cmd, e.Where, e.What, log, e.Tail)
}

// Server is a running server of one checkout.
type Server struct {
	s       *Serve
	where   string
	Port    int
	LogFile string
	// ReadyIn is the time from start to ready.
	ReadyIn time.Duration

	cmd    *exec.Cmd
	cancel context.CancelFunc
	log    *os.File
	out    *serverOutput
	done   chan struct{}
	exit   string // how it ended, once done is closed
}

// Begin runs the setup in dir and starts the server there (Start); with
// only a setup, the server is nil. env is the environment of both (nil:
// proc.Environ); client is the benchmark command, run Warmup times once
// the server is ready (Warm).
func (s *Serve) Begin(ctx context.Context, dir string, env []string, client Command, where string) (*Server, error) {
	if err := s.RunSetup(ctx, dir, env, where); err != nil {
		return nil, err
	}
	return s.StartWarm(ctx, dir, env, client, where)
}

// StartWarm starts the server (Start) and runs the warm-up (Warm); nil,
// nil without a --server.
func (s *Serve) StartWarm(ctx context.Context, dir string, env []string, client Command, where string) (*Server, error) {
	if s == nil || s.Server == "" {
		return nil, nil
	}
	srv, err := s.Start(ctx, dir, env, where)
	if err != nil {
		return nil, err
	}
	if err := srv.Warm(ctx, client); err != nil {
		srv.Stop()
		return nil, err
	}
	return srv, nil
}

// Start starts the server in dir with PERFGATE_PORT set to a free port and
// waits until it is ready: Ready answers HTTP 200, or a line of its output
// matches ReadyLog, within ReadyTimeout. Its output goes to a log file;
// the error is a *ServerError when it exits before it is ready or does not
// become ready in time (it is then stopped), or ctx's error.
func (s *Serve) Start(ctx context.Context, dir string, env []string, where string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, fmt.Errorf("cannot find a free port for the server: %v", err)
	}
	log, err := s.logFile()
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = proc.Environ()
	}
	env = append(env[:len(env):len(env)], PortVar+"="+strconv.Itoa(port))
	srv := &Server{s: s, where: where, Port: port, LogFile: log.Name(), log: log, done: make(chan struct{})}
	srv.out = &serverOutput{log: &rawFile{f: log}, ready: s.ReadyLog, matched: make(chan struct{})}
	sctx, cancel := context.WithCancel(ctx)
	srv.cancel = cancel
	cmd := exec.CommandContext(sctx, "sh", "-c", s.Server)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = srv.out, srv.out // one writer: one goroutine writes
	proc.SetGroup(cmd, s.grace())
	srv.cmd = cmd
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		log.Close()
		os.Remove(log.Name())
		return nil, fmt.Errorf("cannot start the server with sh -c: %v", startError(err))
	}
	go srv.wait()
	s.notef("server%s started on port %d: %s (log: %s)", where, port, s.Server, srv.LogFile)
	if err := srv.waitReady(ctx); err != nil {
		srv.Stop()
		return nil, err
	}
	srv.ReadyIn = time.Since(start)
	s.notef("server%s ready in %s", where, srv.ReadyIn.Round(time.Millisecond))
	return srv, nil
}

// logFile makes a new log file in LogDir, else in the temporary directory.
func (s *Serve) logFile() (*os.File, error) {
	pattern := "perfgate-server-" + time.Now().UTC().Format("20060102T150405Z") + "-*.log"
	if s.LogDir != "" {
		if err := os.MkdirAll(s.LogDir, 0o755); err == nil {
			if f, err := os.CreateTemp(s.LogDir, pattern); err == nil {
				return f, nil
			}
		}
	}
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, fmt.Errorf("cannot make the server's log file: %v; set TMPDIR to a writable directory", err)
	}
	return f, nil
}

// wait reaps the server and whatever its group left running.
func (srv *Server) wait() {
	err := srv.cmd.Wait()
	proc.KillGroup(srv.cmd)
	o := &Output{}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		o.ExitCode = ee.ExitCode()
		if sig := proc.Signal(ee); sig != 0 {
			o.Signal, o.ExitCode = sig, 128+sig
		}
	} else if st := srv.cmd.ProcessState; st != nil {
		o.ExitCode = st.ExitCode()
	}
	srv.exit = o.Failure()
	close(srv.done)
}

// settleTime is how long Died waits for a server to be reaped after the
// client failed.
const settleTime = time.Second

// ReadyURL is the --ready URL with the port filled in.
func ReadyURL(url string, port int) string {
	p := strconv.Itoa(port)
	return strings.NewReplacer("${"+PortVar+"}", p, "$"+PortVar, p).Replace(url)
}

// waitReady polls the ready URL with backoff (or waits for the log line)
// until the server is ready, exits, the timeout passes or ctx ends.
func (srv *Server) waitReady(ctx context.Context) error {
	s := srv.s
	timeout := s.ReadyTimeout
	if timeout <= 0 {
		timeout = DefaultReadyTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	url := ""
	if s.Ready != "" {
		url = ReadyURL(s.Ready, srv.Port)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	delay := 20 * time.Millisecond
	last := "no answer yet"
	grace := s.NotFoundGrace
	if grace <= 0 {
		grace = DefaultNotFoundGrace
	}
	var notFoundSince time.Time
	for {
		if url != "" {
			ok, why := probe(ctx, client, url)
			if ok {
				return nil
			}
			last = why
			switch {
			case !strings.HasPrefix(why, "HTTP 404"):
				notFoundSince = time.Time{}
			case notFoundSince.IsZero():
				notFoundSince = time.Now()
			case time.Since(notFoundSince) >= grace:
				return srv.errorf("is up but %s answered %s for %v: the path of --ready %q is probably wrong (vLLM and SGLang answer /health, any OpenAI-compatible server /v1/models)", url, why, grace, s.Ready)
			}
		}
		poll := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			poll.Stop()
			return ctx.Err()
		case <-srv.done:
			poll.Stop()
			return srv.errorf("exited (%s) before it was ready", srv.exit)
		case <-srv.out.matched:
			poll.Stop()
			return nil
		case <-deadline.C:
			poll.Stop()
			if strings.HasPrefix(last, "HTTP 404") {
				return srv.errorf("did not become ready within %v: %s answered %s: the server is up but the path of --ready %q is probably wrong", timeout, url, last, s.Ready)
			}
			if url != "" {
				return srv.errorf("did not become ready within %v: %s did not answer HTTP 200 (last: %s); raise --ready-timeout if it loads slowly", timeout, url, last)
			}
			return srv.errorf("did not become ready within %v: no line of its output matched --ready-log %q; raise --ready-timeout if it loads slowly, or check the pattern", timeout, s.ReadyLog)
		case <-poll.C:
		}
		delay = min(delay*3/2, 2*time.Second)
	}
}

// probe asks url once; ok on HTTP 200, else why not.
func probe(ctx context.Context, client *http.Client, url string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			return false, op.Err.Error()
		}
		return false, err.Error()
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	return false, "HTTP " + resp.Status
}

// errorf is a *ServerError about srv.
func (srv *Server) errorf(format string, args ...any) *ServerError {
	e := &ServerError{Cmd: srv.s.Server, Where: srv.where, What: fmt.Sprintf(format, args...), Log: srv.LogFile, Tail: srv.out.tailLines(15)}
	select {
	case <-srv.done:
		e.Exit = srv.exit
	default:
	}
	return e
}

// Died returns a *ServerError when the server has exited (during what,
// e.g. "run 2 of the benchmark"), else nil. A nil Server never died.
// clientFailed gives the server a moment to be reaped: a client fails
// when the server crashes, perhaps an instant before perfgate sees the
// server's exit.
func (srv *Server) Died(during string, clientFailed bool) *ServerError {
	if srv == nil {
		return nil
	}
	if clientFailed {
		t := time.NewTimer(settleTime)
		select {
		case <-srv.done:
		case <-t.C:
		}
		t.Stop()
	}
	select {
	case <-srv.done:
		return srv.errorf("exited (%s) during %s", srv.exit, during)
	default:
		return nil
	}
}

// Env returns the client's environment: env (nil: proc.Environ) with
// PERFGATE_PORT. A nil Server adds nothing.
func (srv *Server) Env(env []string) []string {
	if srv == nil {
		return env
	}
	if env == nil {
		env = proc.Environ()
	}
	return append(env[:len(env):len(env)], PortVar+"="+strconv.Itoa(srv.Port))
}

// Warm runs the client Warmup times against the server; their output is
// shown (Live) but not stored. A warm-up that fails, or a server that
// exits meanwhile, is an error.
func (srv *Server) Warm(ctx context.Context, client Command) error {
	s := srv.s
	for i := 1; i <= s.Warmup; i++ {
		s.notef("warm-up run %d of %d%s (not stored)", i, s.Warmup, srv.where)
		c := client
		c.Env, c.Live, c.quiet, c.KeepRaw = srv.Env(client.Env), s.Live, true, false
		out, err := Exec(ctx, c)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if serr := srv.Died(fmt.Sprintf("warm-up run %d", i), err != nil || out.ExitCode != 0); serr != nil {
			return serr
		}
		var se *StartError
		if errors.As(err, &se) {
			return err
		}
		if err != nil {
			return err
		}
		if out.ExitCode != 0 {
			return &WarmupError{Program: ProgramName(client.Argv), Rep: i, N: s.Warmup, Where: srv.where, Output: out}
		}
	}
	return nil
}

// WarmupError is a warm-up run that failed.
type WarmupError struct {
	Program string
	Rep, N  int
	Where   string
	Output  *Output
}

func (e *WarmupError) Error() string {
	return fmt.Sprintf("the benchmark command %q %s in warm-up run %d of %d%s; its output ended with:\n%s", e.Program, e.Output.Failure(), e.Rep, e.N, e.Where, e.Output.TailLines(15))
}

// Stop stops the server, if it still runs: SIGTERM to its process group,
// SIGKILL after the grace period (at once on a second Ctrl-C), and
// whatever is left of the group is killed. Its log is kept. Nil-safe and
// idempotent.
func (srv *Server) Stop() {
	if srv == nil || srv.cancel == nil {
		return
	}
	running := true
	select {
	case <-srv.done:
		running = false
	default:
	}
	srv.cancel()
	<-srv.done
	srv.cancel = nil
	srv.log.Close()
	if running {
		srv.s.notef("server%s stopped", srv.where)
	}
}

// Facts are what the stored runs record of how they were served (the
// Fact* keys of store.Run.Env): the setup's and server's commands and the
// server's time to ready.
func (s *Serve) Facts(srv *Server) map[string]string {
	if !s.Active() {
		return nil
	}
	f := map[string]string{}
	if s.Setup != "" {
		f[FactSetup] = factText(s.Setup)
	}
	if s.Server != "" {
		f[FactServer] = factText(s.Server)
	}
	if s.Ready != "" {
		f[FactReadyURL] = factText(s.Ready)
	}
	if s.ReadyLog != nil {
		f[FactReadyLog] = factText(s.ReadyLog.String())
	}
	if srv != nil {
		f[FactReady] = strconv.FormatFloat(srv.ReadyIn.Seconds(), 'f', 1, 64)
	}
	return f
}

// WithFacts returns spec with the facts added to a copy of its Env.
func WithFacts(spec Spec, facts map[string]string) Spec {
	if len(facts) == 0 {
		return spec
	}
	env := make(map[string]string, len(spec.Env)+len(facts))
	maps.Copy(env, spec.Env)
	maps.Copy(env, facts)
	spec.Env = env
	return spec
}

// factText makes a command line storable as an Env value: control
// characters (a multi-line script's newlines) become spaces, and it is
// cut at the store's name limit.
func factText(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	const max = 4000
	if len(s) > max {
		cut := max
		for cut > 0 && !isRuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// FreePort returns a TCP port that is free on the loopback interface now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serverOutput writes the server's output to its log, keeps its tail and
// matches each line against the ready pattern. exec writes to it from one
// goroutine; the tail is read from others.
type serverOutput struct {
	mu      sync.Mutex
	log     *rawFile
	tail    tailBuffer
	ready   *regexp.Regexp
	line    []byte
	matched chan struct{}
	once    sync.Once
}

func (o *serverOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tail.max == 0 {
		o.tail.max = TailSize
	}
	o.tail.Write(p)
	o.log.Write(p) // never fails: a full disk must not stop the server
	if o.ready != nil {
		o.scan(p)
		select {
		case <-o.matched:
			o.ready = nil // ready: no more lines to match
		default:
		}
	}
	return len(p), nil
}

// scan matches the complete lines of p (with what came before) against
// the ready pattern; a line is cut at TailSize bytes.
func (o *serverOutput) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(o.line)+len(p) <= TailSize {
				o.line = append(o.line, p...)
			}
			return
		}
		line := p[:i]
		if len(o.line) > 0 {
			line = append(o.line, line...)
		}
		if o.ready.Match(bytes.TrimRight(line, "\r")) {
			o.once.Do(func() { close(o.matched) })
		}
		o.line = o.line[:0]
		p = p[i+1:]
	}
}

func (o *serverOutput) tailLines(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := &Output{Tail: bytes.Clone(o.tail.Bytes()), Written: o.tail.written}
	return out.TailLines(n)
}
