package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunInterrupted: Ctrl-C while the benchmark runs stops the command and
// everything it started, also what ignores SIGTERM (after the grace), stores
// nothing and exits 3 saying so, without waiting for the command.
func TestRunInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("process groups")
	}
	old := runGrace
	runGrace = 300 * time.Millisecond
	defer func() { runGrace = old }()
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// The shell ignores SIGTERM; its background child holds the output.
	// Both would run for an hour: run returning at all is the kill after
	// the grace at work (no wall-time bound).
	script := writeFile(t, dir, "slow.sh", "#!/bin/sh\ntrap '' TERM\nsleep 3600 &\necho $$ $! > "+pids+".tmp\nmv "+pids+".tmp "+pids+"\nwait\nsleep 3600\n")
	os.Chmod(script, 0o755)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(pids); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"perfgate", "--repo", repo, "run", "--name", "serving", "--", script}, strings.NewReader(""), &out, &errb)
	if code != 3 || !strings.Contains(errb.String(), "interrupted; stopped the benchmark command") || !strings.Contains(errb.String(), "stored nothing") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	b, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		// Reaped or a zombie of init's: either way signal 0 must fail soon.
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d still runs after the interrupt", pid)
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if exp, _, _ := runCLI(t, "", "--repo", repo, "export"); exp != "" {
		t.Errorf("an interrupted run stored:\n%s", exp)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// TestRunBoundedMemory: a command that prints 64 MB, most of it one line
// without a newline, is parsed as it streams: perfgate does not hold its
// output.
func TestRunBoundedMemory(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	block := writeFile(t, dir, "block.txt", servingBlock(100, 300, 500, 0))
	script := writeFile(t, dir, "loud.sh", "#!/bin/sh\nhead -c 32000000 /dev/zero | tr '\\0' x\necho\nyes 'INFO engine.py:1] Avg prompt throughput: 1 tokens/s' | head -c 32000000\n"+
		"printf '%s' \"$(cat "+block+")\"\n") // the block without its final newline
	os.Chmod(script, 0o755)
	runtime.GC()
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var max uint64
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > max {
				max = ms.HeapAlloc
			}
			select {
			case <-stop:
				peak <- max
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var out bytes.Buffer
	code := run(context.Background(), []string{"perfgate", "--repo", repo, "run", "--name", "serving", "--", script}, strings.NewReader(""), &out, io.Discard)
	close(stop)
	if code != 0 || !strings.Contains(out.String(), "stored 1 of 1") {
		t.Fatalf("exit %d, %q", code, out.String())
	}
	if p := <-peak; p > 32<<20 {
		t.Errorf("heap reached %d MB for 64 MB of output; run must stream it", p>>20)
	}
}

// TestRunCommandNotFound: a command that is not there, or that a shell
// cannot find (exit 127), says so.
func TestRunCommandNotFound(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	_, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "b", "--", "no-such-benchmark-qa")
	if code != 3 || !strings.Contains(stderr, `cannot start "no-such-benchmark-qa": executable file not found in $PATH`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "--repo", repo, "run", "--name", "b", "--", "sh", "-c", "no-such-benchmark-qa")
	if code != 3 || !strings.Contains(stderr, "exited with code 127 (the shell's 'command not found'") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	// The command's stdin is /dev/null, not perfgate's.
	_, stderr, code = runCLI(t, "not for the benchmark", "--repo", repo, "run", "--name", "b", "--", "sh", "-c", "cat; echo end")
	if code != 2 || strings.Contains(stderr, "not for the benchmark") || !strings.Contains(stderr, "end") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestRunHidesTokens: the benchmark command (often a pull request's code)
// gets perfgate's environment without the tokens perfgate reads.
func TestRunHidesTokens(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	for k, v := range map[string]string{"GITHUB_TOKEN": "ghs_secret1", "GH_TOKEN": "gho_secret2", "PERFGATE_GITHUB_TOKEN": "secret3", "PERFGATE_RUN_TEST_KEEP": "kept"} {
		t.Setenv(k, v)
	}
	dir := t.TempDir()
	seen := filepath.Join(dir, "env")
	script := writeFile(t, dir, "bench.sh", "#!/bin/sh\nenv > "+seen+"\necho '"+metricsJSON(100, 300)+"'\n")
	os.Chmod(script, 0o755)
	if _, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--", script); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"secret1", "secret2", "secret3"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the benchmark command saw a token (%s):\n%s", s, b)
		}
	}
	if !strings.Contains(string(b), "PERFGATE_RUN_TEST_KEEP=kept") {
		t.Errorf("the benchmark command lost the rest of the environment:\n%s", b)
	}
}
