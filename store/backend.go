package store

import (
	"io"
	"strconv"
	"strings"
	"time"
)

// backend is one implementation of the history: the bbolt file
// (boltStore) or a PostgreSQL database (pgStore). Store forwards to it;
// what is built on these primitives (Export, HasCommit) is written once,
// on Store.
type backend interface {
	Path() string
	Close() error
	Put(runs []Run) (added int, err error)
	clock() time.Time
	MergeValid(runs []Valid, bad func(i int, err error)) (added int, err error)
	Import(r io.Reader, opts ImportOptions) (added, skipped int, err error)
	Bulk(fn func() error) error
	Len() (int, error)
	ByCommit(commit string) ([]Run, error)
	ByCommits(commits []string) (map[string][]Run, error)
	ByBenchmark(benchmark string, commits []string) (map[string][]Run, error)
	Measured(benchmark string, commits []string) (map[string]int, error)
	Commits(benchmark string) ([]string, error)
	Benchmarks() ([]string, error)
	Each(f Filter, fn func(Run) error) error
	PutRecords(recs []Record) (added int, err error)
	Records() ([]Record, error)
	FindRuns(id string) ([]RunKey, error)
	LastSeq() (uint64, error)
	EachSeq(from, to uint64, fn func(seq uint64, r Run) error) error
	Mark(key string) ([]byte, error)
	SetMark(key string, value []byte) error
	Known(keys []RunKey) ([]bool, error)
	repositories() ([]Repository, error)
	hasRuns() (bool, error)
	scope(repository string) (backend, error)
	firstMeasured(limit int) ([]CommitTime, error)
	commitSeqs(commit string) (map[string]uint64, error)
}

// CommitSeqs returns the sequence number of each run of a commit, by run
// id: the order in which this history stored them (histsync tells by it
// which runs a sync brought from the history branch).
func (s *Store) CommitSeqs(commit string) (map[string]uint64, error) { return s.commitSeqs(commit) }

// Store is an open history, in a bbolt file or in PostgreSQL (see Open).
// Its methods are safe for concurrent use.
type Store struct {
	backend
}

// IsPostgres reports whether path names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than a bbolt file.
func IsPostgres(path string) bool {
	p := strings.ToLower(path)
	return strings.HasPrefix(p, "postgres://") || strings.HasPrefix(p, "postgresql://")
}

// CheckPath returns an error matching ErrBadInput when path looks like a
// URL (it holds "://") but is not a PostgreSQL one: a mistyped scheme
// (postgress://, postgre://, mysql://) would otherwise become a bbolt
// file in a directory named after the scheme. source names where the
// path came from (--db, PERFGATE_DB, db: in a rules file). The message
// never holds the URL's password.
func CheckPath(path, source string) error {
	i := strings.Index(path, "://")
	if i < 0 || IsPostgres(path) {
		return nil
	}
	shown := redactURL(path)
	return badf("history %s (%s) is neither a file path nor a PostgreSQL URL: only postgres:// and postgresql:// name a database server (did you mean %s?); a history file's path holds no \"://\"",
		strconv.Quote(shown), source, strconv.Quote(redactURL("postgres://"+path[i+3:])))
}

// Open opens the history at path: a PostgreSQL database when path is a
// postgres:// or postgresql:// URL (see openPostgres), else the bbolt
// file at path, creating it and its directory unless opts.ReadOnly. It
// waits at most opts.Timeout for the file lock, then returns a
// *LockedError. A history written with an older schema is migrated
// (which needs write access once); a newer one is an error matching
// ErrSchema.
func Open(path string, opts Options) (*Store, error) {
	if err := CheckPath(path, "history path"); err != nil {
		return nil, err
	}
	if IsPostgres(path) {
		s, err := openPostgres(path, opts)
		if err != nil {
			return nil, err
		}
		return &Store{s}, nil
	}
	s, err := openBolt(path, opts)
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

// Merge stores runs in one write transaction, like Put, except that a run
// that is not valid, or whose id is stored with different content, is
// left out and reported to bad (with its index) instead of failing the
// whole call. The error is the store's own (I/O, a damaged file).
func (s *Store) Merge(runs []Run, bad func(i int, err error)) (added int, err error) {
	now := s.clock()
	valid := make([]Valid, len(runs))
	for i := range runs {
		if err := prepare(&runs[i], now); err != nil {
			bad(i, err)
			continue
		}
		valid[i].run = runs[i]
	}
	return s.MergeValid(valid, bad)
}

// bolt returns the bbolt implementation, or nil for PostgreSQL.
func (s *Store) bolt() *boltStore {
	b, _ := s.backend.(*boltStore)
	return b
}
