// Package gitrepo owns perfgate's access to git: opening the repository that
// contains a directory, resolving the revisions users type, and answering the
// history questions the gate and bisect ask (merge-base, ancestry,
// first-parent walks, the nearest ancestor that has results), the facts runs
// are labelled with (HEAD, branch, dirty working tree, commit subject), the
// info/exclude entry for .perfgate/, and temporary checkouts for bisect.
//
// # Performance
//
// It is built on go-git v5 — references, config, the index, the pack, delta,
// loose-object and commit-graph formats all come from go-git — but it does
// not use go-git's commit walks. go-git's Commit.MergeBase decodes every
// ancestor of both commits (O(history): on 10,000 commits about 2 s and
// 97 MB per call), and each object read through its filesystem storage costs
// 30-70 µs after a first read that loads every pack index into maps and
// builds an offset-to-hash index of the whole pack. Instead:
//
//   - odb.go memory-maps pack indexes and packs and binary-searches the .idx
//     in place, so opening costs O(1) and reading a commit is one inflate
//     (about 10 µs against go-git's 30-70 µs, see BenchmarkReadCommits);
//   - the commit-graph file or chain (objects/info/commit-graph,
//     objects/info/commit-graphs/), when git wrote one, gives parents, commit
//     dates and generation numbers without touching objects; commits newer
//     than the graph fall back to objects, and the graph is ignored where git
//     ignores it (shallow clones, grafts, core.commitGraph=false);
//   - MergeBase and IsAncestor are git's paint-down-to-common walk, ordered
//     by generation number then commit date, stopping once everything left
//     is below a common ancestor (IsAncestor also stops below the candidate's
//     generation), so they read the commits between the tips and the answer,
//     not the history; first-parent walks stop at the depth asked for.
//
// On a 10,000-commit repository a merge-base for a pull request 50 commits
// behind main costs well under a millisecond including Open, against 2-3 ms
// for `git merge-base` (a process start) and about 2 s for go-git; see
// bench_test.go for the numbers and how to reproduce them.
//
// perfgate keeps no index of its own commits: NearestMeasured reads at most
// max_distance commits (tens of microseconds each, less with a commit-graph)
// and asks the store about each, so an index would save nothing measurable,
// while a fresh CI clone would have to rebuild it every run.
//
// # Shallow clones
//
// A shallow clone (actions/checkout's default fetch-depth: 1) is detected
// from the shallow file. A walk that needs the parents of a boundary commit
// returns a *ShallowError (errors.Is(err, ErrShallow)) whose message says to
// set `fetch-depth: 0` on actions/checkout or run `git fetch --unshallow` /
// `git fetch --deepen=N`; a revision that is not in a shallow clone says the
// same. A merge-base found inside the fetched history is returned as git
// would (boundary commits act as roots). Missing objects in a full clone are
// a *MissingObjectError suggesting `git fetch` or `git fsck`; go-git's
// "object not found" never reaches the user.
//
// # Working tree
//
// Dirty compares the index with HEAD and the working tree with the index
// using the index's stat data, hashing only files whose stat data changed,
// like git status; untracked files do not count. The git CLI is used only as
// a fallback for indexes go-git cannot decode (split or sparse indexes), and
// to re-hash files whose content looks changed through their filters (Git
// LFS, eol attributes). TreeState identifies the working tree exactly: a
// hash over the content of every tracked change and every untracked file
// that is not ignored (listed by git status, or go-git without the CLI), so
// a dirty run can be matched with the tree it measured.
//
// go-git v5 has no `git worktree`. Materialize writes a commit's files into
// a new directory straight from the object database and makes it a small
// repository that borrows this one's objects through objects/info/alternates
// (detached HEAD, tags, a matching index), so build scripts that call git or
// setuptools-scm work there; the user's checkout, index and refs are never
// written.
//
// A Repo is safe for concurrent use; calls are serialized.
package gitrepo
