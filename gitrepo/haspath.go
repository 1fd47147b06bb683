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
	id, err := r.resolve(rev)
	if err != nil {
		return false, err
	}
	t, data, err := r.odb.read(id)
	if err != nil {
		if errors.Is(err, errObjectMissing) {
			return false, &MissingObjectError{ID: id.String(), Kind: "commit", Shallow: len(r.shallow) > 0}
		}
		return false, err
	}
	if t != plumbing.CommitObject {
		return false, fmt.Errorf("object %s is a %s, not a commit", id, t)
	}
	h, err := parseCommitHeader(data)
	if err != nil {
		return false, fmt.Errorf("commit %s: %v; the object is damaged: run `git fsck`", id, err)
	}
	parts := strings.Split(path.Clean(file), "/")
	tree, dir := h.tree, ""
	for i, name := range parts {
		es, err := r.readTree(tree, dir)
		if err != nil {
			return false, err
		}
		found := false
		for _, e := range es {
			if e.name != name {
				continue
			}
			if i == len(parts)-1 {
				return e.mode != filemode.Dir && e.mode != filemode.Submodule, nil
			}
			if e.mode != filemode.Dir {
				return false, nil
			}
			tree, dir, found = e.id, path.Join(dir, name), true
			break
		}
		if !found {
			return false, nil
		}
	}
	return false, nil
}
