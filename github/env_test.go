package github

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mapEnv is a getenv over a map.
func mapEnv(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func writeEvent(t *testing.T, payload string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(p, []byte(payload), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFromEnv(t *testing.T) {
	const (
		head  = "1111111111111111111111111111111111111111"
		merge = "2222222222222222222222222222222222222222"
	)
	tests := []struct {
		name    string
		vars    map[string]string
		event   string
		want    string // Env.String()
		pr      int
		headSHA string
		fork    bool
		base    string
	}{
		{
			name:  "pull_request from a fork: the head, not the merge commit",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_SHA": merge},
			event: `{"number": 7, "pull_request": {"number": 7, "head": {"sha": "` + head + `", "ref": "feat", "repo": {"full_name": "someone/r"}}, "base": {"ref": "main"}}}`,
			pr:    7, headSHA: head, fork: true, base: "main",
		},
		{
			name:  "pull_request from a branch of the repository",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_SHA": merge},
			event: `{"pull_request": {"number": 8, "head": {"sha": "` + head + `", "repo": {"full_name": "O/R"}}, "base": {"ref": "dev"}}}`,
			pr:    8, headSHA: head, base: "dev",
		},
		{
			name:  "workflow_run lists the pull request of a same-repository branch",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_SHA": merge},
			event: `{"workflow_run": {"head_sha": "` + head + `", "head_branch": "feat", "head_repository": {"full_name": "o/r"}, "pull_requests": [{"number": 9, "head": {"sha": "` + head + `"}, "base": {"ref": "main"}}]}}`,
			pr:    9, headSHA: head, base: "main",
		},
		{
			name:  "workflow_run from a fork lists none",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_SHA": merge},
			event: `{"workflow_run": {"head_sha": "` + head + `", "head_branch": "feat", "head_repository": {"full_name": "someone/r"}, "pull_requests": []}}`,
			pr:    0, headSHA: head, fork: true,
		},
		{
			name:  "pull_request_target from a fork",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_SHA": merge},
			event: `{"number": 5, "pull_request": {"number": 5, "head": {"sha": "` + head + `", "ref": "feat", "repo": {"full_name": "someone/r"}}, "base": {"ref": "main"}}}`,
			pr:    5, headSHA: head, fork: true, base: "main",
		},
		{
			name:  "workflow_run of a push",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "workflow_run", "GITHUB_SHA": merge},
			event: `{"workflow_run": {"event": "push", "head_sha": "` + head + `", "head_branch": "main", "head_repository": {"full_name": "o/r"}, "pull_requests": []}}`,
			pr:    0, headSHA: head,
		},
		{
			name:  "push",
			vars:  map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": head},
			event: `{"after": "` + head + `"}`,
			pr:    0, headSHA: head,
		},
		{
			name: "no event file",
			vars: map[string]string{"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": head, "GITHUB_EVENT_PATH": "/nonexistent/event.json"},
			pr:   0, headSHA: head,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{"GITHUB_REPOSITORY": "o/r", "GITHUB_ACTIONS": "true"}
			for k, v := range tt.vars {
				vars[k] = v
			}
			if tt.event != "" {
				vars["GITHUB_EVENT_PATH"] = writeEvent(t, tt.event)
			}
			e, err := FromEnv(mapEnv(vars))
			if err != nil {
				t.Fatal(err)
			}
			if e.PR != tt.pr || e.HeadSHA != tt.headSHA || e.Fork() != tt.fork || e.BaseRef != tt.base {
				t.Errorf("got pr %d sha %s fork %v base %q, want %d %s %v %q", e.PR, e.HeadSHA, e.Fork(), e.BaseRef, tt.pr, tt.headSHA, tt.fork, tt.base)
			}
			if e.Owner != "o" || e.Repo != "r" || !e.Actions || e.APIURL != DefaultAPIURL {
				t.Errorf("repository/API: %v", e)
			}
		})
	}
}

func TestFromEnvTokenAndURLs(t *testing.T) {
	const secret = "ghs_0123456789abcdefSECRET"
	e, err := FromEnv(mapEnv(map[string]string{
		"GITHUB_TOKEN": "other-token", "PERFGATE_GITHUB_TOKEN": secret,
		"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GITHUB_SERVER_URL": "https://ghe.example.com",
		"GITHUB_REPOSITORY": "o/r", "GITHUB_RUN_ID": "42",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if e.token != secret {
		t.Errorf("PERFGATE_GITHUB_TOKEN must win over GITHUB_TOKEN")
	}
	if e.APIURL != "https://ghe.example.com/api/v3/" {
		t.Errorf("APIURL %q", e.APIURL)
	}
	if e.RunURL != "https://ghe.example.com/o/r/actions/runs/42" {
		t.Errorf("RunURL %q", e.RunURL)
	}
	for _, s := range []string{e.String(), fmt.Sprintf("%v %+v %#v %s", e, e, e, e)} {
		if strings.Contains(s, secret) {
			t.Errorf("the token is printed: %s", s)
		}
	}
	if got := e.Redact("Authorization: Bearer " + secret); got != "Authorization: Bearer ***" {
		t.Errorf("Redact: %q", got)
	}
}

func TestFromEnvErrors(t *testing.T) {
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{"bad repository", map[string]string{"GITHUB_REPOSITORY": "just-a-name"}, `GITHUB_REPOSITORY "just-a-name" is not OWNER/NAME`},
		{"bad payload", map[string]string{"GITHUB_EVENT_PATH": "BAD"}, "the event payload is not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.vars["GITHUB_EVENT_PATH"] == "BAD" {
				tt.vars["GITHUB_EVENT_PATH"] = writeEvent(t, "{not json")
			}
			_, err := FromEnv(mapEnv(tt.vars))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseCommentModeAndGateID(t *testing.T) {
	for in, want := range map[string]CommentMode{"": CommentAuto, "auto": CommentAuto, "true": CommentAuto, "ALWAYS": CommentAlways, "never": CommentNever, "false": CommentNever} {
		if got, err := ParseCommentMode(in); err != nil || got != want {
			t.Errorf("ParseCommentMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseCommentMode("sometimes"); err == nil || !strings.Contains(err.Error(), "auto, always, never") {
		t.Errorf("bad mode error: %v", err)
	}
	for _, id := range []string{"perfgate", "serving-a100", "bench/llama_3.1"} {
		if err := CheckGateID(id); err != nil {
			t.Errorf("CheckGateID(%q): %v", id, err)
		}
	}
	for _, id := range []string{"", "-x", "a -->", "has space", strings.Repeat("a", 101)} {
		if err := CheckGateID(id); err == nil {
			t.Errorf("CheckGateID(%q) accepted", id)
		}
	}
	if n, err := ParsePR("#12"); n != 12 || err != nil {
		t.Errorf("ParsePR(#12) = %d, %v", n, err)
	}
	if _, err := ParsePR("x"); err == nil {
		t.Errorf("ParsePR(x) accepted")
	}
}

// TestEnvPrintsNoToken: however an Env is formatted, by value or by
// pointer, the token is not in it.
func TestEnvPrintsNoToken(t *testing.T) {
	const tok = "ghp_PRINTtest0123456789abcdef"
	e, err := FromEnv(mapEnv(map[string]string{"GITHUB_REPOSITORY": "o/r", "PERFGATE_GITHUB_TOKEN": tok, "GITHUB_TOKEN": "other-token"}))
	if err != nil {
		t.Fatal(err)
	}
	if !e.HasToken() || e.Redact("x "+tok) != "x ***" {
		t.Errorf("PERFGATE_GITHUB_TOKEN was not taken first")
	}
	for _, s := range []string{fmt.Sprint(e), fmt.Sprint(*e), fmt.Sprintf("%+v %#v %+v %#v", e, e, *e, *e)} {
		if strings.Contains(s, tok) || !strings.Contains(s, "token set") {
			t.Errorf("formatted Env: %s", s)
		}
	}
}
