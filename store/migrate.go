package store

import (
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Schema history.
//
//	v0  the prototype's layout: one bucket "runs", key the run id, value the
//	    run's JSONL line; no meta bucket, no indexes.
//	v1  this package's layout (see the package doc).
//	v2  adds bucket "record": accepted changes and invalidated runs
//	    (record.go). A perfgate that knows only v1 refuses the file (it
//	    would use invalidated runs as baselines).
//
// migrations[v] upgrades a history from schema v to v+1 within the write
// transaction that opened it; a failed migration changes nothing.
var migrations = []func(tx *bolt.Tx, d *dict) error{
	0: migrateV0,
	1: migrateV1,
}

// migrateV1 adds the record bucket of schema v2.
func migrateV1(tx *bolt.Tx, _ *dict) error {
	_, err := tx.CreateBucketIfNotExists(bucketRecord)
	return err
}

// bucketLegacyRuns is the only bucket of schema v0.
var bucketLegacyRuns = []byte("runs")

// migrate brings the file from schema version from (-1: empty) to
// SchemaVersion in one write transaction.
func (s *boltStore) migrate(from int) error {
	// The strings a migration interns are cached only once it commits.
	defer func() { s.d = newDict() }()
	return guard(s.path, func() error { return s.migrateTx(from) })
}

// migrateTx is migrate's write transaction.
func (s *boltStore) migrateTx(from int) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		v, err := schemaOf(tx)
		if err != nil {
			return err
		}
		if v < 0 {
			return createLatest(tx)
		}
		for ; v < SchemaVersion; v++ {
			if err := migrations[v](tx, newDict()); err != nil {
				return fmt.Errorf("upgrade history %s from schema v%d to v%d: %w", s.path, v, v+1, err)
			}
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(metaSchema, binary.AppendUvarint(nil, uint64(v+1))); err != nil {
				return err
			}
		}
		return nil
	})
}

// createLatest makes the buckets of the current schema in an empty file.
func createLatest(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create bucket %q: %w", name, err)
		}
	}
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(metaSchema, binary.AppendUvarint(nil, SchemaVersion)); err != nil {
		return err
	}
	return meta.Put(metaRuns, binary.AppendUvarint(nil, 0))
}

// migrateV0 re-stores every run of the v0 bucket in the v1 layout, keeping
// ids, and drops the v0 bucket.
func migrateV0(tx *bolt.Tx, d *dict) error {
	for _, name := range v1Buckets {
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("create bucket %q: %w", name, err)
		}
	}
	if err := tx.Bucket(bucketMeta).Put(metaRuns, binary.AppendUvarint(nil, 0)); err != nil {
		return err
	}
	t, err := newTxn(tx, d)
	if err != nil {
		return err
	}
	var dec lineDecoder
	now := time.Now()
	c := tx.Bucket(bucketLegacyRuns).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		r, _, err := dec.decode(v)
		if err == nil {
			if r.ID == "" && isRunID(string(k)) {
				r.ID = string(k) // else derived from the content
			}
			err = prepare(&r, now)
		}
		if err != nil {
			return fmt.Errorf("run %q: %w", k, err)
		}
		if _, _, err := t.put(&r); err != nil {
			return fmt.Errorf("run %q: %w", k, err)
		}
	}
	if err := t.flushCount(); err != nil {
		return err
	}
	return tx.DeleteBucket(bucketLegacyRuns)
}
