//go:build linux

package proc

import "syscall"

// prSetDumpable is PR_SET_DUMPABLE of <linux/prctl.h>.
const prSetDumpable = 4

// Undumpable makes this process undumpable (prctl PR_SET_DUMPABLE 0), so
// that another process of the same user, such as the benchmark perfgate
// starts, cannot read its /proc/PID/environ, mem or fds (the kernel answers
// EACCES): the environment holds PERFGATE_GITHUB_TOKEN, PGPASSWORD and the
// database URL, which Environ keeps out of the benchmark's own. The
// setting is per process and is not inherited across exec, so children
// stay dumpable. A failure is ignored: there is nothing better to do.
func Undumpable() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}
