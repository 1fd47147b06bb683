package gitrepo

import (
	"errors"
	"fmt"
	"strings"
)

// ShallowHint is the instruction every shallow-history error ends with.
const ShallowHint = "in GitHub Actions set `fetch-depth: 0` on actions/checkout, " +
	"or run `git fetch --unshallow` (or `git fetch --deepen=N`)"

// Sentinel errors, for errors.Is. The concrete errors below carry the detail.
var (
	// ErrShallow: the question needs history that a shallow clone cut off.
	ErrShallow = errors.New("shallow clone")
	// ErrUnknownRevision: a revision the user typed does not name a commit.
	ErrUnknownRevision = errors.New("unknown revision")
	// ErrNotRepository: no git repository at or above the path.
	ErrNotRepository = errors.New("not a git repository")
	// ErrMissingObject: an object the history refers to is not stored here.
	ErrMissingObject = errors.New("missing object")
	// ErrUnrelated: two commits share no ancestor.
	ErrUnrelated = errors.New("unrelated histories")
)

// ShallowError reports that an operation reached the boundary of a shallow
// clone: Commit's parents were not fetched.
type ShallowError struct {
	Op     string // what needed the history, e.g. "merge-base of a1b2c3d and main"
	Commit string // the boundary commit (full SHA)
}

func (e *ShallowError) Error() string {
	return fmt.Sprintf("%s needs history older than commit %s, but this clone is shallow and stops there; %s",
		e.Op, shortID(e.Commit), ShallowHint)
}

// Is makes errors.Is(err, ErrShallow) true.
func (e *ShallowError) Is(target error) bool { return target == ErrShallow }

// RevisionError reports a revision that does not resolve to a commit.
type RevisionError struct {
	Rev    string // as the user typed it
	Reason string // why, ending with what to do
}

func (e *RevisionError) Error() string {
	return fmt.Sprintf("revision %q: %s", e.Rev, e.Reason)
}

// Is makes errors.Is(err, ErrUnknownRevision) true.
func (e *RevisionError) Is(target error) bool { return target == ErrUnknownRevision }

// NotRepositoryError reports a path that is not inside a git repository.
type NotRepositoryError struct {
	Path string
}

func (e *NotRepositoryError) Error() string {
	return fmt.Sprintf("not a git repository: %q (nor any of its parent directories); run perfgate inside a git checkout or pass --repo PATH", e.Path)
}

// Is makes errors.Is(err, ErrNotRepository) true.
func (e *NotRepositoryError) Is(target error) bool { return target == ErrNotRepository }

// MissingObjectError reports an object that history refers to but the
// repository does not hold (a partial or damaged clone).
type MissingObjectError struct {
	ID      string // full SHA
	Kind    string // "commit", "tree", ...
	Shallow bool   // the repository is a shallow clone
}

func (e *MissingObjectError) Error() string {
	msg := fmt.Sprintf("%s %s is missing from this repository", e.Kind, shortID(e.ID))
	if e.Shallow {
		return msg + "; the clone is shallow: " + ShallowHint
	}
	return msg + "; the clone may be partial or damaged: run `git fetch` (or `git fsck` to check the repository)"
}

// Is makes errors.Is(err, ErrMissingObject) true.
func (e *MissingObjectError) Is(target error) bool { return target == ErrMissingObject }

func shortID(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// quoteList renders choices for an error message: "a", "b" or "c".
func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
