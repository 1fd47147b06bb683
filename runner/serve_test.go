package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/bisect"
	"github.com/perfgate/perfgate/internal/fakeserve"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/store"
)

// TestMain lets the test binary play the stand-in engine and client
// (internal/fakeserve) when a test starts it with FAKESERVE_ROLE set.
func TestMain(m *testing.M) {
	fakeserve.Main()
	os.Exit(m.Run())
}

// fake is a scenario with the stand-in engine: a directory (the checkout)
// holding its latency file, and the directory its processes record their
// pids in.
type fake struct {
	dir, pids string
}

func newFake(t *testing.T, latency string) *fake {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	f := &fake{dir: t.TempDir(), pids: t.TempDir()}
	if err := os.WriteFile(filepath.Join(f.dir, "latency.txt"), []byte(latency), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeserve.PidDirEnv, f.pids)
	t.Setenv("TMPDIR", t.TempDir()) // the server logs kept on failure
	t.Cleanup(func() {
		if left := fakeserve.Leftovers(f.pids); len(left) > 0 {
			t.Errorf("left behind: %s", strings.Join(left, "; "))
		}
		if kids := fakeserve.Children(); len(kids) > 0 {
			t.Errorf("child processes left: %s", strings.Join(kids, "; "))
		}
	})
	return f
}

// self is the test binary, quoted for sh -c.
func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ShellQuote(exe)
}

// server is a --server line that starts the engine with flags.
func (f *fake) server(t *testing.T, flags string) string {
	return fakeserve.RoleEnv + "=server " + self(t) + " -load 30ms " + flags
}

// client is the benchmark command: the stand-in client.
func (f *fake) client(t *testing.T) Command {
	exe, _ := os.Executable()
	return Command{Argv: []string{exe, "-n", "2"}, Dir: f.dir, Env: append(os.Environ(), fakeserve.RoleEnv+"=client"), Grace: time.Second}
}

func (f *fake) serve(t *testing.T, flags string) *Serve {
	return &Serve{Server: f.server(t, flags), Ready: "http://127.0.0.1:$PERFGATE_PORT/health", ReadyTimeout: time.Minute, Grace: time.Second}
}

// TestServeRepeat: one server start serves the warm-up and every
// repetition; the runs say how they were served; nothing is left behind.
func TestServeRepeat(t *testing.T) {
	for _, ready := range []string{"url", "log"} {
		t.Run(ready, func(t *testing.T) {
			f := newFake(t, "2ms")
			s := f.serve(t, "")
			s.Setup = "echo built > built.txt"
			s.Warmup = 1
			if ready == "log" {
				s.Ready, s.ReadyLog = "", regexp.MustCompile(`Application startup complete`)
			}
			client := f.client(t)
			srv, err := s.Begin(context.Background(), f.dir, client.Env, client, "")
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			if _, err := os.Stat(filepath.Join(f.dir, "built.txt")); err != nil {
				t.Errorf("the setup did not run in the checkout: %v", err)
			}
			rep := &Repeat{Command: client, Spec: Spec{Name: "serving"}, N: 3, Serve: s, Server: srv}
			got, err := rep.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Runs) != 3 {
				t.Fatalf("%d runs, want 3", len(got.Runs))
			}
			for _, r := range got.Runs {
				if r.Env[FactServer] != s.Server || r.Env[FactSetup] != s.Setup || r.Env[FactReady] == "" {
					t.Errorf("run's Env %v does not say how it was served", r.Env)
				}
				if _, ok := r.Metrics["mean_ttft_ms"]; !ok {
					t.Errorf("run has no mean_ttft_ms: %v", r.Metrics)
				}
			}
			srv.Stop()
			if servers, clients := fakeserve.Started(f.pids); servers != 1 || clients != 4 {
				t.Errorf("started the server %d times and the client %d times, want 1 and 4 (a warm-up and 3 runs)", servers, clients)
			}
		})
	}
}

// TestServeFailures: each way a serving benchmark fails says what failed,
// with the server's or setup's own words, and leaves nothing behind.
func TestServeFailures(t *testing.T) {
	tests := []struct {
		name    string
		setup   string
		flags   string
		timeout time.Duration
		want    []string
		check   func(error) bool
	}{
		{"setup fails", "echo pip: no matching distribution >&2; exit 4", "", 0,
			[]string{`--setup "echo pip`, "exited with code 4", "no matching distribution"},
			func(err error) bool { var e *SetupError; return errors.As(err, &e) }},
		{"exits before ready", "", "-exit-before-ready 7", 0,
			[]string{"exited (exited with code 7) before it was ready", "CUDA out of memory", "perfgate-server-"},
			func(err error) bool { var e *ServerError; return errors.As(err, &e) && e.Exit != "" }},
		{"never ready", "", "-never-ready", 300 * time.Millisecond,
			[]string{"did not become ready within 300ms", "/health did not answer HTTP 200 (last: HTTP 503 Service Unavailable)", "loading weights"},
			func(err error) bool { var e *ServerError; return errors.As(err, &e) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, "1ms")
			s := f.serve(t, tt.flags)
			s.Setup = tt.setup
			if tt.timeout > 0 {
				s.ReadyTimeout = tt.timeout
			}
			srv, err := s.Begin(context.Background(), f.dir, nil, f.client(t), "")
			srv.Stop()
			if err == nil || !tt.check(err) {
				t.Fatalf("Begin = %T %v", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestServeDiesMidRun: a server that exits during the second repetition
// is reported as such, with its log's tail; the first repetition is kept.
func TestServeDiesMidRun(t *testing.T) {
	f := newFake(t, "1ms")
	s := f.serve(t, "-crash-after 3") // the client calls twice per run
	client := f.client(t)
	srv, err := s.Begin(context.Background(), f.dir, nil, client, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	rep := &Repeat{Command: client, Spec: Spec{Name: "serving"}, N: 3, Serve: s, Server: srv}
	got, err := rep.Run(context.Background())
	var inc *Incomplete
	var se *ServerError
	if !errors.As(err, &inc) || !errors.As(err, &se) {
		t.Fatalf("Run = %T %v, want an *Incomplete holding a *ServerError", err, err)
	}
	for _, w := range []string{"exited (exited with code 3) during run 2 of the benchmark", "engine core died"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
	if len(got.Good) != 1 || len(got.Runs) != 1 {
		t.Errorf("kept repetitions %v (%d runs), want run 1 alone", got.Good, len(got.Runs))
	}
}

// TestServeInterrupted: Ctrl-C while the server loads stops it at once.
func TestServeInterrupted(t *testing.T) {
	f := newFake(t, "1ms")
	s := f.serve(t, "-never-ready")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if servers, _ := fakeserve.Started(f.pids); servers > 0 {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	srv, err := s.Begin(ctx, f.dir, nil, f.client(t), "")
	srv.Stop()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Begin = %v, want context.Canceled", err)
	}
}

func TestReadyURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://localhost:$PERFGATE_PORT/health", "http://localhost:8123/health"},
		{"http://localhost:${PERFGATE_PORT}/v1/models", "http://localhost:8123/v1/models"},
		{"http://localhost:8000/health", "http://localhost:8000/health"},
	} {
		if got := ReadyURL(tt.in, 8123); got != tt.want {
			t.Errorf("ReadyURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFactText(t *testing.T) {
	if got := factText("vllm serve m \\\n  --port $PERFGATE_PORT"); got != "vllm serve m \\   --port $PERFGATE_PORT" {
		t.Errorf("factText = %q", got)
	}
	if got := factText(strings.Repeat("é", 3000)); len(got) > 4100 || !strings.HasSuffix(got, "…") {
		t.Errorf("factText of a long line: %d bytes", len(got))
	}
}

// TestCommitMeasurerServed: bisect's measurer keeps a commit's server up
// while the search measures that commit again, stops it before another
// commit's starts, skips a commit whose setup fails (as exit 125 does),
// and turns a server that dies into an error, or a skip with
// SkipFailures.
func TestCommitMeasurerServed(t *testing.T) {
	repo, _, shas := testRepo(t)
	f := newFake(t, "1ms")
	db := filepath.Join(t.TempDir(), "history.db")
	sv := &Saver{Open: func() (*store.Store, error) { return store.Open(db, store.Options{}) }, DB: db}
	exe, _ := os.Executable()
	s := f.serve(t, "")
	s.Setup = `test "$(cat level.txt)" = 500 || { echo level is not 500; exit 1; }`
	m := &CommitMeasurer{
		Worktree: &Worktree{Repo: repo, Dir: t.TempDir(), Grace: time.Second},
		Saver:    sv,
		Target:   Target{Name: "serving", Metric: metric.Get("mean_ttft_ms")},
		Commits:  []bisect.Commit{{SHA: shas[0], Short: "c0"}, {SHA: shas[1], Short: "c1"}},
		Cmdline:  fakeserve.RoleEnv + "=client " + ShellQuote(exe) + " -n 1",
		Serve:    s,
	}
	defer m.Close()
	for range 2 {
		if v, err := m.Measure(context.Background(), 0); err != nil || len(v) != 1 {
			t.Fatalf("Measure(0) = %v, %v", v, err)
		}
	}
	if servers, _ := fakeserve.Started(f.pids); servers != 1 {
		t.Errorf("two measures of one commit started %d servers, want 1", servers)
	}
	_, err := m.Measure(context.Background(), 1)
	var skip *bisect.SkipError
	if !errors.As(err, &skip) || !strings.Contains(skip.Reason, "--setup exited with code 1") {
		t.Errorf("Measure at a commit whose setup fails = %v, want a skip", err)
	}
	// Back at commit 0, with a server that dies during the run.
	s.Server = f.server(t, "-crash-after 0")
	if _, err := m.Measure(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "during the benchmark's run") {
		t.Errorf("Measure with a server that dies = %v", err)
	}
	m.SkipFailures = true
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Measure(context.Background(), 0); !errors.As(err, &skip) || !strings.Contains(skip.Reason, "exited (exited with code 3)") {
		t.Errorf("Measure with a server that dies, --skip-failures = %v, want a skip", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	emptyDir(t, m.Worktree.Dir)
}

// TestRepeatNamesAndNumbers: a failing command given as sh -c SCRIPT (run
// --run 'CMD') is named by its script, not "sh", and a session that runs
// one repetition at a time (First) numbers the failure as it numbers the
// run in every other message.
func TestRepeatNamesAndNumbers(t *testing.T) {
	rep := &Repeat{Command: Command{Argv: []string{"sh", "-c", "echo nothing; exit 4"}}, Spec: Spec{Name: "serving"}, N: 1, First: 3}
	got, err := rep.Run(context.Background())
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Run = %T %v, want an *ExitError", err, err)
	}
	if want := `"echo nothing; exit 4" exited with code 4 (run 3)`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if len(got.Failed) != 1 || got.Failed[0].Rep != 3 {
		t.Errorf("failures %+v, want repetition 3", got.Failed)
	}
	if ProgramName([]string{"/usr/bin/bench", "-n", "2"}) != "/usr/bin/bench" {
		t.Errorf("ProgramName of a program: %q", ProgramName([]string{"/usr/bin/bench", "-n", "2"}))
	}
}

// TestIncompleteNotRun: repetitions that could not run after the server
// died are listed as not run, counted, and numbered after the run the
// server died in.
func TestIncompleteNotRun(t *testing.T) {
	inc := &Incomplete{N: 3, Good: []int{1}, Failed: []Failure{{Rep: 2, Through: 3, Err: errors.New("not run: the server exited during run 1 of the benchmark")}}}
	want := "run: 2 of 3 repetitions failed, repetition 1 kept:\n  repetitions 2 to 3: not run: the server exited during run 1 of the benchmark"
	if inc.Error() != want {
		t.Errorf("Incomplete = %q, want %q", inc.Error(), want)
	}
}

// TestServeReadyNotFound: a ready URL the server answers with 404 on
// every probe ends the wait once the grace passes, saying the path is
// probably wrong, instead of waiting out --ready-timeout.
func TestServeReadyNotFound(t *testing.T) {
	f := newFake(t, "1ms")
	s := f.serve(t, "")
	s.Ready = "http://127.0.0.1:$PERFGATE_PORT/no-such-path"
	s.NotFoundGrace = 300 * time.Millisecond
	srv, err := s.Begin(context.Background(), f.dir, nil, f.client(t), "")
	srv.Stop()
	var se *ServerError
	if !errors.As(err, &se) {
		t.Fatalf("Begin = %T %v, want a *ServerError", err, err)
	}
	for _, w := range []string{"HTTP 404", `the path of --ready "http://127.0.0.1:$PERFGATE_PORT/no-such-path" is probably wrong`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "raise --ready-timeout") {
		t.Errorf("a wrong path advised raising the timeout:\n%v", err)
	}
}
