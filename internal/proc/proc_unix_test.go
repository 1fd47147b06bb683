//go:build unix

package proc

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// alive reports whether a process with pid exists and is not a zombie (an
// orphan's zombie waits for init to reap it, which some containers' init
// never does).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// pid (comm) STATE ...; comm may hold spaces and parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// TestCancelStopsTheGroup: cancelling the context stops the command and
// what it started in the background, and Signal names SIGTERM.
func TestCancelStopsTheGroup(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"obeys SIGTERM", "sleep 30 & echo $!; wait"},
		{"ignores SIGTERM", "trap '' TERM; sleep 30 & echo $!; while :; do sleep 0.1; done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cmd := exec.CommandContext(ctx, "sh", "-c", tt.script)
			SetGroup(cmd, 500*time.Millisecond)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			child, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("background pid %q: %v", line, err)
			}
			cancel()
			werr := cmd.Wait()
			KillGroup(cmd)
			var ee *exec.ExitError
			if !errors.As(werr, &ee) || Signal(ee) == 0 {
				t.Errorf("Wait = %v, want the command killed by a signal", werr)
			}
			deadline := time.Now().Add(5 * time.Second)
			for alive(child) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(child) {
				_ = syscall.Kill(child, syscall.SIGKILL)
				t.Errorf("background process %d outlived the cancelled command", child)
			}
		})
	}
}
