//go:build unix

package proc

import (
	"os/exec"
	"syscall"
	"time"
)

// SetGroup starts the command in a process group of its own, so that
// cancelling its context stops what it started too: SIGTERM to the group,
// and SIGKILL to the command after grace (call KillGroup after Wait for the
// rest of the group).
func SetGroup(cmd *exec.Cmd, grace time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		pid := cmd.Process.Pid
		go func() {
			// A second interrupt (Hurry) does not wait for the grace
			// period: the group gets SIGKILL at once. After the grace
			// period the command is killed anyway.
			select {
			case <-hurried():
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			case <-time.After(grace + time.Second):
			}
		}()
		return syscall.Kill(-pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = grace
}

// KillGroup kills whatever the command left running in its group.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Signal returns the signal that killed the command, or 0.
func Signal(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
