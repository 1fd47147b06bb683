//go:build !unix

package proc

import (
	"os/exec"
	"time"
)

// SetGroup: without process groups, cancelling kills the command only.
func SetGroup(cmd *exec.Cmd, grace time.Duration) { cmd.WaitDelay = grace }

// KillGroup does nothing without process groups.
func KillGroup(*exec.Cmd) {}

// Signal returns 0: no signals here.
func Signal(*exec.ExitError) int { return 0 }
