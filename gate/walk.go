package gate

import (
	"context"
	"fmt"
)

// defaultMaxWalk bounds how many first-parent commits a check or a history
// reads when results are sparse.
const defaultMaxWalk = 5000

// keyed is a sample with its series key computed once.
type keyed struct {
	key string
	s   *Sample
}

// walker pages through a first-parent chain, newest first, and the
// results of its commits, fetching both in batches as far as asked.
type walker struct {
	g        Graph
	h        History
	id       identity
	start    string
	max      int
	commits  []Commit
	samples  map[string][]keyed
	bySeries map[string][]indexed // series key -> its samples, in walk order
	done     bool                 // the chain ended
}

// indexed is a sample with the walk index of its commit.
type indexed struct {
	idx int
	s   *Sample
}

func newWalker(g Graph, h History, id identity, start string, max int) *walker {
	if max <= 0 {
		max = defaultMaxWalk
	}
	return &walker{g: g, h: h, id: id, start: start, max: max, samples: map[string][]keyed{}, bySeries: map[string][]indexed{}}
}

// capped reports whether the walk can go no further.
func (w *walker) capped() bool { return w.done || len(w.commits) >= w.max }

// extend makes at least n commits available (fewer when the chain ends or
// the walk is capped).
func (w *walker) extend(ctx context.Context, n int) error {
	n = min(n, w.max)
	for !w.done && len(w.commits) < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		var page []Commit
		if len(w.commits) == 0 {
			cs, err := w.g.FirstParents(w.start, n)
			if err != nil {
				return fmt.Errorf("walking first parents from %s: %w", shortSHA(w.start), err)
			}
			if len(cs) < n {
				w.done = true
			}
			page = cs
		} else {
			last := w.commits[len(w.commits)-1].SHA
			want := n - len(w.commits) + 1
			cs, err := w.g.FirstParents(last, want)
			if err != nil {
				return fmt.Errorf("walking first parents from %s: %w", shortSHA(last), err)
			}
			if len(cs) < want {
				w.done = true
			}
			if len(cs) > 0 && cs[0].SHA == last {
				cs = cs[1:]
			}
			page = cs
		}
		if len(page) == 0 {
			w.done = true
			break
		}
		shas := make([]string, len(page))
		for i, c := range page {
			shas[i] = c.SHA
		}
		got, err := w.h.Samples(shas)
		if err != nil {
			return fmt.Errorf("reading stored results: %w", err)
		}
		for j, sha := range shas {
			ss := got[sha]
			ks := make([]keyed, len(ss))
			for i := range ss {
				k := w.id.key(&ss[i])
				ks[i] = keyed{key: k, s: &ss[i]}
				w.bySeries[k] = append(w.bySeries[k], indexed{idx: len(w.commits) + j, s: &ss[i]})
			}
			w.samples[sha] = ks
		}
		w.commits = append(w.commits, page...)
	}
	return nil
}
