// Package store owns perfgate's history: every benchmark run, keyed by the
// commit it measured, in one bbolt file (.perfgate/history.db at the
// repository root by default) or in a PostgreSQL database (Open of a
// postgres:// URL; see postgres.go), and the JSONL interchange of that
// history (Export, Import). It knows nothing of git, where commits are
// opaque full object names given by the caller, nor of the ingest parsers:
// callers convert their results to Run.
//
// Store is one interface over two implementations (backend): boltStore,
// described below, and pgStore. Both pass one conformance suite
// (conformance_test.go). What follows describes the bbolt file.
//
// # Layout
//
// Schema v1 keeps one record per run in bucket "run", keyed by a 4-byte
// sequence number so that runs are appended and their pages packed. A
// record is compact binary: commits and ids as raw bytes, the time as 8
// bytes, and every name (benchmark, metric name, label key and value,
// format, file) interned in a dictionary ("str" and "str_id") as a small
// integer; a metric value is a short decimal (mantissa and exponent
// varints) when that is exact and shorter than the 8 bytes of its float64.
// Three indexes of flat composite keys make every lookup a cursor seek:
//
//	by_commit  commit + run id          -> seq   (ByCommit, ByCommits, Measured, duplicates)
//	by_bench   benchmark + commit + seq          (ByBenchmark, Commits, Benchmarks)
//	by_time    time + seq                        (Each, Export: time order, --since)
//
// Schema v2 adds bucket "record": the accepted changes and invalidated
// runs (see Record), keyed by record id. Bucket "meta" holds the schema
// version and the run count. Opening an older schema migrates it in one write transaction (see migrate.go);
// opening a newer one fails and says to upgrade perfgate.
//
// # Identity
//
// A run's id is derived from its content (ContentID), and Put stores a run
// only when no run with the same commit and id is stored, so re-ingesting
// an identical result is a no-op. "Identical" means every field but the
// id, except that the time counts only for runs that cannot be read again:
// a run of a command perfgate executed, or a result read from stdin or
// from no named file. Re-reading the same file later is therefore a no-op,
// while two repetitions with identical numbers at different times are two
// runs. Callers should record a stable file name (relative to the
// repository) so that the same file ingested from another directory is
// recognised. Import keeps the ids of the lines it reads; an id already
// stored with different content is bad input. The testbed, environment and
// working-tree hash are part of the identity when set; a run without them
// keeps the id it had before perfgate recorded them.
//
// # Transactions and locking
//
// Put is one write transaction: all of its runs or none. Import commits
// in batches (DefaultBatchSize runs), so memory stays bounded and a
// process killed mid-import leaves every committed batch; an import that
// meets a bad line deletes the runs its earlier batches added before it
// returns the error, so bad input stores nothing. Bulk (a first sync of
// an empty history) syncs the file to disk once at its end rather than
// after every transaction.
//
// bbolt locks the file for as long as it is open: exclusively for a
// writer, shared for readers. Open waits at most Options.Timeout for the
// lock, then fails with a *LockedError (errors.Is ErrLocked) naming the
// file, the process that holds it when Linux's /proc/locks tells, and what
// to do. Callers should open, do their work and Close promptly, readers
// with Options.ReadOnly.
//
// # Damage
//
// A damaged file (cut short, bytes flipped) is never a crash: Open checks
// bbolt's meta pages, the file's length and its free page list first, and
// every bbolt call runs with memory faults turned into panics and panics
// into a *DamagedError (errors.Is ErrDamaged) that says how to recover
// (see damage.go). Salvage writes every run still readable as JSONL.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

const (
	// SchemaVersion is the layout this package reads and writes.
	SchemaVersion = 2
	// DefaultTimeout is how long Open waits for the file lock when
	// Options.Timeout is zero.
	DefaultTimeout = 10 * time.Second
	// DefaultBatchSize is the number of runs Import commits per write
	// transaction.
	DefaultBatchSize = 2000
	// allocSize is how much the file grows at a time once it is larger
	// than that (bbolt's default, 16 MiB, wastes up to that much).
	allocSize = 2 << 20
)

var (
	// ErrLocked is matched by the error Open returns when another process
	// holds the history's lock for longer than the timeout.
	ErrLocked = errors.New("history is locked by another process")
	// ErrReadOnly is returned by writes to a store opened read-only.
	ErrReadOnly = errors.New("history is open read-only")
	// ErrSchema is matched by the error Open returns for a history written
	// by a newer perfgate.
	ErrSchema = errors.New("unsupported history schema")
)

// Options configure Open.
type Options struct {
	// Timeout bounds the wait for the file lock: zero means
	// DefaultTimeout, a negative value means do not wait.
	Timeout time.Duration
	// ReadOnly opens the history for reading, sharing the file with other
	// readers. The file must exist.
	ReadOnly bool
	// Repository names the repository whose history this is. A bbolt
	// file holds one repository's history and ignores it; in PostgreSQL,
	// where one database holds many, every run is stored with it and
	// every query is scoped by it.
	Repository string
	// NoMigrate makes a PostgreSQL open fail (ErrNeedsMigration) rather
	// than create or upgrade the schema: see Migrate.
	NoMigrate bool
	// NoEnvCredentials opens a PostgreSQL URL that came from a source the
	// environment's credentials must not follow (a pull request's own
	// rules file): only a password in the URL itself is sent, never
	// PGPASSWORD's nor ~/.pgpass's.
	NoEnvCredentials bool
	// Warn receives, once each, the rows of a PostgreSQL history that
	// are left out because they are no valid run or record (a database
	// is written by more hands than perfgate's); nil: they are left out
	// silently.
	Warn func(msg string)
}

// boltStore is an open bbolt history. Its methods are safe for concurrent use.
type boltStore struct {
	db       *bolt.DB
	path     string
	readOnly bool
	d        *dict
	now      func() time.Time
}

// LockedError is returned by Open when the lock wait timed out.
type LockedError struct {
	Path    string
	Timeout time.Duration
	PID     int    // the process holding the lock, 0 when unknown
	Command string // its command line, when known
}

func (e *LockedError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = fmt.Sprintf("another process (pid %d", e.PID)
		if e.Command != "" {
			holder += ": " + e.Command
		}
		holder += ")"
	}
	waited := "did not wait for it"
	if e.Timeout > time.Millisecond {
		waited = "gave up waiting for it after " + e.Timeout.String()
	}
	return fmt.Sprintf("history %s is in use by %s; %s: wait until that perfgate command finishes and retry (PERFGATE_LOCK_TIMEOUT=2m waits longer), or pass --db (or set PERFGATE_DB) to use another history file",
		e.Path, holder, waited)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// openBolt opens the bbolt history at path, creating it and its directory unless
// opts.ReadOnly. It waits at most opts.Timeout for the file lock, then
// returns a *LockedError. A history written with an older schema is
// migrated (which needs write access once); a newer one is an error
// matching ErrSchema.
func openBolt(path string, opts Options) (*boltStore, error) {
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 0 {
		timeout = time.Nanosecond // bbolt waits forever on 0; this tries once
	}
	if opts.ReadOnly {
		fi, err := os.Stat(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("history %s does not exist: ingest or import results first, or pass --db (or set PERFGATE_DB) to name another history: %w", path, fs.ErrNotExist)
			}
			return nil, fmt.Errorf("open history: %w", err)
		}
		if fi.Size() == 0 {
			// An empty file (its creation was cut short): bbolt cannot
			// read it before a writer sets it up.
			if err := setUp(path, timeout, -1); err != nil {
				return nil, err
			}
		}
	} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history %s: cannot create its directory (%v): pass --db (or set PERFGATE_DB) to a path in a writable directory", path, unwrapPath(err))
	}
	s, version, err := open(path, timeout, opts.ReadOnly)
	if err != nil {
		return nil, err
	}
	if version == SchemaVersion {
		return s, nil
	}
	if !opts.ReadOnly {
		if err := s.migrate(version); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	// A reader of an old or uninitialised history: upgrade it once with a
	// writer, then read.
	s.Close()
	if err := setUp(path, timeout, version); err != nil {
		return nil, err
	}
	s, version, err = open(path, timeout, true)
	if err != nil {
		return nil, err
	}
	if version != SchemaVersion {
		s.Close()
		return nil, fmt.Errorf("history %s still has schema v%d after its upgrade", path, version)
	}
	return s, nil
}

// setUp opens the history at path for writing once, which creates or
// migrates its layout, for a reader of a file with schema version (-1:
// empty).
func setUp(path string, timeout time.Duration, version int) error {
	w, err := openBolt(path, Options{Timeout: timeout})
	if err != nil {
		if errors.Is(err, ErrLocked) || errors.Is(err, ErrDamaged) {
			return err
		}
		what := fmt.Sprintf("has schema v%d", version)
		if version < 0 {
			what = "is empty"
		}
		return fmt.Errorf("history %s %s and perfgate needs write access once to set it up with schema v%d: %w", path, what, SchemaVersion, err)
	}
	return w.Close()
}

// open opens the bbolt file and reads its schema version (-1: empty).
// A damaged file is an error matching ErrDamaged (see damage.go).
func open(path string, timeout time.Duration, readOnly bool) (*boltStore, int, error) {
	if err := checkFile(path); err != nil {
		return nil, 0, err
	}
	db, err := boltOpen(path, &bolt.Options{
		Timeout:      timeout,
		ReadOnly:     readOnly,
		FreelistType: bolt.FreelistMapType,
	})
	if err != nil {
		return nil, 0, openError(path, timeout, err)
	}
	db.AllocSize = allocSize
	s := &boltStore{db: db, path: path, readOnly: readOnly, d: newDict(), now: time.Now}
	var version int
	err = guard(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			var err error
			version, err = schemaOf(tx)
			return err
		})
	})
	if err == nil && version > SchemaVersion {
		err = fmt.Errorf("history %s has schema v%d, newer than this perfgate understands (v%d): upgrade perfgate, or pass --db to use another history: %w",
			path, version, SchemaVersion, ErrSchema)
	}
	if err != nil {
		db.Close()
		return nil, 0, err
	}
	return s, version, nil
}

func openError(path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, ErrDamaged):
		return err
	case errors.Is(err, berrors.ErrIncompatibleValue):
		return &DamagedError{Path: path, Detail: "a bucket's entry is damaged: " + err.Error()}
	case errors.Is(err, berrors.ErrChecksum):
		return &DamagedError{Path: path, Detail: err.Error()}
	case errors.Is(err, berrors.ErrTimeout):
		pid, cmd := lockHolder(path)
		return &LockedError{Path: path, Timeout: timeout, PID: pid, Command: cmd}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch):
		return fmt.Errorf("history %s is not a perfgate history or is damaged (%v): pass --db to name the right file, or move this one away to start a new history", path, err)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("history %s: permission denied: make it writable, or pass --db (or set PERFGATE_DB) to a history in a writable directory: %w", path, err)
	}
	return fmt.Errorf("open history %s: %w", path, err)
}

// unwrapPath drops the operation and path of an *fs.PathError, which the
// message already names: "not a directory" rather than "mkdir x: not a
// directory".
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// schemaOf returns the schema version of an open file: -1 when it holds
// no buckets (new), 0 for the legacy layout.
func schemaOf(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if tx.Bucket(bucketLegacyRuns) != nil {
			return 0, nil
		}
		var names []string
		tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			names = append(names, string(name))
			return nil
		})
		if len(names) == 0 {
			return -1, nil
		}
		return 0, fmt.Errorf("history %s holds buckets perfgate does not know (%s): it is not a perfgate history; pass --db to name the right file",
			tx.DB().Path(), strings.Join(names, ", "))
	}
	v, n := binary.Uvarint(meta.Get(metaSchema))
	if n <= 0 {
		return 0, corruptf("%s has no schema version", tx.DB().Path())
	}
	return int(v), nil
}

// Path returns the file name the store was opened with.
func (s *boltStore) Path() string { return s.path }

// Close releases the file and its lock.
func (s *boltStore) Close() error { return guard(s.path, s.db.Close) }

// view runs fn in a read transaction, under guard.
func (s *boltStore) view(fn func(t *txn) error) error {
	return guard(s.path, func() error {
		return s.db.View(func(tx *bolt.Tx) error {
			t, err := newTxn(tx, s.d)
			if err != nil {
				return err
			}
			return fn(t)
		})
	})
}

// update runs fn in a write transaction.
func (s *boltStore) update(fn func(t *txn) error) error {
	if s.readOnly {
		return fmt.Errorf("write to history %s: %w", s.path, ErrReadOnly)
	}
	var t *txn
	err := guard(s.path, func() error {
		return s.db.Update(func(tx *bolt.Tx) error {
			var err error
			if t, err = newTxn(tx, s.d); err != nil {
				return err
			}
			if err := fn(t); err != nil {
				return err
			}
			return t.flushCount()
		})
	})
	if err == nil {
		t.commitPending()
	}
	return err
}

// Put stores runs in one write transaction: all of them, or none when an
// error is returned. It stamps a zero Time with the current time and sets
// each run's ID (in place) when it is empty. A run whose commit and id are
// already stored with the same content is skipped (see the package doc);
// added counts the others.
func (s *boltStore) Put(runs []Run) (added int, err error) {
	if s.readOnly {
		return 0, fmt.Errorf("write to history %s: %w", s.path, ErrReadOnly)
	}
	now := s.now()
	for i := range runs {
		if err := prepare(&runs[i], now); err != nil {
			return 0, runError(runs, i, err)
		}
	}
	err = s.update(func(t *txn) error {
		added = 0
		if err := t.internAll(runs); err != nil {
			return err
		}
		for i := range runs {
			ok, _, err := t.put(&runs[i])
			if err != nil {
				return runError(runs, i, err)
			}
			if ok {
				added++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

func runError(runs []Run, i int, err error) error {
	r := &runs[i]
	return fmt.Errorf("run %d of %d (benchmark %q, commit %q): %w", i+1, len(runs), r.Benchmark, r.Commit, err)
}

// put stores one prepared run unless it is a duplicate; it returns whether
// the run was added and its sequence number.
func (t *txn) put(r *Run) (bool, uint64, error) {
	ck := appendCommitKey(t.scratch[:0], r.Commit)
	ckLen := len(ck)
	key := appendHex(ck, r.ID)
	t.scratch = key
	if v := t.byCommit.Get(key); v != nil {
		old, err := t.runAt(v)
		if err != nil {
			return false, 0, err
		}
		if equalIdentity(&old, r) {
			return false, 0, nil
		}
		return false, 0, badf("run id %s is already stored for this commit with different content (benchmark %q, time %s); ids follow from content, so this id was edited or copied: remove the \"id\" field and perfgate derives one",
			r.ID, old.Benchmark, old.Time.Format(time.RFC3339))
	}
	seq, err := t.run.NextSequence()
	if err != nil {
		return false, 0, err
	}
	if seq > math.MaxUint32 {
		return false, 0, fmt.Errorf("history %s holds the most runs it can (%d were ever stored); export the runs you need and import them into a new history", t.tx.DB().Path(), uint64(math.MaxUint32))
	}
	commitKey := t.keep(key)
	seqKey := t.keep(appendSeq(nil, seq))
	rec, bench, err := t.encodeNew(r)
	if err != nil {
		return false, 0, err
	}
	if err := t.run.Put(seqKey, t.keep(rec)); err != nil {
		return false, 0, err
	}
	if err := t.byCommit.Put(commitKey, seqKey); err != nil {
		return false, 0, err
	}
	bk := t.alloc(4 + ckLen + seqLen)
	binary.BigEndian.PutUint32(bk, bench)
	copy(bk[4:], commitKey[:ckLen])
	copy(bk[4+ckLen:], seqKey)
	if err := t.byBench.Put(bk, []byte{}); err != nil {
		return false, 0, err
	}
	tk := t.alloc(8 + seqLen)
	appendSeq(appendTime(tk[:0], r.Time), seq)
	if err := t.byTime.Put(tk, []byte{}); err != nil {
		return false, 0, err
	}
	t.added++
	return true, seq, nil
}

// encodeNew encodes a run to store, interning the strings the dictionary
// lacks in sorted order first (see internAll). Most runs repeat known
// strings: the first try only looks them up. The record is valid until
// the next call.
func (t *txn) encodeNew(r *Run) ([]byte, uint32, error) {
	t.lookupOnly = true
	rec, bench, err := t.encodeRun(t.rec[:0], r)
	t.lookupOnly = false
	if err == errFresh {
		if err := t.internFresh(t.appendFresh(t.fresh[:0], r)); err != nil {
			return nil, 0, err
		}
		rec, bench, err = t.encodeRun(t.rec[:0], r)
	}
	if err != nil {
		return nil, 0, err
	}
	t.rec = rec
	return rec, bench, nil
}

// deleteSeq removes the run with sequence number seq and its index entries.
func (t *txn) deleteSeq(seq uint64) error {
	sk := appendSeq(nil, seq)
	rec := t.run.Get(sk)
	if rec == nil {
		return nil
	}
	r, err := t.decodeRun(rec)
	if err != nil {
		return err
	}
	bench, _, err := t.lookupID(r.Benchmark)
	if err != nil {
		return err
	}
	ck := appendCommitKey(nil, r.Commit)
	bk := binary.BigEndian.AppendUint32(nil, bench)
	bk = append(append(bk, ck...), sk...)
	for _, del := range []struct {
		b   interface{ Delete([]byte) error }
		key []byte
	}{
		{t.byCommit, appendHex(ck, r.ID)},
		{t.byBench, bk},
		{t.byTime, appendSeq(appendTime(nil, r.Time), seq)},
		{t.run, sk},
	} {
		if err := del.b.Delete(del.key); err != nil {
			return err
		}
	}
	t.added--
	return nil
}

// flushCount adds the transaction's net additions to the run count.
func (t *txn) flushCount() error {
	if t.added == 0 {
		return nil
	}
	n, _ := binary.Uvarint(t.meta.Get(metaRuns))
	n = uint64(int64(n) + int64(t.added))
	return t.meta.Put(metaRuns, binary.AppendUvarint(nil, n))
}

// runAt decodes the run a seq value of an index points at.
func (t *txn) runAt(seq []byte) (Run, error) {
	if len(seq) != seqLen {
		return Run{}, corruptf("index entry has a %d-byte run reference", len(seq))
	}
	rec := t.run.Get(seq)
	if rec == nil {
		return Run{}, corruptf("index refers to missing run %d", seqOf(seq))
	}
	return t.decodeRun(rec)
}

// Len returns the number of runs stored.
func (s *boltStore) Len() (int, error) {
	var n uint64
	err := s.view(func(t *txn) error {
		n, _ = binary.Uvarint(t.meta.Get(metaRuns))
		return nil
	})
	return int(n), err
}

// sortRuns orders runs by time, then id.
func sortRuns(runs []Run) {
	slices.SortFunc(runs, func(a, b Run) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
