package histsync

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/perfgate/perfgate/store"
)

// fuzzTree is a directory of a branch made from fuzz input.
type fuzzTree struct {
	files map[string]object.TreeEntry
	dirs  map[string]*fuzzTree
}

func (d *fuzzTree) add(parts []string, e object.TreeEntry) {
	if len(parts) == 1 {
		if _, ok := d.dirs[parts[0]]; !ok {
			e.Name = parts[0]
			d.files[parts[0]] = e
		}
		return
	}
	if _, ok := d.files[parts[0]]; ok {
		return
	}
	sub := d.dirs[parts[0]]
	if sub == nil {
		sub = &fuzzTree{files: map[string]object.TreeEntry{}, dirs: map[string]*fuzzTree{}}
		d.dirs[parts[0]] = sub
	}
	sub.add(parts[1:], e)
}

func (d *fuzzTree) write(o *objects) (plumbing.Hash, error) {
	var entries []object.TreeEntry
	for _, e := range d.files {
		entries = append(entries, e)
	}
	for name, sub := range d.dirs {
		h, err := sub.write(o)
		if err != nil {
			return h, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	return o.tree(entries)
}

// fuzzBranch makes a commit whose tree holds the files named by paths
// (one per line; a suffix @x, @l or @m makes it executable, a symlink or
// a submodule), with the pieces of body between 0xff bytes as contents.
func fuzzBranch(o *objects, paths string, body []byte) (plumbing.Hash, error) {
	root := &fuzzTree{files: map[string]object.TreeEntry{}, dirs: map[string]*fuzzTree{}}
	pieces := bytes.Split(body, []byte{0xff})
	for i, p := range strings.Split(paths, "\n") {
		mode := filemode.Regular
		for suffix, m := range map[string]filemode.FileMode{"@x": filemode.Executable, "@l": filemode.Symlink, "@m": filemode.Submodule} {
			if q, ok := strings.CutSuffix(p, suffix); ok {
				p, mode = q, m
			}
		}
		parts := strings.Split(p, "/")
		ok := p != ""
		for _, part := range parts {
			ok = ok && part != "" && part != "." && part != ".." && !strings.ContainsRune(part, 0)
		}
		if !ok {
			continue
		}
		var data []byte
		if i < len(pieces) {
			data = pieces[i]
		}
		h, err := o.blob(data)
		if err != nil {
			return h, err
		}
		root.add(parts, object.TreeEntry{Mode: mode, Hash: h})
	}
	tree, err := root.write(o)
	if err != nil {
		return tree, err
	}
	sig := object.Signature{Name: "f", Email: "f@example.com", When: time.Unix(0, 0)}
	obj := o.st.NewEncodedObject()
	if err := (&object.Commit{Author: sig, Committer: sig, TreeHash: tree, Message: "fuzz"}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

// FuzzBranch reads, imports and rewrites a data branch of any content:
// no panic, and a push built on it keeps every run the branch had.
func FuzzBranch(f *testing.F) {
	_, lines := testRuns("serving", strings.Repeat("a", 40), 3)
	id := func(i int) string {
		k, _ := keyOf([]byte(lines[i]))
		return k.ID
	}
	f.Add("runs/zz/a.json", []byte("{}"))
	f.Add("README.md\nruns/"+id(0)[:2]+"/"+id(0)+".json\nruns/x", []byte("x\xff"+lines[0]+"\xffy"))
	f.Add("FORMAT\nlog/0/a.jsonl\nlog/0/b.jsonl\nlog/1/c.jsonl@x\npacks/2026-01/d.jsonl",
		[]byte("2\n\xff"+lines[0]+"\n"+lines[1]+"\xff"+lines[1]+"\nnot json\xff"+lines[2]+"\xff"+lines[0]))
	f.Add("FORMAT\nlog/0/a.jsonl@l\nlog/0\npacks/2026-13/x.jsonl@m", []byte("2\xff"+lines[0]))
	f.Add("FORMAT", []byte("9"))
	rec := store.Record{Kind: store.RecordAccept, Commit: strings.Repeat("a", 40), Benchmark: "serving", Metric: "mean_ttft_ms", Reason: "intended", By: "ci", Time: time.Unix(1.6e9, 0).UTC()}
	rec.ID = store.RecordID(rec)
	f.Add("FORMAT\nlog/0/a.jsonl\nrecords/r.jsonl\nrecords/x\nrecords/s.jsonl@l", []byte("2\xff"+lines[0]+"\xff"+string(store.AppendRecordJSON(nil, &rec))+"\nnot a record\n{\"v\":2}\xffx\xffy"))
	f.Add("runs/"+id(1)[:2]+"/"+id(1)+".json/x", []byte(lines[1]))
	f.Fuzz(func(t *testing.T, paths string, body []byte) {
		if len(paths) > 4096 || len(body) > 1<<20 {
			return
		}
		defer func(n int) { fanIn = n }(fanIn)
		fanIn = 2
		repo, err := git.Init(memory.NewStorage(), nil)
		if err != nil {
			t.Fatal(err)
		}
		o := &objects{st: memory.NewStorage()}
		tip, err := fuzzBranch(o, paths, body)
		if err != nil {
			t.Fatal(err)
		}
		copyObjects(t, repo, o)
		st, err := store.Open(filepath.Join(t.TempDir(), "h.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		s := &syncer{repo: repo, opts: Options{Remote: "origin", Branch: DefaultBranch, Log: func(string, ...any) {}, Now: func() time.Time { return time.Unix(1.7e9, 0) }}}
		state, err := s.list(tip)
		if err != nil {
			return // a format error: refused, not a panic
		}
		var res Result
		fresh := len(body)%2 == 0 // the store is empty: both ways of pulling apply
		before, err := s.pull(st, state, nil, true, fresh, &res, nil)
		if err != nil {
			return
		}
		beforeRecs, _, _, err := s.readRecords(state, &res)
		if err != nil {
			return
		}
		runs, _ := testRuns("new", strings.Repeat("b", 40), 1)
		newRec := store.Record{Kind: store.RecordInvalidate, Commit: runs[0].Commit, Run: runs[0].ID, Reason: "fuzz", By: "t", Time: time.Unix(1.7e9, 0).UTC()}
		newRec.ID = store.RecordID(newRec)
		objs, commit, _, _, err := s.build(state, runs, []store.Record{newRec})
		if err != nil {
			return
		}
		copyObjects(t, repo, objs)
		after, err := s.list(commit)
		if err != nil {
			t.Fatalf("the commit perfgate built cannot be read: %v", err)
		}
		ids, err := s.branchIDs(after)
		if err != nil {
			t.Fatal(err)
		}
		var lost []string
		for id := range before {
			if !ids[id] {
				lost = append(lost, id)
			}
		}
		sort.Strings(lost)
		if len(lost) > 0 || !ids[runs[0].ID] {
			t.Fatalf("the rewritten branch lost runs %v (or the new one)", lost)
		}
		_, recIDs, _, err := s.readRecords(after, &res)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range append(beforeRecs, newRec) {
			if !recIDs[r.ID] {
				t.Fatalf("the rewritten branch lost record %s", r.ID)
			}
		}
	})
}

func copyObjects(t *testing.T, repo *git.Repository, o *objects) {
	for _, h := range o.hashes {
		obj, err := o.st.EncodedObject(plumbing.AnyObject, h)
		if err == nil {
			_, err = repo.Storer.SetEncodedObject(obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
