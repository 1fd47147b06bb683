package gitrepo

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// HasFile tells whether the tree of commit rev holds a file (a regular
// file, an executable or a symlink) at the slash-separated path, relative
// to the repository's top directory.
func (r *Repo) HasFile(rev, file string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok, err := r.fileEntry(rev, file)
	return ok, err
}

// ReadFile returns the content of the file at the slash-separated path in
// the tree of commit rev (a symlink's target, as git stores it); ok is
// false when the tree holds no file there.
func (r *Repo) ReadFile(rev, file string) (data []byte, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok, err := r.fileEntry(rev, file)
	if err != nil || !ok {
		return nil, ok, err
	}
	t, data, err := r.odb.read(id)
	if err != nil {
		if errors.Is(err, errObjectMissing) {
			return nil, false, &MissingObjectError{ID: id.String(), Kind: "blob", Shallow: len(r.shallow) > 0}
		}
		return nil, false, err
	}
	if t != plumbing.BlobObject {
		return nil, false, fmt.Errorf("object %s at %s:%s is a %s, not a file", id, rev, file, t)
	}
	return data, true, nil
}

// fileEntry finds the blob of a file in the tree of commit rev; r.mu is
// held.
func (r *Repo) fileEntry(rev, file string) (plumbing.Hash, bool, error) {
	id, err := r.resolve(rev)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err := r.commitHeader(id)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	parts := strings.Split(path.Clean(file), "/")
	tree, dir := h.tree, ""
	for i, name := range parts {
		es, err := r.readTree(tree, dir)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		found := false
		for _, e := range es {
			if e.name != name {
				continue
			}
			if i == len(parts)-1 {
				return e.id, e.mode != filemode.Dir && e.mode != filemode.Submodule, nil
			}
			if e.mode != filemode.Dir {
				return plumbing.ZeroHash, false, nil
			}
			tree, dir, found = e.id, path.Join(dir, name), true
			break
		}
		if !found {
			return plumbing.ZeroHash, false, nil
		}
	}
	return plumbing.ZeroHash, false, nil
}
