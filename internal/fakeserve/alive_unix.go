//go:build unix

package fakeserve

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// alive reports whether pid exists and is not a zombie (an orphan's
// zombie waits for an init that may never reap it).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
