package histsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/perfgate/perfgate/store"
)

// readme is the root README.md of a new data branch.
const readme = `# perfgate history

This branch holds perfgate's benchmark history, shared through git so that
it outlives CI runs and reaches developers' machines (` + "`perfgate sync`" + `).
It has no history in common with the code.

Each run is one file, runs/<first two hex digits of the run id>/<run id>.json,
holding the run as one line of perfgate's JSONL interchange. Files are only
ever added; do not edit or delete them.
`

// objects collects the new objects of one commit, in memory until pushed.
type objects struct {
	st     *memory.Storage
	hashes []plumbing.Hash
}

func (o *objects) put(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	h, err := o.st.SetEncodedObject(obj)
	if err == nil {
		o.hashes = append(o.hashes, h)
	}
	return h, err
}

func (o *objects) blob(data []byte) (plumbing.Hash, error) {
	obj := o.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(data); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

func (o *objects) tree(entries []object.TreeEntry) (plumbing.Hash, error) {
	sortEntries(entries)
	obj := o.st.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return o.put(obj)
}

// sortEntries sorts tree entries in git's order: by name, a directory
// compared as if its name ended with '/'.
func sortEntries(entries []object.TreeEntry) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
}

// replace returns entries with the entry named e.Name replaced by e, or
// added.
func replace(entries []object.TreeEntry, e object.TreeEntry) []object.TreeEntry {
	out := make([]object.TreeEntry, 0, len(entries)+1)
	for _, x := range entries {
		if x.Name != e.Name {
			out = append(out, x)
		}
	}
	return append(out, e)
}

// build makes the commit that adds runs to the branch at state.tip.
func (s *syncer) build(state *branchState, runs []store.Run) (*objects, plumbing.Hash, error) {
	o := &objects{st: memory.NewStorage()}
	fail := func(err error) (*objects, plumbing.Hash, error) {
		return nil, plumbing.ZeroHash, fmt.Errorf("building the history commit: %w", err)
	}
	byFan := map[string][]object.TreeEntry{}
	var buf []byte
	benches := map[string]bool{}
	for i := range runs {
		r := &runs[i]
		buf = store.AppendJSON(buf[:0], r)
		buf = append(buf, '\n')
		h, err := o.blob(buf)
		if err != nil {
			return fail(err)
		}
		byFan[r.ID[:2]] = append(byFan[r.ID[:2]], object.TreeEntry{Name: r.ID + ".json", Mode: filemode.Regular, Hash: h})
		benches[r.Benchmark] = true
	}
	runsEntries := append([]object.TreeEntry(nil), state.runs...)
	fans := make([]string, 0, len(byFan))
	for fan := range byFan {
		fans = append(fans, fan)
	}
	sort.Strings(fans)
	for _, fan := range fans {
		entries := append(append([]object.TreeEntry(nil), state.fan[fan]...), byFan[fan]...)
		h, err := o.tree(entries)
		if err != nil {
			return fail(err)
		}
		runsEntries = replace(runsEntries, object.TreeEntry{Name: fan, Mode: filemode.Dir, Hash: h})
	}
	runsTree, err := o.tree(runsEntries)
	if err != nil {
		return fail(err)
	}
	rootEntries := replace(append([]object.TreeEntry(nil), state.root...), object.TreeEntry{Name: runsDir, Mode: filemode.Dir, Hash: runsTree})
	if state.tip.IsZero() {
		h, err := o.blob([]byte(readme))
		if err != nil {
			return fail(err)
		}
		rootEntries = append(rootEntries, object.TreeEntry{Name: "README.md", Mode: filemode.Regular, Hash: h})
	}
	rootTree, err := o.tree(rootEntries)
	if err != nil {
		return fail(err)
	}
	names := make([]string, 0, len(benches))
	for b := range benches {
		names = append(names, b)
	}
	sort.Strings(names)
	if len(names) > 10 {
		names = append(names[:10], fmt.Sprintf("and %d more", len(benches)-10))
	}
	sig := s.signature()
	c := &object.Commit{
		Author: sig, Committer: sig, TreeHash: rootTree,
		Message: fmt.Sprintf("perfgate: add %d runs\n\nBenchmarks: %s\n", len(runs), strings.Join(names, ", ")),
	}
	if !state.tip.IsZero() {
		c.ParentHashes = []plumbing.Hash{state.tip}
	}
	obj := o.st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return fail(err)
	}
	h, err := o.put(obj)
	if err != nil {
		return fail(err)
	}
	return o, h, nil
}

// signature is the author of history commits: the repository's user when
// git knows one, else perfgate.
func (s *syncer) signature() object.Signature {
	sig := object.Signature{Name: "perfgate", Email: "perfgate@localhost", When: s.opts.Now()}
	if cfg, err := s.repo.ConfigScoped(config.SystemScope); err == nil && cfg.User.Name != "" && cfg.User.Email != "" {
		sig.Name, sig.Email = cfg.User.Name, cfg.User.Email
	}
	return sig
}

// push sends the new objects and moves the branch from old to commit; the
// remote refuses when the branch is no longer at old.
func (s *syncer) push(ctx context.Context, old, commit plumbing.Hash, objs *objects) error {
	for {
		err := s.pushOnce(ctx, old, commit, objs)
		if isAuthError(err) && s.askHelper(ctx) {
			continue
		}
		return err
	}
}

func (s *syncer) pushOnce(ctx context.Context, old, commit plumbing.Hash, objs *objects) error {
	ep, err := transport.NewEndpoint(s.url)
	if err != nil {
		return configErrorf("remote %s: URL %q: %v", s.opts.Remote, redactURL(s.url), err)
	}
	cl, err := client.NewClient(ep)
	if err != nil {
		return configErrorf("remote %s: %v", s.opts.Remote, err)
	}
	sess, err := cl.NewReceivePackSession(ep, s.auth)
	if err != nil {
		return err
	}
	defer sess.Close()
	ar, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil && !errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return err
	}
	if ar != nil {
		refs, rerr := ar.AllReferences()
		if rerr != nil {
			return rerr
		}
		cur := plumbing.ZeroHash
		if r, ok := refs[s.branch]; ok {
			cur = r.Hash()
		}
		if cur != old {
			return errors.New("the branch moved") // another runner pushed first
		}
	}
	caps := packp.NewAdvRefs().Capabilities
	if ar != nil {
		caps = ar.Capabilities
	}
	req := packp.NewReferenceUpdateRequestFromCapabilities(caps)
	req.Commands = []*packp.Command{{Name: s.branch, Old: old, New: commit}}
	rd, wr := io.Pipe()
	req.Packfile = rd
	done := make(chan error, 1)
	go func() {
		_, err := packfile.NewEncoder(wr, objs.st, false).Encode(objs.hashes, 10)
		wr.CloseWithError(err)
		done <- err
	}()
	rs, err := sess.ReceivePack(ctx, req)
	if err != nil {
		rd.Close()
		<-done
		return err
	}
	if err := <-done; err != nil {
		return err
	}
	if rs != nil {
		return rs.Error()
	}
	return nil
}

// keep writes the pushed objects to the local repository as one pack and
// points the tracking ref at the new commit.
func (s *syncer) keep(objs *objects, commit plumbing.Hash) error {
	if pw, ok := s.repo.Storer.(storer.PackfileWriter); ok {
		w, err := pw.PackfileWriter()
		if err != nil {
			return fmt.Errorf("writing the history objects: %w", err)
		}
		_, err = packfile.NewEncoder(w, objs.st, false).Encode(objs.hashes, 10)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing the history objects: %w", err)
		}
	} else {
		for _, h := range objs.hashes {
			obj, err := objs.st.EncodedObject(plumbing.AnyObject, h)
			if err == nil {
				_, err = s.repo.Storer.SetEncodedObject(obj)
			}
			if err != nil {
				return fmt.Errorf("writing the history objects: %w", err)
			}
		}
	}
	if err := s.repo.Storer.SetReference(plumbing.NewHashReference(s.track, commit)); err != nil {
		return fmt.Errorf("updating %s: %w", s.track, err)
	}
	return nil
}

// gitCLI reports whether the git command is available, for the optional
// credential lookups.
func gitCLI() bool {
	_, err := exec.LookPath("git")
	return err == nil
}
