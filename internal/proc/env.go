package proc

import (
	"net/url"
	"os"
	"strings"
)

// Environ is the environment of a user's benchmark command: perfgate's
// own, without the credentials perfgate reads (GITHUB_TOKEN, GH_TOKEN,
// PERFGATE_GITHUB_TOKEN, ...). A benchmark, often a pull request's code,
// needs none of them, and perfgate must not be the one that hands them
// over.
func Environ() []string { return WithoutSecrets(os.Environ()) }

// WithoutSecrets returns env (NAME=VALUE entries) without the entries
// whose name is a credential (Secret).
func WithoutSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if !Secret(name) && !urlWithPassword(value) {
			out = append(out, kv)
		}
	}
	return out
}

// secrets are the tokens of GitHub, of the gh CLI and of the Actions
// runner.
var secrets = map[string]bool{"GITHUB_TOKEN": true, "GH_TOKEN": true, "GITHUB_ENTERPRISE_TOKEN": true, "GH_ENTERPRISE_TOKEN": true,
	// The Actions runner's own: its cache and artifact service, and OIDC.
	"ACTIONS_RUNTIME_TOKEN": true, "ACTIONS_ID_TOKEN_REQUEST_TOKEN": true,
	// PostgreSQL's password, for a history in a database (--db postgres://),
	// and the password of its client key.
	"PGPASSWORD": true, "PGSSLPASSWORD": true}

// urlWithPassword reports whether a value is a URL that carries a
// password (PERFGATE_DB=postgres://user:password@host/db, or its
// password= or sslpassword= parameter).
func urlWithPassword(v string) bool {
	if !strings.Contains(v, "://") {
		return false
	}
	u, err := url.Parse(v)
	if err != nil {
		// Unparsable but URL-shaped: user:password@ before the host.
		_, rest, _ := strings.Cut(v, "://")
		userinfo, _, found := strings.Cut(rest, "@")
		return found && strings.Contains(userinfo, ":")
	}
	if _, ok := u.User.Password(); ok {
		return true
	}
	q := u.Query()
	return q.Has("password") || q.Has("sslpassword")
}

// Secret reports whether the variable name holds a credential: a GitHub
// token, or any PERFGATE_ variable whose name says TOKEN. Names are
// compared without case, as Windows does.
func Secret(name string) bool {
	n := strings.ToUpper(name)
	return secrets[n] || strings.HasPrefix(n, "PERFGATE_") && strings.Contains(n, "TOKEN")
}

// GitEnv is the environment of a git subprocess: perfgate's without the
// credentials (a hook or helper that the repository's own configuration
// names, which earlier pull-request code may have written, must not see a
// token), with the system configuration off, plus extra.
func GitEnv(extra ...string) []string {
	return append(append(Environ(), "GIT_CONFIG_NOSYSTEM=1"), extra...)
}

// GitArgs prefixes a git command line with the settings that keep the
// repository's configuration from running programs: no filesystem
// monitor (core.fsmonitor runs a hook on git status) and no hooks.
func GitArgs(args ...string) []string {
	return append([]string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.DevNull}, args...)
}
