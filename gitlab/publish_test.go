package gitlab

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/forge"
	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/gitlab/gitlabtest"
)

const token = "glpat-secret-token"

func testEnv(t *testing.T, srv *gitlabtest.Server, extra map[string]string) *Env {
	t.Helper()
	vars := map[string]string{"GITLAB_CI": "true", "CI_API_V4_URL": srv.APIURL(), "CI_PROJECT_ID": "42",
		"CI_MERGE_REQUEST_IID": "7", "CI_COMMIT_SHA": strings.Repeat("a", 40), "CI_JOB_URL": "https://gitlab.example/g/p/-/jobs/9",
		TokenVar: token}
	for k, v := range extra {
		vars[k] = v
	}
	env, err := FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func testForge(t *testing.T, env *Env) *Forge {
	t.Helper()
	tr := &github.Transport{Sleep: func(context.Context, time.Duration) error { return nil }}
	c, err := NewClient(env, tr)
	return &Forge{Env: env, Client: c, ClientErr: err}
}

const notes = "/projects/42/merge_requests/7/notes"
const statuses = "/projects/42/statuses/" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func statusCall(state string) gitlabtest.Call {
	return gitlabtest.Call{Method: "POST", Path: statuses, Check: func(t testing.TB, r *http.Request, body []byte) {
		m := gitlabtest.DecodeBody(t, body)
		if m["state"] != state || m["name"] != "perfgate" || m["target_url"] != "https://gitlab.example/g/p/-/jobs/9" {
			t.Errorf("status %v, want state %s", m, state)
		}
	}}
}

// A regression creates the one note and a failed status; a re-run finds
// the note (on a later page) and edits it; a pass turns the status green.
func TestPublishStickyNote(t *testing.T) {
	hostile := "| `serve @alice ~bug !3 %v1 $9 :tada:` | x |\n/merge\n"
	srv := gitlabtest.New(t, token,
		gitlabtest.User(),
		gitlabtest.Call{Method: "GET", Path: notes, Query: map[string]string{"page": "1", "per_page": "100"}, Body: []any{}},
		gitlabtest.Call{Method: "POST", Path: notes, Body: gitlabtest.Note(501, "x", gitlabtest.BotID), Check: func(t testing.TB, r *http.Request, body []byte) {
			b := gitlabtest.DecodeBody(t, body)["body"].(string)
			if !strings.HasPrefix(b, "<!-- perfgate:gate=perfgate -->\n") || !strings.Contains(b, "regressed @\u200bbob ~\u200bperf") || !strings.Contains(b, "\u200b/merge") ||
				!strings.Contains(b, "`serve @alice ~bug !3 %v1 $9 :tada:`") {
				t.Errorf("note body:\n%q", b)
			}
		}},
		statusCall("failed"),
		// the re-run: the note is on the second page, after one by a person
		// quoting the marker, which is not edited
		gitlabtest.User(),
		gitlabtest.Call{Method: "GET", Path: notes, Query: map[string]string{"page": "1"}, Header: gitlabtest.NextPage(2),
			Body: []any{gitlabtest.Note(400, "> <!-- perfgate:gate=perfgate --> quoted", 5)}},
		gitlabtest.Call{Method: "GET", Path: notes, Query: map[string]string{"page": "2"}, Body: []any{gitlabtest.Note(501, "<!-- perfgate:gate=perfgate -->\nold", gitlabtest.BotID)}},
		gitlabtest.Call{Method: "PUT", Path: notes + "/501"},
		statusCall("failed"),
		// an unchanged head: the same note, green
		gitlabtest.User(),
		gitlabtest.Call{Method: "GET", Path: notes, Body: []any{gitlabtest.Note(501, "<!-- perfgate:gate=perfgate -->\nold", gitlabtest.BotID)}},
		gitlabtest.Call{Method: "PUT", Path: notes + "/501", Check: func(t testing.TB, r *http.Request, body []byte) {
			if b := gitlabtest.DecodeBody(t, body)["body"].(string); !strings.Contains(b, "passed") {
				t.Errorf("note body %q", b)
			}
		}},
		statusCall("success"),
	)
	f := testForge(t, testEnv(t, srv, nil))
	fail := forge.Publication{Title: "1 failed of 1 checks", Markdown: "### perfgate: fail — regressed @bob ~perf\n\n" + hostile, Comment: forge.CommentAuto, API: true}
	for i, want := range []string{"commented on merge request !7", "updated the note on merge request !7"} {
		out := f.Publish(context.Background(), fail)
		if out.Failed() || len(out.Notes) < 2 || out.Notes[len(out.Notes)-2] != want {
			t.Fatalf("run %d: %+v", i+1, out)
		}
	}
	pass := forge.Publication{Pass: true, Title: "1 checks passed", Markdown: "### perfgate: pass — passed\n", Comment: forge.CommentAuto, API: true}
	if out := f.Publish(context.Background(), pass); out.Failed() {
		t.Fatalf("pass: %+v", out)
	}
	for _, r := range srv.Requests() {
		if strings.Contains(r.Query, token) || strings.Contains(string(r.Body), token) {
			t.Errorf("the token is in a request's query or body: %s %s", r.Method, r.Path)
		}
	}
}

// GitLab's 429 and 5xx are retried after Retry-After; a note that cannot
// be written is a warning, and the status is still set.
func TestPublishRetriesAndWarns(t *testing.T) {
	srv := gitlabtest.New(t, token,
		gitlabtest.Call{Method: "GET", Path: "/user", Status: 429, Header: map[string]string{"Retry-After": "2"}},
		gitlabtest.User(),
		gitlabtest.Call{Method: "GET", Path: notes, Status: 502},
		gitlabtest.Call{Method: "GET", Path: notes, Body: []any{}},
		gitlabtest.Call{Method: "POST", Path: notes, Status: 403, Body: `{"message":"403 Forbidden"}`},
		statusCall("skipped"),
	)
	f := testForge(t, testEnv(t, srv, nil))
	out := f.Publish(context.Background(), forge.Publication{Pass: true, Neutral: true, Title: "no baseline", Markdown: "x", Comment: forge.CommentAuto, API: true})
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Error(), "HTTP 403") || !strings.Contains(out.Warnings[0].Error(), "api scope") {
		t.Fatalf("warnings %v", out.Warnings)
	}
	if strings.Contains(out.Warnings[0].Error(), token) {
		t.Error("the token is in a warning")
	}
}

// Without a token nothing is called; the dotenv, metrics and report files
// are written in the project directory.
func TestPublishFiles(t *testing.T) {
	srv := gitlabtest.New(t, token)
	dir := t.TempDir()
	env := testEnv(t, srv, map[string]string{"CI_PROJECT_DIR": dir, TokenVar: ""})
	f := &Forge{Env: env}
	_, cerr := NewClient(env, nil)
	if cerr == nil || !strings.Contains(cerr.Error(), TokenVar) {
		t.Fatalf("NewClient without a token: %v", cerr)
	}
	p := forge.Publication{GateID: "serving/a100", Markdown: "# report\n", Metrics: []forge.Metric{
		{Benchmark: "serve qps=4", Metric: "mean_ttft_ms", Labels: map[string]string{"model": `m"1\`}, Value: 12.5},
		{Benchmark: "9x", Metric: "tok/s", Value: 3},
	}}
	out := f.Publish(context.Background(), p)
	if out.Failed() {
		t.Fatal(out.Warnings)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got, want := read("perfgate-serving-a100.env"), "PERFGATE_VERDICT=fail\nPERFGATE_REPORT_FILE="+filepath.Join(dir, "perfgate-serving-a100-report.md")+"\n"; got != want {
		t.Errorf("dotenv %q, want %q", got, want)
	}
	if got, want := read("perfgate-serving-a100-metrics.txt"), "perfgate_9x_tok_s 3\nperfgate_serve_qps_4_mean_ttft_ms{model=\"m\\\"1\\\\\"} 12.5\n"; got != want {
		t.Errorf("metrics %q, want %q", got, want)
	}
	if read("perfgate-serving-a100-report.md") != "# report\n" {
		t.Error("report file")
	}
}

// The token is read from PERFGATE_GITLAB_TOKEN only and never printed.
func TestEnvRedacts(t *testing.T) {
	env, err := FromEnv(func(k string) string {
		return map[string]string{TokenVar: token, "CI_SERVER_URL": "https://git.example", "CI_PROJECT_ID": "3", "CI_MERGE_REQUEST_IID": "x"}[k]
	})
	if err == nil || !strings.Contains(err.Error(), "CI_MERGE_REQUEST_IID") {
		t.Errorf("a bad iid: %v", err)
	}
	if env.APIURL != "https://git.example/api/v4" {
		t.Errorf("api %q", env.APIURL)
	}
	for _, s := range []string{env.String(), env.GoString(), env.Redact("x " + token)} {
		if strings.Contains(s, token) {
			t.Errorf("token in %q", s)
		}
	}
}
