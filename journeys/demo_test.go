package journeys

import (
	"path/filepath"
	"strings"
	"testing"
)

// readmeCommand is the command README.md gives after marker (e.g.
// <!-- ci:try -->): the line after the fence that follows it, as .ci/run
// reads it.
func readmeCommand(t *testing.T, marker string) string {
	t.Helper()
	lines := strings.Split(readFile(t, filepath.Join(repoRoot, "README.md")), "\n")
	for i, l := range lines {
		if l == marker && i+2 < len(lines) {
			return lines[i+2]
		}
	}
	t.Fatalf("README.md has no %s command", marker)
	return ""
}

// TestJourneyReadmeDemo runs the README's demo exactly as the README
// prints it (the command after <!-- ci:try -->, with bash, from the root
// of the checkout), on a laptop and with CI=true: it builds bin/perfgate
// (ignored by git) and ends with the check failing on purpose, FAIL and
// "perfgate check exit code: 1".
func TestJourneyReadmeDemo(t *testing.T) {
	need(t, "bash", "go")
	cmd := readmeCommand(t, "<!-- ci:try -->")
	if !strings.Contains(cmd, "scripts/demo.sh") {
		t.Fatalf("the README's try command %q does not run the demo", cmd)
	}
	m := laptop(t)
	if r := m.exec(repoRoot, "git", "rev-parse", "--is-inside-work-tree"); r.code == 0 {
		if r := m.exec(repoRoot, "git", "check-ignore", "-q", "bin/perfgate"); r.code != 0 {
			t.Errorf("bin/perfgate, which the README's demo builds, is not ignored by git: %s", r)
		}
	}
	for _, tt := range []struct {
		name string
		m    *machine
	}{
		{"laptop", m},
		{"CI=true", m.with("CI=true")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.m.exec(repoRoot, "bash", "-euo", "pipefail", "-c", cmd)
			lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
			last := lines[len(lines)-1]
			if r.code != 0 || !strings.HasPrefix(last, "perfgate check exit code: 1 ") || !strings.Contains(r.stdout, "\nFAIL ") {
				t.Errorf("the demo must end in FAIL and \"perfgate check exit code: 1\" (and exit 0): %s", r)
			}
		})
	}
}
