//go:build unix

package proc

import (
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"
)

// SetGroup starts the command in a process group of its own, so that
// cancelling its context stops what it started too: SIGTERM to the group,
// and SIGKILL to the command after grace (call KillGroup after Wait for the
// rest of the group).
//
// On Linux the command also gets SIGKILL when perfgate dies (a parent-death
// signal: kill -9 of perfgate must not leave a server holding its port),
// and a process it started that left the group (setsid, a daemon) is found
// among its descendants when it is stopped, and stopped with its own group.
func SetGroup(cmd *exec.Cmd, grace time.Duration) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setDeathSignal(cmd.SysProcAttr)
	cmd.Cancel = func() error {
		pid := cmd.Process.Pid
		// The processes that left the group are found while the command
		// still runs: once it exits, they are no one's descendants.
		strays := remember(cmd, strayGroups(pid))
		go func() {
			// A second interrupt (Hurry) does not wait for the grace
			// period: the group gets SIGKILL at once. After the grace
			// period the command is killed anyway.
			select {
			case <-hurried():
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				signalGroups(strays, syscall.SIGKILL)
			case <-time.After(grace + time.Second):
			}
		}()
		signalGroups(strays, syscall.SIGTERM)
		return syscall.Kill(-pid, syscall.SIGTERM)
	}
	cmd.WaitDelay = grace
}

// KillGroup kills whatever the command left running in its group, and the
// groups of its descendants that left it (found now, or when it was
// cancelled).
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	strays := append(forget(cmd), strayGroups(pid)...)
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	signalGroups(strays, syscall.SIGKILL)
}

// strays remembers, by command, the groups found when it was cancelled.
var strays sync.Map // *exec.Cmd -> []int

func remember(cmd *exec.Cmd, groups []int) []int {
	if len(groups) > 0 {
		strays.Store(cmd, groups)
	}
	return groups
}

func forget(cmd *exec.Cmd) []int {
	v, ok := strays.LoadAndDelete(cmd)
	if !ok {
		return nil
	}
	return v.([]int)
}

// signalGroups sends sig to each process group.
func signalGroups(groups []int, sig syscall.Signal) {
	for _, g := range groups {
		_ = syscall.Kill(-g, sig)
	}
}

// strayGroups returns the process groups of pid's descendants that are
// neither pid's group nor perfgate's own.
func strayGroups(pid int) []int {
	own := syscall.Getpgrp()
	var out []int
	for _, g := range descendantGroups(pid) {
		if g != pid && g != own && g > 1 && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// Signal returns the signal that killed the command, or 0.
func Signal(ee *exec.ExitError) int {
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal())
	}
	return 0
}
