package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/github/githubtest"
)

const (
	testToken = "ghs_TESTtoken0123456789_must_never_show"
	headSHA   = "1111111111111111111111111111111111111111"
	mergeSHA  = "2222222222222222222222222222222222222222"
)

// sameRepoPR is a pull_request event from a branch of o/r.
const sameRepoPR = `{"pull_request": {"number": 1, "head": {"sha": "` + headSHA + `", "ref": "feat", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}}}`

// sleeps records the waits of a Transport instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return nil
}

// setup returns an Env for the server with the given event payload, and a
// client whose transport records its waits.
func setup(t *testing.T, srv *githubtest.Server, eventName, payload string) (*Env, *Client, *sleeps) {
	t.Helper()
	dir := t.TempDir()
	vars := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_NAME": eventName,
		"GITHUB_SHA": mergeSHA, "GITHUB_API_URL": srv.APIURL(), "GITHUB_SERVER_URL": "https://github.example",
		"GITHUB_RUN_ID": "77", "GITHUB_TOKEN": testToken,
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"), "GITHUB_OUTPUT": filepath.Join(dir, "output"), "RUNNER_TEMP": dir,
	}
	if payload != "" {
		vars["GITHUB_EVENT_PATH"] = writeEvent(t, payload)
	}
	env, err := FromEnv(mapEnv(vars))
	if err != nil {
		t.Fatal(err)
	}
	sl := &sleeps{}
	c, err := NewClient(env, ClientOptions{Transport: &Transport{Sleep: sl.sleep, BaseDelay: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return env, c, sl
}

func report(verdict string) string {
	return "### perfgate: " + verdict + "\n\n| Benchmark | Metric | Verdict |\n|---|---|---|\n| `serving` | Mean TTFT (ms) | " + verdict + " |\n"
}

// bodyHas checks a JSON request's field.
func bodyHas(field string, want ...string) func(testing.TB, *http.Request, []byte) {
	return func(t testing.TB, _ *http.Request, body []byte) {
		m := githubtest.DecodeBody(t, body)
		got := fmt.Sprint(m[field])
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("request %s = %q, want it to contain %q", field, got, w)
			}
		}
	}
}

func checkOutcome(t *testing.T, o Outcome, wantWarnings int, notes ...string) {
	t.Helper()
	if len(o.Warnings) != wantWarnings {
		t.Errorf("%d warnings, want %d: %v", len(o.Warnings), wantWarnings, o.Warnings)
	}
	all := strings.Join(o.Notes, "\n")
	for _, n := range notes {
		if !strings.Contains(all, n) {
			t.Errorf("notes do not mention %q:\n%s", n, all)
		}
	}
	for _, s := range append(o.Notes, fmt.Sprint(o.Warnings)) {
		if strings.Contains(s, testToken) {
			t.Errorf("the token is in the outcome: %s", s)
		}
	}
}

const commentsPath = "/repos/o/r/issues/1/comments"

func TestStickyCommentCreatedThenEdited(t *testing.T) {
	marker := Marker(DefaultGateID)
	srv := githubtest.New(t, testToken,
		// First run: no comment yet, so one is created.
		githubtest.Call{Method: "GET", Path: commentsPath, Query: map[string]string{"per_page": "100"},
			Body: []any{githubtest.Comment(5, "LGTM")}},
		githubtest.Call{Method: "POST", Path: commentsPath, Body: githubtest.Comment(101, marker+"\nold"),
			Check: bodyHas("body", marker, "| fail |", "commit `"+headSHA[:12]+"`", "[workflow run](https://github.example/o/r/actions/runs/77)")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA,
			Check: func(t testing.TB, r *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				if m["state"] != "failure" || m["context"] != "perfgate" || m["target_url"] != "https://github.example/o/r/actions/runs/77" {
					t.Errorf("status %v", m)
				}
			}},
		// Second run: the marker is found and the comment edited in place.
		githubtest.Call{Method: "GET", Path: commentsPath,
			Body: []any{githubtest.Comment(5, "LGTM"), githubtest.Comment(101, marker+"\nold report")}},
		githubtest.User(""),
		githubtest.Call{Method: "PATCH", Path: "/repos/o/r/issues/comments/101", Body: githubtest.Comment(101, "x"),
			Check: bodyHas("body", marker, "| pass |")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA, Check: bodyHas("state", "success")},
	)
	env, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: false, Title: "1 failed of 1 checks", Markdown: report("fail"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "commented on pull request #1", `commit status "perfgate": fail`)
	o = Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "1 checks, none failed", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "updated the comment on pull request #1", `commit status "perfgate": pass`)

	// Both runs appended to the job summary and wrote the outputs.
	summary, _ := os.ReadFile(env.StepSummary)
	if strings.Count(string(summary), "### perfgate:") != 2 {
		t.Errorf("job summary:\n%s", summary)
	}
	outputs := readOutputs(t, env.OutputFile)
	if outputs["verdict"] != "pass" || !strings.Contains(outputs["report"], "| pass |") {
		t.Errorf("outputs %q", outputs)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), testToken) {
			t.Errorf("the token is in a request body: %s %s", r.Method, r.Path)
		}
	}
}

func TestStickyCommentPaginationAndDuplicates(t *testing.T) {
	marker := Marker("serving")
	other := Marker("serving-a100") // another gate's comment is left alone
	var page1 []any
	for i := 0; i < 100; i++ {
		page1 = append(page1, githubtest.Comment(int64(i+1), fmt.Sprintf("comment %d", i)))
	}
	page1[50] = githubtest.Comment(51, other+"\nanother gate")
	srv := githubtest.New(t, testToken)
	srv.Expect(
		githubtest.Call{Method: "GET", Path: commentsPath, Header: srv.NextLink(commentsPath, 2), Body: page1},
		githubtest.Call{Method: "GET", Path: commentsPath, Query: map[string]string{"page": "2"}, Header: srv.NextLink(commentsPath, 3),
			Body: []any{githubtest.Comment(150, marker+"\nfirst")}},
		githubtest.Call{Method: "GET", Path: commentsPath, Query: map[string]string{"page": "3"},
			Body: []any{githubtest.Comment(230, marker+"\nduplicate")}},
		githubtest.User(""),
		githubtest.Call{Method: "PATCH", Path: "/repos/o/r/issues/comments/150", Body: githubtest.Comment(150, "x"), Check: bodyHas("body", marker)},
		githubtest.Call{Method: "DELETE", Path: "/repos/o/r/issues/comments/230", Status: http.StatusNoContent, Body: ""},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA, Check: bodyHas("context", "perfgate/serving")},
	)
	env, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{GateID: "serving", Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "updated the comment", "removed 1 duplicate")
}

func TestCheckRun(t *testing.T) {
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Body: []any{}},
		githubtest.Call{Method: "POST", Path: commentsPath, Body: githubtest.Comment(9, "x")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/check-runs", Body: map[string]any{"id": 3, "html_url": "https://github.example/o/r/runs/3"},
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				out, _ := m["output"].(map[string]any)
				if m["name"] != "perfgate" || m["head_sha"] != headSHA || m["status"] != "completed" || m["conclusion"] != "failure" ||
					out["title"] != "1 failed of 3 checks" || !strings.Contains(fmt.Sprint(out["summary"]), "| fail |") {
					t.Errorf("check run %v", m)
				}
			}},
	)
	env, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: false, Title: "1 failed of 3 checks", Markdown: report("fail"), Comment: CommentAlways, CheckRun: true, API: true})
	checkOutcome(t, o, 0, `check run "perfgate": fail`, "https://github.example/o/r/runs/3")
}

func TestRetries(t *testing.T) {
	secondary := `{"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusBadGateway, Body: "<html>502 Bad Gateway</html>"},
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusForbidden, Header: map[string]string{"Retry-After": "3"}, Body: secondary},
		githubtest.Call{Method: "GET", Path: commentsPath, Body: []any{}},
		// A secondary limit without Retry-After: GitHub asks for a minute.
		githubtest.Call{Method: "POST", Path: commentsPath, Status: http.StatusForbidden, Body: secondary},
		githubtest.Call{Method: "POST", Path: commentsPath, Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "2"}, Body: `{"message":"slow down"}`},
		githubtest.Call{Method: "POST", Path: commentsPath, Body: githubtest.Comment(9, "x"), Check: bodyHas("body", "| pass |")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA, Status: http.StatusServiceUnavailable},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA, Check: bodyHas("state", "success")},
	)
	env, c, sl := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "commented on pull request #1")
	if len(sl.d) != 5 {
		t.Fatalf("waits %v, want 5", sl.d)
	}
	backoff := func(d time.Duration) bool { return d >= 500*time.Millisecond && d <= time.Second }
	if !backoff(sl.d[0]) || sl.d[1] != 3*time.Second || sl.d[2] != time.Minute || sl.d[3] != 2*time.Second || !backoff(sl.d[4]) {
		t.Errorf("waits %v, want [backoff 0.5-1s, 3s (Retry-After), 1m (secondary), 2s (Retry-After), backoff]", sl.d)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusBadGateway},
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusBadGateway},
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusBadGateway},
		// A permission error is not transient: one call, then a warning with the fix.
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA, Status: http.StatusForbidden,
			Body: `{"message": "Resource not accessible by integration"}`},
	)
	env, _, sl := setup(t, srv, "pull_request", sameRepoPR)
	c, err := NewClient(env, ClientOptions{Transport: &Transport{Sleep: sl.sleep, MaxAttempts: 3}})
	if err != nil {
		t.Fatal(err)
	}
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 2)
	msgs := fmt.Sprint(o.Warnings)
	for _, want := range []string{"502", "GitHub is unreachable or failing", "Resource not accessible by integration", "pull-requests: write", "workflow_run"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("warnings do not say %q: %s", want, msgs)
		}
	}

	// The time budget also bounds: a Retry-After beyond it is not waited for.
	srv2 := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "3600"}},
	)
	env2, _, sl2 := setup(t, srv2, "pull_request", sameRepoPR)
	c2, _ := NewClient(env2, ClientOptions{Transport: &Transport{Sleep: sl2.sleep, MaxElapsed: time.Minute}})
	if _, err := c2.UpsertComment(context.Background(), 1, "perfgate", "x", true); err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("error %v, want the 429", err)
	}
	if len(sl2.d) != 0 {
		t.Errorf("waited %v beyond the budget", sl2.d)
	}
}

func TestLongReportIsShortened(t *testing.T) {
	var b strings.Builder
	b.WriteString("### perfgate: fail\n\n<details><summary>All checks</summary>\n\n| a | b |\n|---|---|\n")
	for i := 0; b.Len() < 90000; i++ {
		fmt.Fprintf(&b, "| `bench-%05d` ✅ | %d |\n", i, i)
	}
	b.WriteString("</details>\n")
	long := b.String()
	if Len(long) <= MaxCommentLen {
		t.Fatalf("test report is only %d characters", Len(long))
	}
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Body: []any{}},
		githubtest.Call{Method: "POST", Path: commentsPath, Body: githubtest.Comment(9, "x"),
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				c := fmt.Sprint(githubtest.DecodeBody(t, body)["body"])
				if n := Len(c); n > MaxCommentLen || n < MaxCommentLen-2000 {
					t.Errorf("comment is %d characters, want at most %d and close to it", n, MaxCommentLen)
				}
				if len(c) > MaxCommentLen {
					t.Errorf("comment is %d bytes, over the limit of %d", len(c), MaxCommentLen)
				}
				for _, want := range []string{Marker(DefaultGateID), "shortened to fit GitHub's limit", "</details>", "[workflow run]("} {
					if !strings.Contains(c, want) {
						t.Errorf("comment lacks %q", want)
					}
				}
				if !strings.HasPrefix(c, Marker(DefaultGateID)) {
					t.Errorf("the marker must come first")
				}
			}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/check-runs",
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				out, _ := githubtest.DecodeBody(t, body)["output"].(map[string]any)
				if n := Len(fmt.Sprint(out["summary"])); n > MaxCheckRunText {
					t.Errorf("check run summary is %d characters", n)
				}
			}},
	)
	env, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: false, Title: "fail", Markdown: long, Comment: CommentAuto, CheckRun: true, API: true})
	checkOutcome(t, o, 0)
	// The job summary has room for all of it.
	if s, _ := os.ReadFile(env.StepSummary); !strings.Contains(string(s), long) {
		t.Errorf("the job summary lost part of the report (%d bytes)", len(s))
	}
}

func TestTokenNeverShown(t *testing.T) {
	// A server that echoes the token in its error message.
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Status: http.StatusUnauthorized, Body: `{"message": "Bad credentials: ` + testToken + `"}`},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA, Status: http.StatusUnprocessableEntity, Body: `{"message": "Validation Failed for ` + testToken + `"}`},
	)
	env, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 2)
	if msgs := fmt.Sprint(o.Warnings); !strings.Contains(msgs, "***") || !strings.Contains(msgs, "the token is invalid or expired") {
		t.Errorf("warnings %s", msgs)
	}
	for _, f := range []string{env.StepSummary, env.OutputFile} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), testToken) {
			t.Errorf("%s holds the token", f)
		}
	}
}

func TestForkPullRequest(t *testing.T) {
	forkPR := `{"pull_request": {"number": 1, "head": {"sha": "` + headSHA + `", "ref": "feat", "repo": {"full_name": "someone/r"}}, "base": {"ref": "main"}}}`
	// In the fork's pull_request workflow: no call at all (its token is read-only).
	srv := githubtest.New(t, testToken)
	env, c, _ := setup(t, srv, "pull_request", forkPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "comes from the fork someone/r", "workflow_run")

	// In the workflow_run workflow: the pull request is found by head.
	run := `{"workflow_run": {"event": "pull_request", "head_sha": "` + headSHA + `", "head_branch": "feat", "head_repository": {"full_name": "someone/r"}, "pull_requests": []}}`
	srv2 := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/pulls", Query: map[string]string{"head": "someone:feat", "state": "open"},
			Body: []any{map[string]any{"number": 4, "head": map[string]any{"sha": "3333333333333333333333333333333333333333"}},
				map[string]any{"number": 1, "head": map[string]any{"sha": headSHA}}}},
		githubtest.Call{Method: "GET", Path: commentsPath, Body: []any{}},
		githubtest.Call{Method: "POST", Path: commentsPath, Body: githubtest.Comment(9, "x")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA},
	)
	env2, c2, _ := setup(t, srv2, "workflow_run", run)
	o = Publish(context.Background(), env2, c2, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "commented on pull request #1", `commit status "perfgate": pass on 111111111111`)
}

func TestPublishWithoutToken(t *testing.T) {
	srv := githubtest.New(t, "")
	env, _, _ := setup(t, srv, "push", `{"after": "`+headSHA+`"}`)
	env.token = ""
	_, err := NewClient(env, ClientOptions{})
	if err == nil || !strings.Contains(err.Error(), "PERFGATE_GITHUB_TOKEN or GITHUB_TOKEN") {
		t.Fatalf("NewClient without a token: %v", err)
	}
	// Without the API: the summary and outputs only, and no warning.
	o := Publish(context.Background(), env, nil, err, Publication{Pass: true, Markdown: report("pass"), Comment: CommentAuto})
	checkOutcome(t, o, 0, "job summary")
	// Asked for the API without a token: one warning that says what to set.
	o = Publish(context.Background(), env, nil, err, Publication{Pass: true, Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 1)
	// A push has no pull request: auto stays quiet, always warns.
	env.token = testToken
	srv.Expect(githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA})
	c, _ := NewClient(env, ClientOptions{})
	o = Publish(context.Background(), env, c, nil, Publication{Pass: true, Markdown: report("pass"), Comment: CommentAlways, API: true})
	checkOutcome(t, o, 1)
	if !strings.Contains(fmt.Sprint(o.Warnings), "no pull request to comment on") {
		t.Errorf("warnings %v", o.Warnings)
	}
}

// readOutputs parses a $GITHUB_OUTPUT file as the runner does; a later
// value wins.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		name, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			if lines[i] != "" {
				t.Errorf("output line %q is not NAME<<DELIMITER", lines[i])
			}
			continue
		}
		var val []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			val = append(val, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("output %s: delimiter %s never closes", name, delim)
		}
		out[name] = strings.Join(val, "\n")
	}
	return out
}

// echo is a response body computed when the call is served, from what an
// earlier call of the script received.
type echo func() any

func (e echo) MarshalJSON() ([]byte, error) { return json.Marshal(e()) }

// TestLostCreateIsNotPostedTwice: GitHub posts the comment but answers
// 502. perfgate does not post it again blindly: it lists the comments,
// finds its marker and is done. When the marker is not there, the create
// was really lost and is made again.
func TestLostCreateIsNotPostedTwice(t *testing.T) {
	var posted string
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Body: []any{}},
		githubtest.Call{Method: "POST", Path: commentsPath, Status: http.StatusBadGateway, Body: "<html>502</html>",
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				posted = fmt.Sprint(githubtest.DecodeBody(t, body)["body"])
			}},
		// It was posted after all: found on the second look, not posted again.
		githubtest.Call{Method: "GET", Path: commentsPath, Body: echo(func() any { return []any{githubtest.Comment(5, "hi"), githubtest.Comment(42, posted)} })},
		githubtest.User(""),
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA},
		// Second publication: the create times out at the gateway and was lost.
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/2/comments", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/2/comments", Status: http.StatusGatewayTimeout},
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/2/comments", Body: []any{githubtest.Comment(5, "hi")}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/2/comments", Body: githubtest.Comment(43, "x")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA},
	)
	env, c, sl := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "commented on pull request #1: https://github.example/o/r/pull/1#issuecomment-42")
	o = Publish(context.Background(), env, c, nil, Publication{PR: 2, Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, "commented on pull request #2: https://github.example/o/r/pull/1#issuecomment-43")
	if len(sl.d) != 2 {
		t.Errorf("waits %v, want one backoff before each second look", sl.d)
	}
}

// TestLostCheckRunIsNotCreatedTwice: a check run carries an external id;
// after a 502 perfgate looks for it before creating another.
func TestLostCheckRunIsNotCreatedTwice(t *testing.T) {
	var externalID string
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "POST", Path: "/repos/o/r/check-runs", Status: http.StatusBadGateway,
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				externalID = fmt.Sprint(githubtest.DecodeBody(t, body)["external_id"])
			}},
		githubtest.Call{Method: "GET", Path: "/repos/o/r/commits/" + headSHA + "/check-runs", Query: map[string]string{"check_name": "perfgate", "filter": "all"},
			Body: echo(func() any {
				return map[string]any{"total_count": 2, "check_runs": []any{
					map[string]any{"id": 1, "external_id": "perfgate-earlier", "html_url": "https://github.example/o/r/runs/1"},
					map[string]any{"id": 2, "external_id": externalID, "html_url": "https://github.example/o/r/runs/2"},
				}}
			})},
	)
	env, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentNever, CheckRun: true, API: true})
	checkOutcome(t, o, 0, "https://github.example/o/r/runs/2")
	if !strings.HasPrefix(externalID, "perfgate-") {
		t.Errorf("external_id %q", externalID)
	}
}

// TestStickyCommentOnlyOwn: perfgate adopts only comments written by the
// identity its token acts as (GET /user; github-actions[bot] for
// GITHUB_TOKEN, which may not call it). A comment by anyone else that
// starts with the marker (an attacker's, or a quote) is never edited nor
// deleted: perfgate edits its own, or creates one beside it.
func TestStickyCommentOnlyOwn(t *testing.T) {
	marker := Marker(DefaultGateID)
	path := func(id int) string { return fmt.Sprintf("/repos/o/r/issues/comments/%d", id) }
	tests := []struct {
		name     string
		comments []any
		calls    []githubtest.Call
		want     CommentResult
	}{
		{"GITHUB_TOKEN: the bot's comment, not the attacker's earlier one, nor their duplicate",
			[]any{githubtest.CommentBy(1, marker+"\nfake", "mallory"), githubtest.Comment(2, marker+"\nold"),
				githubtest.CommentBy(3, marker+"\nquoted by hand", "alice"), githubtest.Comment(4, marker+"\ndup")},
			[]githubtest.Call{githubtest.User(""),
				{Method: "PATCH", Path: path(2), Body: githubtest.Comment(2, "x"), Check: bodyHas("body", "new")},
				{Method: "DELETE", Path: path(4), Status: http.StatusNotFound, Body: `{"message":"Not Found"}`}},
			CommentResult{ID: 2, URL: "https://github.example/o/r/pull/1#issuecomment-2"}},
		{"a personal token: its user's comment, not the bot's",
			[]any{githubtest.Comment(1, marker+"\nby the bot"), githubtest.CommentBy(2, marker+"\nold", "Perf-Bot")},
			[]githubtest.Call{githubtest.User("perf-bot"),
				{Method: "PATCH", Path: path(2), Body: githubtest.CommentBy(2, "x", "perf-bot")}},
			CommentResult{ID: 2, URL: "https://github.example/o/r/pull/1#issuecomment-2"}},
		{"only an attacker's comment: a new one is created",
			[]any{githubtest.CommentBy(1, marker+"\n@everyone", "mallory")},
			[]githubtest.Call{githubtest.User(""),
				{Method: "POST", Path: commentsPath, Body: githubtest.Comment(9, "x"), Check: bodyHas("body", "new")}},
			CommentResult{ID: 9, URL: "https://github.example/o/r/pull/1#issuecomment-9", Created: true}},
		{"no marker: /user is not asked",
			[]any{githubtest.CommentBy(1, "LGTM", "alice")},
			[]githubtest.Call{{Method: "POST", Path: commentsPath, Body: githubtest.Comment(9, "x")}},
			CommentResult{ID: 9, URL: "https://github.example/o/r/pull/1#issuecomment-9", Created: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New(t, testToken, append([]githubtest.Call{{Method: "GET", Path: commentsPath, Body: tt.comments}}, tt.calls...)...)
			_, c, _ := setup(t, srv, "pull_request", sameRepoPR)
			res, err := c.UpsertComment(context.Background(), 1, DefaultGateID, "new", true)
			if err != nil || res != tt.want {
				t.Errorf("UpsertComment = %+v, %v; want %+v", res, err, tt.want)
			}
		})
	}
}

// TestIdentityUnknown: when GitHub cannot say who the token is (a 5xx
// after the retries), perfgate edits nothing and says why.
func TestIdentityUnknown(t *testing.T) {
	marker := Marker(DefaultGateID)
	srv := githubtest.New(t, testToken,
		githubtest.Call{Method: "GET", Path: commentsPath, Body: []any{githubtest.Comment(2, marker+"\nold")}},
		githubtest.Call{Method: "GET", Path: "/user", Status: http.StatusUnauthorized, Body: `{"message":"Bad credentials"}`},
	)
	_, c, _ := setup(t, srv, "pull_request", sameRepoPR)
	_, err := c.UpsertComment(context.Background(), 1, DefaultGateID, "new", true)
	if err == nil || !strings.Contains(err.Error(), "find who the token acts as") || !strings.Contains(err.Error(), "401") {
		t.Errorf("err = %v", err)
	}
}

// TestEnterpriseBareHost: GITHUB_API_URL without /api/v3 (a GitHub
// Enterprise Server host as a user may write it) gets it, as go-github's
// WithEnterpriseURLs does; api.* hosts are kept as they are.
func TestEnterpriseBareHost(t *testing.T) {
	srv := githubtest.New(t, testToken, githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA})
	for _, tt := range []struct{ in, want string }{
		{srv.URL, srv.URL + "/api/v3/"},
		{srv.URL + "/api/v3", srv.URL + "/api/v3/"},
		{"https://ghe.example.com/", "https://ghe.example.com/api/v3/"},
		{"https://api.github.com", "https://api.github.com/"},
		{"https://api.octo.ghe.com", "https://api.octo.ghe.com/"},
	} {
		env, err := FromEnv(mapEnv(map[string]string{"GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": testToken, "GITHUB_API_URL": tt.in}))
		if err != nil {
			t.Fatal(err)
		}
		c, err := NewClient(env, ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.BaseURL(); got != tt.want {
			t.Errorf("GITHUB_API_URL=%s: API root %s, want %s", tt.in, got, tt.want)
		}
		if tt.in == srv.URL {
			if err := c.SetStatus(context.Background(), headSHA, Status{Name: "perfgate", Success: true}); err != nil {
				t.Error(err)
			}
		}
	}
	env, _ := FromEnv(mapEnv(map[string]string{"GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": testToken, "GITHUB_API_URL": "ghe.example.com"}))
	if _, err := NewClient(env, ClientOptions{}); err == nil || !strings.Contains(err.Error(), `GITHUB_API_URL "ghe.example.com/" is not a URL`) {
		t.Errorf("a URL without a scheme: %v", err)
	}
}

// TestWorkflowRunOfAPush: a workflow_run triggered by a push has no pull
// request to look up: only the status is set, on the pushed commit.
func TestWorkflowRunOfAPush(t *testing.T) {
	run := `{"workflow_run": {"event": "push", "head_sha": "` + headSHA + `", "head_branch": "main", "head_repository": {"full_name": "o/r"}, "pull_requests": []}}`
	srv := githubtest.New(t, testToken, githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + headSHA})
	env, c, _ := setup(t, srv, "workflow_run", run)
	o := Publish(context.Background(), env, c, nil, Publication{Pass: true, Title: "ok", Markdown: report("pass"), Comment: CommentAuto, API: true})
	checkOutcome(t, o, 0, `commit status "perfgate": pass on 111111111111`)
}

// TestReportOutputIsBounded: a report over 120 KiB is cut in the report
// output, below the 128 KiB of one environment variable (a later step
// reads it through env:), with a note that names the limit and the
// report-file output, which names a file with the whole report; the job
// summary stays under its 1 MiB.
func TestReportOutputIsBounded(t *testing.T) {
	srv := githubtest.New(t, "")
	env, _, _ := setup(t, srv, "push", "")
	row := "| `serving` | Mean TTFT (ms) | 100 | 120 | +20.00% | 3% | 1/1 | ❌ fail |\n"
	big := report("fail") + strings.Repeat(row, 75_000_000/len(row)/10) // 7.5 MB
	o := Publish(context.Background(), env, nil, nil, Publication{GateID: "a/b", Markdown: big})
	checkOutcome(t, o, 0, "over the 120 KiB a step output can hold and still be read through env:", "report-file output", "over GitHub's limit of 1 MiB for a job summary")
	out := readOutputs(t, env.OutputFile)
	if n := len("REPORT=" + out["report"]); n >= MaxEnvString || n < MaxEnvString/2 || !strings.Contains(out["report"], "read the report output through `env:`") {
		t.Errorf("report output of %d bytes (limit %d), ends %q", n, MaxEnvString, out["report"][max(0, n-300):])
	}
	if runtime.GOOS == "linux" {
		// What a later step with env: { REPORT: ... } does.
		step := exec.Command("sh", "-c", `test -n "$REPORT"`)
		step.Env = append(os.Environ(), "REPORT="+out["report"])
		if err := step.Run(); err != nil {
			t.Errorf("a step that reads the report output through env: does not start: %v", err)
		}
	}
	if want := filepath.Join(env.TempDir, "perfgate", "report-a-b.md"); out["report-file"] != want {
		t.Errorf("report-file = %q, want %q", out["report-file"], want)
	}
	if whole, err := os.ReadFile(out["report-file"]); err != nil || string(whole) != big {
		t.Errorf("the report file does not hold the whole report (%d bytes, %v)", len(whole), err)
	}
	if fi, err := os.Stat(env.StepSummary); err != nil || fi.Size() > MaxStepSummary {
		t.Errorf("job summary: %v, %v", fi, err)
	}
	// A report within the limit is the output as it is.
	env.OutputFile = filepath.Join(t.TempDir(), "output")
	Publish(context.Background(), env, nil, nil, Publication{Markdown: report("pass"), Pass: true})
	if out := readOutputs(t, env.OutputFile); out["report"] != strings.TrimSuffix(report("pass"), "\n") || out["verdict"] != "pass" {
		t.Errorf("outputs %v", out)
	}
}
