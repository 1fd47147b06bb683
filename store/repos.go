package store

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// A PostgreSQL history holds many repositories' runs, each row scoped by
// its repository (Options.Repository); a bbolt file holds one
// repository's. Repositories lists what a database holds, Scope opens
// another repository's history over the same connections (a dashboard
// of several), and FirstMeasured orders a repository's commits without
// git, by when they were first measured.

// Repository is one repository of a shared history.
type Repository struct {
	Name string    `json:"name"`
	Runs int       `json:"runs"`
	Last time.Time `json:"last_measured"` // the newest run's time
}

// CommitTime is a commit and when its first run was measured.
type CommitTime struct {
	Commit string
	First  time.Time
}

// Repositories lists the repositories that have runs in the history,
// sorted by name. A bbolt file holds one repository and has no names:
// it is an error matching ErrBadInput that says so.
func (s *Store) Repositories() ([]Repository, error) { return s.repositories() }

// HasRuns reports whether the history holds a run of its repository (of
// Options.Repository in PostgreSQL; of the file's one repository in
// bbolt).
func (s *Store) HasRuns() (bool, error) { return s.hasRuns() }

// Scope returns the history of another repository of the same database,
// sharing its connections: closing it closes nothing, the Store it came
// from stays the owner. A bbolt file holds one repository: an error
// matching ErrBadInput.
func (s *Store) Scope(repository string) (*Store, error) {
	if strings.TrimSpace(repository) == "" {
		return nil, badf("the repository name is empty; name a repository of the history, e.g. github.com/org/engine")
	}
	b, err := s.scope(repository)
	if err != nil {
		return nil, err
	}
	return &Store{b}, nil
}

// FirstMeasured returns the repository's commits that have runs, each
// with the time of its earliest run, oldest first (ties by commit id),
// at most the newest limit of them (all when limit <= 0). It orders a
// history whose git repository is not at hand: for a history measured
// as commits land (nightly, or on every push to the branch) it is the
// branch's order; a commit measured long after it was made (a backfill)
// sorts where it was measured.
func (s *Store) FirstMeasured(limit int) ([]CommitTime, error) { return s.firstMeasured(limit) }

func oneRepository(path string) error {
	return badf("history %s is a bbolt file, which holds one repository's runs; several repositories share a PostgreSQL history (--db postgres://USER@HOST/DB, see docs/postgres.md)", path)
}

func (s *boltStore) repositories() ([]Repository, error) { return nil, oneRepository(s.path) }

func (s *boltStore) scope(string) (backend, error) { return nil, oneRepository(s.path) }

func (s *boltStore) hasRuns() (bool, error) {
	found := false
	err := s.Each(Filter{}, func(Run) error {
		found = true
		return errFound
	})
	if errors.Is(err, errFound) {
		err = nil
	}
	return found, err
}

// errFound stops a walk at its first run.
var errFound = errors.New("found")

// firstMeasured reads every run once (Each is in time order).
func (s *boltStore) firstMeasured(limit int) ([]CommitTime, error) {
	first := map[string]time.Time{}
	err := s.Each(Filter{}, func(r Run) error {
		if _, ok := first[r.Commit]; !ok {
			first[r.Commit] = r.Time
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]CommitTime, 0, len(first))
	for c, t := range first {
		out = append(out, CommitTime{c, t})
	}
	sortCommitTimes(out)
	if limit > 0 && len(out) > limit {
		out = out[len(out)-limit:]
	}
	return out, nil
}

func sortCommitTimes(cs []CommitTime) {
	slices.SortFunc(cs, func(a, b CommitTime) int {
		if c := a.First.Compare(b.First); c != 0 {
			return c
		}
		return strings.Compare(a.Commit, b.Commit)
	})
}

func (s *pgStore) scope(repository string) (backend, error) {
	v := *s
	v.repo, v.view = repository, true
	return &v, nil
}

func (s *pgStore) repositories() ([]Repository, error) {
	rows, err := s.pool.Query(context.Background(), `SELECT repository, count(*), max(time_ns) FROM perfgate_runs GROUP BY repository ORDER BY repository COLLATE "C"`)
	if err != nil {
		return nil, s.fail("list repositories", err)
	}
	var out []Repository
	var r Repository
	var ns int64
	_, err = pgx.ForEachRow(rows, []any{&r.Name, &r.Runs, &ns}, func() error {
		r.Last = time.Unix(0, ns).UTC()
		out = append(out, r)
		return nil
	})
	return out, s.fail("list repositories", err)
}

func (s *pgStore) hasRuns() (bool, error) {
	var ok bool
	err := s.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM perfgate_runs WHERE repository = $1)`, lookup, s.repo).Scan(&ok)
	return ok, s.fail("look up runs", err)
}

func (s *pgStore) firstMeasured(limit int) ([]CommitTime, error) {
	q := `SELECT commit, min(time_ns) AS t FROM perfgate_runs WHERE repository = $1 GROUP BY commit ORDER BY t DESC, commit COLLATE "C" DESC`
	args := []any{s.repo}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := s.pool.Query(context.Background(), q, args...)
	if err != nil {
		return nil, s.fail("list commits", err)
	}
	var out []CommitTime
	var c string
	var ns int64
	_, err = pgx.ForEachRow(rows, []any{&c, &ns}, func() error {
		out = append(out, CommitTime{c, time.Unix(0, ns).UTC()})
		return nil
	})
	if err != nil {
		return nil, s.fail("list commits", err)
	}
	slices.Reverse(out)
	return out, nil
}
