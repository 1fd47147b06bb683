package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Materialize checks out the commit rev names into dir, for bisect to
// build and benchmark it, without touching the user's checkout, index,
// HEAD or refs. dir must not exist or be empty. It returns the commit's SHA.
//
// go-git v5 has no `git worktree add`, so the files are written straight
// from the object database: regular files 0644, executables 0755, symlinks
// as symlinks (as files holding the target where the system refuses), and
// submodules as empty directories, as an uninitialised submodule would be.
// dir/.git is then made a minimal repository on that commit (detached
// HEAD, this repository's tags, an index matching the files) that borrows
// every object through objects/info/alternates, so git commands and version
// tools in the benchmark (git describe, setuptools-scm) work there and
// `git status` is clean. Nothing is copied but the files themselves.
// Remove dir with os.RemoveAll when done; nothing else refers to it.
func (r *Repo) Materialize(ctx context.Context, rev, dir string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.resolve(rev)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if err := emptyDir(abs); err != nil {
		return "", err
	}
	h, err := r.commitHeader(id)
	if err != nil {
		return "", err
	}
	m := &materializer{r: r, ctx: ctx, root: abs}
	if err := m.tree(h.tree, ""); err != nil {
		return "", fmt.Errorf("checking out %s into %s: %w", shortID(id.String()), abs, err)
	}
	if err := r.writeGitDir(abs, id, m.entries); err != nil {
		return "", fmt.Errorf("writing %s: %w", filepath.Join(abs, ".git"), err)
	}
	return id.String(), nil
}

func emptyDir(dir string) error {
	f, err := os.Open(dir)
	if os.IsNotExist(err) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && len(names) == 0 {
		fi, serr := f.Stat()
		if serr == nil && !fi.IsDir() {
			return fmt.Errorf("%s is a file; pass a new or empty directory to check the commit out into", dir)
		}
		return nil // empty directory (Readdirnames returns io.EOF)
	}
	return fmt.Errorf("%s is not empty; pass a new or empty directory to check the commit out into", dir)
}

type materializer struct {
	r       *Repo
	ctx     context.Context
	root    string
	entries []*index.Entry
}

func (m *materializer) tree(id plumbing.Hash, rel string) error {
	es, err := m.r.readTree(id, rel)
	if err != nil {
		return err
	}
	for _, e := range es {
		if err := m.ctx.Err(); err != nil {
			return err
		}
		if err := safeName(e.name); err != nil {
			return fmt.Errorf("tree %s has an unsafe %v; refusing to check it out", displayDir(rel), err)
		}
		p := e.name
		if rel != "" {
			p = rel + "/" + e.name
		}
		full := filepath.Join(m.root, filepath.FromSlash(p))
		switch e.mode {
		case filemode.Dir:
			if err := os.Mkdir(full, 0o755); err != nil {
				return err
			}
			if err := m.tree(e.id, p); err != nil {
				return err
			}
			continue
		case filemode.Submodule:
			if err := os.Mkdir(full, 0o755); err != nil {
				return err
			}
			m.entries = append(m.entries, &index.Entry{Name: p, Mode: filemode.Submodule, Hash: e.id})
			continue
		case filemode.Regular, filemode.Deprecated, filemode.Executable, filemode.Symlink:
		default:
			return fmt.Errorf("%s has unknown mode %o; the repository is damaged: run `git fsck`", p, e.mode)
		}
		content, err := m.blob(e.id, p)
		if err != nil {
			return err
		}
		mode := e.mode
		switch {
		case e.mode == filemode.Symlink:
			if err := os.Symlink(filepath.FromSlash(string(content)), full); err != nil {
				if runtime.GOOS != "windows" {
					return err
				}
				// Like git with core.symlinks=false: a file holding the target.
				if err := os.WriteFile(full, content, 0o644); err != nil {
					return err
				}
			}
		case e.mode == filemode.Executable:
			if err := os.WriteFile(full, content, 0o755); err != nil {
				return err
			}
			// The umask may have dropped bits; git's checkout gives 0755.
			if err := os.Chmod(full, 0o755); err != nil {
				return err
			}
		default:
			mode = filemode.Regular
			if err := os.WriteFile(full, content, 0o644); err != nil {
				return err
			}
		}
		fi, err := os.Lstat(full)
		if err != nil {
			return err
		}
		x := extraStat(fi)
		m.entries = append(m.entries, &index.Entry{
			Name:       p,
			Mode:       mode,
			Hash:       e.id,
			Size:       uint32(fi.Size()),
			ModifiedAt: fi.ModTime(),
			CreatedAt:  x.ctime,
			Dev:        x.dev,
			Inode:      x.ino,
			UID:        x.uid,
			GID:        x.gid,
		})
	}
	return nil
}

func (m *materializer) blob(id plumbing.Hash, path string) ([]byte, error) {
	t, data, err := m.r.odb.read(id)
	if errors.Is(err, errObjectMissing) {
		return nil, &MissingObjectError{ID: id.String(), Kind: "blob " + path, Shallow: len(m.r.shallow) > 0}
	}
	if err != nil {
		return nil, err
	}
	if t != plumbing.BlobObject {
		return nil, fmt.Errorf("%s: object %s is a %s, not a blob; the repository is damaged: run `git fsck`", path, id, t)
	}
	return data, nil
}

// writeGitDir makes dir/.git a repository on commit id that reads its
// objects from this repository.
func (r *Repo) writeGitDir(dir string, id plumbing.Hash, entries []*index.Entry) error {
	gd := filepath.Join(dir, ".git")
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(gd, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	objects, err := filepath.Abs(filepath.Join(r.commonDir, "objects"))
	if err != nil {
		return err
	}
	files := map[string]string{
		"HEAD":                    id.String() + "\n",
		"config":                  "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n",
		"objects/info/alternates": filepath.ToSlash(objects) + "\n",
		"description":             "temporary checkout made by perfgate; safe to delete\n",
	}
	var tags []string
	if iter, err := r.st.IterReferences(); err == nil {
		_ = iter.ForEach(func(ref *plumbing.Reference) error {
			if ref.Name().IsTag() && ref.Type() == plumbing.HashReference {
				tags = append(tags, ref.Hash().String()+" "+ref.Name().String())
			}
			return nil
		})
		iter.Close()
	}
	sort.Slice(tags, func(i, j int) bool { return strings.Fields(tags[i])[1] < strings.Fields(tags[j])[1] })
	if len(tags) > 0 {
		files["packed-refs"] = "# pack-refs with: sorted \n" + strings.Join(tags, "\n") + "\n"
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(gd, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(gd, "index"))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := index.NewEncoder(w).Encode(&index.Index{Version: 2, Entries: entries}); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
