//go:build linux

package gitrepo

import (
	"os"
	"syscall"
	"time"
)

// statInfo is the part of an lstat result git keeps in its index beyond
// size and mtime.
type statInfo struct {
	ctime    time.Time
	dev, ino uint32
	uid, gid uint32
	ok       bool
}

func extraStat(fi os.FileInfo) statInfo {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statInfo{}
	}
	return statInfo{
		ctime: time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)),
		dev:   uint32(st.Dev),
		ino:   uint32(st.Ino),
		uid:   st.Uid,
		gid:   st.Gid,
		ok:    true,
	}
}
