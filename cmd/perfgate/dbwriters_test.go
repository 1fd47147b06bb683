package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// writerRole makes a login role with the grants docs/postgres.md gives a
// writer, and returns its URL and name.
func writerRole(t *testing.T, owner string) (string, string) {
	u, err := url.Parse(owner)
	if err != nil {
		t.Fatal(err)
	}
	w := pgtest.Role(t, owner, "GRANT USAGE ON SCHEMA %[2]s TO %[1]s", "GRANT SELECT ON ALL TABLES IN SCHEMA %[2]s TO %[1]s",
		"GRANT INSERT ON %[2]s.perfgate_runs, %[2]s.perfgate_records TO %[1]s",
		"GRANT INSERT, UPDATE, DELETE ON %[2]s.perfgate_marks TO %[1]s",
		"GRANT TEMPORARY ON DATABASE "+strings.TrimPrefix(u.Path, "/")+" TO %[1]s")
	wu, err := url.Parse(w)
	if err != nil {
		t.Fatal(err)
	}
	return w, wu.User.Username()
}

// TestPostgresWritersCLI: db migrate warns of the writer roles that
// write no repository; db grant lets writer A store runs and acceptances
// in repository a only: into b, ingest, accept and import exit 3 naming
// the role, the repository and the db grant command the owner runs,
// while writer B stores into b; db writers lists the grants; db revoke
// takes one back.
func TestPostgresWritersCLI(t *testing.T) {
	owner := pgtest.URL(t)
	if _, stderr, code := runCLI(t, "", "--db", owner, "db", "migrate"); code != 0 {
		t.Fatalf("db migrate: exit %d, %s", code, stderr)
	}
	a, roleA := writerRole(t, owner)
	b, roleB := writerRole(t, owner)
	stdout, stderr, code := runCLI(t, "", "--db", owner, "db", "migrate", "-o", "json")
	if code != 0 || !strings.Contains(stderr, roleA) || !strings.Contains(stderr, roleB) || !strings.Contains(stderr, "db grant --role ROLE --repository NAME") || !strings.Contains(stdout, `"unscoped_writers": [`) {
		t.Errorf("db migrate with two unscoped writers: exit %d, %s%s", code, stdout, stderr)
	}
	for _, g := range [][2]string{{roleA, "github.com/org/a"}, {roleB, "github.com/org/b"}} {
		stdout, stderr, code := runCLI(t, "", "--db", owner, "db", "grant", "--role", g[0], "--repository", g[1])
		if code != 0 || !strings.Contains(stdout, "may now write repository") {
			t.Fatalf("db grant %v: exit %d, %s%s", g, code, stdout, stderr)
		}
	}
	stdout, _, code = runCLI(t, "", "--db", owner, "db", "writers")
	if code != 0 || !strings.Contains(stdout, roleA+"  github.com/org/a") || !strings.Contains(stdout, roleB+"  github.com/org/b") {
		t.Errorf("db writers: exit %d, %s", code, stdout)
	}
	repo := gitRepo(t)
	head := commit(t, repo, "first", map[string]string{"a.txt": "1"})
	t.Setenv("TMPDIR", t.TempDir()) // where ingest saves what it could not store
	refused := func(what, stderr string, code int) {
		t.Helper()
		want := []string{`role "` + roleA + `" may not write repository "github.com/org/b"`, "db grant --role " + roleA + " --repository github.com/org/b"}
		if code != 3 || !strings.Contains(stderr, want[0]) || !strings.Contains(stderr, want[1]) {
			t.Errorf("%s by A into b: exit %d, want 3 and %q\n%s", what, code, want, stderr)
		}
	}
	t.Setenv("PERFGATE_REPOSITORY", "github.com/org/b")
	if _, stderr, code := runCLI(t, metricsJSON(100, 300), "--db", b, "--repo", repo, "ingest", "--name", "serving", "-"); code != 0 {
		t.Errorf("ingest by B into b: exit %d, %s", code, stderr)
	}
	_, stderr, code = runCLI(t, metricsJSON(100, 300), "--db", a, "--repo", repo, "ingest", "--name", "serving", "-")
	refused("ingest", stderr, code)
	_, stderr, code = runCLI(t, "", "--db", a, "--repo", repo, "accept", "--benchmark", "serving", "--metric", "Mean TTFT", "--commit", head, "--reason", "forged")
	refused("accept", stderr, code)
	line := `{"commit":"` + head + `","benchmark":"serving","time":"2025-03-01T12:00:00Z","metrics":{"mean_ttft_ms":1},"source":{"format":"generic-json","file":"x","line":1}}` + "\n"
	_, stderr, code = runCLI(t, line, "--db", a, "--repo", repo, "import", "-")
	refused("import", stderr, code)
	t.Setenv("PERFGATE_REPOSITORY", "github.com/org/a")
	if _, stderr, code := runCLI(t, metricsJSON(100, 300), "--db", a, "--repo", repo, "ingest", "--name", "serving", "-"); code != 0 {
		t.Errorf("ingest by A into a: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--db", a, "--repo", repo, "accept", "--benchmark", "serving", "--metric", "Mean TTFT", "--commit", head, "--reason", "ok"); code != 0 {
		t.Errorf("accept by A into a: exit %d, %s", code, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--db", owner, "db", "revoke", "--role", roleA, "--repository", "github.com/org/a")
	if code != 0 || !strings.Contains(stdout, "may no longer write") {
		t.Errorf("db revoke: exit %d, %s%s", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--db", a, "db", "grant", "--role", roleA, "--repository", "github.com/org/b"); code != 3 || !strings.Contains(stderr, "owner") {
		t.Errorf("db grant by a writer: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--db", owner, "db", "grant", "--role", roleA); code != 2 || !strings.Contains(stderr, "repository") {
		t.Errorf("db grant without --repository: exit %d, %s", code, stderr)
	}
}
