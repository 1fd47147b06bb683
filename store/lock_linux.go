package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// lockHolder returns the process holding a lock on the file at path, and
// its command line, from /proc/locks (0, "" when it cannot tell). bbolt
// locks with flock, which /proc/locks lists as
// "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"; waiting processes
// appear on lines marked "->" and are skipped.
func lockHolder(path string) (int, string) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, ""
	}
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	want := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[1] != "FLOCK" || fields[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		return pid, commandLine(pid)
	}
	return 0, ""
}

// commandLine returns a process's command line, shortened for a message.
func commandLine(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	s := strings.Join(args, " ")
	if len(s) > 120 {
		s = strings.ToValidUTF8(s[:117], "") + "..."
	}
	return s
}
