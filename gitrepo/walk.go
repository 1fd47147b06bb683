package gitrepo

import (
	"container/heap"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// Walk flags, as in git's commit-reach.c.
const (
	flagP1 uint8 = 1 << iota
	flagP2
	flagStale
	flagResult
)

// MergeBase returns the best common ancestor of two commits, the one
// `git merge-base A B` prints: when criss-cross merges leave several, the
// most recently committed. Commits without a common ancestor give an error
// wrapping ErrUnrelated.
//
// The walk is git's paint-down-to-common: it visits commits in generation
// (commit-graph) or commit-date order from both sides and stops once every
// commit left to visit lies below a common ancestor, so it reads only the
// commits between the two tips and their merge-base.
func (r *Repo) MergeBase(a, b string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, err := r.resolvePair(a, b)
	if err != nil {
		return "", err
	}
	op := fmt.Sprintf("merge-base of %q and %q", a, b)
	bases, err := r.mergeBases(ids[0], ids[1], op)
	if err != nil {
		return "", err
	}
	if len(bases) == 0 {
		return "", fmt.Errorf("%q and %q have no common ancestor: %w; compare commits from the same history", a, b, ErrUnrelated)
	}
	return bases[0].String(), nil
}

// IsAncestor reports whether commit a is an ancestor of commit b (a commit
// is its own ancestor), as `git merge-base --is-ancestor A B`.
func (r *Repo) IsAncestor(a, b string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, err := r.resolvePair(a, b)
	if err != nil {
		return false, err
	}
	return r.isAncestor(ids[0], ids[1], fmt.Sprintf("checking whether %q is an ancestor of %q", a, b))
}

// FirstParentAncestors returns up to n commits of the first-parent chain
// that starts at rev: rev itself (distance 0), its first parent (distance
// 1), and so on, newest first; fewer when the history ends. When a shallow
// clone's boundary cuts the chain short, it returns the commits it has and
// a *ShallowError.
func (r *Repo) FirstParentAncestors(rev string, n int) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.resolve(rev)
	if err != nil {
		return nil, err
	}
	op := fmt.Sprintf("listing %d first-parent ancestors of %q", n, rev)
	var out []string
	for len(out) < n {
		c, err := r.commitNode(id, plumbing.ZeroHash, op)
		if err != nil {
			return out, err
		}
		out = append(out, id.String())
		if len(out) == n || len(c.parents) == 0 {
			break
		}
		if _, err := r.commitNode(c.parents[0], id, op); err != nil {
			return out, err
		}
		id = c.parents[0]
	}
	return out, nil
}

// NearestMeasured walks the first-parent chain from rev (distance 0) up to
// maxDistance commits back and returns the first commit for which has
// reports true, with its distance. It returns "", -1 and a nil error when no
// commit within reach has results (or the history ends first), and a
// *ShallowError when a shallow clone's boundary comes first. has receives
// full SHAs; it runs while the Repo is locked, so it must not call the Repo.
func (r *Repo) NearestMeasured(rev string, maxDistance int, has func(sha string) bool) (string, int, error) {
	if maxDistance < 0 {
		return "", -1, fmt.Errorf("max distance %d is negative; use 0 to consider only %q itself", maxDistance, rev)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.resolve(rev)
	if err != nil {
		return "", -1, err
	}
	op := fmt.Sprintf("looking for a measured commit within %d first-parent commits of %q", maxDistance, rev)
	for d := 0; ; d++ {
		sha := id.String()
		if has(sha) {
			return sha, d, nil
		}
		if d == maxDistance {
			return "", -1, nil
		}
		c, err := r.commitNode(id, plumbing.ZeroHash, op)
		if err != nil {
			return "", -1, err
		}
		if len(c.parents) == 0 {
			return "", -1, nil
		}
		if _, err := r.commitNode(c.parents[0], id, op); err != nil {
			return "", -1, err
		}
		id = c.parents[0]
	}
}

// FirstParents returns the commits bisect searches between good and bad:
// bad's first-parent chain, oldest first, from the commit after the last
// one that good already contains, up to and including bad. When good lies
// on that chain these are the commits good..bad along first parents; when
// good is on a merged branch the chain stops at the first commit good
// contains. good must be an ancestor of bad.
func (r *Repo) FirstParents(good, bad string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, err := r.resolvePair(good, bad)
	if err != nil {
		return nil, err
	}
	g, b := ids[0], ids[1]
	op := fmt.Sprintf("listing the first-parent commits from %q to %q", good, bad)
	ok, err := r.isAncestor(g, b, op)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("good commit %q (%s) is not an ancestor of bad commit %q (%s); pick a good commit older than the bad one on the same history",
			good, shortID(g.String()), bad, shortID(b.String()))
	}
	// Usually good lies on bad's first-parent chain: walk down to it while
	// the chain is not older than good, O(length).
	if chain, ok, err := r.chainTo(b, g, op); err != nil {
		return nil, err
	} else if ok {
		return chain, nil
	}
	// good is on a merged branch (or commit dates are skewed): stop at the
	// first chain commit good contains.
	var chain []string
	for id := b; ; {
		if id == g {
			break
		}
		contained, err := r.isAncestor(id, g, op)
		if err != nil {
			return nil, err
		}
		if contained {
			break
		}
		chain = append(chain, id.String())
		c, err := r.commitNode(id, plumbing.ZeroHash, op)
		if err != nil {
			return nil, err
		}
		if len(c.parents) == 0 {
			// good is reachable only through a merged branch whose
			// history joined after this root: nothing older to search.
			break
		}
		if _, err := r.commitNode(c.parents[0], id, op); err != nil {
			return nil, err
		}
		id = c.parents[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// chainTo walks b's first-parent chain down to g and returns the commits
// after g up to b, oldest first. It gives up (ok false) at the first chain
// commit older than g or at the root.
func (r *Repo) chainTo(b, g plumbing.Hash, op string) (chain []string, ok bool, err error) {
	gn, err := r.commitNode(g, plumbing.ZeroHash, op)
	if err != nil {
		return nil, false, err
	}
	for id := b; id != g; {
		c, err := r.commitNode(id, plumbing.ZeroHash, op)
		if err != nil {
			return nil, false, err
		}
		if c.time < gn.time || len(c.parents) == 0 {
			return nil, false, nil
		}
		chain = append(chain, id.String())
		if _, err := r.commitNode(c.parents[0], id, op); err != nil {
			return nil, false, err
		}
		id = c.parents[0]
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, true, nil
}

func (r *Repo) resolvePair(a, b string) ([2]plumbing.Hash, error) {
	var out [2]plumbing.Hash
	var err error
	if out[0], err = r.resolve(a); err != nil {
		return out, err
	}
	out[1], err = r.resolve(b)
	return out, err
}

// mergeBases is git's get_merge_bases: paint down, keep results that did
// not become stale, and drop any result that is an ancestor of another.
func (r *Repo) mergeBases(a, b plumbing.Hash, op string) ([]plumbing.Hash, error) {
	if a == b {
		return []plumbing.Hash{a}, nil
	}
	one, err := r.commitNode(a, plumbing.ZeroHash, op)
	if err != nil {
		return nil, err
	}
	two, err := r.commitNode(b, plumbing.ZeroHash, op)
	if err != nil {
		return nil, err
	}
	results, boundary, err := r.paintDown(one, two, 0, false, op)
	var list []plumbing.Hash
	for _, c := range results {
		if c.flags&flagStale == 0 {
			list = append(list, c.id)
		}
	}
	r.clearFlags()
	if err != nil {
		return nil, err
	}
	if len(list) == 0 && !boundary.IsZero() {
		return nil, &ShallowError{Op: op, Commit: boundary.String()}
	}
	if len(list) < 2 {
		return list, nil
	}
	var keep []plumbing.Hash
	for i, c := range list {
		redundant := false
		for j, d := range list {
			if i == j {
				continue
			}
			anc, err := r.isAncestor(c, d, op)
			if err != nil {
				return nil, err
			}
			if anc {
				redundant = true
				break
			}
		}
		if !redundant {
			keep = append(keep, c)
		}
	}
	return keep, nil
}

// isAncestor is git's repo_in_merge_bases: a generation cut-off first, then
// a paint-down that stops below a's generation.
func (r *Repo) isAncestor(a, b plumbing.Hash, op string) (bool, error) {
	if a == b {
		return true, nil
	}
	one, err := r.commitNode(a, plumbing.ZeroHash, op)
	if err != nil {
		return false, err
	}
	two, err := r.commitNode(b, plumbing.ZeroHash, op)
	if err != nil {
		return false, err
	}
	// A commit missing from the graph (infinite generation) is never an
	// ancestor of one in it: the graph is closed under parents.
	if one.gen > two.gen {
		return false, nil
	}
	_, boundary, err := r.paintDown(one, two, one.gen, true, op)
	found := one.flags&flagP2 != 0
	r.clearFlags()
	if err != nil {
		return false, err
	}
	if found {
		return true, nil
	}
	if !boundary.IsZero() {
		return false, &ShallowError{Op: op, Commit: boundary.String()}
	}
	return false, nil
}

// paintDown is git's paint_down_to_common. It paints one's ancestors P1 and
// two's P2, in generation-then-date order; a commit painted both is a merge
// base candidate whose ancestors are painted stale, and the walk ends when
// only stale commits are queued (or, with minGen > 0, when it passes below
// that generation). With stopAtOne it stops as soon as one is painted P2
// (one is an ancestor of two), which is all isAncestor needs.
//
// Shallow-boundary commits are treated as roots, as git does; boundary
// reports the first one the walk needed to go beyond while still looking
// for an answer, so callers can tell "no" from "not known in this clone".
// Results come newest commit first. Flags stay set until clearFlags.
func (r *Repo) paintDown(one, two *node, minGen uint64, stopAtOne bool, op string) (results []*node, boundary plumbing.Hash, err error) {
	w := &walker{r: r}
	w.paint(one, flagP1)
	w.push(one)
	w.paint(two, flagP2)
	w.push(two)
	for w.nonstale > 0 {
		c := w.pop()
		if minGen > 0 && c.gen < minGen {
			break
		}
		flags := c.flags & (flagP1 | flagP2 | flagStale)
		if flags == flagP1|flagP2 {
			if c.flags&flagResult == 0 {
				w.paint(c, flagResult)
				results = insertByDate(results, c)
			}
			flags |= flagStale
		}
		if len(c.parents) > 0 && r.shallow[c.id] {
			if flags&flagStale == 0 && boundary.IsZero() {
				boundary = c.id
			}
			continue
		}
		for _, ph := range c.parents {
			if p, ok := r.nodes[ph]; ok && p.flags&flags == flags {
				continue
			}
			p, err := r.commitNode(ph, c.id, op)
			if err != nil {
				return results, boundary, err
			}
			if p.flags&flags == flags {
				continue
			}
			w.paint(p, flags)
			w.push(p)
			if stopAtOne && p == one && one.flags&flagP2 != 0 {
				return results, boundary, nil
			}
		}
	}
	return results, boundary, nil
}

// insertByDate is git's commit_list_insert_by_date: newest first, equal
// dates in insertion order.
func insertByDate(list []*node, c *node) []*node {
	i := 0
	for i < len(list) && list[i].time >= c.time {
		i++
	}
	list = append(list, nil)
	copy(list[i+1:], list[i:])
	list[i] = c
	return list
}

func (r *Repo) clearFlags() {
	for _, n := range r.touched {
		n.flags, n.inQueue = 0, 0
	}
	r.touched = r.touched[:0]
}

// walker is the priority queue of a paint walk. It counts queued entries
// whose commit is not stale, so "is anything non-stale left" is O(1).
type walker struct {
	r        *Repo
	q        queue
	seq      int
	nonstale int
}

func (w *walker) paint(n *node, f uint8) {
	if n.flags == 0 {
		w.r.touched = append(w.r.touched, n)
	}
	if f&flagStale != 0 && n.flags&flagStale == 0 {
		w.nonstale -= int(n.inQueue)
	}
	n.flags |= f
}

func (w *walker) push(n *node) {
	w.seq++
	heap.Push(&w.q, entry{n, w.seq})
	n.inQueue++
	if n.flags&flagStale == 0 {
		w.nonstale++
	}
}

func (w *walker) pop() *node {
	e := heap.Pop(&w.q).(entry)
	e.n.inQueue--
	if e.n.flags&flagStale == 0 {
		w.nonstale--
	}
	return e.n
}

type entry struct {
	n   *node
	seq int
}

// queue orders by generation, then commit date, newest first, then
// insertion order (git's compare_commits_by_gen_then_commit_date).
type queue []entry

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	a, b := q[i].n, q[j].n
	if a.gen != b.gen {
		return a.gen > b.gen
	}
	if a.time != b.time {
		return a.time > b.time
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(entry)) }
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}
