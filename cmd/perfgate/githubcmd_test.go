package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/github/githubtest"
)

// actionsVars are the variables that make perfgate publish to GitHub.
// They are cleared for every test of this package, so that running the
// tests inside GitHub Actions does not publish the tests' own reports;
// tests that want them set them with t.Setenv.
var actionsVars = []string{
	"GITHUB_ACTIONS", "GITHUB_TOKEN", "PERFGATE_GITHUB_TOKEN", "GITHUB_REPOSITORY", "GITHUB_EVENT_NAME",
	"GITHUB_EVENT_PATH", "GITHUB_SHA", "GITHUB_API_URL", "GITHUB_SERVER_URL", "GITHUB_RUN_ID",
	"GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT", "GITHUB_BASE_REF", "PERFGATE_GATE_ID",
	"PERFGATE_SYNC_REMOTE", "PERFGATE_SYNC_BRANCH", "RUNNER_TEMP",
}

func init() {
	for _, v := range actionsVars {
		os.Unsetenv(v)
	}
}

const secretToken = "ghs_CMDtest0123456789abcdef_never_printed"

// actionsEnv sets the environment of a workflow step in a pull_request
// workflow of o/r, pull request 1 at head, and returns the summary and
// output files.
func actionsEnv(t *testing.T, srv *githubtest.Server, event, payload string) (summary, output string) {
	t.Helper()
	dir := t.TempDir()
	summary, output = filepath.Join(dir, "summary.md"), filepath.Join(dir, "output")
	eventPath := filepath.Join(dir, "event.json")
	if err := os.WriteFile(eventPath, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": secretToken, "GITHUB_REPOSITORY": "o/r",
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventPath, "GITHUB_API_URL": srv.APIURL(),
		"GITHUB_SERVER_URL": "https://github.example", "GITHUB_RUN_ID": "99",
		"GITHUB_STEP_SUMMARY": summary, "GITHUB_OUTPUT": output, "RUNNER_TEMP": dir,
	} {
		t.Setenv(k, v)
	}
	return summary, output
}

func prEvent(head string) string {
	return `{"pull_request": {"number": 1, "head": {"sha": "` + head + `", "ref": "feature", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}}}`
}

// regressedRepo is a repository whose feature branch regressed TTFT by 15%.
func regressedRepo(t *testing.T) (repo, head string) {
	t.Helper()
	repo = gitRepo(t)
	mainHistory(t, repo, 6)
	git(t, repo, "checkout", "-q", "-b", "feature")
	head = commit(t, repo, "feature", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(115, 300))
	return repo, head
}

func noToken(t *testing.T, where string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, secretToken) {
			t.Errorf("the token appears in %s", where)
		}
	}
}

func TestCheckPublishesInActions(t *testing.T) {
	repo, head := regressedRepo(t)
	srv := githubtest.New(t, secretToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/1/comments", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/1/comments", Body: githubtest.Comment(7, "x"),
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				b := fmt.Sprint(githubtest.DecodeBody(t, body)["body"])
				for _, want := range []string{"<!-- perfgate:gate=serving -->", "perfgate: fail", "Mean TTFT", "[workflow run](https://github.example/o/r/actions/runs/99)"} {
					if !strings.Contains(b, want) {
						t.Errorf("comment lacks %q:\n%s", want, b)
					}
				}
			}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + head,
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				if m["state"] != "failure" || m["context"] != "perfgate/serving" || !strings.HasPrefix(fmt.Sprint(m["description"]), "1 failed of ") {
					t.Errorf("status %v", m)
				}
			}},
	)
	summary, output := actionsEnv(t, srv, "pull_request", prEvent(head))
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "-o", "json", "--rule", "mean_ttft_ms:3%", "--gate-id", "serving")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the regression)\n%s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep["verdict"] != "fail" {
		t.Errorf("stdout is not the JSON report: %v\n%s", err, stdout)
	}
	for _, want := range []string{"commented on pull request #1", `commit status "perfgate/serving": fail`, "job summary"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	sum, _ := os.ReadFile(summary)
	if !strings.Contains(string(sum), "### ❌ perfgate: fail") {
		t.Errorf("job summary:\n%s", sum)
	}
	out, _ := os.ReadFile(output)
	if !strings.Contains(string(out), "verdict<<ghadelimiter_") || !strings.Contains(string(out), "\nfail\n") || !strings.Contains(string(out), "report<<") {
		t.Errorf("outputs:\n%s", out)
	}
	noToken(t, "the output", stdout, stderr, string(sum), string(out))
	for _, r := range srv.Requests() {
		noToken(t, "a request body", string(r.Body))
	}
}

func TestCheckPublishFailureKeepsVerdict(t *testing.T) {
	repo, head := regressedRepo(t)
	srv := githubtest.New(t, secretToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/1/comments", Status: http.StatusUnauthorized, Body: `{"message":"Bad credentials ` + secretToken + `"}`},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + head, Status: http.StatusForbidden, Body: `{"message":"Resource not accessible by integration"}`},
	)
	actionsEnv(t, srv, "pull_request", prEvent(head))
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%")
	if code != 1 {
		t.Fatalf("exit %d, want 1: a publishing failure must not change the verdict\n%s", code, stderr)
	}
	for _, want := range []string{"warning: GitHub: cannot list the comments", "the token is invalid or expired", "(the verdict stands)", "pull-requests: write"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	noToken(t, "stdout or stderr", stdout, stderr)

	// A passing check stays a pass.
	srv.Expect(
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/1/comments", Status: http.StatusNotFound, Body: `{"message":"Not Found"}`},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + head, Status: http.StatusNotFound, Body: `{"message":"Not Found"}`},
	)
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:50%"); code != 0 {
		t.Errorf("exit %d, want 0\n%s", code, stderr)
	}
}

func TestCheckDoesNotPublish(t *testing.T) {
	repo, head := regressedRepo(t)
	srv := githubtest.New(t, secretToken) // any call fails the test

	// Outside Actions: nothing.
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%"); code != 1 || strings.Contains(stderr, "github") {
		t.Errorf("outside Actions: exit %d\n%s", code, stderr)
	}
	// Inside Actions with --github=false: nothing either, not even files.
	summary, output := actionsEnv(t, srv, "pull_request", prEvent(head))
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%", "--github=false"); code != 1 {
		t.Errorf("--github=false: exit %d\n%s", code, stderr)
	}
	for _, f := range []string{summary, output} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written with --github=false", f)
		}
	}
	// Inside Actions without a token: the job summary and outputs only.
	t.Setenv("GITHUB_TOKEN", "")
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%", "--comment", "never"); code != 1 || strings.Contains(stderr, "warning") {
		t.Errorf("without a token: exit %d\n%s", code, stderr)
	}
	if b, err := os.ReadFile(summary); err != nil || !strings.Contains(string(b), "perfgate: fail") {
		t.Errorf("job summary without a token: %v %s", err, b)
	}
}

func TestGitHubFlagErrors(t *testing.T) {
	repo, _ := regressedRepo(t)
	report := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(report, []byte(`{"verdict":"maybe"}`), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"comment mode", []string{"--repo", repo, "check", "--comment", "sometimes"}, 2, `--comment: "sometimes" is not a comment mode; choose one of: auto, always, never`},
		{"gate id", []string{"--repo", repo, "check", "--gate-id", "a b"}, 2, `--gate-id: "a b" is not a gate id`},
		{"publish without a report", []string{"publish"}, 2, "--report FILE is required"},
		{"publish a missing report", []string{"publish", "--report", "nope.json"}, 2, `--report "nope.json"`},
		{"publish a bad report", []string{"publish", "--report", report}, 2, `verdict "maybe" is not "pass", "fail" or "inconclusive"`},
		{"publish a bad pr", []string{"publish", "--report", "x", "--pr", "x"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr, tt.want)
			}
		})
	}
}

// TestPublishForkWorkflow is docs/github.md's pair of workflows: the
// untrusted pull_request job writes the JSON report, the workflow_run job
// publishes it for the fork's pull request.
func TestPublishForkWorkflow(t *testing.T) {
	repo, head := regressedRepo(t)
	report := filepath.Join(t.TempDir(), "report.json")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "-o", "json", "--out", report, "--rule", "mean_ttft_ms:3%")
	if code != 1 || !strings.Contains(stdout, "fail") {
		t.Fatalf("check --out: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// What check itself would have published: publish must re-render the
	// same markdown from the JSON report alone.
	checkMarkdown, _, _ := runCLI(t, "", "--repo", repo, "check", "-o", "markdown", "--rule", "mean_ttft_ms:3%")
	run := `{"workflow_run": {"head_sha": "` + head + `", "head_branch": "feature", "head_repository": {"full_name": "fork/r"}, "pull_requests": []}}`
	srv := githubtest.New(t, secretToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/pulls", Query: map[string]string{"head": "fork:feature"},
			Body: []any{map[string]any{"number": 12, "head": map[string]any{"sha": head}}}},
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/12/comments", Body: []any{
			githubtest.CommentBy(2, "<!-- perfgate:gate=perfgate -->\n@everyone planted by the fork", "fork"),
			githubtest.Comment(3, "<!-- perfgate:gate=perfgate -->\nold")}},
		githubtest.User(""), // GITHUB_TOKEN: 403, so github-actions[bot]
		githubtest.Call{Method: "PATCH", Path: "/repos/o/r/issues/comments/3", Body: githubtest.Comment(3, "x"),
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				if b := fmt.Sprint(githubtest.DecodeBody(t, body)["body"]); !strings.Contains(b, "perfgate: fail") {
					t.Errorf("comment:\n%s", b)
				}
			}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/check-runs",
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				if m := githubtest.DecodeBody(t, body); m["head_sha"] != head || m["conclusion"] != "failure" {
					t.Errorf("check run %v", m)
				}
			}},
	)
	_, output := actionsEnv(t, srv, "workflow_run", run)
	stdout, stderr, code = runCLI(t, "", "publish", "--report", report, "--check-run")
	if code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "updated the comment on pull request #12") || !strings.Contains(stdout, `check run "perfgate": fail`) {
		t.Errorf("publish stdout:\n%s", stdout)
	}
	if b, _ := os.ReadFile(output); !strings.Contains(string(b), "\nfail\n") {
		t.Errorf("outputs:\n%s", b)
	}
	if got := readOutput(t, output, "report"); got != strings.TrimSuffix(checkMarkdown, "\n") {
		t.Errorf("publish rendered a report other than check's:\n%s\n--- check -o markdown:\n%s", got, checkMarkdown)
	}
	noToken(t, "publish's output", stdout, stderr)

	// A --pr that is not this commit's pull request is refused.
	srv.Expect(githubtest.Call{Method: "GET", Path: "/repos/o/r/pulls/13", Body: map[string]any{"number": 13, "head": map[string]any{"sha": strings.Repeat("9", 40)}}})
	_, stderr, code = runCLI(t, "", "publish", "--report", report, "--pr", "13")
	if code != 2 || !strings.Contains(stderr, "--pr 13: the pull request's head is 999999999999") {
		t.Errorf("foreign --pr: exit %d\n%s", code, stderr)
	}
	// GitHub refusing is exit 3 for publish, whose job it is.
	srv.Expect(
		githubtest.Call{Method: "GET", Path: "/repos/o/r/pulls", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + head, Status: http.StatusUnauthorized, Body: `{"message":"Bad credentials"}`},
	)
	_, stderr, code = runCLI(t, "", "publish", "--report", report)
	if code != 3 || !strings.Contains(stderr, "the token is invalid or expired") {
		t.Errorf("publish refused: exit %d\n%s", code, stderr)
	}
}

// readOutput returns the last value of name in a $GITHUB_OUTPUT file, as
// the runner reads it (NAME<<DELIMITER ... DELIMITER).
func readOutput(t *testing.T, path, name string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	val, found := "", false
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		k, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var v []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			v = append(v, lines[i])
		}
		if k == name {
			val, found = strings.Join(v, "\n"), true
		}
	}
	if !found {
		t.Fatalf("%s has no output %q:\n%s", path, name, data)
	}
	return val
}

// TestPublishRunsNoGit: publish reads the report and talks to GitHub, and
// nothing else: in a directory where a fork's artifact planted a git
// configuration (a credential helper and an fsmonitor that would run
// commands, and a hook), it never runs git, so none of it runs and the
// token goes nowhere else.
func TestPublishRunsNoGit(t *testing.T) {
	repo, _ := regressedRepo(t)
	artifact := t.TempDir()
	report := filepath.Join(artifact, "report.json")
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "-o", "json", "--out", report, "--rule", "mean_ttft_ms:3%"); code != 1 {
		t.Fatalf("check: exit %d\n%s", code, stderr)
	}
	owned := filepath.Join(t.TempDir(), "owned")
	planted := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = \"touch " + owned + "\"\n" +
		"[credential]\n\thelper = \"!touch " + owned + "; echo\"\n"
	for name, body := range map[string]string{".git/config": planted, ".git/HEAD": "ref: refs/heads/main\n", ".git/hooks/post-checkout": "#!/bin/sh\ntouch " + owned + "\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(artifact, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(artifact, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A git that records being run, first on PATH.
	bin := t.TempDir()
	ran := filepath.Join(bin, "git-ran")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte("#!/bin/sh\necho \"$@\" >> "+ran+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Chdir(artifact)
	srv := githubtest.New(t, secretToken, githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + strings.Repeat("a", 40)})
	_, output := actionsEnv(t, srv, "workflow_run", `{"workflow_run": {"event": "push", "head_sha": "`+strings.Repeat("a", 40)+`", "head_branch": "main", "head_repository": {"full_name": "o/r"}}}`)
	stdout, stderr, code := runCLI(t, "", "publish", "--report", "report.json")
	if code != 0 {
		t.Fatalf("publish: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(ran); err == nil {
		t.Errorf("publish ran git: %s", b)
	}
	if _, err := os.Stat(owned); err == nil {
		t.Error("the artifact's git configuration ran")
	}
	if readOutput(t, output, "verdict") != "fail" {
		t.Error("no verdict output")
	}
}

// TestPublishRefusesHostileReport: a report that does not match the schema
// is refused before anything is published, exit 2, naming the file and
// the field.
func TestPublishRefusesHostileReport(t *testing.T) {
	srv := githubtest.New(t, secretToken) // no call may come
	actionsEnv(t, srv, "workflow_run", `{}`)
	report := filepath.Join(t.TempDir(), "report.json")
	body := `{"verdict":"fail","head":"abc` + "`" + ` <img src=x> @admin","baseline":{},"rules":{},"summary":{},"checks":[]}`
	if err := os.WriteFile(report, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "", "publish", "--report", report)
	if code != 2 || !strings.Contains(stderr, `--report "`+report+`"`) || !strings.Contains(stderr, "head") || !strings.Contains(stderr, "is not a commit id") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	// A --sha that is not a commit would go into the API path.
	repo, _ := regressedRepo(t)
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "-o", "json", "--out", report, "--rule", "mean_ttft_ms:3%"); code != 1 {
		t.Fatalf("check: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "publish", "--report", report, "--sha", "../../user")
	if code != 2 || !strings.Contains(stderr, `--sha "../../user" is not a full commit id`) {
		t.Errorf("--sha: exit %d\n%s", code, stderr)
	}
}

// A pull request that carries the accept label: the sticky comment says
// who accepted the change and why instead of a failure (golden), the
// status is a success and the job passes.
func TestCheckAcceptedByLabelComment(t *testing.T) {
	t.Setenv("PERFGATE_TESTBED", "ci-runner") // the golden names no machine's CPU
	repo, head := regressedRepo(t)
	var comment string
	srv := githubtest.New(t, secretToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/1/comments", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/1/comments", Body: githubtest.Comment(7, "x"),
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				comment = fmt.Sprint(githubtest.DecodeBody(t, body)["body"])
			}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + head,
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				if m := githubtest.DecodeBody(t, body); m["state"] != "success" || !strings.Contains(fmt.Sprint(m["description"]), "1 accepted") {
					t.Errorf("status %v", m)
				}
			}},
	)
	event := `{"pull_request": {"number": 1, "head": {"sha": "` + head + `", "ref": "feature", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}, "labels": [{"name": "bug"}, {"name": "perf-accepted"}]}}`
	actionsEnv(t, srv, "pull_request", event)
	t.Setenv("GITHUB_ACTOR", "octocat")
	_, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:3%", "--gate-id", "serving", "--accept-label", "perf-accepted")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (accepted)\n%s", code, stderr)
	}
	if !strings.Contains(comment, "☑️ `serving` · Mean TTFT (ms): accepted by octocat: pull request label \"perf-accepted\"") {
		t.Errorf("comment:\n%s", comment)
	}
	golden(t, "check-accepted-comment.md", comment)
}

// TestPublishSiteURLFromPublisher: a fork's report names its own site_url;
// publish links the charts to the publishing repository's site
// (--site-url) or to none, never to the report's.
func TestPublishSiteURLFromPublisher(t *testing.T) {
	repo, _ := regressedRepo(t)
	report := filepath.Join(t.TempDir(), "report.json")
	if _, stderr, code := runCLI(t, "", "--repo", repo, "check", "-o", "json", "--out", report, "--rule", "mean_ttft_ms:3%", "--site-url", "https://github.com.evil.example/"); code != 1 {
		t.Fatalf("check: exit %d\n%s", code, stderr)
	}
	sha := strings.Repeat("a", 40)
	for _, tc := range []struct {
		args       []string
		want, deny string
	}{
		{nil, "", "evil.example"},
		{[]string{"--site-url", "https://o.github.io/r/"}, "https://o.github.io/r/", "evil.example"},
	} {
		srv := githubtest.New(t, secretToken, githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + sha})
		summary, _ := actionsEnv(t, srv, "workflow_run", `{"workflow_run": {"event": "push", "head_sha": "`+sha+`", "head_branch": "main", "head_repository": {"full_name": "o/r"}}}`)
		if _, stderr, code := runCLI(t, "", append([]string{"publish", "--report", report}, tc.args...)...); code != 0 {
			t.Fatalf("publish %v: exit %d\n%s", tc.args, code, stderr)
		}
		b, err := os.ReadFile(summary)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), tc.deny) || (tc.want != "" && !strings.Contains(string(b), tc.want)) {
			t.Errorf("publish %v: job summary links %q, want %q:\n%s", tc.args, tc.deny, tc.want, b)
		}
		srv.Close()
	}
}
