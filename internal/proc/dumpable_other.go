//go:build !linux

package proc

// Undumpable does nothing here: only Linux exposes a process's
// environment to every process of its user (/proc/PID/environ).
func Undumpable() {}
