package github

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	gh "github.com/google/go-github/v60/github"
)

// Issue alerts (perfgate watch): one issue per alert, carrying the hidden
// marker <!-- perfgate:watch=KEY --> as its first line. SyncIssues lists
// every page of the open issues with the first configured label, adopts
// only those with a marker written by the identity the token acts as
// (as for sticky comments), updates an alert's issue in place, opens one
// for a new alert, and comments on and closes an issue whose alert is
// gone (the series recovered or the change was accepted). Creating an
// issue is not idempotent: after an ambiguous failure the issues are
// listed again before another create (NoBlindRetry).

// WatchMarker is the hidden first line of the issue of an alert.
func WatchMarker(key string) string { return "<!-- perfgate:watch=" + key + " -->" }

var watchMarkerRE = regexp.MustCompile(`^<!-- perfgate:watch=([A-Za-z0-9_.-]{1,100}) -->`)

// IssueAlert is one alert to keep as an issue: Key is stable across runs
// (it goes in the marker), Title and Body (markdown, escaped by the
// caller) are its current text.
type IssueAlert struct {
	Key, Title, Body string
}

// IssueAction is one thing SyncIssues did, or would do in a dry run.
type IssueAction struct {
	Do     string // "open", "update", "unchanged", "close"
	Key    string
	Number int // 0 for an issue not opened yet
	Title  string
	URL    string
}

// IssueOptions configure SyncIssues.
type IssueOptions struct {
	Labels []string // put on new issues; the first one narrows the listing
	DryRun bool     // list only: say what would be done
	// Recovered is the comment left on an issue before it is closed.
	Recovered string
}

// SyncIssues makes the open watch issues match alerts. It returns what it
// did (or would do) in the order: opens and updates in alerts' order,
// then closes by issue number.
func (c *Client) SyncIssues(ctx context.Context, alerts []IssueAlert, opts IssueOptions) ([]IssueAction, error) {
	open, err := c.ownWatchIssues(ctx, opts.Labels)
	if err != nil {
		return nil, err
	}
	var out []IssueAction
	want := map[string]bool{}
	for _, a := range alerts {
		want[a.Key] = true
		body := Shorten(WatchMarker(a.Key)+"\n"+a.Body, MaxCommentLen, shortenedNote)
		title := cutRunes(strings.Join(strings.Fields(a.Title), " "), 250)
		found := open[a.Key]
		if len(found) == 0 {
			act := IssueAction{Do: "open", Key: a.Key, Title: title}
			if !opts.DryRun {
				is, err := c.createIssue(ctx, a.Key, title, body, opts.Labels)
				if err != nil {
					return out, err
				}
				act.Number, act.URL = is.GetNumber(), is.GetHTMLURL()
			}
			out = append(out, act)
			continue
		}
		is := found[0]
		act := IssueAction{Do: "update", Key: a.Key, Number: is.GetNumber(), Title: title, URL: is.GetHTMLURL()}
		if is.GetBody() == body && is.GetTitle() == title {
			act.Do = "unchanged"
		} else if !opts.DryRun {
			if _, resp, err := c.gh.Issues.Edit(ctx, c.owner, c.repo, is.GetNumber(), &gh.IssueRequest{Title: &title, Body: &body}); err != nil {
				return out, c.wrap(fmt.Sprintf("update issue #%d", is.GetNumber()), resp, err)
			}
		}
		out = append(out, act)
		// Later duplicates (two runs that raced) are closed below.
		open[a.Key] = found[1:]
	}
	// What is left: the issues of alerts that are gone, and duplicates.
	var stale []*gh.Issue
	for _, list := range open {
		stale = append(stale, list...)
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].GetNumber() < stale[j].GetNumber() })
	for _, is := range stale {
		key := watchMarkerRE.FindStringSubmatch(is.GetBody())[1]
		act := IssueAction{Do: "close", Key: key, Number: is.GetNumber(), Title: is.GetTitle(), URL: is.GetHTMLURL()}
		if !opts.DryRun {
			if err := c.closeIssue(ctx, is.GetNumber(), closingNote(want[key], opts.Recovered)); err != nil {
				return out, err
			}
		}
		out = append(out, act)
	}
	return out, nil
}

func closingNote(duplicate bool, recovered string) string {
	if duplicate {
		return "perfgate watch: a duplicate of another open issue for the same alert (two runs raced); closing this one."
	}
	if recovered == "" {
		return "perfgate watch: the alert is gone (the series recovered, or the change was accepted); closing."
	}
	return recovered
}

// ownWatchIssues lists every page of the open issues (with the first
// label, when there is one) and returns those with a watch marker written
// by the token's identity, by key, oldest first. Pull requests, which the
// issues API lists too, are skipped.
func (c *Client) ownWatchIssues(ctx context.Context, labels []string) (map[string][]*gh.Issue, error) {
	opts := &gh.IssueListByRepoOptions{State: "open", Sort: "created", Direction: "asc", ListOptions: gh.ListOptions{PerPage: c.pageSize}}
	if len(labels) > 0 {
		opts.Labels = labels[:1]
	}
	var found []*gh.Issue
	for {
		page, resp, err := c.gh.Issues.ListByRepo(ctx, c.owner, c.repo, opts)
		if err != nil {
			return nil, c.wrap("list the open issues", resp, err)
		}
		for _, is := range page {
			if is.IsPullRequest() || !watchMarkerRE.MatchString(is.GetBody()) {
				continue
			}
			found = append(found, is)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	out := map[string][]*gh.Issue{}
	if len(found) == 0 {
		return out, nil
	}
	self, err := c.self(ctx)
	if err != nil {
		return nil, err
	}
	for _, is := range found {
		if !strings.EqualFold(is.GetUser().GetLogin(), self) {
			continue // someone else's issue that quotes a marker: never adopted
		}
		k := watchMarkerRE.FindStringSubmatch(is.GetBody())[1]
		out[k] = append(out[k], is)
	}
	return out, nil
}

// createIssue opens the issue of an alert, listing again before another
// create after an ambiguous failure.
func (c *Client) createIssue(ctx context.Context, key, title, body string, labels []string) (*gh.Issue, error) {
	req := &gh.IssueRequest{Title: &title, Body: &body}
	if len(labels) > 0 {
		ls := append([]string(nil), labels...)
		req.Labels = &ls
	}
	for attempt := 1; ; attempt++ {
		is, resp, err := c.gh.Issues.Create(NoBlindRetry(ctx), c.owner, c.repo, req)
		if err == nil {
			return is, nil
		}
		werr := c.wrap("open an issue", resp, err)
		if !c.mayRetryCreate(ctx, werr, attempt, "POST", fmt.Sprintf("/repos/%s/%s/issues", c.owner, c.repo)) {
			return nil, werr
		}
		open, lerr := c.ownWatchIssues(ctx, labels)
		if lerr != nil {
			return nil, werr
		}
		if found := open[key]; len(found) > 0 { // the lost create did open it
			return found[0], nil
		}
	}
}

// closeIssue comments on an issue and closes it.
func (c *Client) closeIssue(ctx context.Context, number int, note string) error {
	body := note
	if _, resp, err := c.gh.Issues.CreateComment(NoBlindRetry(ctx), c.owner, c.repo, number, &gh.IssueComment{Body: &body}); err != nil {
		return c.wrap(fmt.Sprintf("comment on issue #%d", number), resp, err)
	}
	state, reason := "closed", "completed"
	_, resp, err := c.gh.Issues.Edit(ctx, c.owner, c.repo, number, &gh.IssueRequest{State: &state, StateReason: &reason})
	if err != nil && !(resp != nil && resp.StatusCode == http.StatusGone) {
		return c.wrap(fmt.Sprintf("close issue #%d", number), resp, err)
	}
	return nil
}
