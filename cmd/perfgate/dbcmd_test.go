package main

import (
	"net/url"
	"strings"
	"testing"
)

func TestRemoteName(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/Org/Engine.git":              "github.com/Org/Engine",
		"https://user:tok@GitHub.com/org/engine":         "github.com/org/engine",
		"git@github.com:org/engine.git":                  "github.com/org/engine",
		"ssh://git@github.example.com:22/org/engine.git": "github.example.com/org/engine",
		"":                    "",
		"/srv/git/engine.git": "/srv/git/engine.git",
	} {
		if got := remoteName(in); got != want {
			t.Errorf("remoteName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactDB(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db?sslmode=require": "postgres://u@h:5432/db?sslmode=require",
		"postgresql://u@h/db?password=secret":           "postgresql://u@h/db",
		"postgres://h/db":                               "postgres://h/db",
		"postgres://u@h/db?sslpassword=keysecret":       "postgres://u@h/db",
		".perfgate/history.db":                          ".perfgate/history.db",
	} {
		if got := redactDB(in); got != want {
			t.Errorf("redactDB(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedactDB: a database URL's password never survives redactDB, and
// remoteName never panics on what git config holds.
func FuzzRedactDB(f *testing.F) {
	f.Add("postgres://u:secret@h:5432/db", "secret")
	f.Add("postgresql://u@h/db?password=secret", "secret")
	f.Add("git@github.com:org/engine.git", "x")
	f.Fuzz(func(t *testing.T, raw, pw string) {
		remoteName(raw)
		if len(pw) < 4 || strings.ContainsAny(pw, "%+&=?#/@:") {
			return
		}
		u := "postgres://user:" + url.PathEscape(pw) + "@" + raw
		if parsed, err := url.Parse(u); err != nil || parsed.User == nil {
			return
		}
		if got := redactDB(u); strings.Contains(got, pw) && !strings.Contains(strings.TrimPrefix(raw, ""), pw) {
			t.Errorf("redactDB(%q) = %q keeps the password", u, got)
		}
	})
}
