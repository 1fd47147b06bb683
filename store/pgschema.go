package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// PostgresSchemaVersion is the version of the PostgreSQL schema this
// package reads and writes (table perfgate_schema holds the applied
// versions).
const PostgresSchemaVersion = 3

// pgMigrations[i] upgrades the schema from version i to i+1. They are
// applied in one transaction under an advisory lock, so the first
// writers to meet an empty database do not race.
var pgMigrations = []string{
	`CREATE TABLE perfgate_runs (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	repository    text COLLATE "C" NOT NULL,
	commit        text COLLATE "C" NOT NULL,
	id            text COLLATE "C" NOT NULL,
	benchmark     text COLLATE "C" NOT NULL,
	time_ns       bigint NOT NULL,
	measured_at   timestamptz GENERATED ALWAYS AS (to_timestamp(time_ns::double precision / 1e9)) STORED,
	metrics       jsonb NOT NULL,
	labels        jsonb NOT NULL,
	source_format text NOT NULL,
	source_file   text NOT NULL,
	source_line   integer NOT NULL,
	command       text[],
	exit_code     integer NOT NULL,
	dirty         boolean NOT NULL,
	invalid       text NOT NULL,
	testbed       text NOT NULL,
	env           jsonb,
	tree          text NOT NULL,
	UNIQUE (repository, commit, id)
);
CREATE INDEX perfgate_runs_series ON perfgate_runs (repository, benchmark, commit);
CREATE INDEX perfgate_runs_time ON perfgate_runs (repository, time_ns, seq);
CREATE TABLE perfgate_records (
	repository  text COLLATE "C" NOT NULL,
	id          text COLLATE "C" NOT NULL,
	kind        text NOT NULL,
	commit      text NOT NULL,
	benchmark   text NOT NULL,
	metric      text NOT NULL,
	run         text NOT NULL,
	reason      text NOT NULL,
	decided_by  text NOT NULL,
	recorded_at timestamptz NOT NULL,
	line        text NOT NULL,
	PRIMARY KEY (repository, id)
);
CREATE TABLE perfgate_marks (
	repository text COLLATE "C" NOT NULL,
	key        text COLLATE "C" NOT NULL,
	value      bytea NOT NULL,
	PRIMARY KEY (repository, key)
);`,
	// v2: writers scoped to repositories (see pgWritable).
	`CREATE TABLE perfgate_writers (
	role       name NOT NULL,
	repository text COLLATE "C" NOT NULL,
	PRIMARY KEY (role, repository)
);
GRANT SELECT ON perfgate_writers TO PUBLIC;
ALTER TABLE perfgate_writers ENABLE ROW LEVEL SECURITY;
CREATE POLICY perfgate_read ON perfgate_writers FOR SELECT USING (true);
` + scopeWrites("perfgate_runs") + scopeWrites("perfgate_records") + scopeWrites("perfgate_marks"),
	// v3: a run's request summary (Run.Requests), NULL when none. text,
	// not jsonb, which would reorder its keys.
	`ALTER TABLE perfgate_runs ADD COLUMN requests text;`,
}

// pgWritable is the array of the repositories the current role may write
// (perfgate_writers rows of the role or of a role whose privileges it
// has). It is an uncorrelated ARRAY(...), which PostgreSQL evaluates once
// per statement, not once per row: an import of a million rows pays for
// it once.
const pgWritable = `ARRAY(SELECT w.repository FROM perfgate_writers w JOIN pg_roles r ON r.rolname = w.role WHERE pg_has_role(r.oid, 'USAGE'))`

// scopeWrites turns on row-level security for a table of schema v2:
// every role reads every row; a role subject to row-level security (not
// the table's owner, a superuser or a BYPASSRLS role) inserts, updates
// and deletes only the rows of the repositories perfgate_writers grants
// it. perfgate_writers itself has no write policy, so only its owner
// changes it, whatever else is granted.
func scopeWrites(table string) string {
	return `ALTER TABLE ` + table + ` ENABLE ROW LEVEL SECURITY;
CREATE POLICY perfgate_read ON ` + table + ` FOR SELECT USING (true);
CREATE POLICY perfgate_write ON ` + table + ` FOR ALL USING (repository = ANY (` + pgWritable + `)) WITH CHECK (repository = ANY (` + pgWritable + `));
`
}

// pgMigrateLock is the advisory lock key of a migration (per schema:
// current_schema() is hashed with it).
const pgMigrateLock = "perfgate.migrate"

// schemaVersion reads the applied version: -1 when the database has no
// perfgate schema.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var v *int
	err := q.QueryRow(ctx, `SELECT max(version) FROM perfgate_schema`, lookup).Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	if v == nil {
		return -1, nil
	}
	return *v, nil
}

// ensureSchema checks the schema version, and creates or upgrades the
// schema when migrate is set.
func (s *pgStore) ensureSchema(ctx context.Context, migrate bool) error {
	v, err := schemaVersion(ctx, s.pool)
	if err != nil {
		return s.fail("read the schema version", err)
	}
	switch {
	case v == PostgresSchemaVersion:
		return nil
	case v > PostgresSchemaVersion:
		return fmt.Errorf("history database %s has schema v%d, newer than this perfgate understands (v%d): upgrade perfgate: %w", s.display, v, PostgresSchemaVersion, ErrSchema)
	case !migrate:
		return s.needsMigration(v, "")
	}
	_, _, err = s.migrate(ctx)
	return err
}

func (s *pgStore) needsMigration(v int, why string) error {
	what := "has no perfgate schema"
	if v >= 0 {
		what = fmt.Sprintf("has schema v%d, older than this perfgate's (v%d)", v, PostgresSchemaVersion)
	}
	if why != "" {
		why = " and this role may not create it (" + why + ")"
	}
	return &pgError{kind: ErrNeedsMigration, msg: fmt.Sprintf("history database %s %s%s: run perfgate --db URL db migrate as a role that may create tables (the database's owner), then retry; docs/postgres.md lists the grants", s.display, what, why)}
}

// migrate applies the migrations the database lacks, in one transaction
// under an advisory lock, and returns the versions before and after.
func (s *pgStore) migrate(ctx context.Context) (from, to int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || $1))`, pgMigrateLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS perfgate_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		v, err := schemaVersion(ctx, tx)
		if err != nil {
			return err
		}
		if v < 0 {
			v = 0
		}
		from, to = v, v
		if v > PostgresSchemaVersion {
			return fmt.Errorf("history database %s has schema v%d, newer than this perfgate understands (v%d): upgrade perfgate: %w", s.display, v, PostgresSchemaVersion, ErrSchema)
		}
		for ; to < PostgresSchemaVersion; to++ {
			if _, err := tx.Exec(ctx, pgMigrations[to]); err != nil {
				return fmt.Errorf("schema v%d: %w", to+1, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO perfgate_schema (version) VALUES ($1)`, to+1); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil || errors.Is(err, ErrSchema) {
		return from, to, err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42501" || pe.Code == "25006") { // insufficient_privilege, read_only_sql_transaction
		return 0, 0, s.needsMigration(from, scrub(pe.Message, s.secret))
	}
	return 0, 0, s.fail("create the schema", err)
}

// Migrate creates or upgrades the PostgreSQL schema of the database at
// url (perfgate db migrate), and returns the versions before and after.
// Opening a bbolt file migrates it; Migrate says so.
func Migrate(url string, opts Options) (from, to int, err error) {
	if !IsPostgres(url) {
		return 0, 0, badf("history %q is a bbolt file, which every perfgate command upgrades when it opens it: db migrate applies to a postgres:// or postgresql:// URL only (--db or PERFGATE_DB)", url)
	}
	opts.NoMigrate = true
	opts.ReadOnly = false
	cfg, display, secret, err := pgConfig(url, opts.Timeout, opts.NoEnvCredentials)
	if err != nil {
		return 0, 0, err
	}
	s, err := openPool(cfg, display, secret, opts)
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	return s.migrate(context.Background())
}
