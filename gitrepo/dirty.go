package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"github.com/perfgate/perfgate/internal/proc"
)

// Dirty reports whether the working tree differs from HEAD in tracked
// files: a staged change, an unmerged path, or a tracked file that was
// modified, deleted, or changed type or executable bit, or a submodule
// checked out at another commit than the index records. Untracked and
// ignored files do not count (a benchmark's own output would otherwise mark
// every run dirty), nor do uncommitted changes inside submodules: this is
// `git status --porcelain --untracked-files=no --ignore-submodules=dirty`.
//
// It does what git status does, without go-git's Worktree.Status (which
// hashes every file): read the index, compare it with HEAD's tree (skipped
// when the index's cache-tree already records HEAD's tree), then lstat
// every tracked file and hash only those whose size, times or inode differ
// from what the index recorded, or that were modified in the same second
// the index was written ("racy" entries). With core.autocrlf set, a file
// whose only difference is CRLF line endings is clean. Files whose bytes
// still differ are re-hashed by `git hash-object` when git is installed, so
// clean filters (Git LFS) and eol/ident attributes apply as in git status.
//
// Indexes go-git cannot decode (split or sparse indexes, which carry
// mandatory extensions) are handed to the git CLI when it is installed:
// `git status --porcelain --untracked-files=no`.
func (r *Repo) Dirty(ctx context.Context) (bool, error) {
	if r.root == "" {
		return false, nil // a bare repository has no working tree
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	idx, err := r.st.Index()
	if err != nil {
		return r.dirtyByCLI(ctx, err)
	}
	tree, hasHead, err := r.headTree()
	if err != nil {
		return false, err
	}
	if staged, err := r.stagedChanges(idx, tree, hasHead); err != nil || staged {
		return staged, err
	}
	return r.worktreeChanges(ctx, idx)
}

func (r *Repo) headTree() (plumbing.Hash, bool, error) {
	head, err := r.head()
	if err != nil {
		ref, rerr := r.st.Reference(plumbing.HEAD)
		if rerr == nil && ref.Type() == plumbing.SymbolicReference {
			if _, terr := r.st.Reference(ref.Target()); errors.Is(terr, plumbing.ErrReferenceNotFound) {
				return plumbing.ZeroHash, false, nil // unborn branch
			}
		}
		return plumbing.ZeroHash, false, err
	}
	id := plumbing.NewHash(head)
	t, data, err := r.odb.read(id)
	if errors.Is(err, errObjectMissing) {
		return plumbing.ZeroHash, false, &MissingObjectError{ID: head, Kind: "commit", Shallow: len(r.shallow) > 0}
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if t != plumbing.CommitObject {
		return plumbing.ZeroHash, false, fmt.Errorf("HEAD names a %s, not a commit", t)
	}
	h, err := parseCommitHeader(data)
	if err != nil {
		return plumbing.ZeroHash, false, fmt.Errorf("commit %s: %v; the object is damaged: run `git fsck`", head, err)
	}
	return h.tree, true, nil
}

func (r *Repo) stagedChanges(idx *index.Index, tree plumbing.Hash, hasHead bool) (bool, error) {
	for _, e := range idx.Entries {
		if e.Stage != 0 || e.IntentToAdd {
			return true, nil
		}
	}
	if !hasHead {
		return len(idx.Entries) > 0, nil
	}
	if c := idx.Cache; c != nil && len(c.Entries) > 0 && c.Entries[0].Path == "" &&
		c.Entries[0].Entries == len(idx.Entries) {
		return c.Entries[0].Hash != tree, nil
	}
	flat := map[string]treeEntry{}
	if err := r.flatten(tree, "", flat); err != nil {
		return false, err
	}
	if len(flat) != len(idx.Entries) {
		return true, nil
	}
	for _, e := range idx.Entries {
		f, ok := flat[e.Name]
		if !ok || f.id != e.Hash || normMode(f.mode) != normMode(e.Mode) {
			return true, nil
		}
	}
	return false, nil
}

func normMode(m filemode.FileMode) filemode.FileMode {
	if m == filemode.Deprecated {
		return filemode.Regular
	}
	return m
}

type wtOptions struct {
	filemode, symlinks, autocrlf bool
	indexTime                    time.Time
}

func (r *Repo) worktreeOptions(idx *index.Index) wtOptions {
	o := wtOptions{filemode: true, symlinks: true, indexTime: idx.ModTime}
	if r.cfg.Raw != nil && r.cfg.Raw.HasSection("core") {
		core := r.cfg.Raw.Section("core")
		o.filemode = !isFalse(core.Option("fileMode"))
		o.symlinks = !isFalse(core.Option("symlinks"))
		v := strings.ToLower(core.Option("autocrlf"))
		o.autocrlf = v == "input" || (v != "" && !isFalse(v))
	}
	return o
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return true
	}
	return false
}

func (r *Repo) worktreeChanges(ctx context.Context, idx *index.Index) (bool, error) {
	o := r.worktreeOptions(idx)
	var suspects []*index.Entry
	for i, e := range idx.Entries {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
		}
		if e.SkipWorktree {
			continue
		}
		p := filepath.Join(r.root, filepath.FromSlash(e.Name))
		if e.Mode == filemode.Submodule {
			if submoduleMoved(p, e.Hash) {
				return true, nil
			}
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			if os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR) {
				return true, nil
			}
			return false, err
		}
		changed, content, err := entryChanged(e, fi, p, o)
		if err != nil {
			return false, err
		}
		if changed && !content {
			return true, nil
		}
		if changed {
			suspects = append(suspects, e)
		}
	}
	if len(suspects) == 0 {
		return false, nil
	}
	return r.contentDiffers(ctx, suspects), nil
}

// contentDiffers double-checks files whose bytes hash differently from
// the index with `git hash-object`, which applies what this package does
// not model: clean filters (Git LFS: after every checkout, racily-clean
// entries are hashed and the working file is the large content, not the
// pointer git stores), eol and ident attributes. Without git, or if it
// fails, the files count as changed.
func (r *Repo) contentDiffers(ctx context.Context, es []*index.Entry) bool {
	git, err := exec.LookPath("git")
	if err != nil {
		return true
	}
	var in bytes.Buffer
	for _, e := range es {
		if strings.ContainsAny(e.Name, "\n\r") {
			return true // not expressible on --stdin-paths
		}
		in.WriteString(e.Name + "\n")
	}
	cmd := exec.CommandContext(ctx, git, proc.GitArgs("hash-object", "--stdin-paths")...)
	cmd.Dir = r.root
	cmd.Env = proc.GitEnv("GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return true
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(es) {
		return true
	}
	for i, e := range es {
		if ids[i] != e.Hash.String() {
			return true
		}
	}
	return false
}

// submoduleMoved reports whether the submodule checked out at dir has a
// HEAD other than the commit the index records, which git status shows as
// "M path" (a submodule that is not checked out is not a change).
func submoduleMoved(dir string, recorded plumbing.Hash) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return false
	}
	sub, err := Open(dir)
	if err != nil {
		return false
	}
	defer sub.Close()
	if sub.Root() != dir {
		return false
	}
	head, err := sub.Head()
	return err == nil && head != recorded.String()
}

// entryChanged compares a tracked file with its index entry. content is
// true when only the bytes differ (a regular file of the right type and
// mode whose hash is not the index's), which filters may explain.
func entryChanged(e *index.Entry, fi os.FileInfo, path string, o wtOptions) (changed, content bool, err error) {
	isLink := fi.Mode()&os.ModeSymlink != 0
	switch e.Mode {
	case filemode.Symlink:
		if !isLink && (o.symlinks || !fi.Mode().IsRegular()) {
			return true, false, nil
		}
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		if !fi.Mode().IsRegular() {
			return true, false, nil
		}
		if o.filemode && (e.Mode == filemode.Executable) != (fi.Mode()&0o111 != 0) {
			return true, false, nil
		}
	}
	if statMatches(e, fi, o.indexTime) {
		return false, false, nil
	}
	var id plumbing.Hash
	if isLink {
		target, err := os.Readlink(path)
		if err != nil {
			return false, false, err
		}
		id = plumbing.ComputeHash(plumbing.BlobObject, []byte(filepath.ToSlash(target)))
	} else if id, err = hashFile(path, fi.Size()); err != nil {
		return false, false, err
	}
	if id == e.Hash {
		return false, false, nil
	}
	if o.autocrlf && !isLink {
		b, err := os.ReadFile(path)
		if err != nil {
			return false, false, err
		}
		if bytes.Contains(b, []byte("\r\n")) {
			b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
			if plumbing.ComputeHash(plumbing.BlobObject, b) == e.Hash {
				return false, false, nil
			}
		}
	}
	return true, !isLink && fi.Mode().IsRegular(), nil
}

// statMatches is git's ie_match_stat: the file is unchanged since the
// index recorded it when size, mtime (and, where known, ctime and inode)
// agree and the entry is not racy (modified no earlier than the index file
// was written, when a later write in the same tick would go unseen).
func statMatches(e *index.Entry, fi os.FileInfo, indexTime time.Time) bool {
	if uint32(fi.Size()) != e.Size || !sameTime(fi.ModTime(), e.ModifiedAt) {
		return false
	}
	if !indexTime.IsZero() && !fi.ModTime().Before(indexTime) {
		return false
	}
	x := extraStat(fi)
	if !x.ok {
		return true
	}
	if !e.CreatedAt.IsZero() && !sameTime(x.ctime, e.CreatedAt) {
		return false
	}
	return e.Inode == 0 || x.ino == e.Inode
}

// sameTime compares seconds, and nanoseconds when the index recorded them
// (git built without nanosecond support stores zero).
func sameTime(fs, idx time.Time) bool {
	if fs.Unix() != idx.Unix() {
		return false
	}
	return idx.Nanosecond() == 0 || fs.Nanosecond() == idx.Nanosecond()
}

func hashFile(path string, size int64) (plumbing.Hash, error) {
	f, err := os.Open(path)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer f.Close()
	h := plumbing.NewHasher(plumbing.BlobObject, size)
	n, err := io.Copy(h, f)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if n != size {
		return plumbing.ZeroHash, nil // changed while reading: not the indexed content
	}
	return h.Sum(), nil
}

func (r *Repo) dirtyByCLI(ctx context.Context, cause error) (bool, error) {
	indexPath := filepath.Join(r.gitDir, "index")
	dirty, err := r.gitStatus(ctx)
	if errors.Is(err, exec.ErrNotFound) {
		return false, fmt.Errorf("%s: go-git cannot read this index (%v) and no git CLI is installed to ask; run `git update-index --no-split-index` and `git sparse-checkout disable` if they are in use, or install git", indexPath, cause)
	}
	if err != nil {
		return false, fmt.Errorf("%s: go-git cannot read this index (%v), and %v", indexPath, cause, err)
	}
	return dirty, nil
}

// gitStatus asks the git CLI whether tracked files differ from HEAD.
func (r *Repo) gitStatus(ctx context.Context) (bool, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return false, err
	}
	cmd := exec.CommandContext(ctx, git, proc.GitArgs("--no-optional-locks", "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=dirty")...)
	cmd.Dir = r.root
	// The repository is the one opened here, whatever the environment says.
	cmd.Env = proc.GitEnv("GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Errorf("`git status` failed: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return len(bytes.TrimSpace(out)) > 0, nil
}
