package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/fakeserve"
	"github.com/perfgate/perfgate/runner"
)

// The Must show of issue 27, with the stand-in engine of
// internal/fakeserve (this test binary, started with FAKESERVE_ROLE): a
// server that loads for a moment, answers /health and /v1/completions
// with the latency its checkout's latency.txt says, and can crash or
// never become ready; the client calls it and prints a vLLM bench serve
// block.

// serveScenario sets up one scenario: the engine's processes record their
// pids in a directory of their own, and when the test ends none of them
// may still run, no port of theirs may be taken, and no child process of
// the test may be left.
func serveScenario(t *testing.T) (pids string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	old := runGrace
	runGrace = time.Second
	t.Cleanup(func() { runGrace = old })
	pids = t.TempDir()
	t.Setenv(fakeserve.PidDirEnv, pids)
	t.Setenv("TMPDIR", t.TempDir()) // the server logs kept on failure
	t.Cleanup(func() {
		if left := fakeserve.Leftovers(pids); len(left) > 0 {
			t.Errorf("left behind: %s", strings.Join(left, "; "))
		}
		if kids := fakeserve.Children(); len(kids) > 0 {
			t.Errorf("child processes left: %s", strings.Join(kids, "; "))
		}
	})
	return pids
}

// fakeServer is a --server line that starts the stand-in engine.
func fakeServer(t *testing.T, flags string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(fakeserve.RoleEnv + "=server " + runner.ShellQuote(exe) + " -load 30ms " + flags)
}

// fakeClient is the benchmark command, a --run line: n calls of the engine.
func fakeClient(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fakeserve.RoleEnv + "=client " + runner.ShellQuote(exe) + " -n 2"
}

const readyURL = "http://127.0.0.1:$PERFGATE_PORT/health"

// TestRunServer: run --setup --server --ready --warmup 1 --repeat 3 sets
// up and starts the server once, warms up once, runs the client three
// times against it and stores three runs that say how they were served.
func TestRunServer(t *testing.T) {
	pids := serveScenario(t)
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"latency.txt": "2ms\n"})
	t.Chdir(repo) // run measures the checkout it is run in
	mark := filepath.Join(t.TempDir(), "built")
	t.Setenv("SETUP_MARK", mark)
	setup := `echo built > "$SETUP_MARK"`
	server := fakeServer(t, "")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--repeat", "3", "--warmup", "1",
		"--setup", setup, "--server", server, "--ready", readyURL, "-o", "json", "--run", fakeClient(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if servers, clients := fakeserve.Started(pids); servers != 1 || clients != 4 {
		t.Errorf("started the server %d times and the client %d times, want 1 and 4 (a warm-up and 3 runs)", servers, clients)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("--setup did not run: %v", err)
	}
	var doc struct {
		Added   int               `json:"added"`
		Serving map[string]string `json:"serving"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if doc.Added != 3 || doc.Serving["server"] != server || doc.Serving["setup"] != setup || doc.Serving["ready_seconds"] == "" {
		t.Errorf("report %+v\n%s", doc, stdout)
	}
	for _, w := range []string{"server started on port", "server ready in", "warm-up run 1 of 1 (not stored)", "server stopped"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr does not say %q:\n%s", w, stderr)
		}
	}
	// The server's log is kept next to the history, out of git status.
	if logs, _ := filepath.Glob(filepath.Join(repo, ".perfgate", "logs", "perfgate-server-*.log")); len(logs) != 1 {
		t.Errorf("server logs %v, want one in .perfgate/logs", logs)
	}
	if strings.Contains(stderr, "working tree") {
		t.Errorf("the server's log made the checkout look changed:\n%s", stderr)
	}
	exp, _, _ := runCLI(t, "", "--repo", repo, "export")
	if n := strings.Count(exp, `"serve_server":`); n != 3 {
		t.Errorf("%d stored runs record the server, want 3:\n%s", n, exp)
	}
	// --repeat auto keeps one server across the runs it decides to spend:
	// against a faster parent, a fail is confirmed on more than one run.
	parent := git(t, repo, "rev-parse", "HEAD")
	head := commit(t, repo, "slower", map[string]string{"latency.txt": "20ms\n"})
	for _, v := range []float64{2.0, 2.1, 1.9} {
		f := filepath.Join(t.TempDir(), "base.txt")
		os.WriteFile(f, []byte(servingBlock(v, 100, 2, 0)), 0o644)
		if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving-auto", "--commit", parent, "--testbed", "tb", f); code != 0 {
			t.Fatalf("ingest: exit %d\n%s", code, stderr)
		}
	}
	before, _ := fakeserve.Started(pids)
	_, stderr, code = runCLI(t, "", "--repo", repo, "run", "--name", "serving-auto", "--repeat", "auto", "--max-runs", "2", "--testbed", "tb",
		"--rule", "mean_ttft_ms:5%", "--server", server, "--ready", readyURL, "--run", fakeClient(t))
	if after, _ := fakeserve.Started(pids); code != 0 || after != before+1 || !strings.Contains(stderr, "spent 2 of at most 2 runs") {
		t.Errorf("--repeat auto at %s: exit %d, %d server starts, want 2 runs against 1\n%s", head[:12], code, after-before, stderr)
	}
	// The text report says how the runs were served.
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--server", server, "--ready-log", "startup complete", "--run", fakeClient(t))
	if code != 0 || !strings.Contains(stdout, "  server: "+server) || !strings.Contains(stdout, "  server ready in (s): ") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestServeFailures: a server that never becomes ready, one that exits
// before it is ready, one that dies mid-run and a setup that fails each
// say so, with the end of their output, and exit 3; bad flags exit 2.
func TestServeFailures(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"never ready", []string{"--server", "-never-ready", "--ready", readyURL, "--ready-timeout", "300ms"}, 3,
			[]string{"did not become ready within 300ms", "HTTP 503", "loading weights", "nothing was stored"}},
		{"exits before ready", []string{"--server", "-exit-before-ready 7", "--ready-log", "startup complete"}, 3,
			[]string{"exited (exited with code 7) before it was ready", "CUDA out of memory", "perfgate-server-"}},
		{"dies mid-run", []string{"--server", "-crash-after 3", "--ready", readyURL, "--repeat", "3"}, 3,
			[]string{"exited (exited with code 3) during run 2 of the benchmark", "engine core died", "repetition 1 kept"}},
		{"setup fails", []string{"--setup", "echo 'error: no CUDA toolkit' >&2; exit 9", "--server", "", "--ready", readyURL}, 3,
			[]string{"--setup", "exited with code 9", "error: no CUDA toolkit"}},
		{"no ready", []string{"--server", ""}, 2, []string{"--server needs --ready URL"}},
		{"ready without server", []string{"--ready", readyURL}, 2, []string{"--ready is about the server"}},
		{"bad ready URL", []string{"--server", "", "--ready", "localhost:8000/health"}, 2, []string{`--ready "localhost:8000/health" is not an http:// or https:// URL`}},
		{"empty port", []string{"--server", "", "--ready", "http://127.0.0.1:/health"}, 2, []string{`--ready "http://127.0.0.1:/health" has an empty port`, "single quotes"}},
		{"bad ready-log", []string{"--server", "", "--ready-log", "("}, 2, []string{`--ready-log "(" is not a regular expression`}},
		{"both ready flags", []string{"--server", "", "--ready", readyURL, "--ready-log", "x"}, 2, []string{"not both"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			serveScenario(t)
			repo := gitRepo(t)
			commit(t, repo, "engine", map[string]string{"latency.txt": "1ms\n"})
			t.Chdir(repo)
			db := filepath.Join(t.TempDir(), "history.db")
			args := []string{"--repo", repo, "--db", db, "run", "--name", "serving"}
			for i := 0; i < len(tt.args); i++ {
				a := tt.args[i]
				if a == "--server" {
					i++
					a = fakeServer(t, tt.args[i])
					args = append(args, "--server")
				}
				args = append(args, a)
			}
			args = append(args, "--run", fakeClient(t))
			_, stderr, code := runCLI(t, "", args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, "printed nothing") {
				t.Errorf("a server failure reported as the benchmark's:\n%s", stderr)
			}
		})
	}
}

// servedRepo makes a repository whose commits set the engine's latency:
// fast at the first commits, slow from commit slowAt on.
func servedRepo(t *testing.T, n, slowAt int) (repo string, shas []string) {
	repo = gitRepo(t)
	for i := range n {
		lat := "2ms\n"
		if i >= slowAt {
			lat = "60ms\n"
		}
		shas = append(shas, commit(t, repo, "commit "+itoa(i), map[string]string{"latency.txt": lat, "n.txt": itoa(i)}))
	}
	return repo, shas
}

// TestABServers: ab starts the side's server before its runs, one at a
// time (restarted at each switch of A B B A) or both side by side, and
// its report says how the commits were served.
func TestABServers(t *testing.T) {
	for _, tt := range []struct {
		mode    string
		servers int
	}{{"one", 3}, {"both", 2}} {
		t.Run(tt.mode, func(t *testing.T) {
			pids := serveScenario(t)
			repo, shas := servedRepo(t, 2, 1)
			db := filepath.Join(t.TempDir(), "history.db")
			stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "ab", "--base", shas[0], "--head", shas[1], "--repeat", "2",
				"--name", "serving", "--setup", "test -f latency.txt", "--server", fakeServer(t, ""), "--ready", readyURL,
				"--ab-servers", tt.mode, "--workdir", t.TempDir(), "-o", "json", "--run", fakeClient(t))
			if code != 0 && code != 1 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			// A B B A: with one server at a time, A, B, then A again.
			if servers, clients := fakeserve.Started(pids); servers != tt.servers || clients != 4 {
				t.Errorf("started the server %d times and the client %d times, want %d and 4", servers, clients, tt.servers)
			}
			if !strings.Contains(stdout, `served: setup \"test -f latency.txt\" in each checkout; server`) {
				t.Errorf("the report does not say how the commits were served:\n%s", stdout)
			}
			exp, _, _ := runCLI(t, "", "--db", db, "export")
			base, head := ttftAt(t, exp, shas[0]), ttftAt(t, exp, shas[1])
			if len(base) != 2 || len(head) != 2 || max(base[0], base[1]) >= min(head[0], head[1]) {
				t.Errorf("TTFT at base %v, at head %v: each side was not measured against its own commit's server", base, head)
			}
		})
	}
}

// ttftAt returns the mean_ttft_ms of the exported runs at sha.
func ttftAt(t *testing.T, export, sha string) []float64 {
	var out []float64
	for _, line := range strings.Split(strings.TrimSpace(export), "\n") {
		var r struct {
			Commit  string             `json:"commit"`
			Metrics map[string]float64 `json:"metrics"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if r.Commit == sha {
			out = append(out, r.Metrics["mean_ttft_ms"])
		}
	}
	return out
}

// TestBisectServer: bisect sets up and starts the engine at each commit it
// measures and names the commit that made it slow; a commit whose setup
// fails is skipped.
func TestBisectServer(t *testing.T) {
	pids := serveScenario(t)
	repo := gitRepo(t)
	var shas []string
	for i := range 7 {
		files := map[string]string{"latency.txt": "2ms\n", "n.txt": itoa(i)}
		if i >= 4 {
			files["latency.txt"] = "60ms\n"
		}
		os.Remove(filepath.Join(repo, "broken"))
		if i == 2 {
			files["broken"] = "the build fails here\n" // the setup fails at commit 2
		}
		shas = append(shas, commit(t, repo, "commit "+itoa(i), files))
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "history.db"), "bisect",
		"--good", shas[0], "--bad", shas[6], "--metric", "mean_ttft_ms", "--name", "serving",
		"--setup", "if test -f broken; then cat broken; exit 1; fi", "--server", fakeServer(t, ""), "--ready", readyURL,
		"--workdir", t.TempDir(), "-o", "json", "--run", fakeClient(t))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, shas[4][:12]) {
		t.Errorf("bisect did not name the planted commit %s:\n%s", shas[4][:12], stdout)
	}
	servers, clients := fakeserve.Started(pids)
	if servers == 0 || clients < servers {
		t.Errorf("started the server %d times and the client %d times", servers, clients)
	}
	if !strings.Contains(stderr, "setup at ") || !strings.Contains(stderr, "server at ") {
		t.Errorf("stderr does not show the setup and server of each commit:\n%s", stderr)
	}
}

// TestBisectStepSetupFails: bisect-step exits 125 (skip) when --setup
// fails at the commit git bisect checked out.
func TestBisectStepSetupFails(t *testing.T) {
	serveScenario(t)
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"latency.txt": "1ms\n"})
	t.Chdir(repo)
	_, stderr, code := runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "history.db"), "bisect-step",
		"--name", "serving", "--metric", "mean_ttft_ms", "--threshold", "10%", "--reference", "5",
		"--setup", "echo build broke; exit 1", "--server", fakeServer(t, ""), "--ready", readyURL, "--run", fakeClient(t))
	if code != stepSkip || !strings.Contains(stderr, "build broke") {
		t.Errorf("exit %d, want %d (skip)\n%s", code, stepSkip, stderr)
	}
	_, stderr, code = runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "history.db"), "bisect-step",
		"--name", "serving", "--metric", "mean_ttft_ms", "--threshold", "10%", "--reference", "1000",
		"--server", fakeServer(t, ""), "--ready", readyURL, "--run", fakeClient(t))
	if code != stepGood {
		t.Errorf("exit %d, want %d (good)\n%s", code, stepGood, stderr)
	}
}

// TestRunServerInterrupted: Ctrl-C while the client runs against the
// server stops both (the server's whole group), stores nothing and exits
// 3; no process or port is left.
func TestRunServerInterrupted(t *testing.T) {
	pids := serveScenario(t)
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"latency.txt": "1h\n"}) // the client waits for ever
	t.Chdir(repo)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, clients := fakeserve.Started(pids); clients > 0 {
				time.Sleep(50 * time.Millisecond) // its request reaches the server
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"perfgate", "--repo", repo, "run", "--name", "serving", "--server", fakeServer(t, ""), "--ready", readyURL,
		"--run", fakeClient(t)}, strings.NewReader(""), &out, &errb)
	if code != 3 || !strings.Contains(errb.String(), "interrupted") || !strings.Contains(errb.String(), "stored nothing") {
		t.Errorf("exit %d, stderr:\n%s", code, errb.String())
	}
}

// TestABServerFails: a server that exits before it is ready stops ab with
// exit 3, naming the side and commit and quoting the server's log.
func TestABServerFails(t *testing.T) {
	serveScenario(t)
	repo, shas := servedRepo(t, 2, 1)
	_, stderr, code := runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "history.db"), "ab", "--base", shas[0], "--head", shas[1],
		"--repeat", "2", "--name", "serving", "--server", fakeServer(t, "-exit-before-ready 7"), "--ready", readyURL,
		"--workdir", t.TempDir(), "--run", fakeClient(t))
	for _, w := range []string{" at base " + shas[0][:12] + " exited (exited with code 7) before it was ready", "CUDA out of memory"} {
		if code != 3 || !strings.Contains(stderr, w) {
			t.Errorf("exit %d, stderr does not say %q:\n%s", code, w, stderr)
		}
	}
}

// TestBisectSetupFailsAtEnd: a commit whose --setup fails is skipped, as
// exit code 125 is; at --bad, that leaves nothing to compare with, and
// bisect says to pick another --bad.
func TestBisectSetupFailsAtEnd(t *testing.T) {
	pids := serveScenario(t)
	repo, shas := servedRepo(t, 3, 2)
	bad := commit(t, repo, "breaks the build", map[string]string{"broken": "no rule to make target\n"})
	_, stderr, code := runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "history.db"), "bisect",
		"--good", shas[0], "--bad", bad, "--metric", "mean_ttft_ms", "--name", "serving",
		"--setup", "if test -f broken; then cat broken; exit 1; fi", "--server", fakeServer(t, ""), "--ready", readyURL,
		"--workdir", t.TempDir(), "--run", fakeClient(t))
	for _, w := range []string{"no rule to make target", "--bad " + bad[:7], "cannot be tested (--setup exited with code 1"} {
		if code != 2 || !strings.Contains(stderr, w) {
			t.Errorf("exit %d, stderr does not say %q:\n%s", code, w, stderr)
		}
	}
	if servers, _ := fakeserve.Started(pids); servers != 1 {
		t.Errorf("started %d servers, want 1 (at --good; none where the setup failed)", servers)
	}
}
