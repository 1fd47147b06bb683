//go:build !unix

package bisect

import (
	"os/exec"
	"time"
)

// setProcessGroup: without process groups, cancelling kills the shell.
func setProcessGroup(cmd *exec.Cmd, grace time.Duration) { cmd.WaitDelay = grace }

func killProcessGroup(*exec.Cmd) {}

func signalOf(*exec.ExitError) int { return 0 }
