package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/github/githubtest"
)

// watchRepo builds main with 30 measured commits whose TTFT steps up 15%
// at commit 18 (throughput flat), and a second benchmark that stopped
// after commit 23.
func watchRepo(t *testing.T) (string, []string) {
	t.Helper()
	repo := gitRepo(t)
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7, -1.0, 0.5, 0.2, -0.3, 0.9}
	var shas []string
	for i := 0; i < 30; i++ {
		shas = append(shas, commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)}))
		w := 1 + wobble[i%len(wobble)]/100
		level := 1.0
		if i >= 18 {
			level = 1.15
		}
		ingestAt(t, repo, metricsJSON(100*w*level, 300/w))
		if i < 24 {
			args := []string{"--repo", repo, "ingest", "--name", "batch", "-"}
			if _, stderr, code := runCLI(t, metricsJSON(50*w, 100/w), args...); code != 0 {
				t.Fatalf("ingest: %s", stderr)
			}
		}
	}
	return repo, shas
}

type watchJSON struct {
	Commits, Measured int
	Changes           []struct {
		Benchmark, Metric, Kind string
		LastGood                string  `json:"last_good"`
		FirstBad                string  `json:"first_bad"`
		ChangePct               float64 `json:"change_pct"`
		Open                    bool
	}
	Missing []struct {
		Benchmark  string
		LastCommit string `json:"last_commit"`
		Missed     int
	}
}

func TestWatchCommand(t *testing.T) {
	parallel(t)
	repo, shas := watchRepo(t)
	out, stderr, code := runCLI(t, "", "--repo", repo, "watch", "-o", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (an open regression): %s", code, stderr)
	}
	var rep watchJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Commits != 30 || rep.Measured != 30 {
		t.Errorf("commits %d measured %d", rep.Commits, rep.Measured)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].FirstBad != shas[18] || rep.Changes[0].LastGood != shas[17] ||
		rep.Changes[0].Kind != "regression" || !rep.Changes[0].Open || rep.Changes[0].Metric != "mean_ttft_ms" {
		t.Errorf("changes %+v, want the TTFT regression at commit 18", rep.Changes)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Benchmark != "batch" || rep.Missing[0].LastCommit != shas[23] || rep.Missing[0].Missed != 6 {
		t.Errorf("missing %+v, want batch after commit 23", rep.Missing)
	}

	// A threshold above the step: no change; --benchmark leaves batch out.
	out, stderr, code = runCLI(t, "", "--repo", repo, "watch", "--rule", "mean_ttft_ms:20%", "--benchmark", "serv*", "--metric", "Mean TTFT")
	if code != 0 || !strings.Contains(out, "no change of level") {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
	// --since a revision: the step is too close to the start.
	_, _, code = runCLI(t, "", "--repo", repo, "watch", "--since", shas[15], "--benchmark", "serving")
	if code != 0 {
		t.Errorf("--since %s: exit %d, want 0", shas[15], code)
	}
	_, stderr, code = runCLI(t, "", "--repo", repo, "watch", "--metric", "mean_ttfx")
	if code != 2 || !strings.Contains(stderr, `--metric "mean_ttfx"`) {
		t.Errorf("bad metric: exit %d %s", code, stderr)
	}
}

// In Actions on schedule, watch opens the issue, and --dry-run only says
// it would.
func TestWatchIssues(t *testing.T) {
	repo, _ := watchRepo(t)
	srv := githubtest.New(t, secretToken)
	list := githubtest.Call{Method: "GET", Path: "/repos/o/r/issues", Query: map[string]string{"state": "open", "labels": "perf"}, Body: []any{}}
	srv.Expect(list, list,
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues", Body: map[string]any{"number": 7, "html_url": "https://github.example/o/r/issues/7"},
			Check: func(t testing.TB, r *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				if !strings.Contains(m["title"].(string), "serving") || !strings.Contains(m["body"].(string), "<!-- perfgate:watch=regression-") {
					t.Errorf("issue %v", m)
				}
			}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues", Body: map[string]any{"number": 8},
			Check: func(t testing.TB, r *http.Request, body []byte) {
				if m := githubtest.DecodeBody(t, body); !strings.Contains(m["title"].(string), "stopped reporting: batch") {
					t.Errorf("issue %v", m)
				}
			}},
	)
	actionsEnv(t, srv, "schedule", "{}")
	_, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--dry-run", "--issue-label", "perf")
	if code != 1 || !strings.Contains(stderr, "would open new issue") {
		t.Errorf("dry run: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "--repo", repo, "watch", "--issue-label", "perf")
	if code != 1 || !strings.Contains(stderr, "opened #7") || !strings.Contains(stderr, "opened #8") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
}

// A token that may not write issues: the report is printed, exit 3, and
// the message says which permission is missing.
func TestWatchIssuesForbidden(t *testing.T) {
	repo, _ := watchRepo(t)
	srv := githubtest.New(t, secretToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues", Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration"}`},
	)
	actionsEnv(t, srv, "workflow_dispatch", "{}")
	out, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--benchmark", "serving")
	if code != exitEnv || !strings.Contains(out, "OPEN REGRESSION") || !strings.Contains(stderr, "issues: write") || strings.Contains(stderr, secretToken) {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
}

// Accepting the step of an open regression reports it as accepted, and
// the next watch comments on its issue and closes it; the missing
// series' issue stays.
func TestWatchAcceptedClosesIssue(t *testing.T) {
	repo, shas := watchRepo(t)
	setUser(t, repo)
	srv := githubtest.New(t, secretToken)
	list := githubtest.Call{Method: "GET", Path: "/repos/o/r/issues", Query: map[string]string{"state": "open", "labels": "perf"}, Body: []any{}}
	bodies := map[int]string{}
	capture := func(n int) func(testing.TB, *http.Request, []byte) {
		return func(t testing.TB, r *http.Request, body []byte) {
			bodies[n] = githubtest.DecodeBody(t, body)["body"].(string)
		}
	}
	srv.Expect(list,
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues", Body: map[string]any{"number": 7}, Check: capture(7)},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues", Body: map[string]any{"number": 8}, Check: capture(8)},
	)
	actionsEnv(t, srv, "schedule", "{}")
	t.Setenv("GITHUB_ACTOR", "")
	if _, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--issue-label", "perf"); code != 1 || !strings.Contains(stderr, "opened #7") {
		t.Fatalf("run 1: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--repo", repo, "accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--commit", shas[18], "--reason", "new default"); code != 0 {
		t.Fatalf("accept: exit %d\n%s", code, stderr)
	}
	issue := func(n int) map[string]any {
		return map[string]any{"number": n, "body": bodies[n], "title": "t", "user": map[string]any{"login": githubtest.Bot}}
	}
	open := list
	open.Body = []any{issue(7), issue(8)}
	srv.Expect(open, githubtest.User(""),
		githubtest.Call{Method: "PATCH", Path: "/repos/o/r/issues/8", Body: issue(8)}, // the missing series: its title is refreshed
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/7/comments", Body: githubtest.Comment(1, "x"),
			Check: func(t testing.TB, r *http.Request, body []byte) {
				if m := githubtest.DecodeBody(t, body); !strings.Contains(m["body"].(string), "accepted") {
					t.Errorf("closing comment %v", m)
				}
			}},
		githubtest.Call{Method: "PATCH", Path: "/repos/o/r/issues/7", Body: issue(7),
			Check: func(t testing.TB, r *http.Request, body []byte) {
				if m := githubtest.DecodeBody(t, body); m["state"] != "closed" {
					t.Errorf("close %v", m)
				}
			}},
	)
	out, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--issue-label", "perf")
	if code != 1 || !strings.Contains(stderr, "closed #7") || !strings.Contains(out, "accepted by Ada <ada@example.com>: new default") {
		t.Errorf("run 2: exit %d (1: the missing series)\n%s\n%s", code, out, stderr)
	}
}

// The metrics of one change are one issue: TTFT and throughput regress
// at the same commit; the issue lists both, is updated in place when TTFT
// is accepted, and closed when throughput is accepted too.
func TestWatchIssueGroupsChange(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7, -1.0, 0.5, 0.2, -0.3, 0.9}
	var shas []string
	for i := 0; i < 30; i++ {
		shas = append(shas, commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)}))
		w, level := 1+wobble[i%len(wobble)]/100, 1.0
		if i >= 18 {
			level = 1.15
		}
		ingestAt(t, repo, metricsJSON(100*w*level, 300/w/level))
	}
	srv := githubtest.New(t, secretToken)
	list := githubtest.Call{Method: "GET", Path: "/repos/o/r/issues", Query: map[string]string{"state": "open", "labels": "perf"}, Body: []any{}}
	var body, title string
	capture := func(t testing.TB, r *http.Request, b []byte) {
		m := githubtest.DecodeBody(t, b)
		if s, ok := m["body"].(string); ok {
			body, title = s, m["title"].(string)
		}
	}
	srv.Expect(list, githubtest.Call{Method: "POST", Path: "/repos/o/r/issues", Body: map[string]any{"number": 7}, Check: capture})
	actionsEnv(t, srv, "schedule", "{}")
	accept := func(metric string) {
		t.Helper()
		if _, stderr, code := runCLI(t, "", "--repo", repo, "accept", "--benchmark", "serving", "--metric", metric, "--commit", shas[18], "--reason", "new default"); code != 0 {
			t.Fatalf("accept: exit %d\n%s", code, stderr)
		}
	}
	openIssue := func() githubtest.Call {
		c := list
		c.Body = []any{map[string]any{"number": 7, "body": body, "title": title, "user": map[string]any{"login": githubtest.Bot}}}
		return c
	}
	steps := []struct {
		name   string
		before func()
		calls  func() []githubtest.Call
		code   int
		stderr string
		check  func(t *testing.T)
	}{
		{"both metrics, one issue", func() {}, nil, 1, "opened #7", func(t *testing.T) {
			for _, s := range []string{"mean_ttft_ms +15.", "output_throughput -13.", "at " + shas[18][:7]} {
				if !strings.Contains(title, s) {
					t.Errorf("title %q lacks %q", title, s)
				}
			}
			if !strings.Contains(body, "one change that regressed 2 metrics") || !strings.Contains(body, "| `output_throughput` |") {
				t.Errorf("body:\n%s", body)
			}
		}},
		{"TTFT accepted: updated in place", func() { accept("mean_ttft_ms") }, func() []githubtest.Call {
			return []githubtest.Call{openIssue(), githubtest.User(""), {Method: "PATCH", Path: "/repos/o/r/issues/7", Body: map[string]any{"number": 7}, Check: capture}}
		}, 1, "updated #7", func(t *testing.T) {
			if strings.Contains(title, "mean_ttft_ms") || !strings.Contains(body, "No longer open: `mean_ttft_ms` (accepted by Ada") {
				t.Errorf("title %q body:\n%s", title, body)
			}
		}},
		{"throughput accepted too: closed", func() { accept("output_throughput") }, func() []githubtest.Call {
			return []githubtest.Call{openIssue(), githubtest.User(""),
				{Method: "POST", Path: "/repos/o/r/issues/7/comments", Body: githubtest.Comment(1, "x")},
				{Method: "PATCH", Path: "/repos/o/r/issues/7", Body: map[string]any{"number": 7}}}
		}, 0, "closed #7", func(t *testing.T) {}},
	}
	for _, st := range steps {
		st.before()
		if st.calls != nil {
			srv.Expect(st.calls()...)
		}
		_, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--issue-label", "perf")
		if code != st.code || !strings.Contains(stderr, st.stderr) {
			t.Fatalf("%s: exit %d, want %d and %q\n%s", st.name, code, st.code, st.stderr, stderr)
		}
		st.check(t)
	}
}

// --benchmark is a glob: a malformed one is bad input (exit 2) naming
// the flag and its value, and one that matches no stored benchmark says
// so, not that the branch has no stored results.
func TestWatchBenchmarkGlob(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	for i := 0; i < 3; i++ {
		commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)})
		ingestAt(t, repo, metricsJSON(100, 300))
	}
	for _, tc := range []struct {
		glob, want string
		code       int
	}{
		{"[", `--benchmark "[": not a valid glob`, 2},
		{"nomatch*", `no benchmark matches --benchmark "nomatch*"`, 0},
		{"serv*", "no change of level", 0},
	} {
		t.Run(tc.glob, func(t *testing.T) {
			out, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--benchmark", tc.glob)
			if code != tc.code || !strings.Contains(out+stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q:\n%s\n%s", code, tc.code, tc.want, out, stderr)
			}
			if tc.glob != "serv*" && strings.Contains(out+stderr, "no stored results") {
				t.Errorf("says the history is empty for --benchmark %q:\n%s", tc.glob, out)
			}
		})
	}
}

// --metric takes a metric of one's own (a generic result's name) when a
// stored result has it, as history, site and accept do; a name no result
// has and the vocabulary does not know is still bad input.
func TestWatchMetricOfOwn(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	for i := 0; i < 3; i++ {
		commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)})
		ingestAt(t, repo, fmt.Sprintf(`{"metrics": {"widgets_per_s": %d}}`, 100+i))
	}
	for _, tc := range []struct {
		metric, want string
		code         int
	}{
		{"widgets_per_s", "no change of level", 0},
		{"widgets_per_x", `--metric "widgets_per_x" is not a known metric nor one a stored result has`, 2},
		{"Mean TTFT", "no change of level", 0},
	} {
		t.Run(tc.metric, func(t *testing.T) {
			out, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--metric", tc.metric)
			if code != tc.code || !strings.Contains(out+stderr, tc.want) {
				t.Errorf("exit %d, want %d and %q:\n%s\n%s", code, tc.code, tc.want, out, stderr)
			}
		})
	}
}
