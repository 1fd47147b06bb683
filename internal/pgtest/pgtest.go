// Package pgtest gives tests a PostgreSQL database of their own: a fresh
// schema in the server PERFGATE_TEST_POSTGRES names (a postgres:// URL of
// a role that may create schemas), dropped when the test ends, so tests
// of several packages can run at once against one server. Without the
// variable the test is skipped with a message, unless
// PERFGATE_REQUIRE_POSTGRES=1 (CI): then it fails.
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

// Server returns the test server's URL, or skips (fails under
// PERFGATE_REQUIRE_POSTGRES=1) when there is none.
func Server(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("PERFGATE_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("PERFGATE_REQUIRE_POSTGRES=1 but %s is not set: CI must run the PostgreSQL tests (.ci/run starts a server)", Env)
		}
		t.Skipf("no PostgreSQL server: set %s=postgres://USER:PASSWORD@HOST:PORT/DB to run the PostgreSQL tests", Env)
	}
	return u
}

// URL creates a fresh schema on the test server and returns a URL whose
// connections use it (search_path). The schema is dropped at cleanup.
func URL(t testing.TB) string {
	t.Helper()
	server := Server(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "perfgate_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to the test server (%s): %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			t.Logf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
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
	var b [6]byte
	rand.Read(b[:])
	role := "perfgate_test_role_" + hex.EncodeToString(b[:])
	rand.Read(b[:])
	password := hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		t.Fatalf("connect to the test server (%s): %v", Env, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD '"+password+"'"); err != nil {
		if os.Getenv("PERFGATE_REQUIRE_POSTGRES") == "1" {
			t.Fatalf("create a role (the role of %s needs CREATEROLE): %v", Env, err)
		}
		t.Skipf("the role of %s may not create roles (CREATEROLE): %v", Env, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		conn.Exec(ctx, "DROP OWNED BY "+role)
		conn.Exec(ctx, "DROP ROLE "+role)
	})
	for _, st := range statements {
		if _, err := conn.Exec(ctx, fmt.Sprintf(st, role, schema)); err != nil {
			t.Fatalf("%s: %v", fmt.Sprintf(st, role, schema), err)
		}
	}
	u.User = url.UserPassword(role, password)
	return u.String()
}
