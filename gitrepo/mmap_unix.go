//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package gitrepo

import (
	"bytes"
	"io"
	"os"
	"syscall"
)

// mapFile maps a read-only file into memory. Pack and index files are
// immutable once written (git replaces them, it never rewrites them in
// place), so a shared read-only mapping is safe and costs no copy: git itself
// reads packs this way.
func mapFile(path string) ([]byte, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, nopCloser{}, nil
	}
	if int64(int(size)) != size {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: syscall.EFBIG}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		// Some filesystems refuse mmap; reading the file is always possible.
		data, err = os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		return data, nopCloser{}, nil
	}
	return data, munmapper(data), nil
}

// openPack opens a pack file for random access through a memory mapping.
func openPack(path string) (io.ReaderAt, int64, io.Closer, error) {
	data, c, err := mapFile(path)
	if err != nil {
		return nil, 0, nil, err
	}
	return bytes.NewReader(data), int64(len(data)), c, nil
}

type munmapper []byte

func (m munmapper) Close() error { return syscall.Munmap(m) }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
