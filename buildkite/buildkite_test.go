package buildkite

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/forge"
	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/github/githubtest"
)

// fakeAgent writes a buildkite-agent that logs its arguments, its stdin
// and the artifact it uploads to the returned log file.
func fakeAgent(t *testing.T) (agent, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls.log")
	agent = filepath.Join(dir, "buildkite-agent")
	script := `#!/bin/sh
{ echo "buildkite-agent $*"
  case "$1" in
    annotate) echo "--- stdin"; cat; echo "--- end" ;;
    artifact) echo "--- file"; cat "$3"; echo; echo "--- end" ;;
  esac
} >> "` + log + `"
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return agent, log
}

func env(t *testing.T, vars map[string]string) *Env {
	t.Helper()
	e, err := FromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestFromEnv(t *testing.T) {
	e := env(t, map[string]string{"BUILDKITE": "true", "BUILDKITE_PULL_REQUEST": "12", "BUILDKITE_PULL_REQUEST_BASE_BRANCH": "main",
		"BUILDKITE_REPO": "git@github.com:vllm-project/vllm.git", "BUILDKITE_COMMIT": "abc"})
	if !e.Buildkite || e.PR != 12 || e.BaseBranch != "main" || e.Fork() {
		t.Errorf("%+v", e)
	}
	for url, want := range map[string]string{"git@github.com:o/r.git": "o/r", "https://github.com/o/r": "o/r", "https://x:y@github.com/o/r.git": "o/r",
		"ssh://git@github.com/o/r.git": "o/r", "git@gitlab.com:o/r.git": "", "https://github.com.evil.example/o/r": ""} {
		o, n, ok := GitHubRepo(url)
		if got := o + "/" + n; (ok && got != want) || (!ok && want != "") {
			t.Errorf("GitHubRepo(%q) = %s, %v; want %q", url, got, ok, want)
		}
	}
	if _, err := FromEnv(func(k string) string { return map[string]string{"BUILDKITE_PULL_REQUEST": "yes"}[k] }); err == nil || !strings.Contains(err.Error(), "BUILDKITE_PULL_REQUEST") {
		t.Errorf("a bad BUILDKITE_PULL_REQUEST: %v", err)
	}
}

// The annotation has one context per gate and the verdict's style; its
// body is the report on stdin, HTML in it already escaped; the JSON report
// is uploaded.
func TestPublishAnnotates(t *testing.T) {
	agent, log := fakeAgent(t)
	e := env(t, map[string]string{"BUILDKITE": "true", "BUILDKITE_COMMIT": strings.Repeat("b", 40)})
	e.Agent = agent
	f := &Forge{Env: e, TempDir: t.TempDir()}
	for _, tt := range []struct {
		p     forge.Publication
		style string
	}{
		{forge.Publication{GateID: "serving/a100", Markdown: "| `<img src=x>` | &lt;b&gt; |\n", JSON: []byte(`{"verdict":"fail"}`)}, "error"},
		{forge.Publication{GateID: "serving/a100", Pass: true, Neutral: true, Markdown: "undecided\n"}, "warning"},
		{forge.Publication{Pass: true, Markdown: "ok\n"}, "success"},
	} {
		os.Remove(log)
		out := f.Publish(context.Background(), tt.p)
		if out.Failed() {
			t.Fatal(out.Warnings)
		}
		data, _ := os.ReadFile(log)
		ctx := Context(tt.p.GateID)
		want := "buildkite-agent annotate --context " + ctx + " --style " + tt.style + "\n--- stdin\n" + tt.p.Markdown
		if !strings.HasPrefix(string(data), want) || strings.Count(string(data), "buildkite-agent annotate") != 1 {
			t.Errorf("calls:\n%s\nwant a start of\n%s", data, want)
		}
		if tt.p.JSON != nil && !strings.Contains(string(data), "buildkite-agent artifact upload "+ctx+".json\n--- file\n"+string(tt.p.JSON)) {
			t.Errorf("no upload of the JSON report:\n%s", data)
		}
	}
}

// A failing agent is a warning naming the command; nothing panics.
func TestPublishAgentFails(t *testing.T) {
	e := env(t, map[string]string{"BUILDKITE": "true"})
	e.Agent = filepath.Join(t.TempDir(), "missing-agent")
	out := (&Forge{Env: e}).Publish(context.Background(), forge.Publication{Markdown: "x"})
	if len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0].Error(), "annotate --context perfgate") {
		t.Errorf("%v", out.Warnings)
	}
}

// A build of a GitHub pull request with a token also comments and sets
// the status there, as in Actions.
func TestPublishGitHubPR(t *testing.T) {
	agent, _ := fakeAgent(t)
	sha := strings.Repeat("c", 40)
	srv := githubtest.New(t, "ghp_x",
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/12/comments", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/12/comments", Body: githubtest.CommentBy(1, "x", "perfgate-bot")},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + sha, Check: func(t testing.TB, r *http.Request, body []byte) {
			m := githubtest.DecodeBody(t, body)
			if m["state"] != "failure" || m["target_url"] != "https://buildkite.com/o/p/builds/3" {
				t.Errorf("status %v", m)
			}
		}},
	)
	vars := map[string]string{"BUILDKITE": "true", "BUILDKITE_COMMIT": sha, "BUILDKITE_PULL_REQUEST": "12", "BUILDKITE_REPO": "git@github.com:o/r.git",
		"BUILDKITE_BUILD_URL": "https://buildkite.com/o/p/builds/3", "PERFGATE_GITHUB_TOKEN": "ghp_x", "GITHUB_API_URL": srv.APIURL()}
	e := env(t, vars)
	e.Agent = agent
	ge := e.GitHubEnv(func(k string) string { return vars[k] })
	client, err := github.NewClient(ge, github.ClientOptions{})
	f := &Forge{Env: e, GitHub: &github.Forge{Env: ge, Client: client, ClientErr: err}, TempDir: t.TempDir()}
	out := f.Publish(context.Background(), forge.Publication{Markdown: "regressed\n", Title: "1 failed", Comment: forge.CommentAuto, API: true})
	if out.Failed() || !strings.Contains(strings.Join(out.Notes, "\n"), "GitHub: commented on pull request #12") {
		t.Errorf("%+v", out)
	}
}
