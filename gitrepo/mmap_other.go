//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package gitrepo

import (
	"io"
	"os"
)

// mapFile reads a whole file; platforms without a portable syscall.Mmap get
// the same bytes at the cost of one read.
func mapFile(path string) ([]byte, io.Closer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return data, nopCloser{}, nil
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// openPack opens a pack file for random access with positioned reads, so a
// large pack is never read whole.
func openPack(path string) (io.ReaderAt, int64, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, nil, err
	}
	return f, fi.Size(), f, nil
}
