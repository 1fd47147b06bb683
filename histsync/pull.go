package histsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/perfgate/perfgate/store"
)

// maxSkipped bounds the skipped files and lines Result lists one by one.
const maxSkipped = 50

// tooBigError: a file on the branch is larger than sync reads.
type tooBigError struct{ size, limit int64 }

func (e *tooBigError) Error() string {
	return fmt.Sprintf("%.1f MiB, more than the %d MiB sync reads from a file of the branch; split it into smaller .jsonl files", float64(e.size)/(1<<20), e.limit>>20)
}

// largeBlob is the size from which blob streams a blob from its pack (a
// variable for tests).
var largeBlob int64 = 256 << 10

// blob reads a blob of at most limit bytes. A large one (a file of runs)
// is read straight from its pack into one buffer of its size: go-git's
// object store would copy it into a growing buffer and hash it to cache
// it, which costs more than inflating it.
func (s *syncer) blob(h plumbing.Hash, limit int64) ([]byte, error) {
	var obj plumbing.EncodedObject
	var err error
	if s.pending != nil {
		obj, err = s.pending.st.EncodedObject(plumbing.BlobObject, h) // written by the commit being built
	}
	if obj == nil {
		if p := s.packReader(); p != nil {
			obj, err = p.EncodedObject(plumbing.BlobObject, h)
		}
	}
	if obj == nil {
		obj, err = s.repo.Storer.EncodedObject(plumbing.BlobObject, h)
	}
	if err != nil {
		return nil, err
	}
	if obj.Size() > limit {
		return nil, &tooBigError{size: obj.Size(), limit: limit}
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data := make([]byte, obj.Size())
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, err)
	}
	return data, nil
}

// packReader is an object store of the repository's files that streams
// blobs of largeBlob bytes or more from their packs; nil when the
// repository is not on disk.
func (s *syncer) packReader() storer.EncodedObjectStorer {
	if s.packs == nil {
		fs, ok := s.repo.Storer.(*filesystem.Storage)
		if !ok {
			return nil
		}
		s.packs = filesystem.NewStorageWithOptions(fs.Filesystem(), cache.NewObjectLRU(cache.MiByte), filesystem.Options{LargeObjectThreshold: largeBlob})
	}
	return s.packs
}

// skip records a file or line left out.
func (s *syncer) skip(res *Result, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res.SkippedTotal++
	if len(res.Skipped) < maxSkipped {
		res.Skipped = append(res.Skipped, fmt.Sprintf(format, args...))
	}
}

// line is one run's line of a file of the branch.
type line struct {
	data []byte
	path string
	n    int // 1-based line number
}

// keyOf reads the id and commit from the start of a line written by
// store.AppendJSON ({"id":"…","commit":"…",...), without decoding it.
func keyOf(l []byte) (store.RunKey, bool) {
	const p1, p2 = `{"id":"`, `","commit":"`
	if len(l) < len(p1)+32+len(p2)+40+1 || string(l[:len(p1)]) != p1 {
		return store.RunKey{}, false
	}
	id := l[len(p1) : len(p1)+32]
	rest := l[len(p1)+32:]
	if string(rest[:len(p2)]) != p2 {
		return store.RunKey{}, false
	}
	rest = rest[len(p2):]
	end := bytes.IndexByte(rest, '"')
	if end != 40 && end != 64 {
		return store.RunKey{}, false
	}
	if !isHex(string(id)) || !isHex(string(rest[:end])) {
		return store.RunKey{}, false
	}
	return store.RunKey{ID: string(id), Commit: string(rest[:end])}, true
}

// importer feeds the lines of the branch to the store. One goroutine
// reads the files, in path order, and cuts their lines into chunks; a
// bounded pool decodes and validates the chunks in parallel (lines whose
// run is stored already are recognised by their key and not decoded);
// the caller's goroutine takes the chunks in the order they were read,
// reports bad lines with their file and line, and stores the runs in
// batches. A chunk is at most importBatch lines or chunkBytes, and at
// most flightMiB of lines (and a few chunks) are in flight, which bounds
// the memory a pull takes.
type importer struct {
	s       *syncer
	st      *store.Store
	res     *Result
	fresh   bool            // the store held no run when the pull began: no line is known
	ids     map[string]bool // when not nil, collects every run id read
	warned  map[string]bool
	cur     *chunk
	work    chan *chunk // to the decoders
	ordered chan *chunk // to the store, in reading order
	stop    chan struct{}
	mib     chan struct{} // a token per MiB of lines in flight

	pending []store.Valid // decoded runs for the next write
	from    []line        // where each came from (without its data)
	// stored, when set, runs after each write that added runs: the sync
	// marks them as on the branch at once, so a pull killed halfway does
	// not push back what it pulled.
	stored func() error
}

// chunk is lines of the branch and what decoding them gave.
type chunk struct {
	notes []string // files skipped before these lines, as "path: why"
	lines []line
	size  int
	mib   int // tokens of im.mib it holds

	runs    []store.Valid
	from    []int      // the line of each run
	ids     []string   // ids of the runs already stored, when collecting
	bad     []lineNote // lines that are no runs
	unknown []lineNote // lines with a field this perfgate does not know
	err     error
	done    chan struct{}
}

type lineNote struct {
	at  int // index in lines
	msg string
}

const (
	importBatch = 2000 // runs per write transaction: bbolt's nodes grow within one, so larger ones cost more per run
	chunkBytes  = 4 << 20
	flightMiB   = 64 // MiB of lines in flight (a chunk of one larger line goes alone)
)

var errStopped = errors.New("stopped")

// add adds a line to the current chunk, and sends the chunk when full.
func (im *importer) add(l line) error {
	if im.cur == nil {
		im.cur = &chunk{done: make(chan struct{})}
	}
	im.cur.lines = append(im.cur.lines, l)
	im.cur.size += len(l.data)
	if len(im.cur.lines) >= importBatch || im.cur.size >= chunkBytes {
		return im.send()
	}
	return nil
}

// note records a file left out, in reading order.
func (im *importer) note(msg string) error {
	if im.cur != nil && len(im.cur.lines) > 0 {
		if err := im.send(); err != nil {
			return err
		}
	}
	if im.cur == nil {
		im.cur = &chunk{done: make(chan struct{})}
	}
	im.cur.notes = append(im.cur.notes, msg)
	return nil
}

// send hands the current chunk to the decoders and the store.
func (im *importer) send() error {
	c := im.cur
	if c == nil {
		return nil
	}
	im.cur = nil
	for c.mib = 0; c.mib < min(max(c.size>>20, 1), cap(im.mib)); c.mib++ {
		select {
		case im.mib <- struct{}{}:
		case <-im.stop:
			return errStopped
		}
	}
	for _, ch := range []chan *chunk{im.ordered, im.work} {
		select {
		case ch <- c:
		case <-im.stop:
			return errStopped
		}
	}
	return nil
}

// decode decodes a chunk's lines the store lacks.
func (im *importer) decode(c *chunk, p *store.Parser) {
	defer close(c.done)
	var known []bool
	if !im.fresh {
		keys := make([]store.RunKey, len(c.lines))
		hasKey := make([]bool, len(c.lines))
		for i, l := range c.lines {
			keys[i], hasKey[i] = keyOf(l.data)
		}
		var err error
		if known, err = im.st.Known(keys); err != nil {
			c.err = fmt.Errorf("reading the history: %w", err)
			return
		}
		for i := range known {
			known[i] = known[i] && hasKey[i]
			if known[i] && im.ids != nil {
				c.ids = append(c.ids, keys[i].ID)
			}
		}
	}
	c.runs = make([]store.Valid, 0, len(c.lines))
	for i, l := range c.lines {
		if known != nil && known[i] {
			continue
		}
		v, unknown, err := p.ParseValid(l.data)
		if unknown != "" {
			c.unknown = append(c.unknown, lineNote{at: i, msg: unknown})
		}
		if err == nil {
			err = genuine(&v, unknown)
		}
		if err != nil {
			c.bad = append(c.bad, lineNote{at: i, msg: err.Error()})
			continue
		}
		c.runs = append(c.runs, v)
		c.from = append(c.from, i)
	}
}

// take reports what decoding a chunk found and queues its runs, storing
// them when a batch is full; it returns how many runs were new.
func (im *importer) take(c *chunk) (int, error) {
	<-c.done
	defer func() {
		for range c.mib {
			<-im.mib
		}
	}()
	if c.err != nil {
		return 0, c.err
	}
	for _, n := range c.notes {
		im.s.skip(im.res, "%s", n)
	}
	for _, u := range c.unknown {
		if !im.warned[u.msg] {
			im.warned[u.msg] = true
			l := c.lines[u.at]
			im.s.opts.Log("%s:%d: ignored the unknown field %s (a newer perfgate wrote it?); upgrade perfgate to keep it", show(l.path), l.n, u.msg)
		}
	}
	for _, b := range c.bad {
		l := c.lines[b.at]
		im.s.skip(im.res, "%s:%d: %s", show(l.path), l.n, b.msg)
	}
	if im.ids != nil {
		for _, id := range c.ids {
			im.ids[id] = true
		}
		for i := range c.runs {
			im.ids[c.runs[i].ID()] = true
		}
	}
	for i, at := range c.from {
		l := c.lines[at]
		l.data = nil
		im.pending = append(im.pending, c.runs[i])
		im.from = append(im.from, l)
	}
	if len(im.pending) >= importBatch {
		return im.store()
	}
	return 0, nil
}

// store stores the pending runs; it returns how many were new.
func (im *importer) store() (int, error) {
	if len(im.pending) == 0 {
		return 0, nil
	}
	runs, from := im.pending, im.from
	im.pending, im.from = nil, nil
	added, err := im.st.MergeValid(runs, func(i int, err error) {
		im.s.skip(im.res, "%s:%d: %v", show(from[i].path), from[i].n, err)
	})
	if err != nil {
		return 0, fmt.Errorf("storing the runs of %s/%s: %w", im.s.opts.Remote, im.s.opts.Branch, err)
	}
	if added > 0 && im.stored != nil {
		if err := im.stored(); err != nil {
			return added, err
		}
	}
	return added, nil
}

// readLines calls fn with each non-blank line of a file of the branch; a
// legacy run file must hold exactly one. A file it leaves out goes to
// skip, as "path: why".
func (s *syncer) readLines(f branchFile, skip func(string) error, fn func(line) error) error {
	data, err := s.blob(f.hash, maxRead)
	if err != nil {
		if tb, ok := err.(*tooBigError); ok {
			return skip(fmt.Sprintf("%s: %v", show(f.path), tb))
		}
		return remoteErrorf("%s %s: cannot read %s: %v", s.opts.Remote, s.opts.Branch, show(f.path), err)
	}
	if f.kind == kindLegacy {
		d := bytes.TrimSpace(data)
		if len(d) == 0 || bytes.IndexByte(d, '\n') >= 0 {
			return skip(show(f.path) + ": a run file holds exactly one JSONL line")
		}
		return fn(line{data: d, path: f.path, n: 1})
	}
	for n := 1; len(data) > 0; n++ {
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if l = bytes.TrimSpace(l); len(l) > 0 {
			if err := fn(line{data: l, path: f.path, n: n}); err != nil {
				return err
			}
		}
	}
	return nil
}

// pull imports the runs of the files of state that are not in base (the
// files, by path and content, of a tip whose runs the store has). It
// returns the ids of the runs it read when collect is set; fresh says the
// store holds no run (a first sync), so no line of the branch is looked
// up in it.
func (s *syncer) pull(st *store.Store, state *branchState, base map[string]plumbing.Hash, collect, fresh bool, res *Result, stored func() error) (map[string]bool, error) {
	for _, j := range state.junk {
		s.skip(res, "%s", j)
	}
	var files []branchFile
	for _, f := range state.files {
		if h, ok := base[f.path]; !ok || h != f.hash {
			files = append(files, f)
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	workers := min(max(runtime.GOMAXPROCS(0), 1), 8)
	im := &importer{s: s, st: st, res: res, fresh: fresh, warned: map[string]bool{}, stored: stored,
		work: make(chan *chunk, workers), ordered: make(chan *chunk, 2*workers+2), stop: make(chan struct{}),
		mib: make(chan struct{}, flightMiB)}
	if collect {
		im.ids = map[string]bool{}
	}
	res.Read += len(files)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p store.Parser // one per decoder: lines repeat their names
			for c := range im.work {
				im.decode(c, &p)
			}
		}()
	}
	read := make(chan error, 1)
	go func() {
		defer close(im.ordered)
		defer close(im.work)
		for _, f := range files {
			if err := s.readLines(f, im.note, im.add); err != nil {
				read <- err
				return
			}
		}
		read <- im.send()
	}()
	added, serr := 0, error(nil)
	storeAll := func() error {
		for c := range im.ordered {
			if serr != nil {
				continue
			}
			n, err := im.take(c)
			added += n
			if err != nil {
				serr = err
				close(im.stop)
			}
		}
		if serr == nil {
			n, err := im.store()
			added, serr = added+n, err
		}
		return serr
	}
	if fresh {
		serr = st.Bulk(storeAll) // a first sync: one sync to disk at the end
	} else {
		storeAll()
	}
	wg.Wait()
	if rerr := <-read; serr == nil && rerr != nil {
		serr = rerr
	}
	res.Pulled += added
	if serr != nil {
		return nil, serr
	}
	if added > 0 {
		s.opts.Log("pulled %d run%s from %s %s", added, plural(added), s.opts.Remote, s.opts.Branch)
	}
	return im.ids, nil
}

// ignore is a readLines skip that forgets the file.
func ignore(string) error { return nil }

// branchIDs reads the ids of every run on the branch, for a push with no
// record of earlier syncs.
func (s *syncer) branchIDs(state *branchState) (map[string]bool, error) {
	ids := map[string]bool{}
	for _, f := range state.files {
		err := s.readLines(f, ignore, func(l line) error {
			if k, ok := keyOf(l.data); ok {
				ids[k.ID] = true
			} else if r, _, err := store.ParseLine(l.data); err == nil {
				ids[r.ID] = true
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// genuine refuses a line of the branch whose run id is not the id of its
// content (store.ContentID): the branch is written by more hands than
// CI's, and runs are told apart by (commit, id), so a forged line that
// copied a genuine run's id would otherwise shadow the genuine line, which
// is then skipped as known. perfgate import keeps a file's explicit ids;
// the branch does not. A line with fields this perfgate does not know
// cannot be checked; when its id does not match what is known of it, it
// is refused with the advice to upgrade, never stored under a key it may
// have taken from another run.
func genuine(v *store.Valid, unknown string) error {
	r := v.Run()
	want := store.ContentID(r)
	if r.ID == want {
		return nil
	}
	if unknown != "" {
		return fmt.Errorf("run %s holds the field %s this perfgate does not know, and its id cannot be checked against its content: upgrade perfgate to read it", r.ID, unknown)
	}
	return fmt.Errorf("run id %s does not match the run's content (its id would be %s): an edited or forged line, left out so that it cannot stand in for the run of that id", r.ID, want)
}
