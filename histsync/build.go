package histsync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"

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
)

// objects collects the new objects of one commit, in memory until pushed.
type objects struct {
	st     *memory.Storage
	hashes []plumbing.Hash
	packed []byte
}

func (o *objects) put(obj plumbing.EncodedObject) (plumbing.Hash, error) {
	if h := obj.Hash(); o.st.HasEncodedObject(h) == nil {
		return h, nil // the same content twice
	}
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
	pack, err := objs.pack()
	if err != nil {
		return err
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
	req.Packfile = io.NopCloser(bytes.NewReader(pack))
	rs, err := sess.ReceivePack(ctx, req)
	if err != nil {
		return err
	}
	if rs != nil {
		return rs.Error()
	}
	return nil
}

// pack encodes the objects as one pack, once for the push and the local
// copy.
func (o *objects) pack() ([]byte, error) {
	if o.packed == nil {
		var b bytes.Buffer
		if _, err := packfile.NewEncoder(&b, o.st, false).Encode(o.hashes, 10); err != nil {
			return nil, fmt.Errorf("packing the history objects: %w", err)
		}
		o.packed = b.Bytes()
	}
	return o.packed, nil
}

// keep writes the pushed objects to the local repository as one pack and
// points the tracking ref at the new commit.
func (s *syncer) keep(objs *objects, commit plumbing.Hash) error {
	if pw, ok := s.repo.Storer.(storer.PackfileWriter); ok {
		pack, err := objs.pack()
		if err != nil {
			return err
		}
		w, err := pw.PackfileWriter()
		if err != nil {
			return fmt.Errorf("writing the history objects: %w", err)
		}
		_, err = w.Write(pack)
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
