package journeys

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/github/githubtest"
	"go.yaml.in/yaml/v3"
)

const token = "ghs_journeys0123456789abcdef_never_printed"

// actionStep is the run script of the Action's main step (id perfgate),
// the bash a workflow that uses the Action runs.
func actionStep(t *testing.T) string {
	t.Helper()
	need(t, "bash")
	var action struct {
		Runs struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal([]byte(readFile(t, filepath.Join(repoRoot, "action.yml"))), &action); err != nil {
		t.Fatal(err)
	}
	for _, s := range action.Runs.Steps {
		if s.ID == "perfgate" {
			return s.Run
		}
	}
	t.Fatal("action.yml has no step perfgate")
	return ""
}

// github is a repository o/r on GitHub: its origin (a bare repository, the
// history branch's remote), the API (the fake, which fails the journey on
// a call it did not expect and on an expected call that never came) and
// the Action's step.
type github struct {
	t      *testing.T
	m      *machine
	origin string
	api    *githubtest.Server
	script string
	db     string // the Action's db input: the history in PostgreSQL
}

// rulesFile is the rules file of a team that gates Mean TTFT at 3%.
const rulesFile = "rules:\n  - metric: Mean TTFT\n    max_regression: 3%\n"

// newGitHub makes the repository with one commit on main, its rules file.
func newGitHub(t *testing.T) *github {
	t.Helper()
	m := laptop(t)
	g := &github{t: t, m: m, origin: filepath.Join(t.TempDir(), "origin.git"), api: githubtest.New(t, token), script: actionStep(t)}
	m.git(t.TempDir(), "init", "-q", "--bare", "-b", "main", g.origin)
	work := g.clone()
	m.commit(work, "initial", map[string]string{".perfgate.yml": rulesFile})
	m.git(work, "push", "-q", "origin", "main")
	return g
}

// clone is a fresh checkout of origin, as actions/checkout makes one.
func (g *github) clone() string {
	g.t.Helper()
	dir := filepath.Join(g.t.TempDir(), "work")
	g.m.git(g.t.TempDir(), "clone", "-q", "file://"+g.origin, dir)
	return dir
}

// run runs the Action's step in work on a runner (CI=true,
// GITHUB_ACTIONS=true) for event at sha, with inputs over the Action's
// defaults; it returns the step's log, its outputs and its exit code.
func (g *github) run(work, event, sha string, inputs map[string]string) (string, map[string]string, int) {
	g.t.Helper()
	tmp := g.t.TempDir()
	payload := `{"after": "` + sha + `"}`
	base := ""
	if event == "pull_request" {
		payload = `{"pull_request": {"number": 1, "head": {"sha": "` + sha + `", "ref": "feature", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}}}`
		base = "main"
	}
	in := map[string]string{"COMMAND": "check", "ARGS": "", "INGEST": "", "NAME": "", "RULES": "", "BASE": "",
		"COMMENT": "auto", "SYNC": "true", "REQUIRE_HISTORY": "true", "REPEAT": "", "MAX_RUNS": "", "DB": g.db}
	for k, v := range inputs {
		in[k] = v
	}
	env := []string{"CI=true", "GITHUB_ACTIONS=true", "PERFGATE=" + perfgateBin, "PERFGATE_GITHUB_TOKEN=" + token,
		"GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + writeFile(g.t, filepath.Join(tmp, "event.json"), payload),
		"GITHUB_SHA=" + sha, "GITHUB_BASE_REF=" + base, "GITHUB_REPOSITORY=o/r", "GITHUB_API_URL=" + g.api.APIURL(),
		"GITHUB_SERVER_URL=https://github.example", "GITHUB_RUN_ID=7", "GITHUB_OUTPUT=" + filepath.Join(tmp, "output"),
		"GITHUB_STEP_SUMMARY=" + filepath.Join(tmp, "summary.md"), "RUNNER_TEMP=" + tmp, "RUNNER_OS=Linux"}
	for k, v := range in {
		env = append(env, "INPUT_"+k+"="+v)
	}
	r := g.m.with(env...).exec(work, "bash", "-e", "-c", g.script)
	log := r.stdout + r.stderr
	if strings.Contains(log, token) {
		g.t.Errorf("the step's log shows the token:\n%s", log)
	}
	return log, outputs(filepath.Join(tmp, "output")), r.code
}

// outputs reads a GITHUB_OUTPUT file of NAME<<DELIM blocks.
func outputs(path string) map[string]string {
	out := map[string]string{}
	data, _ := os.ReadFile(path)
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var v []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				v = append(v, lines[i])
			}
			out[name] = strings.Join(v, "\n")
		}
	}
	return out
}

// expectStatus expects the commit status of the gate on sha, in state.
func (g *github) expectStatus(sha, state string, check func(t testing.TB, desc string)) {
	g.api.Expect(githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + sha,
		Check: func(t testing.TB, _ *http.Request, body []byte) {
			m := githubtest.DecodeBody(t, body)
			if m["state"] != state {
				t.Errorf("commit status %v, want state %q", m, state)
			}
			if check != nil {
				check(t, fmt.Sprint(m["description"]))
			}
		}})
}

// expectComment expects the sticky comment of pull request 1, made anew,
// whose body check inspects.
func (g *github) expectComment(check func(t testing.TB, body string)) {
	g.api.Expect(
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/1/comments", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/1/comments", Body: githubtest.Comment(11, "x"),
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				check(t, fmt.Sprint(githubtest.DecodeBody(t, body)["body"]))
			}})
}

// record runs the Action on a push to main of one commit per file, each
// ingested by the step (the record job), so that origin's history branch
// holds main's runs.
func (g *github) record(files []string) {
	g.t.Helper()
	work := g.clone()
	for i, f := range files {
		sha := g.m.commit(work, "change "+filepath.Base(f), map[string]string{"change.txt": strings.Repeat("x", i+1)})
		g.m.git(work, "push", "-q", "origin", "main")
		// The record job gates main too: a pass, or pending (undecided)
		// where main's earlier runs were measured elsewhere.
		g.api.Expect(githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + sha,
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				if m := githubtest.DecodeBody(t, body); m["state"] != "success" && m["state"] != "pending" {
					t.Errorf("record job's commit status %v, want success or pending", m)
				}
			}})
		if log, _, code := g.run(work, "push", sha, map[string]string{"INGEST": f, "NAME": "serving"}); code != 0 {
			g.t.Fatalf("push of %s: exit %d\n%s", f, code, log)
		}
	}
	branch := g.m.exec(g.origin, "git", "ls-tree", "-r", "--name-only", "perfgate-history")
	switch {
	case g.db != "" && branch.code == 0:
		g.t.Fatalf("with the db input, the Action pushed a history branch: %s", branch)
	case g.db == "" && !strings.Contains(branch.stdout, ".json"):
		g.t.Fatalf("origin's perfgate-history holds no runs after %d pushes: %s", len(files), branch)
	}
}

// pullRequest is a fresh checkout of a branch off main with one commit,
// and its head.
func (g *github) pullRequest(name string) (work, sha string) {
	g.t.Helper()
	work = g.clone()
	g.m.git(work, "checkout", "-q", "-b", name)
	return work, g.m.commit(work, "the change", map[string]string{"change.txt": name})
}

// TestJourneyAction: the Action records main's runs on pushes (through
// origin's perfgate-history branch), then gates a pull request: Mean TTFT
// 10% worse fails the step (exit 1, verdict fail) with a failure status
// and a comment naming Mean TTFT; the head unchanged passes with a
// success status.
func TestJourneyAction(t *testing.T) {
	actionJourney(t, func(*testing.T) string { return "" })
}

// actionJourney is TestJourneyAction with the Action's db input that db
// gives.
func actionJourney(t *testing.T, db func(*testing.T) string) {
	for _, bf := range backfills {
		if bf.name != "optimisation log, five commits" && bf.name != "vllm serve JSON" {
			continue
		}
		t.Run(bf.name, func(t *testing.T) {
			t.Parallel()
			url := db(t)
			h := bf.make(t)
			g := newGitHub(t)
			g.db = url
			g.record(h.main)
			for _, hd := range heads(t, g.m, h) {
				t.Run(hd.name, func(t *testing.T) { g.gate(t, hd) })
			}
		})
	}
}

// gate runs the Action on a pull request whose head measured hd: a
// failure status and a comment naming Mean TTFT for the regression, a
// success for the unchanged head.
func (g *github) gate(t *testing.T, hd head) {
	work, sha := g.pullRequest("pr-" + hd.name)
	verdict, state, code := "fail", "failure", 1
	if hd.name == "unchanged" {
		verdict, state, code = "pass", "success", 0
	}
	g.expectComment(func(t testing.TB, body string) {
		if !strings.Contains(body, "perfgate: "+verdict) || !strings.Contains(body, "Mean TTFT") {
			t.Errorf("the comment does not say %s on Mean TTFT:\n%s", verdict, body)
		}
	})
	g.expectStatus(sha, state, nil)
	log, out, got := g.run(work, "pull_request", sha, map[string]string{"INGEST": hd.file, "NAME": "serving"})
	if out["verdict"] != verdict || got != code {
		t.Errorf("pull request %s: exit %d, verdict %q, want %d and %s\n%s", hd.name, got, out["verdict"], code, verdict, log)
	}
}

// TestJourneyHandBuiltHistoryThenAction: a team backfills main's history
// by hand on a laptop (perfgate ingest outside CI, testbed unknown) and
// shares it (perfgate sync), then turns the Action on: the pull request's
// runs are the CI runner's, nothing of main's compares with them, and the
// check is inconclusive, with the remedy in the comment and a status that
// says inconclusive (pending; a neutral check run with --check-run), never a green
// pass, whether the head regressed or not. Once the record job has run on main (the remedy), the regression
// fails.
func TestJourneyHandBuiltHistoryThenAction(t *testing.T) {
	g := newGitHub(t)
	h := sectionsHistory(t, logFile())
	work := g.clone()
	for i, f := range h.main {
		g.m.commit(work, "change "+filepath.Base(f), map[string]string{"change.txt": strings.Repeat("x", i+1)})
		g.m.must(work, "ingest", "--name", "serving", f)
	}
	g.m.git(work, "push", "-q", "origin", "main")
	g.m.must(work, "sync")
	for _, hd := range heads(t, g.m, h) {
		t.Run(hd.name, func(t *testing.T) {
			work, sha := g.pullRequest("pr-" + hd.name)
			g.expectComment(func(t testing.TB, body string) {
				for _, want := range []string{"inconclusive", "nothing compared", `"unknown"`,
					"measure the base branch on", "let the record job run on the base branch", "ingest them again with --testbed"} {
					if !strings.Contains(body, want) {
						t.Errorf("the comment does not say %q:\n%s", want, body)
					}
				}
			})
			// A commit status has no neutral state: pending, never green.
			g.expectStatus(sha, "pending", func(t testing.TB, desc string) {
				if !strings.HasPrefix(desc, "inconclusive") {
					t.Errorf("a status that does not say inconclusive: %q", desc)
				}
			})
			log, out, code := g.run(work, "pull_request", sha, map[string]string{"INGEST": hd.file, "NAME": "serving"})
			if code != 0 || out["verdict"] != "inconclusive" {
				t.Errorf("exit %d, verdict %q, want 0 and inconclusive (inconclusive: warn)\n%s", code, out["verdict"], log)
			}
		})
	}
	// With --check-run, the status is a check run, whose conclusion can
	// be neutral.
	t.Run("check run", func(t *testing.T) {
		hd := heads(t, g.m, h)[0]
		work, sha := g.pullRequest("pr-check-run")
		g.expectComment(func(t testing.TB, body string) {
			if !strings.Contains(body, "inconclusive") || !strings.Contains(body, "measure the base branch on") {
				t.Errorf("the comment does not say inconclusive and what to do:\n%s", body)
			}
		})
		g.api.Expect(githubtest.Call{Method: "POST", Path: "/repos/o/r/check-runs",
			Body: map[string]any{"id": 3, "html_url": "https://github.example/o/r/runs/3"},
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				if m["conclusion"] != "neutral" || m["head_sha"] != sha {
					t.Errorf("check run %v, want conclusion neutral on %s", m, sha)
				}
			}})
		log, out, code := g.run(work, "pull_request", sha, map[string]string{"INGEST": hd.file, "NAME": "serving", "ARGS": "--check-run"})
		if code != 0 || out["verdict"] != "inconclusive" {
			t.Errorf("exit %d, verdict %q, want 0 and inconclusive\n%s", code, out["verdict"], log)
		}
	})
	// The remedy: the record job runs on main; from its first run on, a
	// regression fails.
	g.record(h.main[len(h.main)-1:])
	g.gate(t, heads(t, g.m, h)[0])
}
