package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
)

type treeEntry struct {
	name string
	mode filemode.FileMode
	id   plumbing.Hash
}

// parseTree decodes a raw tree object: entries "MODE NAME\0<20-byte id>".
func parseTree(data []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, errors.New("entry without mode")
		}
		var mode uint32
		for _, c := range data[:sp] {
			if c < '0' || c > '7' || mode > 1<<24 {
				return nil, fmt.Errorf("bad mode %q", data[:sp])
			}
			mode = mode<<3 | uint32(c-'0')
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+1+20 {
			return nil, errors.New("truncated entry")
		}
		e := treeEntry{name: string(data[:nul]), mode: filemode.FileMode(mode)}
		copy(e.id[:], data[nul+1:nul+21])
		data = data[nul+21:]
		out = append(out, e)
	}
	return out, nil
}

// readTree reads and decodes a tree object.
func (r *Repo) readTree(id plumbing.Hash, path string) ([]treeEntry, error) {
	t, data, err := r.odb.read(id)
	if errors.Is(err, errObjectMissing) {
		return nil, &MissingObjectError{ID: id.String(), Kind: "tree " + displayDir(path), Shallow: len(r.shallow) > 0}
	}
	if err != nil {
		return nil, err
	}
	if t != plumbing.TreeObject {
		return nil, fmt.Errorf("object %s (%s) is a %s, not a tree; the repository is damaged: run `git fsck`", id, displayDir(path), t)
	}
	es, err := parseTree(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s (%s): %v; the repository is damaged: run `git fsck`", id, displayDir(path), err)
	}
	return es, nil
}

func displayDir(path string) string {
	if path == "" {
		return "/"
	}
	return path + "/"
}

// safeName refuses tree entry names that could escape or corrupt a
// checkout; git's fsck rejects the same.
func safeName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("entry name %q", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("entry name %q contains a path separator", name)
	case strings.EqualFold(strings.TrimRight(name, ". "), ".git"):
		return fmt.Errorf("entry name %q would overwrite the repository metadata", name)
	}
	return nil
}

// flatten lists every non-tree entry under a tree with its full path.
func (r *Repo) flatten(id plumbing.Hash, prefix string, out map[string]treeEntry) error {
	es, err := r.readTree(id, strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return err
	}
	for _, e := range es {
		p := prefix + e.name
		if e.mode == filemode.Dir {
			if err := r.flatten(e.id, p+"/", out); err != nil {
				return err
			}
			continue
		}
		out[p] = treeEntry{name: p, mode: e.mode, id: e.id}
	}
	return nil
}
