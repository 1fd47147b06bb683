package gitrepo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

// CommitStates answers "was this commit measured before it was made?":
// it returns the commit's first parent and the working-tree states
// (TreeState hashes) that the parent's checkout had when it held exactly
// the commit's files, uncommitted. A run measured on such a tree (a dirty
// run at the parent whose tree hash is one of them) measured the commit.
//
// TreeState tells a staged new file from an untracked one and the commit
// does not, so when the commit adds files there are two states: the added
// files all staged, and all untracked (`git add -A && git commit`); a tree
// mixing both is not recognised. A commit with no parent, or whose tree
// equals its parent's, has none.
func (r *Repo) CommitStates(commit string) (parent string, states []string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.resolve(commit)
	if err != nil {
		return "", nil, err
	}
	h, err := r.commitHeader(id)
	if err != nil {
		return "", nil, err
	}
	if len(h.parents) == 0 {
		return "", nil, nil
	}
	ph, err := r.commitHeader(h.parents[0])
	if err != nil {
		return "", nil, err
	}
	var diffs []pathDiff
	if err := r.diffTrees(ph.tree, h.tree, "", &diffs); err != nil {
		return "", nil, err
	}
	if len(diffs) == 0 {
		return h.parents[0].String(), nil, nil
	}
	sort.Slice(diffs, func(i, j int) bool { return diffs[i].path < diffs[j].path })
	added := false
	for _, d := range diffs {
		added = added || d.added
	}
	variants := []bool{false}
	if added {
		variants = append(variants, true)
	}
	for _, untracked := range variants {
		sum := sha256.New()
		for _, d := range diffs {
			kind := "T"
			if untracked && d.added {
				kind = "U"
			}
			fmt.Fprintf(sum, "%s %q %s\n", kind, d.path, d.content)
		}
		states = append(states, hex.EncodeToString(sum.Sum(nil)))
	}
	return h.parents[0].String(), states, nil
}

// pathDiff is one path that differs between two trees, with its content
// in the newer one as contentOf describes a working-tree file.
type pathDiff struct {
	path, content string
	added         bool // absent from the older tree
}

// commitHeader reads and parses commit id; a missing object is a
// *MissingObjectError. r.mu is held.
func (r *Repo) commitHeader(id plumbing.Hash) (commitHeader, error) {
	t, data, err := r.odb.read(id)
	if errors.Is(err, errObjectMissing) {
		return commitHeader{}, &MissingObjectError{ID: id.String(), Kind: "commit", Shallow: len(r.shallow) > 0}
	}
	if err != nil {
		return commitHeader{}, err
	}
	if t != plumbing.CommitObject {
		return commitHeader{}, fmt.Errorf("object %s is a %s, not a commit", id, t)
	}
	h, err := parseCommitHeader(data)
	if err != nil {
		return commitHeader{}, fmt.Errorf("commit %s: %v; the object is damaged: run `git fsck`", id, err)
	}
	return h, nil
}

// diffTrees lists the non-tree paths that differ between trees a and b
// (either may be zero: absent), skipping subtrees with equal ids.
func (r *Repo) diffTrees(a, b plumbing.Hash, prefix string, out *[]pathDiff) error {
	if a == b {
		return nil
	}
	entries := func(id plumbing.Hash) (map[string]treeEntry, error) {
		m := map[string]treeEntry{}
		if id.IsZero() {
			return m, nil
		}
		es, err := r.readTree(id, prefix)
		if err != nil {
			return nil, err
		}
		for _, e := range es {
			m[e.name] = e
		}
		return m, nil
	}
	ea, err := entries(a)
	if err != nil {
		return err
	}
	eb, err := entries(b)
	if err != nil {
		return err
	}
	names := map[string]bool{}
	for n := range ea {
		names[n] = true
	}
	for n := range eb {
		names[n] = true
	}
	for n := range names {
		x, inA := ea[n]
		y, inB := eb[n]
		if inA && inB && x.mode == y.mode && x.id == y.id {
			continue
		}
		p := prefix + n
		var subA, subB plumbing.Hash
		if inA && x.mode == filemode.Dir {
			subA = x.id
		}
		if inB && y.mode == filemode.Dir {
			subB = y.id
		}
		if !subA.IsZero() || !subB.IsZero() {
			if err := r.diffTrees(subA, subB, p+"/", out); err != nil {
				return err
			}
		}
		if inB && y.mode != filemode.Dir {
			content, err := r.entryContent(y, p)
			if err != nil {
				return err
			}
			*out = append(*out, pathDiff{path: p, content: content, added: !inA || x.mode == filemode.Dir})
		} else if inA && x.mode != filemode.Dir {
			*out = append(*out, pathDiff{path: p, content: "absent"})
		}
	}
	return nil
}

// entryContent describes a committed entry as contentOf describes the
// same file checked out.
func (r *Repo) entryContent(e treeEntry, path string) (string, error) {
	if e.mode == filemode.Submodule {
		return "submodule " + e.id.String(), nil
	}
	t, data, err := r.odb.read(e.id)
	if errors.Is(err, errObjectMissing) {
		return "", &MissingObjectError{ID: e.id.String(), Kind: "blob " + path, Shallow: len(r.shallow) > 0}
	}
	if err != nil {
		return "", err
	}
	if t != plumbing.BlobObject {
		return "", fmt.Errorf("%s: object %s is a %s, not a blob; the repository is damaged: run `git fsck`", path, e.id, t)
	}
	switch e.mode {
	case filemode.Symlink:
		return fmt.Sprintf("link %q", string(data)), nil
	case filemode.Executable:
		sum := sha256.Sum256(data)
		return "exec " + hex.EncodeToString(sum[:]), nil
	}
	sum := sha256.Sum256(data)
	return "file " + hex.EncodeToString(sum[:]), nil
}
