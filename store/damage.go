package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// A damaged history file (truncated by a full disk, a byte flipped by a
// bad copy) must never crash perfgate. bbolt maps the file into memory and
// trusts it: a page past the end of a truncated file faults with SIGBUS, a
// damaged page id or offset reads outside the mapping (SIGSEGV) or makes
// bbolt panic. So the store
//
//   - checks the meta pages before bbolt opens the file: a checksum that
//     fails on both, or a file shorter than the pages the valid meta page
//     counts, is reported as damage without mapping anything (checkFile);
//   - runs every bbolt call under guard, which turns memory faults into
//     panics (debug.SetPanicOnFault) and any panic into a *DamagedError.
//
// The caller gets an error matching ErrDamaged that says how to save the
// readable runs (perfgate recover, see Salvage) and rebuild the history.

// ErrDamaged is matched (errors.Is) by the errors of a damaged history.
var ErrDamaged = errors.New("history is damaged")

// DamagedError reports a damaged history file.
type DamagedError struct {
	Path   string
	Detail string
	cut    bool // the file is shorter than its pages: the rest may be read
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("history %s is damaged (%s): run `perfgate recover --out runs.jsonl` to save the runs it can still read, move the file away, then rebuild the history with `perfgate import runs.jsonl` and, if you use a history branch, `perfgate sync --pull-only`",
		e.Path, e.Detail)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// corruptError is damage found in a record or an index, before the path
// is known; damaged names the file.
type corruptError struct{ msg string }

func (e *corruptError) Error() string        { return e.msg }
func (e *corruptError) Is(target error) bool { return target == ErrDamaged }

// damaged turns an error of the store's file into a *DamagedError naming
// path when it reports damage; other errors are returned as they are.
func damaged(path string, err error) error {
	var de *DamagedError
	if err == nil || errors.As(err, &de) {
		return err
	}
	var ce *corruptError
	if errors.As(err, &ce) {
		return &DamagedError{Path: path, Detail: ce.msg}
	}
	if errors.Is(err, berrors.ErrIncompatibleValue) {
		// A bucket where perfgate put one is a key, or the other way
		// round: a flag was damaged.
		return &DamagedError{Path: path, Detail: "a bucket's entry is damaged: " + err.Error()}
	}
	return err
}

// guard runs fn with memory faults turned into panics, and turns a panic
// raised in bbolt or in this package (reading a damaged file) into a
// *DamagedError for path. A panic raised elsewhere (a caller's callback
// given to Each) is not the file's fault and goes on.
func guard(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if !panickedInStore() && !mappedFault(p) {
				panic(p)
			}
			detail := fmt.Sprintf("reading it failed: %v", p)
			if re, ok := p.(runtime.Error); ok && strings.Contains(re.Error(), "memory address") {
				detail = "a page refers to memory outside the file"
			}
			err = &DamagedError{Path: path, Detail: detail}
		}
	}()
	return damaged(path, fn())
}

// boltOpen is bolt.Open under guard. When bbolt panics while opening a
// damaged file, the file it opened (and so its lock) is closed; only the
// mapping stays until the process exits.
func boltOpen(path string, opts *bolt.Options) (*bolt.DB, error) {
	var f *os.File
	opts.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		var err error
		f, err = os.OpenFile(name, flag, perm)
		return f, err
	}
	var db *bolt.DB
	err := guard(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o644, opts)
		return err
	})
	if errors.Is(err, ErrDamaged) && db == nil && f != nil {
		f.Close()
	}
	return db, err
}

// panickedInStore reports, from a deferred function that recovered a
// panic, whether the function that panicked (the first frame below the
// runtime's panic machinery) belongs to bbolt or to this package.
func panickedInStore() bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	inPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic" || f.Function == "runtime.sigpanic" || f.Function == "runtime.panicmem":
			inPanic = true
		case inPanic && !strings.HasPrefix(f.Function, "runtime.") && !stdlib(f.Function):
			// The first frame past the standard library's (bytes.Compare
			// inlined into bbolt's cursor, say) is who panicked.
			return strings.HasPrefix(f.Function, "go.etcd.io/bbolt") || strings.HasPrefix(f.Function, storePkg)
		}
		if !more {
			return false
		}
	}
}

// mappedFault reports whether a panic is a memory fault at an address
// far from zero: a read of the history's memory-mapped file past what the
// file holds (a nil dereference in a caller's code faults near zero).
// SetPanicOnFault makes such faults panics with an Addr method.
func mappedFault(p any) bool {
	f, ok := p.(interface{ Addr() uintptr })
	return ok && f.Addr() >= 1<<16
}

// stdlib reports whether a function is one of the standard library's
// that bbolt's cursor and nodes call and the compiler inlines into them
// (bytes.Compare, sort.Search, internal/bytealg): a fault there is
// bbolt's. Other packages (strings, say) are not skipped: a caller's
// callback that panics in them is the caller's.
func stdlib(function string) bool {
	for _, p := range []string{"bytes.", "sort.", "internal/bytealg."} {
		if strings.HasPrefix(function, p) {
			return true
		}
	}
	return false
}

// storePkg prefixes the function names of this package.
var storePkg = reflect.TypeFor[Store]().PkgPath() + "."

// bbolt's on-disk constants (go.etcd.io/bbolt/internal/common).
const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	boltPageHeader   = 16 // id, flags, count, overflow
	boltMetaSize     = 64 // magic .. checksum
	boltMetaSumLen   = 56 // the checksum covers the bytes before it
	boltNoFreelist   = ^uint64(0)
	boltFreelistPage = 0x10
	boltMinPageSize  = 512
	boltMaxPageSize  = 1 << 16
)

// boltMeta is the part of a bbolt meta page the checks need.
type boltMeta struct {
	pageSize uint32
	root     uint64 // page id of the root bucket
	freelist uint64
	pgid     uint64 // high water mark: pages below it are in use
	txid     uint64
}

var (
	errNoMagic   = errors.New("no bbolt magic number")
	errShortMeta = errors.New("file cut short before its meta page")
)

// parseMeta decodes and validates a meta page's body (after its header).
func parseMeta(b []byte) (boltMeta, error) {
	if len(b) < boltMetaSize {
		return boltMeta{}, errors.New("meta page cut short")
	}
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != boltMagic {
		return boltMeta{}, errNoMagic
	}
	if v := le.Uint32(b[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("bbolt file format version %d, not %d", v, boltVersion)
	}
	h := fnv.New64a()
	h.Write(b[:boltMetaSumLen])
	if h.Sum64() != le.Uint64(b[boltMetaSumLen:]) {
		return boltMeta{}, errors.New("meta page checksum mismatch")
	}
	m := boltMeta{
		pageSize: le.Uint32(b[8:]),
		root:     le.Uint64(b[16:]),
		freelist: le.Uint64(b[32:]),
		pgid:     le.Uint64(b[40:]),
		txid:     le.Uint64(b[48:]),
	}
	ps := m.pageSize
	if ps < boltMinPageSize || ps > boltMaxPageSize || ps&(ps-1) != 0 {
		return boltMeta{}, fmt.Errorf("page size %d is not a power of two between %d and %d", ps, boltMinPageSize, boltMaxPageSize)
	}
	if m.pgid < 3 || m.root < 2 || m.root >= m.pgid || (m.freelist != boltNoFreelist && (m.freelist < 2 || m.freelist >= m.pgid)) {
		return boltMeta{}, fmt.Errorf("page numbers out of range (root %d, freelist %d, high water mark %d)", m.root, m.freelist, m.pgid)
	}
	return m, nil
}

// checkFile looks at the meta pages of an existing history file before
// bbolt maps it, the way bbolt chooses one (the valid page with the
// higher transaction id), and reports damage as an error matching
// ErrDamaged: no valid meta page, or a file shorter than the pages the
// chosen meta page says are in use (a truncated file would fault when
// read). An empty file is new and passes. bbolt is little-endian on every
// platform perfgate builds for.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // bbolt's open reports it, with the permission advice
	}
	defer f.Close()
	// Another perfgate may be committing meanwhile (this runs before
	// bbolt takes the file's lock): the size is read after the meta page
	// (a file only grows), and a complaint stands only when the meta page
	// did not change while it was checked. A commit writes its meta page
	// last, and the pages of the meta page it replaces are reused only
	// by the commit after it, so an unchanged meta page means a
	// consistent read.
	for attempt := 1; ; attempt++ {
		fi, err := f.Stat()
		if err != nil || fi.Size() == 0 {
			return nil
		}
		m, err := readMeta(f, fi.Size())
		if errors.Is(err, errNotBolt) {
			return nil // not a history at all: bbolt's open says so
		}
		if err != nil {
			return &DamagedError{Path: path, Detail: err.Error()}
		}
		derr := checkPages(f, m)
		if derr == nil {
			return nil
		}
		derr.Path = path
		if again, err := readMeta(f, fi.Size()); attempt == 3 || err != nil || again.txid == m.txid {
			return derr
		}
	}
}

// checkPages checks the pages a meta page refers to: that the file holds
// all of them, and the free page list.
func checkPages(f *os.File, m boltMeta) *DamagedError {
	fi, err := f.Stat()
	if err != nil {
		return nil // bbolt's open reports it
	}
	if need := int64(m.pgid) * int64(m.pageSize); need > fi.Size() || need < 0 {
		return &DamagedError{Detail: fmt.Sprintf("the file is %d bytes long but its pages need %d: it was cut short", fi.Size(), need), cut: true}
	}
	if err := checkFreelist(f, m); err != nil {
		return &DamagedError{Detail: err.Error()}
	}
	return nil
}

// checkFreelist checks the free page list that a writer's bbolt loads
// while it opens the file, where a panic could not be cleaned up: the
// page is a freelist page, and its page ids are distinct and in use
// range. The caller has checked that the file holds every page below
// m.pgid.
func checkFreelist(r io.ReaderAt, m boltMeta) error {
	if m.freelist == boltNoFreelist {
		return nil
	}
	ps := int64(m.pageSize)
	off := int64(m.freelist) * ps
	hdr := make([]byte, boltPageHeader+8)
	if _, err := r.ReadAt(hdr, off); err != nil {
		return fmt.Errorf("free page list (page %d): %v", m.freelist, err)
	}
	le := binary.LittleEndian
	flags, count, overflow := le.Uint16(hdr[8:]), uint64(le.Uint16(hdr[10:])), uint64(le.Uint32(hdr[12:]))
	if le.Uint64(hdr) != m.freelist || flags != boltFreelistPage {
		return fmt.Errorf("page %d is not the free page list it should be", m.freelist)
	}
	start := int64(boltPageHeader)
	if count == 0xFFFF {
		count = le.Uint64(hdr[boltPageHeader:])
		start += 8
	}
	if m.freelist+overflow >= m.pgid || count > (overflow+1)*uint64(ps)/8 {
		return fmt.Errorf("the free page list (page %d) claims %d pages over %d, past the end", m.freelist, count, overflow+1)
	}
	buf := make([]byte, count*8)
	if _, err := r.ReadAt(buf, off+start); err != nil {
		return fmt.Errorf("free page list (page %d): %v", m.freelist, err)
	}
	ids := make([]uint64, count)
	for i := range ids {
		ids[i] = le.Uint64(buf[8*i:])
	}
	slices.Sort(ids)
	for i, id := range ids {
		if id < 2 || id >= m.pgid || (i > 0 && id == ids[i-1]) {
			return fmt.Errorf("the free page list (page %d) holds a bad page number %d", m.freelist, id)
		}
	}
	return nil
}

// errNotBolt: neither meta page has bbolt's magic number.
var errNotBolt = errors.New("not a bbolt file")

// readMeta returns the meta page bbolt would use.
func readMeta(r io.ReaderAt, size int64) (boltMeta, error) {
	buf := make([]byte, boltPageHeader+boltMetaSize)
	read := func(off int64) (boltMeta, error) {
		if off+int64(len(buf)) > size {
			return boltMeta{}, errShortMeta
		}
		if _, err := r.ReadAt(buf, off); err != nil {
			return boltMeta{}, err
		}
		return parseMeta(buf[boltPageHeader:])
	}
	m0, err0 := read(0)
	// The second meta page starts one page in; its size comes from the
	// first page, or, when that is damaged, from the candidates bbolt
	// tries.
	sizes := []int64{int64(os.Getpagesize()), 4096, 8192, 16384, 32768, 65536}
	if err0 == nil {
		sizes = []int64{int64(m0.pageSize)}
	}
	var m1 boltMeta
	err1 := errors.New("no second meta page")
	for _, ps := range sizes {
		if m, err := read(ps); err == nil && int64(m.pageSize) == ps {
			m1, err1 = m, nil
			break
		} else if err != nil {
			err1 = err
		}
	}
	switch {
	case err0 == nil && err1 == nil:
		if m1.txid > m0.txid {
			return m1, nil
		}
		return m0, nil
	case err0 == nil:
		return m0, nil
	case err1 == nil:
		return m1, nil
	}
	if errors.Is(err0, errNoMagic) && (errors.Is(err1, errNoMagic) || errors.Is(err1, errShortMeta)) {
		return boltMeta{}, errNotBolt
	}
	return boltMeta{}, fmt.Errorf("neither meta page is valid: %v; %v", err0, err1)
}
