package proc

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// setDeathSignal makes the kernel send SIGKILL to the child when perfgate
// dies, however it dies.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// descendantGroups returns the process group of each descendant of pid,
// read from /proc (nil when it cannot be read).
func descendantGroups(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	type info struct{ ppid, pgid int }
	procs := map[int]info{}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 {
			continue
		}
		ppid, err1 := strconv.Atoi(f[1])
		pgid, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		procs[p] = info{ppid, pgid}
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	queue := append([]int(nil), children[pid]...)
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, procs[p].pgid)
		queue = append(queue, children[p]...)
	}
	return out
}
