package runner

import (
	"github.com/perfgate/perfgate/store"
)

// Saver writes runs to the history. It opens (and so locks) the history
// only for the write, never across benchmark time: a perfgate sync or
// check that holds it meanwhile delays nothing.
type Saver struct {
	// Open opens the history for writing.
	Open func() (*store.Store, error)
}

// Save stores runs in one transaction and returns how many were new.
func (s *Saver) Save(runs []store.Run) (added int, err error) {
	st, err := s.Open()
	if err != nil {
		return 0, err
	}
	added, err = st.Put(runs)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return added, err
}
