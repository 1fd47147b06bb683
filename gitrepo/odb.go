package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"container/list"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

// odb reads objects straight from a repository's object directories: pack
// files through their .idx tables and loose objects, following alternates.
//
// go-git's filesystem storage answers the same questions, but its first read
// from a pack decodes the whole .idx into maps and builds an offset->hash
// reverse index of every object (tens of MB and tens of ms on a large pack),
// and each object read costs 30-70 µs. Here an .idx is memory-mapped and
// binary-searched in place, and an object read is one inflate, so opening is
// O(1) and walks cost what they touch. The pack and delta formats are decoded
// with go-git's own packfile.PatchDelta and objfile reader.
type odb struct {
	dirs  []string // objects directories: the repository's, then alternates
	packs []*pack
	// packNames is the set of pack base names loaded, to rescan cheaply when
	// an object is missing (git gc or fetch may have written a new pack).
	packNames map[string]bool

	cache   *baseCache
	br      *bufio.Reader
	zr      io.ReadCloser
	scratch [32]byte
}

type pack struct {
	name    string // path without extension
	idx     []byte
	idxC    io.Closer
	version int
	fanout  [256]uint32
	count   uint32

	data  io.ReaderAt // nil until first read
	size  int64
	dataC io.Closer
}

// errObjectMissing is the internal "not in this repository" answer; callers
// turn it into a user-facing error that says what is missing and why.
var errObjectMissing = errors.New("object not found")

const (
	maxDeltaChain  = 10000
	baseCacheBytes = 32 << 20
)

func newODB(objectsDir string) (*odb, error) {
	db := &odb{packNames: map[string]bool{}, cache: newBaseCache(baseCacheBytes)}
	db.dirs = alternates(objectsDir, map[string]bool{})
	if err := db.scanPacks(); err != nil {
		db.close()
		return nil, err
	}
	return db, nil
}

// alternates returns dir followed by the directories listed, recursively, in
// its info/alternates file (absolute, or relative to dir).
func alternates(dir string, seen map[string]bool) []string {
	dir = filepath.Clean(dir)
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	out := []string{dir}
	b, err := os.ReadFile(filepath.Join(dir, "info", "alternates"))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(dir, line)
		}
		out = append(out, alternates(line, seen)...)
	}
	return out
}

// scanPacks loads every pack index not loaded yet.
func (db *odb) scanPacks() error {
	for _, dir := range db.dirs {
		names, err := filepath.Glob(filepath.Join(dir, "pack", "pack-*.idx"))
		if err != nil {
			return err
		}
		sort.Strings(names)
		for _, n := range names {
			base := strings.TrimSuffix(n, ".idx")
			if db.packNames[base] {
				continue
			}
			if _, err := os.Stat(base + ".pack"); err != nil {
				continue // an index without its pack: a repack in progress
			}
			p, err := openIdx(base)
			if err != nil {
				return err
			}
			db.packNames[base] = true
			db.packs = append(db.packs, p)
		}
	}
	return nil
}

func (db *odb) close() error {
	var first error
	for _, p := range db.packs {
		if err := p.close(); err != nil && first == nil {
			first = err
		}
	}
	db.packs = nil
	return first
}

func openIdx(base string) (*pack, error) {
	data, c, err := mapFile(base + ".idx")
	if err != nil {
		return nil, err
	}
	p := &pack{name: base, idx: data, idxC: c}
	bad := func(what string) (*pack, error) {
		c.Close()
		return nil, fmt.Errorf("%s.idx: %s; the pack index is damaged: run `git index-pack` on %s.pack or re-clone", base, what, base)
	}
	fanoutAt := 0
	switch {
	case len(data) >= 8 && bytes.Equal(data[:4], []byte{0xff, 't', 'O', 'c'}):
		if v := binary.BigEndian.Uint32(data[4:8]); v != 2 {
			return bad(fmt.Sprintf("unsupported index version %d", v))
		}
		p.version, fanoutAt = 2, 8
	default:
		p.version = 1
	}
	if len(data) < fanoutAt+256*4 {
		return bad("truncated fanout table")
	}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(data[fanoutAt+4*i:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return bad("fanout table is not sorted")
		}
	}
	p.count = p.fanout[255]
	n := int64(p.count)
	var need int64
	if p.version == 2 {
		need = int64(fanoutAt) + 1024 + n*(20+4+4) + 40
	} else {
		need = 1024 + n*24 + 40
	}
	if int64(len(data)) < need {
		return bad("truncated object table")
	}
	return p, nil
}

func (p *pack) close() error {
	var err error
	if p.idxC != nil {
		err = p.idxC.Close()
		p.idxC, p.idx = nil, nil
	}
	if p.dataC != nil {
		if e := p.dataC.Close(); e != nil && err == nil {
			err = e
		}
		p.dataC, p.data = nil, nil
	}
	return err
}

// name returns the i-th object id in sorted order.
func (p *pack) nameAt(i uint32) []byte {
	if p.version == 2 {
		o := 8 + 1024 + int(i)*20
		return p.idx[o : o+20]
	}
	o := 1024 + int(i)*24 + 4
	return p.idx[o : o+20]
}

func (p *pack) offsetAt(i uint32) (int64, error) {
	if p.version == 1 {
		o := 1024 + int(i)*24
		return int64(binary.BigEndian.Uint32(p.idx[o:])), nil
	}
	n := int(p.count)
	o := 8 + 1024 + n*24 + int(i)*4
	v := binary.BigEndian.Uint32(p.idx[o:])
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	o64 := 8 + 1024 + n*28 + int(v&0x7fffffff)*8
	if o64+8 > len(p.idx)-40 {
		return 0, fmt.Errorf("%s.idx: 64-bit offset out of range; the pack index is damaged", p.name)
	}
	return int64(binary.BigEndian.Uint64(p.idx[o64:])), nil
}

// lowerBound returns the first position whose id is >= key (key may be a
// prefix shorter than 20 bytes).
func (p *pack) lowerBound(key []byte) uint32 {
	lo := uint32(0)
	if key[0] > 0 {
		lo = p.fanout[key[0]-1]
	}
	hi := p.fanout[key[0]]
	for lo < hi {
		mid := lo + (hi-lo)/2
		if bytes.Compare(p.nameAt(mid), key) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func (p *pack) find(h plumbing.Hash) (int64, bool, error) {
	i := p.lowerBound(h[:])
	if i >= p.count || !bytes.Equal(p.nameAt(i), h[:]) {
		return 0, false, nil
	}
	off, err := p.offsetAt(i)
	return off, err == nil, err
}

func (p *pack) open() error {
	if p.data != nil {
		return nil
	}
	ra, size, c, err := openPack(p.name + ".pack")
	if errors.Is(err, fs.ErrNotExist) {
		return &packGoneError{p: p}
	}
	if err != nil {
		return err
	}
	p.data, p.size, p.dataC = ra, size, c
	return nil
}

// packGoneError: a pack whose index was loaded was deleted before its data
// was first read (git gc, git repack or a fetch replaced it meanwhile).
type packGoneError struct{ p *pack }

func (e *packGoneError) Error() string {
	return fmt.Sprintf("%s.pack was removed while perfgate was reading it (git gc or git repack running?); retry", e.p.name)
}

// dropPack forgets a pack that no longer exists.
func (db *odb) dropPack(p *pack) {
	for i, q := range db.packs {
		if q == p {
			db.packs = append(db.packs[:i:i], db.packs[i+1:]...)
			break
		}
	}
	delete(db.packNames, p.name)
	p.close()
}

// read returns an object's type and content, or errObjectMissing.
func (db *odb) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	t, b, err := db.readOnce(h)
	// A pack replaced since we loaded its index: forget it, look again.
	for tries := 0; tries < 8; tries++ {
		var gone *packGoneError
		if !errors.As(err, &gone) {
			break
		}
		db.dropPack(gone.p)
		if err := db.scanPacks(); err != nil {
			return 0, nil, err
		}
		t, b, err = db.readOnce(h)
	}
	if err != errObjectMissing {
		return t, b, err
	}
	// A fetch or gc may have replaced packs since we looked.
	before := len(db.packs)
	if err := db.scanPacks(); err != nil {
		return 0, nil, err
	}
	if len(db.packs) == before {
		return 0, nil, errObjectMissing
	}
	return db.readOnce(h)
}

func (db *odb) readOnce(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	for _, p := range db.packs {
		off, ok, err := p.find(h)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			return db.readPacked(p, off, 0)
		}
	}
	for _, dir := range db.dirs {
		t, b, err := readLoose(dir, h)
		if err != errObjectMissing {
			return t, b, err
		}
	}
	return 0, nil, errObjectMissing
}

func readLoose(dir string, h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	s := h.String()
	f, err := os.Open(filepath.Join(dir, s[:2], s[2:]))
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil, errObjectMissing
		}
		return 0, nil, err
	}
	defer f.Close()
	r, err := objfile.NewReader(bufio.NewReader(f))
	if err != nil {
		return 0, nil, fmt.Errorf("loose object %s: %w", s, err)
	}
	defer r.Close()
	t, size, err := r.Header()
	if err != nil {
		return 0, nil, fmt.Errorf("loose object %s: %w", s, err)
	}
	if size < 0 || size > 1<<40 {
		return 0, nil, fmt.Errorf("loose object %s: bad size %d", s, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return 0, nil, fmt.Errorf("loose object %s: %w", s, err)
	}
	return t, b, nil
}

// readPacked decodes the object at off, resolving delta chains; bases are
// kept in a small LRU because sibling objects share them.
func (db *odb) readPacked(p *pack, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxDeltaChain {
		return 0, nil, fmt.Errorf("%s.pack: delta chain deeper than %d at offset %d; the pack is damaged", p.name, maxDeltaChain, off)
	}
	if e, ok := db.cache.get(p, off); ok {
		return e.typ, e.data, nil
	}
	if err := p.open(); err != nil {
		return 0, nil, err
	}
	hdr := db.scratch[:]
	n, err := p.data.ReadAt(hdr, off)
	if n == 0 {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, nil, fmt.Errorf("%s.pack: offset %d: %w", p.name, off, err)
	}
	hdr = hdr[:n]
	corrupt := func(what string) error {
		return fmt.Errorf("%s.pack: object at offset %d: %s; the pack is damaged: run `git fsck`", p.name, off, what)
	}
	i := 0
	c := hdr[i]
	i++
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := int64(c & 15)
	shift := uint(4)
	for c&0x80 != 0 {
		if i >= len(hdr) || shift > 56 {
			return 0, nil, corrupt("bad size header")
		}
		c = hdr[i]
		i++
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	var baseOff int64 = -1
	var baseID plumbing.Hash
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		if i >= len(hdr) {
			return 0, nil, corrupt("truncated delta offset")
		}
		c = hdr[i]
		i++
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(hdr) || rel > 1<<55 {
				return 0, nil, corrupt("bad delta offset")
			}
			c = hdr[i]
			i++
			rel = ((rel + 1) << 7) | int64(c&0x7f)
		}
		baseOff = off - rel
		if baseOff <= 0 || baseOff >= off {
			return 0, nil, corrupt("delta base offset out of range")
		}
	case plumbing.REFDeltaObject:
		if i+20 > len(hdr) {
			return 0, nil, corrupt("truncated delta base id")
		}
		copy(baseID[:], hdr[i:i+20])
		i += 20
	default:
		return 0, nil, corrupt(fmt.Sprintf("unknown object type %d", typ))
	}
	body, err := db.inflate(p, off+int64(i), size)
	if err != nil {
		return 0, nil, corrupt(err.Error())
	}
	if typ != plumbing.OFSDeltaObject && typ != plumbing.REFDeltaObject {
		return typ, body, nil
	}
	var bt plumbing.ObjectType
	var base []byte
	if typ == plumbing.OFSDeltaObject {
		bt, base, err = db.readPacked(p, baseOff, depth+1)
		if err == nil {
			db.cache.put(p, baseOff, bt, base)
		}
	} else {
		bt, base, err = db.readRefBase(baseID, depth+1)
	}
	if err != nil {
		return 0, nil, err
	}
	out, err := packfile.PatchDelta(base, body)
	if err != nil {
		return 0, nil, corrupt(err.Error())
	}
	return bt, out, nil
}

func (db *odb) readRefBase(id plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	for _, p := range db.packs {
		off, ok, err := p.find(id)
		if err != nil {
			return 0, nil, err
		}
		if ok {
			t, b, err := db.readPacked(p, off, depth)
			if err == nil {
				db.cache.put(p, off, t, b)
			}
			return t, b, err
		}
	}
	for _, dir := range db.dirs {
		t, b, err := readLoose(dir, id)
		if err != errObjectMissing {
			return t, b, err
		}
	}
	return 0, nil, fmt.Errorf("delta base %s: %w", id, errObjectMissing)
}

func (db *odb) inflate(p *pack, at, size int64) ([]byte, error) {
	if size < 0 || size > p.size*1100 {
		return nil, fmt.Errorf("implausible object size %d", size)
	}
	sr := io.NewSectionReader(p.data, at, p.size-at)
	if db.br == nil {
		db.br = bufio.NewReaderSize(sr, 16<<10)
	} else {
		db.br.Reset(sr)
	}
	var err error
	if db.zr == nil {
		db.zr, err = zlib.NewReader(db.br)
	} else {
		err = db.zr.(zlib.Resetter).Reset(db.br, nil)
	}
	if err != nil {
		db.zr = nil
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(db.zr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// withPrefix returns the ids of all objects whose hex form starts with hexPrefix
// (at least 4 characters), deduplicated, at most limit of them.
func (db *odb) withPrefix(hexPrefix string, limit int) ([]plumbing.Hash, error) {
	hexPrefix = strings.ToLower(hexPrefix)
	even := hexPrefix[:len(hexPrefix)&^1]
	key, err := hex.DecodeString(even)
	if err != nil {
		return nil, err
	}
	odd := len(hexPrefix)%2 == 1
	var lastNibble byte
	if odd {
		v, err := hex.DecodeString(hexPrefix[len(hexPrefix)-1:] + "0")
		if err != nil {
			return nil, err
		}
		lastNibble = v[0] >> 4
	}
	match := func(id []byte) bool {
		if !bytes.HasPrefix(id, key) {
			return false
		}
		return !odd || id[len(key)]>>4 == lastNibble
	}
	seen := map[plumbing.Hash]bool{}
	var out []plumbing.Hash
	add := func(id []byte) {
		var h plumbing.Hash
		copy(h[:], id)
		if !seen[h] && len(out) < limit {
			seen[h] = true
			out = append(out, h)
		}
	}
	search := key
	if odd {
		search = append(append([]byte{}, key...), lastNibble<<4)
	}
	for _, p := range db.packs {
		for i := p.lowerBound(search); i < p.count; i++ {
			id := p.nameAt(i)
			if !match(id) {
				break
			}
			add(id)
		}
	}
	for _, dir := range db.dirs {
		entries, err := os.ReadDir(filepath.Join(dir, hexPrefix[:2]))
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := hexPrefix[:2] + e.Name()
			if len(name) != 40 || !strings.HasPrefix(name, hexPrefix) {
				continue
			}
			id, err := hex.DecodeString(name)
			if err == nil {
				add(id)
			}
		}
	}
	return out, nil
}

// uniqueLen returns how many hex digits of h are needed to tell it apart
// from every other object, packed or loose (never fewer than min).
func (db *odb) uniqueLen(h plumbing.Hash, min int) int {
	best := min
	common := func(a []byte) int {
		n := 0
		for i := 0; i < 20; i++ {
			x := a[i] ^ h[i]
			if x == 0 {
				n += 2
				continue
			}
			if x&0xf0 == 0 {
				n++
			}
			break
		}
		return n
	}
	for _, p := range db.packs {
		i := p.lowerBound(h[:])
		for _, j := range []int64{int64(i) - 1, int64(i), int64(i) + 1} {
			if j < 0 || j >= int64(p.count) {
				continue
			}
			id := p.nameAt(uint32(j))
			if bytes.Equal(id, h[:]) {
				continue
			}
			if n := common(id) + 1; n > best {
				best = n
			}
		}
	}
	// Loose objects count too (git log --oneline abbreviates against them):
	// those sharing h's first byte live in one fan-out directory.
	hs := h.String()
	for _, dir := range db.dirs {
		entries, err := os.ReadDir(filepath.Join(dir, hs[:2]))
		if err != nil {
			continue
		}
		for _, e := range entries {
			id, err := hex.DecodeString(hs[:2] + e.Name())
			if err != nil || len(id) != 20 || bytes.Equal(id, h[:]) {
				continue
			}
			if n := common(id) + 1; n > best {
				best = n
			}
		}
	}
	if best > 40 {
		best = 40
	}
	return best
}

// baseCache is a byte-bounded LRU of decoded delta bases.
type baseCache struct {
	max, used int
	ll        *list.List
	m         map[baseKey]*list.Element
}

type baseKey struct {
	p   *pack
	off int64
}

type baseEntry struct {
	key  baseKey
	typ  plumbing.ObjectType
	data []byte
}

func newBaseCache(max int) *baseCache {
	return &baseCache{max: max, ll: list.New(), m: map[baseKey]*list.Element{}}
}

func (c *baseCache) get(p *pack, off int64) (*baseEntry, bool) {
	e, ok := c.m[baseKey{p, off}]
	if !ok {
		return nil, false
	}
	c.ll.MoveToFront(e)
	return e.Value.(*baseEntry), true
}

func (c *baseCache) put(p *pack, off int64, t plumbing.ObjectType, data []byte) {
	k := baseKey{p, off}
	if _, ok := c.m[k]; ok || len(data) > c.max/4 {
		return
	}
	c.m[k] = c.ll.PushFront(&baseEntry{key: k, typ: t, data: data})
	c.used += len(data)
	for c.used > c.max {
		last := c.ll.Back()
		e := last.Value.(*baseEntry)
		c.ll.Remove(last)
		delete(c.m, e.key)
		c.used -= len(e.data)
	}
}
