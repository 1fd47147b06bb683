package gitrepo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"

	"github.com/perfgate/perfgate/internal/proc"
)

// WorkTree is what TreeState found.
type WorkTree struct {
	// Hash identifies the changes: "" when the tree holds exactly HEAD.
	Hash string
	// Changed lists the paths counted (slash-separated, relative to the
	// root, sorted): tracked changes and untracked files.
	Changed []string
}

// TreeState identifies what the working tree holds beyond HEAD: a SHA-256
// (64 hex digits) over every path that differs from HEAD, tracked changes
// staged or not (with the file's content, or its absence), and untracked
// files that are not ignored (their paths and content). The hash is ""
// when the tree holds exactly HEAD's files, so a non-empty one means
// "dirty", untracked files counted. skip, when set, leaves out untracked paths
// (slash-separated, relative to the root) for which it returns true: a
// caller's own output files. A bare repository has no working tree.
//
// Two trees with the same changes on the same commit have the same state,
// whatever the branch, the index or the files' times: only content counts.
// The list comes from `git status --porcelain -z --untracked-files=all
// --ignore-submodules=dirty --no-renames` (git's own ignore rules:
// .gitignore files, info/exclude, core.excludesFile); without the git CLI,
// from go-git's worktree status, which hashes every file and reads only
// .gitignore files and info/exclude.
func (r *Repo) TreeState(ctx context.Context, skip func(path string) bool) (WorkTree, error) {
	if r.root == "" {
		return WorkTree{}, nil
	}
	changes, err := r.statusByCLI(ctx)
	if errors.Is(err, exec.ErrNotFound) {
		changes, err = r.statusByGoGit()
	}
	if err != nil {
		return WorkTree{}, err
	}
	return r.hashChanges(ctx, changes, skip)
}

// hashChanges hashes the listed paths' working-tree content.
func (r *Repo) hashChanges(ctx context.Context, changes []change, skip func(string) bool) (WorkTree, error) {
	sort.Slice(changes, func(i, j int) bool { return changes[i].path < changes[j].path })
	h := sha256.New()
	var wt WorkTree
	for _, c := range changes {
		if c.untracked && skip != nil && skip(c.path) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return WorkTree{}, err
		}
		content, err := r.contentOf(c.path)
		if err != nil {
			return WorkTree{}, err
		}
		kind := "T"
		if c.untracked {
			kind = "U"
		}
		fmt.Fprintf(h, "%s %q %s\n", kind, c.path, content)
		wt.Changed = append(wt.Changed, c.path)
	}
	if len(wt.Changed) > 0 {
		wt.Hash = hex.EncodeToString(h.Sum(nil))
	}
	return wt, nil
}

// change is one path git status lists.
type change struct {
	path      string
	untracked bool
}

// statusByCLI lists the changed and untracked paths with git status.
func (r *Repo) statusByCLI(ctx context.Context) ([]change, error) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, gitPath, proc.GitArgs("--no-optional-locks", "status", "--porcelain", "-z",
		"--untracked-files=all", "--ignore-submodules=dirty", "--no-renames")...)
	cmd.Dir = r.root
	cmd.Env = proc.GitEnv("GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("`git status` in %s failed: %v: %s", r.root, err, strings.TrimSpace(stderr.String()))
	}
	var changes []change
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) < 4 || rec[2] != ' ' {
			continue
		}
		changes = append(changes, change{path: string(rec[3:]), untracked: string(rec[:2]) == "??"})
	}
	return changes, nil
}

// statusByGoGit lists the changed and untracked paths with go-git.
func (r *Repo) statusByGoGit() ([]change, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	repo, err := git.Open(r.st, osfs.New(r.root))
	if err != nil {
		return nil, fmt.Errorf("working tree %s: %v", r.root, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("working tree %s: %v", r.root, err)
	}
	st, err := wt.Status()
	if err != nil {
		return nil, fmt.Errorf("working tree %s: %v", r.root, err)
	}
	var changes []change
	for p, s := range st {
		if s.Staging == git.Unmodified && s.Worktree == git.Unmodified {
			continue
		}
		changes = append(changes, change{path: filepath.ToSlash(p), untracked: s.Worktree == git.Untracked && s.Staging == git.Untracked})
	}
	return changes, nil
}

// contentOf describes a path's working-tree content: "absent", "link
// TARGET", "dir" (a submodule or a directory git lists as one), or "file"
// with its executable bit and the SHA-256 of its bytes.
func (r *Repo) contentOf(rel string) (string, error) {
	p := filepath.Join(r.root, filepath.FromSlash(strings.TrimSuffix(rel, "/")))
	fi, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "absent", nil
	case err != nil:
		return "", err
	case fi.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("link %q", filepath.ToSlash(target)), nil
	case fi.IsDir():
		if sub, err := Open(p); err == nil {
			defer sub.Close()
			if head, err := sub.Head(); err == nil && sub.Root() == p {
				return "submodule " + head, nil
			}
		}
		return "dir", nil
	case !fi.Mode().IsRegular():
		return "special", nil
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	mode := "file"
	if fi.Mode()&0o111 != 0 {
		mode = "exec"
	}
	return mode + " " + hex.EncodeToString(h.Sum(nil)), nil
}
