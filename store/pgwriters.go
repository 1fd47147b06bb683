package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Writers scoped to repositories (schema v2). perfgate_writers maps a
// role to a repository it may write; row-level security on
// perfgate_runs, perfgate_records and perfgate_marks lets a role that is
// subject to it (any role but the tables' owner, a superuser or a
// BYPASSRLS role) insert, update and delete only the rows of those
// repositories. Reads stay open: every role that may read reads every
// repository (one dashboard of several repositories). The tables' owner
// grants with db grant (GrantWriter).

// Writer is a row of perfgate_writers: Role may write Repository.
type Writer struct {
	Role       string `json:"role"`
	Repository string `json:"repository"`
}

// writerError explains a refused write (SQLSTATE 42501, message msg)
// when it was row-level security that refused it: the role may not write
// this repository. nil when that is not why (a table privilege is
// missing, schema v1). The server's message says which, in English; in
// another language, a role that holds every writer's privilege was
// refused by row-level security.
func (s *pgStore) writerError(op, msg, detail string) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgProbeTimeout)
	defer cancel()
	var role, schema string
	var active, privileged bool
	var writable []string
	err := s.pool.QueryRow(ctx, `SELECT current_user::text, coalesce(current_schema()::text, ''), row_security_active('perfgate_runs'),
	has_table_privilege('perfgate_runs', 'INSERT') AND has_table_privilege('perfgate_records', 'INSERT')
	AND has_table_privilege('perfgate_marks', 'INSERT') AND has_table_privilege('perfgate_marks', 'UPDATE') AND has_table_privilege('perfgate_marks', 'DELETE'),
	`+pgWritable).Scan(&role, &schema, &active, &privileged, &writable)
	rls := strings.Contains(msg, "row-level security") || (privileged && !strings.Contains(msg, "permission denied"))
	if err != nil || !active || !rls || slices.Contains(writable, s.repo) {
		return nil
	}
	grants := "none"
	if len(writable) > 0 {
		q := make([]string, len(writable))
		for i, w := range writable {
			q[i] = fmt.Sprintf("%q", w)
		}
		grants = "only " + strings.Join(q, ", ")
	}
	return &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("history database %s: %s: role %q may not write repository %q (%s; perfgate_writers grants it %s): the database's owner runs %s; or, if the name is wrong, set the repository this role writes (PERFGATE_REPOSITORY or repository: in .perfgate.yml)",
		s.display, op, role, s.repo, detail, grants, s.grantCommand(role, schema, s.repo))}
}

// pgProbeTimeout bounds the query that explains a refused write.
const pgProbeTimeout = 10 * time.Second

// grantCommand is the db grant command that lets role write repo, with
// the database named as the owner would name it (and the schema, when
// not public, as the search_path).
func (s *pgStore) grantCommand(role, schema, repo string) string {
	db := s.display
	if rest, ok := strings.CutPrefix(db, "postgres://"); ok {
		if _, host, ok := strings.Cut(rest, "@"); ok {
			db = "postgres://OWNER@" + host
		}
	}
	if schema != "" && schema != "public" {
		db += "?search_path=" + url.QueryEscape(schema)
	}
	return "perfgate --db " + shellArg(db) + " db grant --role " + shellArg(role) + " --repository " + shellArg(repo)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellArg quotes s for a POSIX shell; control characters are shown
// escaped (the message stays inert).
func shellArg(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return fmt.Sprintf("%q", s)
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openAdmin opens the PostgreSQL history at url for db grant, revoke and
// writers, creating or upgrading the schema when migrate is set.
func openAdmin(url string, opts Options, migrate bool) (*pgStore, error) {
	if !IsPostgres(url) {
		return nil, badf("history %q is a bbolt file, which has no roles: writers are scoped on a postgres:// or postgresql:// URL only (--db or PERFGATE_DB)", url)
	}
	cfg, display, secret, err := pgConfig(url, opts.Timeout, opts.NoEnvCredentials)
	if err != nil {
		return nil, err
	}
	s, err := openPool(cfg, display, secret, Options{Timeout: opts.Timeout})
	if err != nil {
		return nil, err
	}
	if err := s.ensureSchema(context.Background(), migrate); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// GrantWriter lets role write repository (perfgate db grant), creating
// or upgrading the schema first; added is false when it could already.
// Only the owner of perfgate_writers (the role that ran db migrate) may.
func GrantWriter(url string, opts Options, role, repository string) (added bool, err error) {
	return changeWriter(url, opts, role, repository, true)
}

// RevokeWriter takes back a GrantWriter (perfgate db revoke); removed is
// false when role had no such grant.
func RevokeWriter(url string, opts Options, role, repository string) (removed bool, err error) {
	return changeWriter(url, opts, role, repository, false)
}

func changeWriter(url string, opts Options, role, repository string, grant bool) (bool, error) {
	if role == "" || repository == "" {
		return false, badf("a writer needs a role and a repository (got role %q, repository %q): pass --role ROLE --repository NAME, the name as perfgate stores it (perfgate runs -o json shows it; docs/postgres.md)", role, repository)
	}
	s, err := openAdmin(url, opts, grant)
	if err != nil {
		return false, err
	}
	defer s.Close()
	ctx := context.Background()
	if grant {
		var exists bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
			return false, s.fail("look the role up", err)
		}
		if !exists {
			return false, badf("role %q does not exist in history database %s: create it first (CREATE ROLE %s LOGIN; docs/postgres.md lists its grants), or fix --role", role, s.display, pgx.Identifier{role}.Sanitize())
		}
	}
	q := `INSERT INTO perfgate_writers (role, repository) VALUES ($1, $2) ON CONFLICT DO NOTHING`
	if !grant {
		q = `DELETE FROM perfgate_writers WHERE role = $1 AND repository = $2`
	}
	tag, err := s.pool.Exec(ctx, q, role, repository)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		var me string
		_ = s.pool.QueryRow(ctx, `SELECT current_user::text`).Scan(&me)
		return false, &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("history database %s: role %q may not change perfgate_writers (%s): run db grant and db revoke as the tables' owner, the role that ran perfgate db migrate", s.display, me, scrub(pe.Message, s.secret))}
	}
	if err != nil {
		return false, s.fail("change perfgate_writers", err)
	}
	return tag.RowsAffected() > 0, nil
}

// Writers lists perfgate_writers (perfgate db writers), by role and
// repository.
func Writers(url string, opts Options) ([]Writer, error) {
	s, err := openAdmin(url, opts, false)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rows, err := s.pool.Query(context.Background(), `SELECT role::text, repository FROM perfgate_writers ORDER BY role COLLATE "C", repository`)
	if err != nil {
		return nil, s.fail("read perfgate_writers", err)
	}
	out := []Writer{}
	var w Writer
	_, err = pgx.ForEachRow(rows, []any{&w.Role, &w.Repository}, func() error { out = append(out, w); return nil })
	return out, s.fail("read perfgate_writers", err)
}

// UnscopedWriters returns the roles that may insert runs but write no
// repository under row-level security: after an upgrade to schema v2,
// the writers that db grant must name before they can store anything.
// The tables' owner, its members, superusers and BYPASSRLS roles are
// not subject to it and are left out.
func UnscopedWriters(url string, opts Options) ([]string, error) {
	s, err := openAdmin(url, opts, false)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rows, err := s.pool.Query(context.Background(), `SELECT r.rolname::text FROM pg_roles r, pg_class c
WHERE c.oid = 'perfgate_runs'::regclass
  AND r.rolname NOT LIKE 'pg\_%' AND NOT r.rolsuper AND NOT r.rolbypassrls
  AND NOT pg_has_role(r.oid, c.relowner, 'USAGE')
  AND has_table_privilege(r.oid, c.oid, 'INSERT')
  AND NOT EXISTS (SELECT 1 FROM perfgate_writers w JOIN pg_roles g ON g.rolname = w.role WHERE pg_has_role(r.oid, g.oid, 'USAGE'))
ORDER BY 1`)
	if err != nil {
		return nil, s.fail("list the writers", err)
	}
	out := []string{}
	var name string
	_, err = pgx.ForEachRow(rows, []any{&name}, func() error { out = append(out, name); return nil })
	return out, s.fail("list the writers", err)
}
