//go:build !linux

package gitrepo

import (
	"os"
	"time"
)

// statInfo is the part of an lstat result git keeps in its index beyond
// size and mtime; only Linux fills it here, elsewhere comparisons fall back
// to size, mtime and content hashes.
type statInfo struct {
	ctime    time.Time
	dev, ino uint32
	uid, gid uint32
	ok       bool
}

func extraStat(os.FileInfo) statInfo { return statInfo{} }
