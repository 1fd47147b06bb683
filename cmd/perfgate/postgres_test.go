package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/pgtest"
	"github.com/perfgate/perfgate/store"
)

// onPostgres runs the end-to-end tests of other files again with the
// history in PostgreSQL (PERFGATE_DB a fresh schema of the test server):
// the commands must behave the same on both implementations.
var onPostgres = []struct {
	name string
	test func(*testing.T)
}{
	{"CheckVerdicts", TestCheckVerdicts},
	{"CheckNearestAncestorAndMissing", TestCheckNearestAncestorAndMissing},
	{"CheckLabelMismatchAndNew", TestCheckLabelMismatchAndNew},
	{"CompareAndHistory", TestCompareAndHistory},
	{"CheckInconclusiveAndInvalid", TestCheckInconclusiveAndInvalid},
	{"CheckPublishesInActions", TestCheckPublishesInActions},
	{"CheckAcceptedByLabelComment", TestCheckAcceptedByLabelComment},
	{"WatchCommand", TestWatchCommand},
	{"Site", TestSite},
	{"SiteAgreesWithWatch", TestSiteAgreesWithWatch},
	{"BisectStoredEnds", TestBisectStoredEnds},
	{"BisectStoredLabels", TestBisectStoredLabels},
	{"BisectRunEndToEnd", TestBisectRunEndToEnd},
	{"InvalidatedRunNeverBaseline", TestInvalidatedRunNeverBaseline},
	{"RecordCommandErrors", TestRecordCommandErrors},
	{"RunsFilters", TestRunsFilters},
	{"ImportStdinAndSince", TestImportStdinAndSince},
	{"RunCommand", TestRunCommand},
	{"MeasuredThenCommitted", TestMeasuredThenCommitted},
	{"AB", TestAB},
}

func TestOnPostgres(t *testing.T) {
	pgtest.Server(t)
	for _, c := range onPostgres {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("PERFGATE_DB", pgtest.URL(t))
			c.test(t)
		})
	}
}

const cliPassword = "cli-Secret-7777"

func noPassword(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, cliPassword) {
		t.Errorf("%s shows the password:\n%s", what, text)
	}
}

// TestPostgresUnreachableCLI: a database that cannot be reached exits 3
// with what to check and never shows the password; run saves its
// finished runs as JSONL with the command that stores them later.
func TestPostgresUnreachableCLI(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	db := "postgres://perfgate:" + cliPassword + "@127.0.0.1:1/perf?connect_timeout=2"
	t.Setenv("TMPDIR", t.TempDir()) // where run saves what it could not store
	f := writeFile(t, t.TempDir(), "serve.txt", servingBlock(100, 300, 500, 0))
	for _, args := range [][]string{{"ingest", "--name", "serving", f}, {"export"}, {"check"}, {"db", "migrate"}} {
		stdout, stderr, code := runCLI(t, "", append([]string{"--db", db, "--repo", repo}, args...)...)
		if code != 3 {
			t.Errorf("%s: exit %d, want 3; %s", args[0], code, stderr)
		}
		if !strings.Contains(stderr, "cannot reach history database postgres://perfgate@127.0.0.1:1/perf") || !strings.Contains(stderr, "check that the server is running") {
			t.Errorf("%s: stderr %q does not say what to check", args[0], stderr)
		}
		noPassword(t, args[0]+"'s output", stdout+stderr)
	}
	script := writeFile(t, t.TempDir(), "bench.sh", "#!/bin/sh\ncat <<'EOF'\n"+servingBlock(100, 300, 500, 0)+"EOF\n")
	os.Chmod(script, 0o755)
	_, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "run", "--name", "serving", "--", script)
	if code != 3 || !strings.Contains(stderr, "nothing is lost") || !strings.Contains(stderr, "import") {
		t.Errorf("run with the database down: exit %d, %s", code, stderr)
	}
	noPassword(t, "run's output", stderr)
}

// TestPostgresMigrateCLI: db migrate sets up an empty database once;
// until then a read-only command says to run it (exit 3); recover does
// not apply to a database.
func TestPostgresMigrateCLI(t *testing.T) {
	db := pgtest.URL(t)
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	if _, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "runs"); code != 3 || !strings.Contains(stderr, "db migrate") {
		t.Errorf("runs on an empty database: exit %d, %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--db", db, "db", "migrate")
	if code != 0 || !strings.Contains(stdout, "schema v0 -> v3") {
		t.Errorf("db migrate: exit %d, %q %s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, "", "--db", db, "db", "migrate", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"from": 3`) {
		t.Errorf("db migrate again: exit %d, %q", code, stdout)
	}
	if _, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "runs"); code != 0 {
		t.Errorf("runs after db migrate: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--db", db, "recover"); code != 2 || !strings.Contains(stderr, "does not apply") {
		t.Errorf("recover of a database: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--db", filepath.Join(t.TempDir(), "h.db"), "db", "migrate"); code != 2 || !strings.Contains(stderr, "applies to a PostgreSQL history") {
		t.Errorf("db migrate of a file: exit %d, %s", code, stderr)
	}
}

// TestPostgresMoveOver: perfgate export | perfgate --db postgres://...
// import - moves a history over unchanged, and back.
func TestPostgresMoveOver(t *testing.T) {
	db := pgtest.URL(t)
	repo := gitRepo(t)
	for i := range 5 {
		commit(t, repo, fmt.Sprint("c", i), map[string]string{"a.txt": fmt.Sprint(i)})
		ingestAt(t, repo, metricsJSON(100+float64(i), 300))
	}
	sha := git(t, repo, "rev-parse", "HEAD")
	runs := listRuns(t, repo)
	setUser(t, repo)
	if _, stderr, code := runCLI(t, "", "--repo", repo, "invalidate", runs.Runs[0].ID, "--reason", "throttled"); code != 0 {
		t.Fatal(stderr)
	}
	dump, stderr, code := runCLI(t, "", "--repo", repo, "export")
	if code != 0 {
		t.Fatal(stderr)
	}
	stdout, stderr, code := runCLI(t, dump, "--db", db, "--repo", repo, "import", "-")
	if code != 0 || !strings.Contains(stdout, "5") {
		t.Fatalf("import into PostgreSQL: exit %d, %q %s", code, stdout, stderr)
	}
	again, _, _ := runCLI(t, "", "--db", db, "--repo", repo, "export")
	if again != dump {
		t.Errorf("the history changed on its way to PostgreSQL:\n%s\n---\n%s", dump, again)
	}
	// The same repository's commands read it from the database.
	stdout, _, code = runCLI(t, "", "--db", db, "--repo", repo, "runs", "--commit", sha)
	if code != 0 || !strings.Contains(stdout, "serving") {
		t.Errorf("runs from PostgreSQL: exit %d, %q", code, stdout)
	}
	// Another repository in the same database sees none of it.
	other := gitRepo(t)
	commit(t, other, "c0", map[string]string{"a.txt": "0"}) // the same commit id as repo's first
	git(t, other, "remote", "add", "origin", "https://github.com/org/other.git")
	stdout, _, _ = runCLI(t, "", "--db", db, "--repo", other, "export")
	if stdout != "" {
		t.Errorf("another repository sees runs:\n%s", stdout)
	}
}

// TestPostgresSyncPullOnly: a clone pulls a repository's history branch
// straight into PostgreSQL (no local file), records and all; a second
// pull adds nothing.
func TestPostgresSyncPullOnly(t *testing.T) {
	db := pgtest.URL(t)
	root, bare := bareRemote(t)
	remote := "file://" + bare
	ci := gitRepo(t)
	setUser(t, ci)
	shas := mainHistory(t, ci, 5)
	bad := listRuns(t, ci, "--commit", shas[2])
	if _, stderr, code := runCLI(t, "", "--repo", ci, "invalidate", bad.Runs[0].ID, "--reason", "throttled"); code != 0 {
		t.Fatal(stderr)
	}
	git(t, ci, "remote", "add", "origin", remote)
	git(t, ci, "push", "-q", "origin", "main")
	if _, stderr, code := runCLI(t, "", "--repo", ci, "sync"); code != 0 {
		t.Fatalf("sync: %s", stderr)
	}
	want, _, _ := runCLI(t, "", "--repo", ci, "export")

	dev := filepath.Join(root, "dev")
	git(t, root, "clone", "-q", remote, dev)
	stdout, stderr, code := runCLI(t, "", "--db", db, "--repo", dev, "sync", "--pull-only", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"records_pulled": 1`) {
		t.Fatalf("sync --pull-only into PostgreSQL: exit %d\n%s%s", code, stdout, stderr)
	}
	got, _, _ := runCLI(t, "", "--db", db, "--repo", dev, "export")
	if got != want {
		t.Errorf("the database holds another history than the branch:\n%s\n---\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dev, ".perfgate", "history.db")); err == nil {
		t.Error("sync into PostgreSQL wrote a local history file")
	}
	stdout, _, code = runCLI(t, "", "--db", db, "--repo", dev, "sync", "--pull-only", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"pulled": 0`) {
		t.Errorf("second pull: exit %d, %s", code, stdout)
	}
}

// TestPostgresConcurrentIngest: 16 perfgate processes ingest at once into
// one database, each its own result and the same shared file: nothing is
// lost and nothing is stored twice.
func TestPostgresConcurrentIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	db := pgtest.URL(t)
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	shared := writeFile(t, dir, "shared.txt", servingBlock(42, 300, 500, 0))
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := writeFile(t, dir, fmt.Sprintf("w%d.txt", w), servingBlock(float64(w)+0.5, 300, 500, 0))
			for _, args := range [][]string{{"--name", fmt.Sprintf("worker-%d", w), f}, {"--name", "shared", shared}} {
				out, err := cliProcess(append([]string{"--db", db, "--repo", repo, "ingest", "--commit", "HEAD"}, args...)...).CombinedOutput()
				if err != nil {
					errs <- fmt.Errorf("worker %d: %v: %s", w, err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	out, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "export")
	if code != 0 {
		t.Fatal(stderr)
	}
	if n := strings.Count(out, "\n"); n != workers+1 {
		t.Errorf("%d runs stored, want %d (one per worker and the shared one once)", n, workers+1)
	}
	for w := range workers {
		if !strings.Contains(out, fmt.Sprintf(`"benchmark":"worker-%d"`, w)) {
			t.Errorf("worker %d's run was lost", w)
		}
	}
}

// TestPostgresServerGoneMidImport ends the connection of an import in
// the middle of its COPY, as a server shutting down does to each session
// (pg_terminate_backend on the shared test server): the import exits 3,
// says what to check, and nothing of it is stored.
func TestPostgresServerGoneMidImport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	db := pgtest.URL(t)
	cutImport(t, db, func(conn *pgx.Conn) {
		if _, err := conn.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'copy%perfgate%'`, pgtest.Schema(t, db)); err != nil {
			t.Fatal(err)
		}
	}, nil)
}

// TestPostgresServerStoppedMidImport stops a whole server (a fast
// shutdown, as a host going down does) while an import's COPY runs, on a
// server of its own (pgtest.Stoppable): the import exits 3 and, once the
// server is back, nothing of it is stored.
func TestPostgresServerStoppedMidImport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	server, ctl := pgtest.Stoppable(t)
	pgctl := func(what string) {
		if out, err := exec.Command(ctl, what).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", ctl, what, err, out)
		}
	}
	db := pgtest.SchemaOn(t, server)
	stopped := false
	t.Cleanup(func() {
		if stopped {
			pgctl("start")
		}
	})
	cutImport(t, db, func(conn *pgx.Conn) {
		conn.Close(context.Background()) // the server is going
		pgctl("stop")
		stopped = true
	}, func() {
		pgctl("start")
		stopped = false
	})
}

// cutImport starts an import of runs into db that waits on its input in
// the middle of its COPY, calls cut with a connection to db once the COPY
// shows in pg_stat_activity (under the schema's application_name), then
// ends the input; after the import ended, back (if any) brings the server
// back. The import must exit 3, say to check the server and that it
// stored nothing, and no run of it may be stored.
func cutImport(t *testing.T, db string, cut func(*pgx.Conn), back func()) {
	t.Helper()
	repo := gitRepo(t)
	c := commit(t, repo, "first", map[string]string{"a.txt": "1"})
	if _, stderr, code := runCLI(t, "", "--db", db, "db", "migrate"); code != 0 {
		t.Fatal(stderr)
	}
	cmd := cliProcess("--db", db, "--repo", repo, "import", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		fmt.Fprintf(stdin, `{"commit":%q,"benchmark":"b%d","time":"2026-01-01T00:00:00Z","metrics":{"mean_ttft_ms":%d},"source":{"format":"generic","file":"f%d"}}`+"\n", c, i, i, i)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	ended := false
	for range 300 {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND application_name = $1 AND state = 'active' AND query ILIKE 'copy%perfgate%'`, pgtest.Schema(t, db)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if ended = n > 0; ended {
			cut(conn)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stdin.Close()
	err = cmd.Wait()
	if !ended {
		t.Fatalf("the import's COPY never showed in pg_stat_activity: %v\n%s", err, out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 3 || !strings.Contains(out.String(), "check that the server is running") || !strings.Contains(out.String(), "stored nothing") {
		t.Errorf("import cut off by the server: exit %d\n%s", code, out.String())
	}
	if strings.Contains(out.String(), "panic") {
		t.Errorf("import panicked:\n%s", out.String())
	}
	if back != nil {
		back()
	}
	exp, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "export")
	if code != 0 || exp != "" {
		t.Errorf("after the cut import, export: exit %d, %s\n%.500s", code, stderr, exp)
	}
}

// TestDemoOnPostgres runs the README's demo (scripts/demo.sh, the built
// perfgate) with PERFGATE_DB naming a database: it must end as on a
// bbolt file (the check fails on purpose, which the script asserts) with
// its runs in the database, under the repository PERFGATE_REPOSITORY
// names.
func TestDemoOnPostgres(t *testing.T) {
	db := pgtest.URL(t)
	bin := perfgateBinary(t)
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "demo.sh"), bin)
	cmd.Env = append(os.Environ(), "PERFGATE_DB="+db, "PERFGATE_REPOSITORY=demo", "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo on PostgreSQL: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "perfgate check exit code: 1") {
		t.Errorf("the demo's check did not fail on purpose:\n%s", out)
	}
	noPassword(t, "the demo's output", string(out))
	s, err := store.Open(db, store.Options{ReadOnly: true, Repository: "demo"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Len(); err != nil || n < 10 {
		t.Errorf("the database holds %d runs of the demo (%v), want its ingested sections", n, err)
	}
}

// TestPostgresLibpqAndReadOnlyRole: the history named by db: in a rules
// file without a password, the password from PGPASSWORD (or the whole
// connection from PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE, as
// for psql, or PGSERVICE); a role granted only SELECT runs check, watch and site
// (and the site of every repository), and an ingest by it exits 3 with
// permission denied.
func TestPostgresLibpqAndReadOnlyRole(t *testing.T) {
	owner := pgtest.URL(t)
	t.Setenv("PERFGATE_DB", owner)
	repo := gitRepo(t)
	mainHistory(t, repo, 25)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "slower", map[string]string{"f.txt": "1"})
	ingestAt(t, repo, metricsJSON(130, 300))
	reader := pgtest.Role(t, owner, "GRANT USAGE ON SCHEMA %[2]s TO %[1]s", "GRANT SELECT ON ALL TABLES IN SCHEMA %[2]s TO %[1]s")
	u, err := url.Parse(reader)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	user := u.User.Username()
	u.User = url.User(user)
	t.Setenv("PERFGATE_DB", "")
	t.Setenv("PGPASSWORD", password)
	rules := writeFile(t, t.TempDir(), "rules.yml", "db: "+u.String()+"\n")
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"check", "--rules", rules, "--base", "main", "-o", "json"}, 1},
		{[]string{"watch", "--rules", rules, "--branch", "main", "--github=false"}, 0},
		{[]string{"site", "--rules", rules, "--branch", "main", "--out", filepath.Join(t.TempDir(), "site")}, 0},
		{[]string{"site", "--rules", rules, "--out", filepath.Join(t.TempDir(), "site"), "--all-repositories"}, 0},
		{[]string{"--db", u.String(), "ingest", "--name", "serving", "-"}, 3}, // ingest reads no rules
	} {
		stdout, stderr, code := runCLI(t, metricsJSON(100, 300), append([]string{"--repo", repo}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%v as the read-only role (PGPASSWORD): exit %d, want %d\n%s%s", tt.args, code, tt.code, stdout, stderr)
		}
		if tt.code == 3 && !strings.Contains(stderr, "permission denied") {
			t.Errorf("ingest as the read-only role: %s", stderr)
		}
		noPassword(t, tt.args[0], stdout+stderr)
		if strings.Contains(stdout+stderr, password) {
			t.Errorf("%s shows the role's password:\n%s%s", tt.args[0], stdout, stderr)
		}
	}
	// The whole connection from the environment: --db postgres:// with
	// only the schema in the URL.
	host, port, _ := strings.Cut(u.Host, ":")
	t.Setenv("PGHOST", host)
	t.Setenv("PGPORT", port)
	t.Setenv("PGUSER", user)
	t.Setenv("PGDATABASE", strings.TrimPrefix(u.Path, "/"))
	q := u.Query()
	env := "postgres://?" + url.Values{"search_path": {q.Get("search_path")}, "sslmode": {q.Get("sslmode")}}.Encode()
	if q.Get("sslmode") == "" {
		env = "postgres://?" + url.Values{"search_path": {q.Get("search_path")}}.Encode()
	}
	stdout, stderr, code := runCLI(t, "", "--db", env, "--repo", repo, "runs", "-o", "json")
	if code != 0 || strings.Count(stdout, `"id":`) != 26 {
		t.Errorf("runs with the connection from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE: exit %d\n%.500s%s", code, stdout, stderr)
	}
	// Or from a service of PGSERVICEFILE named by PGSERVICE.
	for _, k := range []string{"PGHOST", "PGPORT", "PGUSER", "PGDATABASE"} {
		t.Setenv(k, "")
	}
	service := fmt.Sprintf("[perf]\nhost=%s\nport=%s\nuser=%s\ndbname=%s\n", host, port, user, strings.TrimPrefix(u.Path, "/"))
	if m := q.Get("sslmode"); m != "" {
		service += "sslmode=" + m + "\n"
	}
	t.Setenv("PGSERVICEFILE", writeFile(t, t.TempDir(), "pg_service.conf", service))
	t.Setenv("PGSERVICE", "perf")
	onlySchema := "postgres://?" + url.Values{"search_path": {q.Get("search_path")}}.Encode()
	stdout, stderr, code = runCLI(t, "", "--db", onlySchema, "--repo", repo, "runs", "-o", "json")
	if code != 0 || strings.Count(stdout, `"id":`) != 26 {
		t.Errorf("runs with the connection from PGSERVICE: exit %d\n%.500s%s", code, stdout, stderr)
	}
	// A wrong password: exit 3, saying what to check, without it.
	t.Setenv("PGPASSWORD", "wrong-"+password)
	stdout, stderr, code = runCLI(t, "", "--db", env, "--repo", repo, "check")
	if code != 3 || !strings.Contains(stderr, "refused the login") || !strings.Contains(stderr, "PGPASSWORD") || strings.Contains(stdout+stderr, password) {
		t.Errorf("check with a wrong PGPASSWORD: exit %d, want 3 and what to check without the password\n%s%s", code, stdout, stderr)
	}
}

// TestPostgresRepositoryName: repository: in .perfgate.yml names the
// history a checkout reads and writes, whatever its remote (a fork or a
// mirror sharing the upstream's history); PERFGATE_REPOSITORY overrides
// it; a checkout named otherwise sees none of it.
func TestPostgresRepositoryName(t *testing.T) {
	t.Setenv("PERFGATE_DB", pgtest.URL(t))
	t.Setenv("PERFGATE_REPOSITORY", "")
	upstream := gitRepo(t)
	git(t, upstream, "remote", "add", "origin", "https://github.com/org/engine.git")
	commit(t, upstream, "rules", map[string]string{".perfgate.yml": "repository: github.com/org/engine\n"})
	ingestAt(t, upstream, metricsJSON(100, 300))
	mirror := filepath.Join(t.TempDir(), "mirror")
	git(t, filepath.Dir(mirror), "clone", "-q", upstream, mirror)
	git(t, mirror, "remote", "set-url", "origin", "git@git.internal:mirrors/engine.git")
	other := filepath.Join(t.TempDir(), "other")
	git(t, filepath.Dir(other), "clone", "-q", upstream, other)
	git(t, other, "remote", "set-url", "origin", "git@git.internal:mirrors/other.git")
	os.WriteFile(filepath.Join(other, ".perfgate.yml"), []byte("repository: git.internal/other\n"), 0o644)
	count := func(dir string) int {
		t.Helper()
		out, stderr, code := runCLI(t, "", "--repo", dir, "export")
		if code != 0 {
			t.Fatalf("export in %s: %s", dir, stderr)
		}
		return strings.Count(out, "\n")
	}
	if n := count(mirror); n != 1 {
		t.Errorf("the mirror (repository: github.com/org/engine) sees %d runs, want the upstream's 1", n)
	}
	if n := count(other); n != 0 {
		t.Errorf("a checkout named git.internal/other sees %d runs of github.com/org/engine", n)
	}
	t.Setenv("PERFGATE_REPOSITORY", "github.com/org/engine")
	if n := count(other); n != 1 {
		t.Errorf("PERFGATE_REPOSITORY=github.com/org/engine in another checkout: %d runs, want 1", n)
	}
}

// TestPostgresRunEnvHasNoPassword: the benchmark perfgate run executes
// does not inherit PGPASSWORD nor a variable holding the database URL
// with its password, while its run is stored in the database.
func TestPostgresRunEnvHasNoPassword(t *testing.T) {
	db := pgtest.URL(t)
	u, err := url.Parse(db)
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	if password == "" {
		t.Skip("the test server's URL has no password")
	}
	t.Setenv("PERFGATE_DB", db)
	t.Setenv("PGPASSWORD", password)
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env.txt")
	script := writeFile(t, dir, "bench.sh", "#!/bin/sh\nenv > '"+envFile+"'\ncat <<'EOF'\n"+servingBlock(100, 300, 500, 0)+"EOF\n")
	os.Chmod(script, 0o755)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--", script)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	env, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), password) || strings.Contains(string(env), "PGPASSWORD=") {
		t.Errorf("the benchmark's environment holds the database password:\n%s", env)
	}
	noPassword(t, "run's output", stdout+stderr)
	if n := strings.Count(mustExport(t, repo), "\n"); n != 1 {
		t.Errorf("%d runs stored, want 1", n)
	}
}

func mustExport(t *testing.T, repo string) string {
	t.Helper()
	out, stderr, code := runCLI(t, "", "--repo", repo, "export")
	if code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	return out
}

// Rows of the database are read as lines of the history branch are
// (issue 34): a row no perfgate would have stored (an empty commit id, a
// control character or a workflow command in a name, metrics that are no
// numbers) is left out with a warning naming it, and every command of the
// repository still works on the other rows.
func TestPostgresBadRowsLeftOut(t *testing.T) {
	db := pgtest.URL(t)
	t.Setenv("PERFGATE_DB", db)
	t.Setenv("PERFGATE_REPOSITORY", "github.com/org/engine")
	repo := gitRepo(t)
	mainHistory(t, repo, 3)
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	cols := "repository, commit, id, benchmark, time_ns, metrics, labels, source_format, source_file, source_line, command, exit_code, dirty, invalid, testbed, env, tree"
	for _, bad := range []string{
		// an empty commit id
		"repository, '', '0123456789abcdef0123456789abcdef', benchmark, time_ns, metrics, labels, source_format, source_file, source_line, command, exit_code, dirty, invalid, testbed, env, tree",
		// a control character and a workflow command in the benchmark's name
		"repository, commit, '1123456789abcdef0123456789abcdef', E'serving\\n::warning::forged\\x1b[31m', time_ns, metrics, labels, source_format, source_file, source_line, command, exit_code, dirty, invalid, testbed, env, tree",
		// metrics that are no numbers
		`repository, commit, '2123456789abcdef0123456789abcdef', benchmark, time_ns, '{"mean_ttft_ms": "fast"}'::jsonb, labels, source_format, source_file, source_line, command, exit_code, dirty, invalid, testbed, env, tree`,
	} {
		if _, err := conn.Exec(context.Background(), "INSERT INTO perfgate_runs ("+cols+") SELECT "+bad+" FROM perfgate_runs WHERE repository = 'github.com/org/engine' LIMIT 1"); err != nil {
			t.Fatal(err)
		}
	}
	// and a record that is no record
	if _, err := conn.Exec(context.Background(), `INSERT INTO perfgate_records VALUES ('github.com/org/engine', '3123456789abcdef0123456789abcdef', 'accept', '', '', '', '', '', '', now(), 'not a record')`); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"runs"}, {"runs", "-o", "json"}, {"export"}, {"check", "--rule", "mean_ttft_ms:5%"}, {"history", "--name", "serving", "--metric", "mean_ttft_ms"}} {
		stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, args...)...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
		if strings.ContainsAny(stdout+stderr, "\x1b") || strings.Contains(stdout, "::warning::") {
			t.Errorf("%v: a row's text printed raw:\n%q\n%q", args, stdout, stderr)
		}
		for _, line := range strings.Split(stderr, "\n") {
			if strings.HasPrefix(line, "::") {
				t.Errorf("%v: stderr line %q is a workflow command", args, line)
			}
		}
		if !strings.Contains(stderr, `row seq 5 (id "1123456789abcdef0123456789abcdef") of perfgate_runs is no valid run, left out`) {
			t.Errorf("%v: the bad rows are not named:\n%s", args, stderr)
		}
		if args[0] != "check" && args[0] != "history" && !strings.Contains(stderr, `id "0123456789abcdef0123456789abcdef"`) {
			t.Errorf("%v: the row of an empty commit is not named:\n%s", args, stderr)
		}
	}
}

// parallel runs t beside the other parallel tests, except when a caller
// chose the history for it through the environment (TestOnPostgres sets
// PERFGATE_DB with t.Setenv, and a test under t.Setenv cannot be
// parallel): then it runs in turn.
func parallel(t *testing.T) {
	t.Helper()
	if _, ok := os.LookupEnv("PERFGATE_DB"); ok {
		return
	}
	t.Parallel()
}
