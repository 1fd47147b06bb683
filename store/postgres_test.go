package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// The tests here are PostgreSQL's own: what bbolt has no counterpart of
// (connections, logins, the schema's migrations, several repositories in
// one database). The shared behaviour is in conformance_test.go.

const testPassword = "pg-Secret-4242"

// assertNoSecret fails when an error or output holds the password.
func assertNoSecret(t *testing.T, what, text, secret string) {
	t.Helper()
	for _, s := range []string{secret, url.QueryEscape(secret)} {
		if strings.Contains(text, s) {
			t.Errorf("%s shows the password: %s", what, text)
		}
	}
}

func TestPostgresUnreachable(t *testing.T) {
	// Nothing listens on port 1: no server is needed for this test.
	raw := "postgres://alice:" + testPassword + "@127.0.0.1:1/perfgate?connect_timeout=2"
	_, err := Open(raw, Options{})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open of an unreachable server: %v, want ErrUnavailable", err)
	}
	msg := err.Error()
	assertNoSecret(t, "the error", msg, testPassword)
	for _, want := range []string{"cannot reach history database postgres://alice@127.0.0.1:1/perfgate", "check that the server is running"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if _, _, err := Migrate(raw, Options{}); !errors.Is(err, ErrUnavailable) || strings.Contains(err.Error(), testPassword) {
		t.Errorf("Migrate of an unreachable server: %v", err)
	}
}

func TestPostgresBadURL(t *testing.T) {
	raw := "postgres://alice:" + testPassword + "@127.0.0.1:notaport/db"
	_, err := Open(raw, Options{})
	if !errors.Is(err, ErrBadInput) {
		t.Fatalf("Open of a malformed URL: %v, want ErrBadInput", err)
	}
	assertNoSecret(t, "the error", err.Error(), testPassword)
	if _, err := Salvage(raw, io.Discard, 0); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Errorf("Salvage of a database: %v", err)
	}
	if _, _, err := Migrate("h.db", Options{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Migrate of a bbolt file: %v, want ErrBadInput", err)
	}
}

// The client key's password (sslpassword=) is a secret too: an invalid
// URL's message names the database without it (issue 34).
func TestPostgresBadURLKeyPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://alice@127.0.0.1:notaport/db?sslpassword=" + testPassword,
		"postgres://alice@127.0.0.1:notaport/db?sslmode=require&sslpassword=" + url.QueryEscape(testPassword+" &x"),
		"postgres://alice:" + testPassword + "x@127.0.0.1:notaport/db?sslpassword=" + testPassword,
	} {
		_, err := Open(raw, Options{})
		if !errors.Is(err, ErrBadInput) {
			t.Fatalf("Open of %q: %v, want ErrBadInput", raw, err)
		}
		assertNoSecret(t, "the error", err.Error(), testPassword)
	}
}

func TestPostgresBadLogin(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	u.User = url.UserPassword(user, testPassword+"-wrong")
	s, err := Open(u.String(), Options{})
	if err == nil {
		s.Close()
		t.Skip("the test server lets this role in without its password (trust authentication)")
	}
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "refused the login") || !strings.Contains(err.Error(), "PGPASSWORD") {
		t.Errorf("Open with a wrong password: %v", err)
	}
	assertNoSecret(t, "the error", err.Error(), testPassword+"-wrong")
}

func TestPostgresPasswordNeverShown(t *testing.T) {
	raw := pgtest.URL(t)
	s, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pw := ""
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		pw, _ = u.User.Password()
	}
	if pw == "" {
		t.Skip("the test server's URL has no password")
	}
	assertNoSecret(t, "Path()", s.Path(), pw)
	// Errors of statements name the database without its password.
	_, err = s.ByCommit("short")
	if err == nil {
		t.Fatal("ByCommit of a short commit succeeded")
	}
	assertNoSecret(t, "an error", err.Error(), pw)
	ps := s.backend.(*pgStore)
	err = ps.fail("test", errors.New("server said "+pw))
	assertNoSecret(t, "a scrubbed error", err.Error(), pw)
}

func TestPostgresMigrate(t *testing.T) {
	raw := pgtest.URL(t)
	if _, err := Open(raw, Options{NoMigrate: true}); !errors.Is(err, ErrNeedsMigration) || !strings.Contains(err.Error(), "db migrate") {
		t.Fatalf("Open without migrating of an empty schema: %v, want ErrNeedsMigration", err)
	}
	if _, err := Open(raw, Options{ReadOnly: true}); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("read-only Open of an empty schema: %v, want ErrNeedsMigration", err)
	}
	from, to, err := Migrate(raw, Options{})
	if err != nil || from != 0 || to != PostgresSchemaVersion {
		t.Fatalf("Migrate = %d, %d, %v", from, to, err)
	}
	from, to, err = Migrate(raw, Options{})
	if err != nil || from != PostgresSchemaVersion || to != PostgresSchemaVersion {
		t.Errorf("Migrate again = %d, %d, %v", from, to, err)
	}
	s, err := Open(raw, Options{NoMigrate: true, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A newer schema is refused.
	conn := connect(t, raw)
	if _, err := conn.Exec(context.Background(), `INSERT INTO perfgate_schema (version) VALUES ($1)`, PostgresSchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(raw, Options{}); !errors.Is(err, ErrSchema) {
		t.Errorf("Open of a newer schema: %v, want ErrSchema", err)
	}
}

func connect(t *testing.T, raw string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestPostgresFirstWriters opens an empty schema 16 times at once: the
// advisory lock lets one create the schema, and every open succeeds.
func TestPostgresFirstWriters(t *testing.T) {
	raw := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(raw, Options{Repository: "r"})
			if err == nil {
				_, err = s.Put([]Run{mkRun(i+1, "a", 1)})
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("first writer %d: %v", i, err)
		}
	}
	var n int
	if err := connect(t, raw).QueryRow(context.Background(), `SELECT count(*) FROM perfgate_schema`).Scan(&n); err != nil || n != PostgresSchemaVersion {
		t.Errorf("perfgate_schema has %d rows, %v", n, err)
	}
}

// TestPostgresRepositories keeps two repositories' histories in one
// database apart: nothing of one is seen from the other.
func TestPostgresRepositories(t *testing.T) {
	raw := pgtest.URL(t)
	a, err := Open(raw, Options{Repository: "github.com/org/engine"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(raw, Options{Repository: "github.com/org/plugin"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mustPut(t, a, mkRun(1, "x", 1), mkRun(2, "x", 2))
	mustPut(t, b, mkRun(1, "x", 1)) // the same run, in the other repository: stored again
	if err := a.SetMark("m", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutRecords([]Record{{Kind: RecordAccept, Commit: sha(1), Benchmark: "x", Metric: "m", Reason: "r", By: "b", Time: t0}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Store
		runs int
	}{{a, 2}, {b, 1}} {
		if n, _ := c.s.Len(); n != c.runs {
			t.Errorf("Len = %d, want %d", n, c.runs)
		}
	}
	if m, _ := b.Measured("x", []string{sha(2)}); len(m) != 0 {
		t.Errorf("repository b sees a's commit: %v", m)
	}
	if v, _ := b.Mark("m"); v != nil {
		t.Errorf("repository b sees a's mark %q", v)
	}
	if recs, _ := b.Records(); len(recs) != 0 {
		t.Errorf("repository b sees a's records: %v", recs)
	}
	if seq, _ := b.LastSeq(); seq == 0 {
		t.Error("LastSeq of b is 0")
	}
	repos, err := b.Repositories()
	if err != nil || len(repos) != 2 || repos[0].Name != "github.com/org/engine" || repos[0].Runs != 2 || repos[1].Name != "github.com/org/plugin" || repos[1].Runs != 1 {
		t.Errorf("Repositories = %+v, %v: want engine (2 runs) and plugin (1)", repos, err)
	}
	if !repos[0].Last.Equal(mkRun(2, "x", 2).Time) {
		t.Errorf("engine last measured %v, want %v", repos[0].Last, mkRun(2, "x", 2).Time)
	}
	// A Scope reads the other repository over b's connections, and
	// closing it leaves b open.
	sa, err := b.Scope("github.com/org/engine")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := sa.Len(); n != 2 {
		t.Errorf("Scope(engine).Len = %d, want 2", n)
	}
	if recs, _ := sa.Records(); len(recs) != 1 {
		t.Errorf("Scope(engine).Records = %v, want engine's acceptance", recs)
	}
	sa.Close()
	if n, err := b.Len(); n != 1 || err != nil {
		t.Errorf("b after closing its Scope: Len = %d, %v", n, err)
	}
	if _, err := b.Scope(" "); !errors.Is(err, ErrBadInput) {
		t.Errorf("Scope of an empty name: %v", err)
	}
}

// TestPostgresServerGoneMidIngest closes the connections under an
// import: the import fails with ErrUnavailable and stores nothing.
func TestPostgresServerGoneMidIngest(t *testing.T) {
	raw := pgtest.URL(t)
	s, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pr, pw := io.Pipe()
	go func() {
		for i := range 200 {
			r := mkRun(i+1, "a", float64(i))
			pw.Write(append(AppendJSON(nil, &r), '\n'))
		}
		// Terminate this test's connections, as a server shutting down
		// does, while the import's COPY waits for more lines.
		time.Sleep(200 * time.Millisecond)
		conn := connect(t, raw)
		conn.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND application_name = $1 AND query LIKE 'copy%perfgate%'`, pgtest.Schema(t, raw))
		pw.Close()
	}()
	_, _, err = s.Import(pr, ImportOptions{BatchSize: 50})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Import cut off by the server: %v, want ErrUnavailable", err)
	}
	s2, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if n, err := s2.Len(); err != nil || n != 0 {
		t.Errorf("after the cut import the history holds %d runs (%v), want 0", n, err)
	}
}

// TestPostgresLastSeqWaitsForWriters: a run whose transaction is under
// way when sync asks for the last sequence number is counted once it
// commits, never skipped (LastSeq waits for the writers under way).
func TestPostgresLastSeqWaitsForWriters(t *testing.T) {
	raw := pgtest.URL(t)
	s, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustPut(t, s, mkRun(1, "a", 1))
	ctx := context.Background()
	conn := connect(t, raw)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(hashtext(current_schema() || $1))`, pgWriteLock); err != nil {
		t.Fatal(err)
	}
	r := withIDs(mkRun(2, "a", 2))[0]
	var seq int64
	insert := "INSERT INTO perfgate_runs (" + strings.Join(runColumns, ", ") + ") VALUES (" + placeholders(len(runColumns)) + ") RETURNING seq"
	if err := tx.QueryRow(ctx, insert, runValues("r", &r)...).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64, 1)
	go func() {
		last, err := s.LastSeq()
		if err != nil {
			t.Error(err)
		}
		got <- last
	}()
	time.Sleep(100 * time.Millisecond) // LastSeq is waiting, or about to
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if last := <-got; last < uint64(seq) {
		t.Errorf("LastSeq = %d while run %d was committing; sync would skip it", last, seq)
	}
}

// TestPostgresRoles: a role that may only read is enough for reading
// (check, watch, site) and is refused writes with ErrUnavailable; a role
// that may not create tables is told to run db migrate on an empty
// schema; the grants docs/postgres.md gives a writer are enough for
// every write of the repository db grant lets it write.
func TestPostgresRoles(t *testing.T) {
	owner := pgtest.URL(t)
	noCreate := pgtest.Role(t, owner, "GRANT USAGE ON SCHEMA %[2]s TO %[1]s")
	if _, err := Open(noCreate, Options{Repository: "r"}); !errors.Is(err, ErrNeedsMigration) || !strings.Contains(err.Error(), "db migrate") {
		t.Fatalf("first open by a role that may not create tables: %v, want ErrNeedsMigration", err)
	}
	if _, _, err := Migrate(owner, Options{}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(owner, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, mkRun(1, "a", 1))
	s.Close()
	reader := pgtest.Role(t, owner, "GRANT USAGE ON SCHEMA %[2]s TO %[1]s", "GRANT SELECT ON ALL TABLES IN SCHEMA %[2]s TO %[1]s")
	writer := pgtest.Role(t, owner, "GRANT USAGE ON SCHEMA %[2]s TO %[1]s", "GRANT SELECT ON ALL TABLES IN SCHEMA %[2]s TO %[1]s",
		"GRANT INSERT ON %[2]s.perfgate_runs, %[2]s.perfgate_records TO %[1]s",
		"GRANT INSERT, UPDATE, DELETE ON %[2]s.perfgate_marks TO %[1]s",
		"GRANT TEMPORARY ON DATABASE "+dbName(t, owner)+" TO %[1]s")
	r, err := Open(reader, Options{Repository: "r"})
	if err != nil {
		t.Fatalf("open by the read-only role: %v", err)
	}
	defer r.Close()
	if runs, err := r.ByCommit(sha(1)); err != nil || len(runs) != 1 {
		t.Errorf("read by the read-only role: %v, %v", runs, err)
	}
	if seq, err := r.LastSeq(); err != nil || seq == 0 {
		t.Errorf("LastSeq by the read-only role: %d, %v", seq, err)
	}
	if _, err := r.Put([]Run{mkRun(2, "a", 2)}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "permission denied") || strings.Contains(err.Error(), "db grant") {
		t.Errorf("write by the read-only role: %v, want permission denied (a missing grant, not a repository it may not write)", err)
	}
	if _, err := GrantWriter(owner, Options{}, roleOf(t, writer), "r"); err != nil {
		t.Fatal(err)
	}
	w, err := Open(writer, Options{Repository: "r"})
	if err != nil {
		t.Fatalf("open by the writer: %v", err)
	}
	defer w.Close()
	mustPut(t, w, mkRun(3, "a", 3))
	var buf strings.Builder
	r3 := withIDs(mkRun(4, "a", 4))[0]
	buf.Write(append(AppendJSON(nil, &r3), '\n'))
	if _, _, err := w.Import(strings.NewReader(buf.String()), ImportOptions{}); err != nil {
		t.Errorf("import by the writer: %v", err)
	}
	if _, err := w.PutRecords([]Record{{Kind: RecordInvalidate, Commit: r3.Commit, Run: r3.ID, Reason: "r", By: "b", Time: t0}}); err != nil {
		t.Errorf("invalidate by the writer: %v", err)
	}
	for _, v := range [][]byte{[]byte("x"), []byte("y"), nil} {
		if err := w.SetMark("m", v); err != nil {
			t.Errorf("SetMark by the writer: %v", err)
		}
	}
}

func dbName(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

func TestJSONBDecoders(t *testing.T) {
	m, ok := jsonbNumbers([]byte(`{"a": 1.5, "bb": -2, "c": 0.0000001, "d": 123456789012345678901234567890}`), nil)
	if !ok || m["a"] != 1.5 || m["bb"] != -2 || m["c"] != 1e-7 || m["d"] != 123456789012345678901234567890 {
		t.Errorf("jsonbNumbers = %v, %v", m, ok)
	}
	if m, ok := jsonbNumbers([]byte(`{}`), nil); !ok || len(m) != 0 {
		t.Errorf("jsonbNumbers({}) = %v, %v", m, ok)
	}
	for _, bad := range []string{`{"a\\"b": 1}`, `{"a": "x"}`, `{"a": 1`, `{"a": 1}x`, `[1]`, ``} {
		if _, ok := jsonbNumbers([]byte(bad), nil); ok {
			t.Errorf("jsonbNumbers(%q) is ok", bad)
		}
	}
	s, ok := jsonbStrings([]byte(`{"model": "Qwen/Qwen2.5-7B", "hw": "910B"}`), nil)
	if !ok || s["model"] != "Qwen/Qwen2.5-7B" || s["hw"] != "910B" {
		t.Errorf("jsonbStrings = %v, %v", s, ok)
	}
	if _, ok := jsonbStrings([]byte(`{"a": "x\\ny"}`), nil); ok {
		t.Error("jsonbStrings of an escape is ok")
	}
}

// FuzzJSONBDecoders: where the fast decoders accept an object, they read
// what encoding/json reads, with names interned across calls or not.
func FuzzJSONBDecoders(f *testing.F) {
	f.Add([]byte(`{"a": 1.5, "b": 2}`))
	f.Add([]byte(`{"model": "x", "hw": "y"}`))
	names := map[string]string{"a": "a", "model": "model"}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, ok := jsonbNumbers(b, names); ok {
			var want map[string]float64
			if err := json.Unmarshal(b, &want); err != nil || !maps.Equal(m, want) {
				t.Errorf("jsonbNumbers(%q) with names = %v; encoding/json: %v, %v", b, m, want, err)
			}
		}
		if m, ok := jsonbStrings(b, names); ok {
			var want map[string]string
			if err := json.Unmarshal(b, &want); err != nil || !maps.Equal(m, want) {
				t.Errorf("jsonbStrings(%q) with names = %v; encoding/json: %v, %v", b, m, want, err)
			}
		}
		if m, ok := jsonbNumbers(b, nil); ok {
			var want map[string]float64
			if err := json.Unmarshal(b, &want); err != nil || !maps.Equal(m, want) {
				t.Errorf("jsonbNumbers(%q) = %v; encoding/json: %v, %v", b, m, want, err)
			}
		}
		if m, ok := jsonbStrings(b, nil); ok {
			var want map[string]string
			if err := json.Unmarshal(b, &want); err != nil || !maps.Equal(m, want) {
				t.Errorf("jsonbStrings(%q) = %v; encoding/json: %v, %v", b, m, want, err)
			}
		}
	})
}

// TestPostgresIndexesServeTheGate: each question the gate asks (the runs
// of these commits, of this series at these commits, since this time, the
// repositories and the commits by first run) is answered from an index,
// not a scan of every repository's runs. With sequential scans off, the
// planner picks a scan of a table only when no index can serve.
func TestPostgresIndexesServeTheGate(t *testing.T) {
	raw := pgtest.URL(t)
	s, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, mkRun(1, "a", 1), mkRun(2, "b", 2))
	s.Close()
	conn := connect(t, raw)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, "SET enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	commits := fmt.Sprintf("ARRAY['%s','%s']", sha(1), sha(2))
	for _, q := range []struct{ what, sql string }{
		{"runs of these commits", selectRun + ` WHERE repository = 'r' AND commit = ANY(` + commits + `)`},
		{"runs of a series at these commits", selectRun + ` WHERE repository = 'r' AND benchmark = 'a' AND commit = ANY(` + commits + `)`},
		{"runs since a time", selectRun + ` WHERE repository = 'r' AND time_ns >= 0 ORDER BY time_ns, seq`},
		{"commits by first run", `SELECT commit, min(time_ns) AS t FROM perfgate_runs WHERE repository = 'r' GROUP BY commit ORDER BY t DESC LIMIT 10`},
	} {
		rows, err := conn.Query(ctx, "EXPLAIN "+q.sql)
		if err != nil {
			t.Fatalf("%s: %v", q.what, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "Index") {
			t.Errorf("%s is not answered from an index:\n%s", q.what, plan)
		}
	}
}

// TestPostgresImportDirectFull imports into an empty repository more runs
// than the direct COPY keeps hashes of: the rest go through the
// temporary table, and every run is stored once.
func TestPostgresImportDirectFull(t *testing.T) {
	raw := pgtest.URL(t)
	s, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func(n int) { maxDirect = n }(maxDirect)
	maxDirect = 5
	var in bytes.Buffer
	for i := range 12 {
		r := mkRun(i+1, "a", float64(i))
		in.Write(append(AppendJSON(nil, &r), '\n'))
	}
	r := mkRun(1, "a", 0) // line 1 again, after the switch
	in.Write(append(AppendJSON(nil, &r), '\n'))
	added, skipped, err := s.Import(&in, ImportOptions{BatchSize: 4})
	if err != nil || added != 12 || skipped != 1 {
		t.Fatalf("Import = %d added, %d skipped, %v; want 12, 1", added, skipped, err)
	}
	if n, _ := s.Len(); n != 12 {
		t.Errorf("Len = %d, want 12", n)
	}
}
