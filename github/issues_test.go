package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/github/githubtest"
)

const issuesPath = "/repos/o/r/issues"

func issue(number int, body, login string) map[string]any {
	return map[string]any{"number": number, "title": "t", "body": body, "state": "open",
		"html_url": fmt.Sprintf("https://github.example/o/r/issues/%d", number), "user": map[string]any{"login": login}}
}

func ownIssue(number int, key, body string) map[string]any {
	return issue(number, WatchMarker(key)+"\n"+body, githubtest.Bot)
}

// fillerIssues is a full page of other issues (and a pull request), so
// the watch issue is found only on the second page.
func fillerIssues(n int) []any {
	out := make([]any, 0, n)
	for i := 0; i < n; i++ {
		is := issue(1000+i, "something else", "someone")
		if i == 0 {
			is["pull_request"] = map[string]any{"url": "x"}
		}
		out = append(out, is)
	}
	return out
}

func listCall(srv *githubtest.Server, page int, body any, next bool) githubtest.Call {
	c := githubtest.Call{Method: "GET", Path: issuesPath, Query: map[string]string{"state": "open", "labels": "perfgate", "per_page": "100"}, Body: body}
	if page > 1 {
		c.Query["page"] = fmt.Sprint(page)
	}
	if next {
		c.Header = srv.NextLink(issuesPath, page+1)
	}
	return c
}

func syncIssues(t *testing.T, c *Client, alerts []IssueAlert, dry bool) []IssueAction {
	t.Helper()
	acts, err := c.SyncIssues(context.Background(), alerts, IssueOptions{Labels: []string{"perfgate", "performance"}, DryRun: dry})
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

func actions(acts []IssueAction) string {
	var s []string
	for _, a := range acts {
		s = append(s, fmt.Sprintf("%s #%d %s", a.Do, a.Number, a.Key))
	}
	return strings.Join(s, "; ")
}

// Three runs: the first opens the issue, the second finds it past the
// first page and updates it in place, the third (recovered) comments on
// it and closes it.
func TestSyncIssuesOpenUpdateClose(t *testing.T) {
	srv := githubtest.New(t, testToken)
	srv.Expect(
		// Run 1: no watch issue yet.
		listCall(srv, 1, []any{issue(3, "a bug report", "someone")}, false),
		githubtest.Call{Method: "POST", Path: issuesPath, Body: issue(42, "", githubtest.Bot),
			Check: func(t testing.TB, r *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				if !strings.HasPrefix(m["body"].(string), WatchMarker("regression-abc")+"\n") || m["title"] != "Regression: serving +12%" {
					t.Errorf("create %v", m)
				}
				if ls, _ := m["labels"].([]any); len(ls) != 2 || ls[0] != "perfgate" {
					t.Errorf("labels %v", m["labels"])
				}
			}},
		// Run 2: the issue is on page 2, with an old body: edited.
		listCall(srv, 1, fillerIssues(100), true),
		listCall(srv, 2, []any{ownIssue(42, "regression-abc", "old")}, false),
		githubtest.User(""),
		githubtest.Call{Method: "PATCH", Path: issuesPath + "/42", Body: issue(42, "", githubtest.Bot),
			Check: func(t testing.TB, r *http.Request, body []byte) {
				m := githubtest.DecodeBody(t, body)
				if !strings.Contains(m["body"].(string), "now +15%") || m["state"] != nil {
					t.Errorf("edit %v", m)
				}
			}},
		// Run 3: recovered: comment, then close.
		listCall(srv, 1, []any{ownIssue(42, "regression-abc", "now +15%")}, false),
		githubtest.User(""),
		githubtest.Call{Method: "POST", Path: issuesPath + "/42/comments", Body: githubtest.Comment(7, "x"),
			Check: bodyHas("body", "recovered at abc1234")},
		githubtest.Call{Method: "PATCH", Path: issuesPath + "/42", Body: issue(42, "", githubtest.Bot),
			Check: bodyHas("state", "closed")},
	)
	_, c, _ := setup(t, srv, "schedule", "")
	acts := syncIssues(t, c, []IssueAlert{{Key: "regression-abc", Title: "Regression: serving +12%", Body: "now +12%"}}, false)
	if got := actions(acts); got != "open #42 regression-abc" {
		t.Errorf("run 1: %s", got)
	}
	acts = syncIssues(t, c, []IssueAlert{{Key: "regression-abc", Title: "Regression: serving +15%", Body: "now +15%"}}, false)
	if got := actions(acts); got != "update #42 regression-abc" {
		t.Errorf("run 2: %s", got)
	}
	c.login = "" // a new process asks again
	acts, err := c.SyncIssues(context.Background(), nil, IssueOptions{Labels: []string{"perfgate"}, Recovered: "perfgate watch: recovered at abc1234; closing."})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(acts); got != "close #42 regression-abc" {
		t.Errorf("run 3: %s", got)
	}
}

// An issue by someone else that carries a marker is never adopted, an
// unchanged issue is not edited, a raced duplicate is closed, and a dry
// run only lists.
func TestSyncIssuesOwnershipDuplicatesDryRun(t *testing.T) {
	srv := githubtest.New(t, testToken)
	srv.Expect(
		listCall(srv, 1, []any{issue(5, WatchMarker("missing-1")+"\nfake", "mallory"), ownIssue(6, "missing-1", "stopped"), ownIssue(9, "missing-1", "stopped")}, false),
		githubtest.User(""),
		githubtest.Call{Method: "POST", Path: issuesPath + "/9/comments", Body: githubtest.Comment(8, "x"), Check: bodyHas("body", "duplicate")},
		githubtest.Call{Method: "PATCH", Path: issuesPath + "/9", Body: issue(9, "", githubtest.Bot), Check: bodyHas("state", "closed")},
		// Dry run: lists, writes nothing.
		listCall(srv, 1, []any{ownIssue(6, "missing-1", "stopped"), ownIssue(11, "regression-x", "old")}, false),
		githubtest.User(""),
	)
	_, c, _ := setup(t, srv, "schedule", "")
	alerts := []IssueAlert{{Key: "missing-1", Title: "t", Body: "stopped"}}
	if got := actions(syncIssues(t, c, alerts, false)); got != "unchanged #6 missing-1; close #9 missing-1" {
		t.Errorf("run: %s", got)
	}
	c.login = ""
	alerts = append(alerts, IssueAlert{Key: "regression-y", Title: "new", Body: "b"})
	if got := actions(syncIssues(t, c, alerts, true)); got != "unchanged #6 missing-1; open #0 regression-y; close #11 regression-x" {
		t.Errorf("dry run: %s", got)
	}
}

// A create that fails with a 502 (it may have gone through) is retried
// only after listing again shows the issue absent.
func TestSyncIssuesCreateNotBlindlyRetried(t *testing.T) {
	srv := githubtest.New(t, testToken)
	srv.Expect(
		listCall(srv, 1, []any{}, false),
		githubtest.Call{Method: "POST", Path: issuesPath, Status: http.StatusBadGateway, Body: `{"message":"bad gateway"}`},
		listCall(srv, 1, []any{ownIssue(50, "regression-abc", "b")}, false),
		githubtest.User(""),
	)
	_, c, _ := setup(t, srv, "schedule", "")
	acts := syncIssues(t, c, []IssueAlert{{Key: "regression-abc", Title: "t", Body: "b"}}, false)
	if got := actions(acts); got != "open #50 regression-abc" {
		t.Errorf("%s", got)
	}
}
