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

func actionsMerged(acts []IssueAction) string {
	var s []string
	for _, a := range acts {
		x := fmt.Sprintf("%s #%d %s", a.Do, a.Number, a.Key)
		if a.Adopted != "" {
			x += " (was " + a.Adopted + ")"
		}
		if a.MergedInto != 0 {
			x += fmt.Sprintf(" into #%d", a.MergedInto)
		}
		s = append(s, x)
	}
	return strings.Join(s, "; ")
}

// An alert that answers to more keys (watch's one issue per change)
// adopts the oldest own open issue under one of them and closes the
// others as merged into it, writing its Also keys on the hidden second
// line; an issue another alert's key claims is never adopted; a later
// alert whose key an issue's Also line lists adopts that issue (the
// change lost or gained a metric); a dry run only says so.
func TestSyncIssuesAdoptsAndMerges(t *testing.T) {
	group := IssueAlert{Key: "regression-g1", Title: "2 metrics", Body: "both", Also: []string{"regression-r1", "regression-r2"}, Formerly: []string{"regression-m1", "regression-m2"}}
	other := IssueAlert{Key: "regression-m2", Title: "t", Body: "o"} // claims #8 by its own key
	groupBody := WatchMarker("regression-g1") + "\n" + alsoMarker(group.Also) + "\nboth"
	tests := []struct {
		name   string
		open   []any
		alerts []IssueAlert
		dry    bool
		calls  []githubtest.Call
		want   string
	}{
		{
			name:   "per-metric issues of an earlier perfgate fold into the oldest",
			open:   []any{ownIssue(5, "regression-m1", "old"), ownIssue(6, "regression-m2", "old"), issue(7, WatchMarker("regression-m1")+"\nquoted", "mallory")},
			alerts: []IssueAlert{group},
			calls: []githubtest.Call{
				{Method: "PATCH", Path: issuesPath + "/5", Body: issue(5, "", githubtest.Bot), Check: func(t testing.TB, r *http.Request, body []byte) {
					if m := githubtest.DecodeBody(t, body); m["body"] != groupBody || m["title"] != "2 metrics" {
						t.Errorf("adopt %v", m)
					}
				}},
				{Method: "POST", Path: issuesPath + "/6/comments", Body: githubtest.Comment(1, "x"), Check: bodyHas("body", "part of #5")},
				{Method: "PATCH", Path: issuesPath + "/6", Body: issue(6, "", githubtest.Bot), Check: bodyHas("state", "closed")},
			},
			want: "update #5 regression-g1 (was regression-m1); close #6 regression-m2 into #5",
		},
		{
			name:   "an issue claimed by another alert's key stays its own",
			open:   []any{ownIssue(8, "regression-m2", "o")},
			alerts: []IssueAlert{group, other},
			calls: []githubtest.Call{
				{Method: "POST", Path: issuesPath, Body: issue(12, "", githubtest.Bot), Check: bodyHas("body", "perfgate:watch-also=regression-r1 regression-r2")},
			},
			want: "open #12 regression-g1; unchanged #8 regression-m2",
		},
		{
			name:   "the change lost a metric: its key is on the old issue's also line",
			open:   []any{issue(5, groupBody, githubtest.Bot)},
			alerts: []IssueAlert{{Key: "regression-r1", Title: "1 metric", Body: "one", Formerly: []string{"regression-m1"}}},
			calls: []githubtest.Call{
				{Method: "PATCH", Path: issuesPath + "/5", Body: issue(5, "", githubtest.Bot), Check: bodyHas("body", WatchMarker("regression-r1")+"\none")},
			},
			want: "update #5 regression-r1 (was regression-g1)",
		},
		{
			name:   "dry run",
			open:   []any{ownIssue(5, "regression-m1", "old"), ownIssue(6, "regression-m2", "old")},
			alerts: []IssueAlert{group},
			dry:    true,
			want:   "update #5 regression-g1 (was regression-m1); close #6 regression-m2 into #5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := githubtest.New(t, testToken)
			srv.Expect(append([]githubtest.Call{listCall(srv, 1, tt.open, false), githubtest.User("")}, tt.calls...)...)
			_, c, _ := setup(t, srv, "schedule", "")
			if got := actionsMerged(syncIssues(t, c, tt.alerts, tt.dry)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
