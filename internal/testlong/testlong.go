// Package testlong gates the long quality experiments of the test suite
// (the 1,000-trial bisect, the real-noise quality runs) behind the
// environment variable PERFGATE_LONG_TESTS, so that a contributor's
// `go test ./...` stays quick while CI (.ci/run sets PERFGATE_LONG_TESTS=1)
// still runs everything. A behaviour test never calls Skip: only an
// experiment that measures quality over many trials does.
package testlong

import (
	"os"
	"testing"
)

// Env is the variable that, set to 1, runs the long tests.
const Env = "PERFGATE_LONG_TESTS"

// Enabled reports whether the long tests run (PERFGATE_LONG_TESTS=1).
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips t unless PERFGATE_LONG_TESTS=1, saying how to run it.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("a long quality experiment: set %s=1 to run it (.ci/run does)", Env)
	}
}
