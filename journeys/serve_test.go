package journeys

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/fakeserve"
)

// servingMachine is a laptop whose stand-in engine's processes record
// their pids, so that the journey proves none is left behind.
func servingMachine(t *testing.T) *machine {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in engine is stopped as a process group")
	}
	pids := t.TempDir()
	t.Cleanup(func() {
		if left := fakeserve.Leftovers(pids); len(left) > 0 {
			t.Errorf("left behind: %s", strings.Join(left, "; "))
		}
	})
	return laptop(t).with(fakeserve.PidDirEnv + "=" + pids)
}

// servingRun is the serving benchmark of the README: the engine started
// once, ready when its health check answers, the client run three times.
// extra are global flags put first.
func servingRun(s serving, extra ...string) []string {
	return cmdline(extra, "run", "--name", "serving", "--repeat", "3",
		"--server", s.server, "--ready", readyURL, "--run", s.client)
}

// TestJourneyServingRun: main's commits are measured with perfgate run
// --server --ready --repeat 3 (the stand-in engine, and a client printing
// a real vllm bench serve block whose Mean TTFT the checkout's ttft.txt
// scales); a branch whose change makes Mean TTFT 10% worse, measured the
// same way, fails the check naming Mean TTFT; one that leaves it alone
// passes.
func TestJourneyServingRun(t *testing.T) {
	servingJourney(t, nil)
}

// servingJourney is TestJourneyServingRun with global flags (a --db)
// before each command.
func servingJourney(t *testing.T, extra []string) {
	m := servingMachine(t)
	s := newServing(t)
	repo := m.repo()
	for i := 0; i < 3; i++ {
		m.commit(repo, "engine change", map[string]string{"ttft.txt": "1.00\n", "engine.txt": strings.Repeat("x", i+1)})
		m.must(repo, servingRun(s, extra...)...)
	}
	for _, tt := range []struct {
		name, ttft string
		want       func(*testing.T, result)
	}{
		{"regression", "1.10\n", wantFail},
		{"unchanged", "1.00\n", wantPass},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m.git(repo, "checkout", "-q", "-b", "pr-"+tt.name, "main")
			m.commit(repo, "the change", map[string]string{"ttft.txt": tt.ttft, "engine.txt": tt.name})
			r := m.must(repo, servingRun(s, extra...)...)
			if !strings.Contains(r.stderr, "server ready in") {
				t.Errorf("the runs were not served by the engine: %s", r)
			}
			if n := strings.Count(m.must(repo, cmdline(extra, "runs", "--commit", "HEAD", "-o", "json")...).stdout, `"id"`); n != 3 {
				t.Errorf("%d runs stored at the head, want 3 (--repeat 3)", n)
			}
			tt.want(t, m.perfgate(repo, cmdline(extra, "check", "--rule", "Mean TTFT:3%")...))
		})
	}
}

// TestJourneyBisect: of five commits, the fourth makes the client's Mean
// TTFT 10% worse; perfgate bisect, running the benchmark in temporary
// checkouts with the stand-in engine served in each, names it and exits 0.
func TestJourneyBisect(t *testing.T) {
	m := servingMachine(t)
	s := newServing(t)
	repo := m.repo()
	var commits []string
	for i, f := range []string{"1.00", "1.00", "1.00", "1.10", "1.10"} {
		commits = append(commits, m.commit(repo, "engine change", map[string]string{"ttft.txt": f + "\n", "engine.txt": strings.Repeat("x", i+1)}))
	}
	r := m.perfgate(repo, "bisect", "--good", commits[0], "--bad", commits[4], "--metric", "Mean TTFT", "--name", "serving",
		"--server", s.server, "--ready", readyURL, "-o", "json", "--run", s.client)
	var doc struct {
		Verdict string `json:"verdict"`
		Culprit string `json:"culprit"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("bisect -o json: %v\n%s", err, r)
	}
	if r.code != 0 || doc.Verdict != "found" || doc.Culprit != commits[3] {
		t.Errorf("bisect does not name %s, the commit that made Mean TTFT 10%% worse: %s", commits[3][:12], r)
	}
}
