package store

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// summaryJSON stands for a request summary (package slo's compact JSON;
// the store does not interpret it).
const summaryJSON = `{"v":1,"requests":3,"alpha":0.01,"ttft":{"n":3,"min":1.5,"max":9,"sum":12,"start":10,"counts":[1,0,2]},"joint":{"shift":[0,0,0],"cells":[[10,-1,-1,1],[12,-1,-1,2]]}}`

// confRequests: a run's request summary survives Put, the queries and
// export | import byte for byte; it is not part of the run's identity, so
// the same result stored before summaries were kept is not stored again;
// an invalid one is bad input.
func confRequests(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	plain := mkRun(1, "serving", 10)
	with := plain
	with.Requests = []byte(summaryJSON)
	if ContentID(with) != ContentID(plain) {
		t.Error("the request summary is part of the identity")
	}
	mustPut(t, s, plain)
	if n, err := s.Put([]Run{with}); err != nil || n != 0 {
		t.Errorf("the same result with a summary: Put = %d, %v; want a no-op", n, err)
	}
	other1 := mkRun(1, "serving", 11)
	other1.Requests = []byte(summaryJSON)
	mustPut(t, s, other1)
	got, err := s.ByCommit(plain.Commit)
	if err != nil || len(got) != 2 {
		t.Fatal(got, err)
	}
	var n int
	for _, r := range got {
		if r.Requests != nil {
			n++
			if string(r.Requests) != summaryJSON {
				t.Errorf("read back %s", r.Requests)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d runs with a summary, want 1", n)
	}
	var out bytes.Buffer
	if _, err := s.Export(&out, Filter{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `,"requests":`+summaryJSON+`}`) {
		t.Errorf("export:\n%s", out.String())
	}
	other := newBackend(t, b.name).open(t, Options{Repository: "r"})
	// A hand-edited line with blanks in its summary imports compacted.
	pretty := strings.Replace(out.String(), `"requests":{"v":1,`, `"requests": { "v": 1 ,`, 1)
	if a, _, err := other.Import(strings.NewReader(pretty), ImportOptions{File: "x.jsonl"}); err != nil || a != 2 {
		t.Fatalf("import = %d, %v", a, err)
	}
	var again bytes.Buffer
	if _, err := other.Export(&again, Filter{}); err != nil {
		t.Fatal(err)
	}
	if again.String() != out.String() {
		t.Errorf("export | import | export changed the runs:\n%s\n---\n%s", out.String(), again.String())
	}
	for _, bad := range []string{`[1]`, `{"v":1`, `{ "v":1}`, ``} {
		r := mkRun(2, "serving", 1)
		r.Requests = []byte(bad)
		if _, err := s.Put([]Run{r}); err == nil || !strings.Contains(err.Error(), "request summary") {
			t.Errorf("summary %q: %v", bad, err)
		}
	}
}

// TestPostgresUpgradeV1: a history of schema v1 (before request
// summaries) keeps its runs when migrated, and they read without one.
func TestPostgresUpgradeV1(t *testing.T) {
	raw := pgtest.URL(t)
	conn := connect(t, raw)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE TABLE perfgate_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
		pgMigrations[0],
		`INSERT INTO perfgate_schema (version) VALUES (1)`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	old := mkRun(1, "serving", 10)
	old.Time = t0
	old.ID = ContentID(old)
	v := runValues("r", &old)
	if _, err := conn.Exec(ctx, `INSERT INTO perfgate_runs (`+strings.Join(runColumns[:len(runColumns)-1], ", ")+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)`, v[:len(v)-1]...); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(raw, Options{Repository: "r", NoMigrate: true}); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("Open of a v1 schema without migrating: %v, want ErrNeedsMigration", err)
	}
	from, to, err := Migrate(raw, Options{})
	if err != nil || from != 1 || to != PostgresSchemaVersion {
		t.Fatalf("Migrate = %d, %d, %v", from, to, err)
	}
	s, err := Open(raw, Options{Repository: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.ByCommit(old.Commit)
	if err != nil || len(got) != 1 || got[0].ID != old.ID || got[0].Requests != nil {
		t.Fatalf("the v1 run reads as %+v, %v", got, err)
	}
	with := mkRun(1, "serving", 11)
	with.Requests = []byte(summaryJSON)
	mustPut(t, s, with)
}
