package store

import "testing"

// TestPgConfigRequiresTLS: a host that is not loopback nor a Unix socket
// gets sslmode=require (no attempt without TLS) unless the URL or
// PGSSLMODE names a mode; loopback keeps pgx's default.
func TestPgConfigRequiresTLS(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	for _, tt := range []struct {
		url       string
		plainOK   bool // some attempt goes without TLS
		pgsslmode string
	}{
		{"postgres://u@db.internal/perf", false, ""},
		{"postgres://u@192.0.2.7:5432/perf", false, ""},
		{"postgres://u@127.0.0.1/perf", true, ""},
		{"postgres://u@localhost/perf", true, ""},
		{"postgres://u@[::1]:5432/perf", true, ""},
		{"postgres://u@/perf?host=/var/run/postgresql", true, ""},
		{"postgres://u@db.internal/perf?sslmode=disable", true, ""},
		{"postgres://u@db.internal/perf", true, "prefer"},
		{"postgres://u@db1.internal:5432,db2.internal:5432/perf", false, ""},
		{"postgres://u@127.0.0.1:5432,db2.internal:5432/perf", false, ""},
	} {
		t.Setenv("PGSSLMODE", tt.pgsslmode)
		cfg, _, _, err := pgConfig(tt.url, 0, false)
		if err != nil {
			t.Fatalf("%s: %v", tt.url, err)
		}
		plain := cfg.ConnConfig.TLSConfig == nil
		for _, fb := range cfg.ConnConfig.Fallbacks {
			plain = plain || fb.TLSConfig == nil
		}
		if plain != tt.plainOK {
			t.Errorf("%s (PGSSLMODE=%q): an attempt without TLS %v, want %v", tt.url, tt.pgsslmode, plain, tt.plainOK)
		}
	}
}

// TestPgConfigNoEnvCredentials: with NoEnvCredentials, PGPASSWORD is not
// the password; the URL's own still is.
func TestPgConfigNoEnvCredentials(t *testing.T) {
	t.Setenv("PGPASSWORD", "from-the-environment")
	t.Setenv("PGPASSFILE", t.TempDir()+"/none")
	for _, tt := range []struct {
		url, want string
		noEnv     bool
	}{
		{"postgres://u@127.0.0.1/perf", "from-the-environment", false},
		{"postgres://u@127.0.0.1/perf", "", true},
		{"postgres://u:own@127.0.0.1/perf", "own", true},
	} {
		cfg, _, _, err := pgConfig(tt.url, 0, tt.noEnv)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ConnConfig.Password; got != tt.want {
			t.Errorf("%s (noEnv %v): password %q, want %q", tt.url, tt.noEnv, got, tt.want)
		}
	}
}
