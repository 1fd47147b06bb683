package histsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perfgate/perfgate/store"
)

// maxSkipped bounds the skipped files and lines Result lists one by one.
const maxSkipped = 50

// tooBigError: a file on the branch is larger than sync reads.
type tooBigError struct{ size, limit int64 }

func (e *tooBigError) Error() string {
	return fmt.Sprintf("%.1f MiB, more than the %d MiB sync reads from a file of the branch; split it into smaller .jsonl files", float64(e.size)/(1<<20), e.limit>>20)
}

// blob reads a blob of at most limit bytes.
func (s *syncer) blob(h plumbing.Hash, limit int64) ([]byte, error) {
	var obj plumbing.EncodedObject
	var err error
	if s.pending != nil {
		obj, err = s.pending.st.EncodedObject(plumbing.BlobObject, h) // written by the commit being built
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
	return io.ReadAll(io.LimitReader(r, limit))
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

// importer feeds lines of the branch to the store in batches: lines whose
// run is stored already are recognised by their key and not decoded; bad
// lines are skipped and reported with their file and line. One goroutine
// reads and decodes (add, flush), the caller's stores (store): the two
// overlap.
type importer struct {
	s       *syncer
	st      *store.Store
	res     *Result
	ids     map[string]bool // when not nil, collects every run id read
	pending []line
	size    int
	warned  map[string]bool
	out     chan batch
	stop    chan struct{}
}

// batch is decoded runs and the lines they came from.
type batch struct {
	runs []store.Run
	from []line
}

const importBatch = 2000 // runs per write transaction: bbolt's nodes grow within one, so larger ones cost more per run

var errStopped = errors.New("stopped")

func (im *importer) add(l line) error {
	im.pending = append(im.pending, l)
	im.size += len(l.data)
	if len(im.pending) >= importBatch || im.size >= 8<<20 {
		return im.flush()
	}
	return nil
}

// flush decodes the pending lines the store lacks and sends them.
func (im *importer) flush() error {
	if len(im.pending) == 0 {
		return nil
	}
	lines := im.pending
	im.pending, im.size = nil, 0
	keys := make([]store.RunKey, len(lines))
	hasKey := make([]bool, len(lines))
	for i, l := range lines {
		keys[i], hasKey[i] = keyOf(l.data)
	}
	known, err := im.st.Known(keys)
	if err != nil {
		return fmt.Errorf("reading the history: %w", err)
	}
	var b batch
	for i, l := range lines {
		if hasKey[i] && known[i] {
			if im.ids != nil {
				im.ids[keys[i].ID] = true
			}
			continue
		}
		r, unknown, err := store.ParseLine(l.data)
		if unknown != "" && !im.warned[unknown] {
			im.warned[unknown] = true
			im.s.opts.Log("%s:%d: ignored the unknown field %s (a newer perfgate wrote it?); upgrade perfgate to keep it", show(l.path), l.n, unknown)
		}
		if err != nil {
			im.s.skip(im.res, "%s:%d: %v", show(l.path), l.n, err)
			continue
		}
		if im.ids != nil {
			im.ids[r.ID] = true
		}
		b.runs = append(b.runs, r)
		b.from = append(b.from, l)
	}
	if len(b.runs) == 0 {
		return nil
	}
	select {
	case im.out <- b:
		return nil
	case <-im.stop:
		return errStopped
	}
}

// store stores a batch; it returns how many runs were new.
func (im *importer) store(b batch) (int, error) {
	added, err := im.st.Merge(b.runs, func(i int, err error) {
		im.s.skip(im.res, "%s:%d: %v", show(b.from[i].path), b.from[i].n, err)
	})
	if err != nil {
		return 0, fmt.Errorf("storing the runs of %s/%s: %w", im.s.opts.Remote, im.s.opts.Branch, err)
	}
	return added, nil
}

// readLines calls fn with each non-blank line of a file of the branch; a
// legacy run file must hold exactly one.
func (s *syncer) readLines(f branchFile, res *Result, fn func(line) error) error {
	data, err := s.blob(f.hash, maxRead)
	if err != nil {
		if tb, ok := err.(*tooBigError); ok {
			s.skip(res, "%s: %v", show(f.path), tb)
			return nil
		}
		return remoteErrorf("%s %s: cannot read %s: %v", s.opts.Remote, s.opts.Branch, show(f.path), err)
	}
	if f.kind == kindLegacy {
		d := bytes.TrimSpace(data)
		if len(d) == 0 || bytes.IndexByte(d, '\n') >= 0 {
			s.skip(res, "%s: a run file holds exactly one JSONL line", show(f.path))
			return nil
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
// returns the ids of the runs it read when collect is set.
func (s *syncer) pull(st *store.Store, state *branchState, base map[string]plumbing.Hash, collect bool, res *Result) (map[string]bool, error) {
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
	im := &importer{s: s, st: st, res: res, warned: map[string]bool{}, out: make(chan batch, 1), stop: make(chan struct{})}
	if collect {
		im.ids = map[string]bool{}
	}
	res.Read += len(files)
	read := make(chan error, 1)
	go func() {
		defer close(im.out)
		for _, f := range files {
			if err := s.readLines(f, res, im.add); err != nil {
				read <- err
				return
			}
		}
		read <- im.flush()
	}()
	added := 0
	var serr error
	for b := range im.out {
		if serr != nil {
			continue
		}
		n, err := im.store(b)
		added += n
		if err != nil {
			serr = err
			close(im.stop)
		}
	}
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

// branchIDs reads the ids of every run on the branch, for a push with no
// record of earlier syncs.
func (s *syncer) branchIDs(state *branchState) (map[string]bool, error) {
	ids := map[string]bool{}
	var discard Result
	for _, f := range state.files {
		err := s.readLines(f, &discard, func(l line) error {
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
