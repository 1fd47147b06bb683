// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the server PERFGATE_TEST_POSTGRES names (a postgres:// URL of
// a role that may create schemas), dropped when the test ends, so tests
// of several packages can run at once against one server. Without the
// variable the test is skipped with a message, unless
// PERFGATE_REQUIRE_POSTGRES=1 (CI): then it fails. A second server, which
// a test may stop and start again, is named by StoppableEnv and its
// control script by CtlEnv (.ci/postgres starts both).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the variable holding the test server's URL.
const Env = "PERFGATE_TEST_POSTGRES"

// StoppableEnv names the variable holding the URL of the server a test
// may stop; CtlEnv the script that stops ("stop") and starts ("start") it.
const (
	StoppableEnv = "PERFGATE_TEST_POSTGRES_STOPPABLE"
	CtlEnv       = "PERFGATE_TEST_POSTGRES_CTL"
)

// Server returns the test server's URL, or skips (fails under
// PERFGATE_REQUIRE_POSTGRES=1) when there is none.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		need(t, fmt.Sprintf("%s is not set: CI must run the PostgreSQL tests (.ci/run starts a server)", Env),
			fmt.Sprintf("no PostgreSQL server: set %s=postgres://USER:PASSWORD@HOST:PORT/DB to run the PostgreSQL tests", Env))
	}
	return u
}

// Stoppable returns the URL of the server a test may stop and the script
// that stops and starts it, or skips (fails under
// PERFGATE_REQUIRE_POSTGRES=1) when there is none.
func Stoppable(t testing.TB) (server, ctl string) {
	t.Helper()
	server, ctl = os.Getenv(StoppableEnv), os.Getenv(CtlEnv)
	if server == "" || ctl == "" {
		need(t, fmt.Sprintf("%s or %s is not set: .ci/postgres starts the stoppable server", StoppableEnv, CtlEnv),
			fmt.Sprintf("no stoppable PostgreSQL server: .ci/postgres's start_postgres starts one (%s, %s)", StoppableEnv, CtlEnv))
	}
	return server, ctl
}

// need fails the test under PERFGATE_REQUIRE_POSTGRES=1, else skips it.
func need(t testing.TB, required, skipped string) {
	t.Helper()
	if os.Getenv("PERFGATE_REQUIRE_POSTGRES") == "1" {
		t.Fatalf("PERFGATE_REQUIRE_POSTGRES=1 but %s", required)
	}
	t.Skip(skipped)
}

// URL creates a fresh schema on the test server and returns a URL whose
// connections use it (search_path). The schema is dropped at cleanup.
func URL(t testing.TB) string {
	t.Helper()
	return SchemaOn(t, Server(t))
}

// SchemaOn is URL on the server of a postgres:// URL.
func SchemaOn(t testing.TB, server string) string {
	t.Helper()
	schema := "perfgate_test_" + token()
	run(t, server, "CREATE SCHEMA "+schema)
	cleanup(t, server, "DROP SCHEMA "+schema+" CASCADE")
	// The schema names the connections too (application_name), so that a
	// test can find its own in pg_stat_activity.
	return WithParam(t, WithParam(t, server, "search_path", schema), "application_name", schema)
}

// Schema returns the schema of a URL that URL returned.
func Schema(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("search_path")
}

// WithParam returns the URL with a query parameter set.
func WithParam(t testing.TB, raw, key, value string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", Env, err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// Role creates a login role with a password and no privileges, runs the
// statements (each with %[1]s for the role and %[2]s for the URL's
// schema) as the test server's role, and returns the URL of schemaURL
// for the new role. The role is dropped at cleanup. It skips when the
// server's role may not create roles (CREATEROLE), unless
// PERFGATE_REQUIRE_POSTGRES=1.
func Role(t testing.TB, schemaURL string, statements ...string) string {
	t.Helper()
	server := Server(t)
	u, err := url.Parse(schemaURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	role, password := "perfgate_test_role_"+token(), token()
	conn, ctx, done := connect(t, server)
	defer done()
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD '"+password+"'"); err != nil {
		need(t, fmt.Sprintf("the role of %s may not create roles (it needs CREATEROLE): %v", Env, err),
			fmt.Sprintf("the role of %s may not create roles (CREATEROLE): %v", Env, err))
	}
	cleanup(t, server, "DROP OWNED BY "+role, "DROP ROLE "+role)
	for _, st := range statements {
		if _, err := conn.Exec(ctx, fmt.Sprintf(st, role, schema)); err != nil {
			t.Fatalf("%s: %v", fmt.Sprintf(st, role, schema), err)
		}
	}
	u.User = url.UserPassword(role, password)
	return u.String()
}

// token is 12 random hex digits, for names no other test takes.
func token() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// connect connects to server, failing the test when it cannot; done
// closes the connection.
func connect(t testing.TB, server string) (*pgx.Conn, context.Context, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		cancel()
		t.Fatalf("connect to the test server (%s): %v", Env, err)
	}
	return conn, ctx, func() { conn.Close(ctx); cancel() }
}

// run runs the statements on server, failing the test on an error.
func run(t testing.TB, server string, statements ...string) {
	t.Helper()
	conn, ctx, done := connect(t, server)
	defer done()
	for _, st := range statements {
		if _, err := conn.Exec(ctx, st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

// cleanup runs the statements on server when the test ends, logging
// what fails (the server may be gone by then).
func cleanup(t testing.TB, server string, statements ...string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Logf("clean up the test server: %v", err)
			return
		}
		defer conn.Close(ctx)
		for _, st := range statements {
			if _, err := conn.Exec(ctx, st); err != nil {
				t.Logf("%s: %v", st, err)
			}
		}
	})
}
