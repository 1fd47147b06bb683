package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitGone waits for pid to end, and kills it and fails when it does not.
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("%s (pid %d) is still running", what, pid)
	}
}

// A process the command started that left its group (setsid, as a server
// that daemonises a worker does) is stopped with the command (issue 34).
func TestCancelStopsSetsidChild(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "setsid sleep 300 & echo $!; wait")
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
	// Wait until it has its own session.
	for i := 0; i < 100; i++ {
		if g, err := syscall.Getpgid(child); err == nil && g == child {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	_ = cmd.Wait()
	KillGroup(cmd)
	waitGone(t, child, "the child that called setsid")
}

// When perfgate dies by SIGKILL, the command it started dies too (a
// parent-death signal): a server must not keep its port (issue 34).
func TestParentDeathKillsCommand(t *testing.T) {
	if os.Getenv("PERFGATE_PROC_PARENT") == "1" {
		cmd := exec.CommandContext(context.Background(), "sleep", "300")
		SetGroup(cmd, time.Second)
		if err := cmd.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestParentDeathKillsCommand$")
	parent.Env = append(os.Environ(), "PERFGATE_PROC_PARENT=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		parent.Process.Kill()
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		parent.Process.Kill()
		t.Fatalf("child pid %q: %v", line, err)
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitGone(t, child, "the command of a perfgate killed with SIGKILL")
}
