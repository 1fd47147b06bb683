package histsync

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/perfgate/perfgate/store"
)

// readme is the root README.md of the data branch.
const readme = `# perfgate history

This branch holds perfgate's benchmark history, shared through git so that
it outlives CI runs and reaches developers' machines (` + "`perfgate sync`" + `).
It has no history in common with the code. Format 2 (see FORMAT):

- log/0/, log/1/, log/2/: recent runs, one file per push, merged 16 at a time
  into the next level;
- packs/<YYYY-MM>/: older runs, in files of at most 16 MiB, by the month they
  were packed;

every file holding runs as lines of perfgate's JSONL interchange
(` + "`perfgate import`" + ` reads them). Do not edit the files by hand: perfgate
merges them and never drops a run. perfgate versions that only know format 1
(one file per run under runs/) refuse this branch ("not a perfgate history"):
upgrade them.
`

// plan is the next commit of the branch, built on its state.
type plan struct {
	s      *syncer
	state  *branchState
	o      *objects
	period string
	dirs   map[string][]object.TreeEntry // directories changed, by path
	byKind map[int][]branchFile          // the files of runs, after the changes
	sizes  map[plumbing.Hash]int64       // sizes of the blobs written
	notes  []string                      // what else the commit did
	warn   []string
}

// build makes the commit that adds runs to the branch at state.tip,
// migrating a format 1 branch and merging full levels on the way.
func (s *syncer) build(state *branchState, runs []store.Run, recs []store.Record) (_ *objects, _ plumbing.Hash, files int, warnings []string, _ error) {
	p := &plan{
		s: s, state: state, o: &objects{st: memory.NewStorage()},
		period: s.opts.Now().UTC().Format("2006-01"),
		dirs:   map[string][]object.TreeEntry{}, byKind: map[int][]branchFile{}, sizes: map[plumbing.Hash]int64{},
	}
	fail := func(err error) (*objects, plumbing.Hash, int, []string, error) {
		if _, ok := err.(*syncError); ok {
			return nil, plumbing.ZeroHash, 0, nil, err
		}
		return nil, plumbing.ZeroHash, 0, nil, fmt.Errorf("building the history commit: %w", err)
	}
	s.pending = p.o
	defer func() { s.pending = nil }()
	for _, f := range state.files {
		p.byKind[f.kind] = append(p.byKind[f.kind], f)
	}
	sort.Slice(runs, func(i, j int) bool {
		if c := runs[i].Time.Compare(runs[j].Time); c != 0 {
			return c < 0
		}
		return runs[i].ID < runs[j].ID
	})
	lines := make([][]byte, len(runs))
	for i := range runs {
		lines[i] = store.AppendJSON(nil, &runs[i])
	}
	if err := p.write(lines, 0); err != nil {
		return fail(err)
	}
	if err := p.writeRecords(recs); err != nil {
		return fail(err)
	}
	if err := p.migrate(); err != nil {
		return fail(err)
	}
	for k := 0; k < levels; k++ {
		if err := p.merge(k); err != nil {
			return fail(err)
		}
	}
	commit, err := p.commit(runs)
	if err != nil {
		return fail(err)
	}
	if n := p.size(); n >= branchWarn {
		p.warn = append(p.warn, fmt.Sprintf("the history branch %s holds %.0f MiB of runs, and the repository's git history more: GitHub recommends repositories under 1 GB (and warns about large clones); keep fewer runs per commit (fewer repetitions or metrics), or start a new branch with --branch", s.opts.Branch, float64(n)/(1<<20)))
	}
	for _, fs := range p.byKind {
		files += len(fs)
	}
	return p.o, commit, files, p.warn, nil
}

// entries returns the entries of dir to change.
func (p *plan) entries(dir string) []object.TreeEntry {
	if e, ok := p.dirs[dir]; ok {
		return e
	}
	e := append([]object.TreeEntry(nil), p.state.trees[dir]...)
	p.dirs[dir] = e
	return e
}

// set adds or replaces an entry of dir.
func (p *plan) set(dir string, e object.TreeEntry) {
	p.dirs[dir] = append(removeEntry(p.entries(dir), e.Name), e)
}

func (p *plan) remove(dir, name string) {
	p.dirs[dir] = removeEntry(p.entries(dir), name)
}

func removeEntry(entries []object.TreeEntry, name string) []object.TreeEntry {
	out := entries[:0:0]
	for _, e := range entries {
		if e.Name != name {
			out = append(out, e)
		}
	}
	return out
}

// write stores lines as files of at most packMax bytes, each in the log
// level or packs directory its size calls for (not below level min).
func (p *plan) write(lines [][]byte, min int) error {
	var buf []byte
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		data := buf
		buf = nil
		n := int64(len(data))
		if n > fileMax {
			return configErrorf("a run is %.0f MiB as JSON; GitHub refuses files over 100 MiB, so it cannot be pushed: remove it from the history (it is not on the branch) or sync with --pull-only", float64(n)/(1<<20))
		}
		h, err := p.o.blob(data)
		if err != nil {
			return err
		}
		p.sizes[h] = n
		kind := max(kindOfSize(n), min)
		dir := dirOf(kind, p.period)
		name := h.String()[:16] + ".jsonl"
		if n >= fileWarn {
			p.warn = append(p.warn, fmt.Sprintf("%s/%s is %.0f MiB: GitHub warns about files over 50 MiB and refuses them over 100 MiB; one run this large is a problem", dir, name, float64(n)/(1<<20)))
		}
		p.set(dir, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
		p.byKind[kind] = append(p.byKind[kind], branchFile{path: dir + "/" + name, dir: dir, name: name, hash: h, kind: kind})
		return nil
	}
	for _, l := range lines {
		if len(buf) > 0 && len(buf)+len(l)+1 > packMax {
			if err := flush(); err != nil {
				return err
			}
		}
		buf = append(append(buf, l...), '\n')
	}
	return flush()
}

// readRuns reads the run lines of a file and their ids; ok is false when
// a line is not a valid run (such a file is never merged or moved).
func (p *plan) readRuns(f branchFile) (lines [][]byte, ids []string, ok bool, err error) {
	ok = true
	skipped := func(string) error { ok = false; return nil }
	err = p.s.readLines(f, skipped, func(l line) error {
		id := ""
		if k, kok := keyOf(l.data); kok {
			id = k.ID
		} else if r, _, perr := store.ParseLine(l.data); perr == nil {
			id = r.ID
		} else {
			ok = false
			return nil
		}
		lines = append(lines, append([]byte(nil), l.data...))
		ids = append(ids, id)
		return nil
	})
	return lines, ids, ok, err
}

// gather reads files for a merge, dropping repeated runs; the files that
// hold anything but runs are returned in left.
func (p *plan) gather(files []branchFile) (lines [][]byte, used, left []branchFile, err error) {
	seen := map[string]bool{}
	for _, f := range files {
		ls, ids, ok, err := p.readRuns(f)
		if err != nil {
			return nil, nil, nil, err
		}
		if !ok {
			left = append(left, f)
			continue
		}
		used = append(used, f)
		for i, l := range ls {
			if !seen[ids[i]] {
				seen[ids[i]] = true
				lines = append(lines, l)
			}
		}
	}
	return lines, used, left, nil
}

// merge merges log level k into one file (or more, of packMax) when it
// holds fanIn files.
func (p *plan) merge(k int) error {
	files := p.byKind[k]
	if len(files) < fanIn {
		return nil
	}
	lines, used, left, err := p.gather(files)
	if err != nil {
		return err
	}
	for _, f := range left {
		p.warn = append(p.warn, fmt.Sprintf("%s holds lines that are not runs: it is left out of the merge of %s/%d", show(f.path), logDir, k))
	}
	if len(used) < 2 {
		return nil
	}
	for _, f := range used {
		p.remove(f.dir, f.name)
	}
	p.byKind[k] = left
	p.notes = append(p.notes, fmt.Sprintf("merged the %d files of %s/%d (%d runs)", len(used), logDir, k, len(lines)))
	return p.write(lines, k)
}

// migrate moves the runs of format 1's runs/ into packs. When runs/ held
// anything else, it is kept whole under unreadable/runs, so nothing is
// dropped.
func (p *plan) migrate() error {
	legacy := p.byKind[kindLegacy]
	if len(legacy) == 0 && p.state.format != 1 {
		return nil
	}
	lines, used, left, err := p.gather(legacy)
	if err != nil {
		return err
	}
	if err := p.write(lines, kindPack); err != nil {
		return err
	}
	p.remove("", runsDir)
	if len(left) > 0 || !p.state.atticOK {
		attic := append(removeEntry(p.entries(atticDir), runsDir), object.TreeEntry{Name: runsDir, Mode: filemode.Dir, Hash: entryHash(p.state.trees[""], runsDir)})
		p.dirs[atticDir] = attic
		p.warn = append(p.warn, fmt.Sprintf("%s/ held files that are no runs; it is kept whole as %s/%s/ (its runs are in %s/ too)", runsDir, atticDir, runsDir, packsDir))
	}
	delete(p.byKind, kindLegacy)
	p.notes = append(p.notes, fmt.Sprintf("moved the %d runs of format 1 (%s/<xx>/<id>.json) into %s/: format %d", len(used), runsDir, packsDir, FormatVersion))
	return nil
}

// commit writes the changed trees, bottom up, and the commit.
func (p *plan) commit(runs []store.Run) (plumbing.Hash, error) {
	for name, text := range map[string]string{formatFile: fmt.Sprintf("%d\n", FormatVersion), readmeFile: readme} {
		if entryHash(p.state.trees[""], name) != plumbing.ComputeHash(plumbing.BlobObject, []byte(text)) {
			h, err := p.o.blob([]byte(text))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			p.set("", object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
		}
	}
	dirs := make([]string, 0, len(p.dirs))
	for d := range p.dirs {
		dirs = append(dirs, d)
	}
	// Deepest first, so that a parent is written after its children.
	depth := func(d string) int {
		if d == "" {
			return -1
		}
		return strings.Count(d, "/")
	}
	for len(dirs) > 0 {
		sort.Slice(dirs, func(i, j int) bool {
			if di, dj := depth(dirs[i]), depth(dirs[j]); di != dj {
				return di > dj
			}
			return dirs[i] < dirs[j]
		})
		d := dirs[0]
		dirs = dirs[1:]
		if d == "" {
			continue
		}
		entries := p.dirs[d]
		up := parent(d)
		if _, ok := p.dirs[up]; !ok {
			p.entries(up)
			dirs = append(dirs, up)
		}
		name := d[len(up):]
		name = strings.TrimPrefix(name, "/")
		if len(entries) == 0 {
			p.remove(up, name)
			continue
		}
		h, err := p.o.tree(entries)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		p.set(up, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	root, err := p.o.tree(p.entries(""))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	benches := map[string]bool{}
	for i := range runs {
		benches[runs[i].Benchmark] = true
	}
	names := make([]string, 0, len(benches))
	for b := range benches {
		names = append(names, b)
	}
	sort.Strings(names)
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(benches)-10))
	}
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "perfgate: add %d run%s\n\nBenchmarks: %s\n", len(runs), plural(len(runs)), strings.Join(names, ", "))
	for _, n := range p.notes {
		fmt.Fprintf(&msg, "perfgate %s\n", n)
	}
	sig := p.s.signature()
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: root, Message: msg.String()}
	if !p.state.tip.IsZero() {
		c.ParentHashes = []plumbing.Hash{p.state.tip}
	}
	obj := p.o.st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return p.o.put(obj)
}

// size is the bytes of runs on the branch after the plan.
func (p *plan) size() int64 {
	var n int64
	for _, files := range p.byKind {
		for _, f := range files {
			if sz, ok := p.sizes[f.hash]; ok {
				n += sz
			} else if obj, err := p.s.repo.Storer.EncodedObject(plumbing.BlobObject, f.hash); err == nil {
				n += obj.Size()
			}
		}
	}
	return n
}
