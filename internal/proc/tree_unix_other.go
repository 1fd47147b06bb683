//go:build unix && !linux

package proc

import "syscall"

// setDeathSignal: only Linux has a parent-death signal.
func setDeathSignal(*syscall.SysProcAttr) {}

// descendantGroups: without /proc, no descendant is found.
func descendantGroups(int) []int { return nil }
