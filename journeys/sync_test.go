package journeys

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestJourneyCIHistoryOnLaptop: CI records main's runs (ingested with
// CI=true) and shares them through origin's perfgate-history branch; a
// developer clones, pulls the history (perfgate sync --pull-only) and
// measures a change locally (perfgate run): the laptop is not the CI
// runner, so the check says nothing was compared and why, naming both
// testbeds, and is inconclusive, never a pass, whether the change
// regressed or not.
func TestJourneyCIHistoryOnLaptop(t *testing.T) {
	dev := laptop(t)
	// A GitHub Actions runner: CI=true alone on this very machine would be
	// this machine's testbed, which it is.
	ci := dev.with("CI=true", "GITHUB_ACTIONS=true")
	origin := filepath.Join(t.TempDir(), "origin.git")
	dev.git(t.TempDir(), "init", "-q", "--bare", "-b", "main", origin)
	runner := filepath.Join(t.TempDir(), "runner")
	ci.git(t.TempDir(), "clone", "-q", "file://"+origin, runner)
	ci.git(runner, "symbolic-ref", "HEAD", "refs/heads/main")
	h := sectionsHistory(t, logFile())
	for i, f := range h.main {
		ci.commit(runner, "change "+filepath.Base(f), map[string]string{"change.txt": strings.Repeat("x", i+1)})
		ci.must(runner, "ingest", "--name", "serving", f)
	}
	ci.git(runner, "push", "-q", "origin", "main")
	ci.must(runner, "sync")
	for _, hd := range heads(t, dev, h) {
		t.Run(hd.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			dev.git(t.TempDir(), "clone", "-q", "file://"+origin, work)
			dev.git(work, "checkout", "-q", "-b", "feature")
			dev.commit(work, "the change", map[string]string{"change.txt": hd.name})
			dev.must(work, "sync", "--pull-only")
			dev.must(work, "run", "--name", "serving", "--", "cat", hd.file)
			r := dev.perfgate(work, "check", "--rule", "Mean TTFT:3%")
			for _, want := range []string{"nothing compared", `"ci:github-actions linux/amd64"`, `testbed "` + testbedOf(t, dev, work) + `"`,
				"measure the base branch on this testbed"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the check does not say %q: %s", want, r)
				}
			}
			if r.code != 0 || !strings.HasPrefix(r.stdout, "INCONCLUSIVE") {
				t.Errorf("want exit 0 and INCONCLUSIVE (inconclusive: warn): %s", r)
			}
		})
	}
}

// testbedOf is the testbed of the runs stored at HEAD in work.
func testbedOf(t *testing.T, m *machine, work string) string {
	t.Helper()
	var doc struct {
		Runs []struct {
			Testbed string `json:"testbed"`
		} `json:"runs"`
	}
	r := m.must(work, "runs", "--commit", "HEAD", "-o", "json")
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || len(doc.Runs) == 0 {
		t.Fatalf("runs -o json: %v %s", err, r)
	}
	return doc.Runs[0].Testbed
}
