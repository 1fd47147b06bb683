//go:build unix

package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWorktreeCancel cancels a command that started a background process
// (a server, say): Run returns with the context's error, the process group
// is gone and so is the checkout. The background process would run for an
// hour: Run returning at all is the kill at work (no wall-time bound).
func TestWorktreeCancel(t *testing.T) {
	repo, _, shas := testRepo(t)
	work := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	wt := &Worktree{Repo: repo, Dir: work, Grace: 2 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the background process has started.
		for range 200 {
			// Written, not only created: the shell creates the file
			// before echo writes the pid.
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := wt.Run(ctx, shas[0], "sleep 3600 & echo $! > "+pidFile+"; wait", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	emptyDir(t, work)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		// Cancelled before the pid was written: nothing to look for
		// (kill(0) would signal this test's own process group).
		t.Skipf("the pid file holds %q: the cancel came before the background process started", data)
	}
	// The background sleep was killed with its group (allow the kernel a
	// moment to reap it).
	for range 100 {
		if err := syscall.Kill(pid, 0); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("background process %d still running", pid)
}

// TestWorktreeBackgroundLeftover runs a command that exits but leaves a
// process behind holding its output: the process is killed and Run
// reports the command's own exit code.
func TestWorktreeBackgroundLeftover(t *testing.T) {
	repo, _, shas := testRepo(t)
	wt := &Worktree{Repo: repo, Dir: t.TempDir(), Grace: 200 * time.Millisecond}
	res, err := wt.Run(context.Background(), shas[1], "sleep 60 & echo started; exit 3", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || !strings.Contains(string(res.Tail), "started") {
		t.Errorf("exit %d output %q, want 3 and started", res.ExitCode, res.Tail)
	}
}
