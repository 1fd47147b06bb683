package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL implementation keeps the history in three tables (see
// pgMigrations and docs/postgres.md): perfgate_runs, one row per run with
// the repository it belongs to; perfgate_records, the accepted changes and
// invalidated runs; perfgate_marks, what sync remembers. One database (or
// one schema, through the URL's search_path) holds many repositories'
// histories: every query is scoped by Options.Repository, so nothing of
// one repository is ever a baseline of another. The libpq environment
// (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGSSLMODE, PGSERVICE, ~/.pgpass)
// fills in what the URL leaves out, through pgx's ParseConfig.

var (
	// ErrUnavailable is matched by the errors of a PostgreSQL history
	// that cannot be reached, refuses the login or fails mid-way.
	ErrUnavailable = errors.New("history database is unavailable")
	// ErrNeedsMigration is matched by the error of opening a PostgreSQL
	// history whose schema is missing or older than this perfgate's,
	// when this open may not create it (read-only, Options.NoMigrate, or
	// a role that may not create tables).
	ErrNeedsMigration = errors.New("history database needs perfgate db migrate")
	// ErrNotBolt is matched by the error of an operation that only
	// applies to a bbolt file (recover, salvage) given a database URL.
	ErrNotBolt = errors.New("not a bbolt history file")
)

// pgError is an error of the PostgreSQL history: a message that names
// the database without its password, and its kind for errors.Is.
type pgError struct {
	msg  string
	kind error
}

func (e *pgError) Error() string        { return e.msg }
func (e *pgError) Is(target error) bool { return target == e.kind }

// pgStore is an open PostgreSQL history.
type pgStore struct {
	pool     *pgxpool.Pool
	display  string // the URL without its password
	secret   string // the password, scrubbed from every message
	repo     string
	readOnly bool
	view     bool // a Scope of another pgStore: Close leaves the pool open
	bad      *badRows
	now      func() time.Time
}

// pgConfig parses a database URL (and the libpq environment), returning
// the pool's configuration, how to name the database in messages and the
// password to keep out of them. A host that is not loopback (nor a Unix
// socket) gets sslmode=require unless the URL or PGSSLMODE names a mode:
// pgx's default, prefer, falls back to no TLS, and a server that asks for
// a cleartext password then gets it in the clear. With noEnvCredentials
// only the URL's own password is ever sent.
func pgConfig(rawURL string, timeout time.Duration, noEnvCredentials bool) (*pgxpool.Config, string, string, error) {
	secret := urlPassword(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err == nil && needsTLS(rawURL, cfg) {
		cfg, err = pgxpool.ParseConfig(withQuery(rawURL, "sslmode", "require"))
	}
	if err != nil {
		msg := err.Error()
		for _, s := range urlSecrets(rawURL) {
			msg = scrub(msg, s)
		}
		return nil, redactURL(rawURL), secret, &inputError{msg: fmt.Sprintf("history database URL %s is not valid (%s): pass --db (or PERFGATE_DB) as postgres://USER@HOST:PORT/DATABASE, the password in PGPASSWORD or ~/.pgpass", redactURL(rawURL), msg)}
	}
	if noEnvCredentials {
		cfg.ConnConfig.Password = secret
	}
	if cfg.ConnConfig.Password != "" {
		secret = cfg.ConnConfig.Password
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		cfg.ConnConfig.ConnectTimeout = timeout
	}
	cc := cfg.ConnConfig
	display := fmt.Sprintf("postgres://%s@%s/%s", cc.User, hostPort(cc.Host, cc.Port), cc.Database)
	return cfg, display, secret, nil
}

// needsTLS reports whether a URL that names no sslmode (nor does
// PGSSLMODE) reaches a host other than a loopback address or a Unix
// socket, so that it must be told sslmode=require.
func needsTLS(rawURL string, cfg *pgxpool.Config) bool {
	if os.Getenv("PGSSLMODE") != "" {
		return false
	}
	if u, err := url.Parse(rawURL); err == nil && u.Query().Has("sslmode") || err != nil && strings.Contains(rawURL, "sslmode=") {
		return false
	}
	hosts := []string{cfg.ConnConfig.Host}
	for _, fb := range cfg.ConnConfig.Fallbacks {
		hosts = append(hosts, fb.Host)
	}
	for _, h := range hosts {
		if !loopback(h) {
			return true
		}
	}
	return false
}

// loopback reports whether host is this machine by its name: a Unix
// socket's directory, localhost, or a loopback address.
func loopback(host string) bool {
	if strings.HasPrefix(host, "/") || strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// withQuery returns rawURL with the query parameter key set to value.
func withQuery(rawURL, key, value string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		// Several hosts (h1,h2) are pgx's, not net/url's: append.
		sep := "?"
		if strings.Contains(rawURL, "?") {
			sep = "&"
		}
		return rawURL + sep + key + "=" + url.QueryEscape(value)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

func hostPort(host string, port uint16) string {
	if strings.HasPrefix(host, "/") {
		return url.PathEscape(host) + ":" + strconv.Itoa(int(port))
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(port))
}

// urlPassword returns the password a URL carries, if any.
func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		// A URL too broken to parse may still hold user:password@.
		if at := strings.LastIndex(raw, "@"); at > 0 {
			if i := strings.Index(raw, "://"); i >= 0 && i+3 < at {
				if _, pw, ok := strings.Cut(raw[i+3:at], ":"); ok {
					return pw
				}
			}
		}
		return ""
	}
	pw, _ := u.User.Password()
	if pw == "" {
		pw = u.Query().Get("password")
	}
	return pw
}

// urlSecrets returns the passwords a URL carries: the login's and the
// client key's (sslpassword=).
func urlSecrets(raw string) []string {
	var out []string
	if pw := urlPassword(raw); pw != "" {
		out = append(out, pw)
	}
	for _, kv := range strings.FieldsFunc(raw, func(r rune) bool { return r == '?' || r == '&' || r == ' ' }) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" || !strings.EqualFold(strings.TrimSpace(k), "sslpassword") {
			continue
		}
		if u, err := url.QueryUnescape(v); err == nil {
			v = u
		}
		out = append(out, v)
	}
	return out
}

// redactURL returns a URL with its passwords (the login's and the client
// key's) replaced.
func redactURL(raw string) string {
	for _, s := range urlSecrets(raw) {
		raw = scrub(raw, s)
	}
	return raw
}

// scrub removes the password (as given and URL-escaped) from a message
// and folds it onto one line.
func scrub(msg, secret string) string {
	if secret != "" {
		for _, s := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret)} {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return strings.Join(strings.Fields(msg), " ")
}

// openPostgres opens the PostgreSQL history at a postgres:// URL: it
// connects, checks the login, and creates or upgrades the schema unless
// opts.ReadOnly or opts.NoMigrate (then a missing or older schema is an
// error matching ErrNeedsMigration).
func openPostgres(rawURL string, opts Options) (*pgStore, error) {
	cfg, display, secret, err := pgConfig(rawURL, opts.Timeout, opts.NoEnvCredentials)
	if err != nil {
		return nil, err
	}
	s, err := openPool(cfg, display, secret, opts)
	if err != nil {
		return nil, err
	}
	if err := s.ensureSchema(context.Background(), !opts.ReadOnly && !opts.NoMigrate); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openPool connects and checks the login.
func openPool(cfg *pgxpool.Config, display, secret string, opts Options) (*pgStore, error) {
	ctx := context.Background()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(display, secret, err)
	}
	// Connecting checks the login (the first query would be a round
	// trip more, as Ping is).
	conn, err := pool.Acquire(ctx)
	if err != nil {
		pool.Close()
		return nil, connectError(display, secret, err)
	}
	conn.Release()
	return &pgStore{pool: pool, display: display, secret: secret, repo: opts.Repository, readOnly: opts.ReadOnly, now: time.Now, bad: &badRows{warn: opts.Warn}}, nil
}

// connectError explains a failed connection: a refused login, a missing
// database, or a server that cannot be reached.
func connectError(display, secret string, err error) error {
	detail := scrub(err.Error(), secret)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		detail = scrub(fmt.Sprintf("%s: %s (SQLSTATE %s)", pe.Severity, pe.Message, pe.Code), secret)
		switch {
		case pe.Code == "28P01" || pe.Code == "28000":
			return &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("history database %s refused the login (%s): check the user and password (in --db or PERFGATE_DB, PGUSER, PGPASSWORD or ~/.pgpass) and the server's pg_hba.conf", display, detail)}
		case pe.Code == "3D000":
			return &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("history database %s does not exist (%s): create it (createdb), or fix the database name in --db or PERFGATE_DB", display, detail)}
		}
	}
	return &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("cannot reach history database %s (%s): check that the server is running and that --db, PERFGATE_DB or PGHOST/PGPORT name it, and that this machine may connect (firewall, PGSSLMODE)", display, detail)}
}

// fail explains an error of a statement: bad input passes unchanged;
// anything else is the database's (exit 3), named without the password.
func (s *pgStore) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrBadInput) || errors.Is(err, ErrNeedsMigration) || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrReadOnly) {
		return err
	}
	var le *LineError
	if errors.As(err, &le) {
		return err
	}
	detail := scrub(err.Error(), s.secret)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42501" {
		if e := s.writerError(op, pe.Message, detail); e != nil {
			return e
		}
		return &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("history database %s: %s: permission denied (%s): grant the role what this command needs (see docs/postgres.md), or use a role that has it", s.display, op, detail)}
	}
	return &pgError{kind: ErrUnavailable, msg: fmt.Sprintf("history database %s: %s failed (%s): check that the server is running and reachable, then retry; a write that failed stored nothing", s.display, op, detail)}
}

// Path returns the database URL without its password.
func (s *pgStore) Path() string { return s.display }

// Close closes the connections (a Scope's: nothing).
func (s *pgStore) Close() error {
	if s.view {
		return nil
	}
	s.pool.Close()
	return nil
}

// Bulk runs fn: PostgreSQL needs no special mode for a large import.
func (s *pgStore) Bulk(fn func() error) error {
	if s.readOnly {
		return s.readOnlyErr()
	}
	return fn()
}

func (s *pgStore) readOnlyErr() error {
	return fmt.Errorf("write to history %s: %w", s.display, ErrReadOnly)
}

// pgWriteLock is the advisory lock key (hashed with current_schema())
// that every writing transaction holds shared, and LastSeq exclusively:
// see LastSeq.
const pgWriteLock = "perfgate.write"

// write runs fn in one transaction: all of it or nothing. The
// transaction holds the write lock shared (writers do not wait for each
// other; LastSeq waits for them).
func (s *pgStore) write(op string, fn func(ctx context.Context, tx pgx.Tx) error) error {
	if s.readOnly {
		return s.readOnlyErr()
	}
	ctx := context.Background()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtext(current_schema() || $1))`, pgWriteLock); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
	return s.fail(op, err)
}
