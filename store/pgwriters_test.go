package store

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// writerGrants are the grants docs/postgres.md gives a writer role
// (pgtest.Role's %[1]s role, %[2]s schema).
func writerGrants(t testing.TB, owner string) []string {
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"GRANT USAGE ON SCHEMA %[2]s TO %[1]s", "GRANT SELECT ON ALL TABLES IN SCHEMA %[2]s TO %[1]s",
		"GRANT INSERT ON %[2]s.perfgate_runs, %[2]s.perfgate_records TO %[1]s",
		"GRANT INSERT, UPDATE, DELETE ON %[2]s.perfgate_marks TO %[1]s",
		"GRANT TEMPORARY ON DATABASE " + strings.TrimPrefix(u.Path, "/") + " TO %[1]s"}
}

// roleOf is the user of a URL pgtest.Role returned.
func roleOf(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.User.Username()
}

// writes are the four ways a store writes a repository's rows: Put,
// Import, PutRecords and SetMark (commit n makes the rows new).
func writes(s *Store, n int) map[string]error {
	r := withIDs(mkRun(n, "w", float64(n)))[0]
	imp := withIDs(mkRun(n+1, "w", float64(n)))[0]
	_, put := s.Put([]Run{r})
	_, _, im := s.Import(strings.NewReader(string(AppendJSON(nil, &imp))+"\n"), ImportOptions{})
	_, rec := s.PutRecords([]Record{{Kind: RecordInvalidate, Commit: r.Commit, Run: r.ID, Reason: "r", By: "b", Time: t0}})
	return map[string]error{"Put": put, "Import": im, "PutRecords": rec, "SetMark": s.SetMark("m", []byte{byte(n)})}
}

// rowsOf counts a repository's rows in the three written tables, as the
// owner sees them.
func rowsOf(t *testing.T, owner, repo string) int {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, owner)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM perfgate_runs WHERE repository = $1) + (SELECT count(*) FROM perfgate_records WHERE repository = $1) + (SELECT count(*) FROM perfgate_marks WHERE repository = $1)`, repo).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPostgresWritersScoped: two writer roles with the documented grants,
// A granted repository a and B repository b. Each stores runs, imports,
// records and marks in its own repository, reads the other's, and is
// refused every write into the other's with an error naming the role,
// the repository and the db grant command; nothing of a refused write is
// stored. A writer may not grant itself, even when granted INSERT on
// perfgate_writers; a revoked grant refuses again.
func TestPostgresWritersScoped(t *testing.T) {
	owner := pgtest.URL(t)
	if _, _, err := Migrate(owner, Options{}); err != nil {
		t.Fatal(err)
	}
	a := pgtest.Role(t, owner, writerGrants(t, owner)...)
	b := pgtest.Role(t, owner, writerGrants(t, owner)...)
	roleA, roleB := roleOf(t, a), roleOf(t, b)
	if got, err := UnscopedWriters(owner, Options{}); err != nil || !slices.Equal(got, sortedPair(roleA, roleB)) {
		t.Errorf("UnscopedWriters before any grant = %v, %v; want both roles", got, err)
	}
	for _, g := range []struct{ role, repo string }{{roleA, "a"}, {roleB, "b"}} {
		if added, err := GrantWriter(owner, Options{}, g.role, g.repo); err != nil || !added {
			t.Fatalf("GrantWriter(%s, %s) = %v, %v", g.role, g.repo, added, err)
		}
	}
	if added, err := GrantWriter(owner, Options{}, roleA, "a"); err != nil || added {
		t.Errorf("GrantWriter again = %v, %v; want false, nil", added, err)
	}
	if got, err := UnscopedWriters(owner, Options{}); err != nil || len(got) != 0 {
		t.Errorf("UnscopedWriters after the grants = %v, %v", got, err)
	}
	if got, err := Writers(owner, Options{}); err != nil || len(got) != 2 {
		t.Errorf("Writers = %v, %v", got, err)
	}
	for i, c := range []struct{ url, role, own, other string }{{a, roleA, "a", "b"}, {b, roleB, "b", "a"}} {
		own := openPG(t, c.url, c.own)
		for op, err := range writes(own, 10*i+1) {
			if err != nil {
				t.Errorf("%s by %s into its own repository %s: %v", op, c.role, c.own, err)
			}
		}
		before := rowsOf(t, owner, c.other)
		other := openPG(t, c.url, c.other)
		for op, err := range writes(other, 10*i+5) {
			want := []string{`role "` + c.role + `" may not write repository "` + c.other + `"`, `grants it only "` + c.own + `"`,
				"db grant --role " + c.role + " --repository " + c.other}
			if !errors.Is(err, ErrUnavailable) || !containsAll(err, want) {
				t.Errorf("%s by %s into %s: %v; want ErrUnavailable with %q", op, c.role, c.other, err, want)
			}
		}
		if after := rowsOf(t, owner, c.other); after != before {
			t.Errorf("refused writes by %s stored %d rows in %s", c.role, after-before, c.other)
		}
	}
	for _, c := range []struct{ url, role, other string }{{a, roleA, "b"}, {b, roleB, "a"}} {
		if n, err := openPG(t, c.url, c.other).Len(); err != nil || n != 2 {
			t.Errorf("%s reads %s: %d runs, %v; want its 2 (reads are not scoped)", c.role, c.other, n, err)
		}
	}
	if _, err := GrantWriter(a, Options{}, roleA, "b"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "owner") {
		t.Errorf("a writer granting itself: %v, want refused", err)
	}
	// Not even with INSERT on perfgate_writers: it has no write policy.
	pgExec(t, owner, "GRANT INSERT, UPDATE, DELETE ON perfgate_writers TO "+roleA)
	if _, err := GrantWriter(a, Options{}, roleA, "b"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "row-level security") {
		t.Errorf("a writer granted INSERT on perfgate_writers granting itself: %v, want refused", err)
	}
	if removed, err := RevokeWriter(owner, Options{}, roleA, "a"); err != nil || !removed {
		t.Fatalf("RevokeWriter = %v, %v", removed, err)
	}
	if _, err := openPG(t, a, "a").Put([]Run{mkRun(99, "w", 1)}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "grants it none") {
		t.Errorf("Put after the revoke: %v, want refused", err)
	}
	if _, err := GrantWriter(owner, Options{}, "perfgate_no_such_role", "a"); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("GrantWriter of a missing role: %v", err)
	}
}

// TestPostgresMigrateV1ScopesWriters: a database of schema v1 with runs
// and a writer upgrades to v2 (and v3) keeping its runs; the writer, unscoped, is
// listed, refused until granted, and stores after db grant.
func TestPostgresMigrateV1ScopesWriters(t *testing.T) {
	owner := pgtest.URL(t)
	s := openPG(t, owner, "r")
	mustPut(t, s, mkRun(1, "a", 1))
	s.Close()
	// Back to v1 as a perfgate of schema v1 left it.
	for _, tb := range []string{"perfgate_runs", "perfgate_records", "perfgate_marks"} {
		pgExec(t, owner, "DROP POLICY perfgate_read ON "+tb, "DROP POLICY perfgate_write ON "+tb, "ALTER TABLE "+tb+" DISABLE ROW LEVEL SECURITY")
	}
	pgExec(t, owner, `DROP TABLE perfgate_writers`, `ALTER TABLE perfgate_runs DROP COLUMN requests`, `DELETE FROM perfgate_schema WHERE version >= 2`)
	w := pgtest.Role(t, owner, writerGrants(t, owner)...)
	if _, err := Open(w, Options{Repository: "r"}); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("writer opening v1: %v, want ErrNeedsMigration", err)
	}
	if from, to, err := Migrate(owner, Options{}); err != nil || from != 1 || to != 3 {
		t.Fatalf("Migrate = %d, %d, %v; want 1, 3", from, to, err)
	}
	if got, err := UnscopedWriters(owner, Options{}); err != nil || !slices.Equal(got, []string{roleOf(t, w)}) {
		t.Errorf("UnscopedWriters = %v, %v; want the writer", got, err)
	}
	ws := openPG(t, w, "r")
	if runs, err := ws.ByCommit(sha(1)); err != nil || len(runs) != 1 {
		t.Errorf("the v1 run after the upgrade: %v, %v", runs, err)
	}
	if _, err := ws.Put([]Run{mkRun(2, "a", 2)}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "db grant") {
		t.Errorf("unscoped writer after the upgrade: %v, want refused", err)
	}
	if _, err := GrantWriter(owner, Options{}, roleOf(t, w), "r"); err != nil {
		t.Fatal(err)
	}
	mustPut(t, ws, mkRun(2, "a", 2))
}

func openPG(t *testing.T, u, repo string) *Store {
	t.Helper()
	s, err := Open(u, Options{Repository: repo})
	if err != nil {
		t.Fatalf("open %s as %s: %v", repo, roleOf(t, u), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func pgExec(t *testing.T, u string, statements ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, st := range statements {
		if _, err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

func sortedPair(x, y string) []string {
	if y < x {
		return []string{y, x}
	}
	return []string{x, y}
}

func containsAll(err error, subs []string) bool {
	if err == nil {
		return false
	}
	for _, s := range subs {
		if !strings.Contains(err.Error(), s) {
			return false
		}
	}
	return true
}

// TestPostgresWriterGroupRole: a grant to a group role holds for a
// member that inherits its privileges, and for nothing else.
func TestPostgresWriterGroupRole(t *testing.T) {
	owner := pgtest.URL(t)
	if _, _, err := Migrate(owner, Options{}); err != nil {
		t.Fatal(err)
	}
	group := roleOf(t, pgtest.Role(t, owner))
	member := pgtest.Role(t, owner, append(writerGrants(t, owner), "GRANT "+group+" TO %[1]s")...)
	if _, err := GrantWriter(owner, Options{}, group, "g"); err != nil {
		t.Fatal(err)
	}
	for op, err := range writes(openPG(t, member, "g"), 1) {
		if err != nil {
			t.Errorf("%s by a member of the granted group: %v", op, err)
		}
	}
	if _, err := openPG(t, member, "h").Put([]Run{mkRun(9, "w", 1)}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `grants it only "g"`) {
		t.Errorf("Put by the member into another repository: %v, want refused", err)
	}
}
