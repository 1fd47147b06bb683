package github

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

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
//
// An alert may answer to more keys than its own: Also (written on the
// issue's hidden second line, <!-- perfgate:watch-also=K1 K2 -->) and
// Formerly (not written). An alert with no issue under its key adopts
// the oldest open issue whose key is one of them, or whose Also line
// lists its key or one of its Also keys, unless another alert's key
// claims it; the other
// such issues are closed as merged into the alert's issue. Watch uses it
// to keep one issue per change while its metrics or range move, and to
// fold the issues opened per metric by an earlier perfgate into one.

// WatchMarker is the hidden first line of the issue of an alert.
func WatchMarker(key string) string { return "<!-- perfgate:watch=" + key + " -->" }

// alsoMarker is the hidden second line that lists an alert's Also keys.
func alsoMarker(keys []string) string {
	return "<!-- perfgate:watch-also=" + strings.Join(keys, " ") + " -->"
}

var (
	watchMarkerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<!-- perfgate:watch=([A-Za-z0-9_.-]{1,100}) -->`) })
	alsoMarkerRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<!-- perfgate:watch=[A-Za-z0-9_.-]{1,100} -->\r?\n<!-- perfgate:watch-also=([A-Za-z0-9_. -]*) -->`)
	})
)

// IssueAlert is one alert to keep as an issue: Key is stable across runs
// (it goes in the marker), Title and Body (markdown, escaped by the
// caller) are its current text. Also and Formerly are further keys it
// answers to (see above).
type IssueAlert struct {
	Key, Title, Body string
	Also, Formerly   []string
}

// IssueAction is one thing SyncIssues did, or would do in a dry run.
type IssueAction struct {
	Do     string // "open", "update", "unchanged", "close"
	Key    string
	Number int // 0 for an issue not opened yet
	Title  string
	URL    string
	// Adopted is the key an updated issue had before (an earlier key of
	// the alert). Merged says a closed issue was merged into another
	// alert's, MergedInto which (0: one not opened yet).
	Adopted    string
	Merged     bool
	MergedInto int
}

// watchIssue is an open issue of an alert and the keys it answers to.
type watchIssue struct {
	*gh.Issue
	key  string
	also []string
}

// adoptable returns the open issues not claimed by an alert's own key
// that a's Also and Formerly keys point at, oldest first.
func adoptable(a IssueAlert, open map[string][]*watchIssue, claimed map[int]bool) []*watchIssue {
	mine := map[string]bool{a.Key: true}
	for _, k := range a.Also {
		mine[k] = true
	}
	byKey := map[string]bool{}
	for _, k := range a.Formerly {
		byKey[k] = true
	}
	for k := range mine {
		byKey[k] = true
	}
	var out []*watchIssue
	for _, list := range open {
		for _, is := range list {
			if claimed[is.GetNumber()] || is.key == a.Key {
				continue // another alert's issue, or a duplicate of a's
			}
			ok := byKey[is.key]
			for _, k := range is.also {
				ok = ok || mine[k]
			}
			if ok {
				out = append(out, is)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetNumber() < out[j].GetNumber() })
	return out
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
	// An alert's own key claims the oldest issue under it first, so
	// another alert never adopts it.
	claimed := map[int]bool{}
	want := map[string]bool{}
	for _, a := range alerts {
		want[a.Key] = true
		if list := open[a.Key]; len(list) > 0 {
			claimed[list[0].GetNumber()] = true
		}
	}
	var out []IssueAction
	merged := map[int]bool{} // issues merged into another alert's
	mergedInto := map[int]int{}
	for _, a := range alerts {
		body := WatchMarker(a.Key) + "\n"
		if len(a.Also) > 0 {
			body += alsoMarker(a.Also) + "\n"
		}
		body = Shorten(body+a.Body, MaxCommentLen, shortenedNote)
		title := cutRunes(strings.Join(strings.Fields(a.Title), " "), 250)
		var is *watchIssue
		if found := open[a.Key]; len(found) > 0 {
			is = found[0]
			// Later duplicates (two runs that raced) are closed below.
			open[a.Key] = found[1:]
		}
		rest := adoptable(a, open, claimed)
		adopted := ""
		if is == nil && len(rest) > 0 {
			is, rest = rest[0], rest[1:]
			claimed[is.GetNumber()] = true
			adopted = is.key
		}
		for _, o := range rest {
			claimed[o.GetNumber()] = true
			merged[o.GetNumber()] = true
		}
		if is == nil {
			act := IssueAction{Do: "open", Key: a.Key, Title: title}
			if !opts.DryRun {
				created, err := c.createIssue(ctx, a.Key, title, body, opts.Labels)
				if err != nil {
					return out, err
				}
				act.Number, act.URL = created.GetNumber(), created.GetHTMLURL()
			}
			for _, o := range rest {
				mergedInto[o.GetNumber()] = act.Number
			}
			out = append(out, act)
			continue
		}
		for _, o := range rest {
			mergedInto[o.GetNumber()] = is.GetNumber()
		}
		act := IssueAction{Do: "update", Key: a.Key, Number: is.GetNumber(), Title: title, URL: is.GetHTMLURL(), Adopted: adopted}
		if is.GetBody() == body && is.GetTitle() == title {
			act.Do = "unchanged"
		} else if !opts.DryRun {
			if _, resp, err := c.gh.Issues.Edit(ctx, c.owner, c.repo, is.GetNumber(), &gh.IssueRequest{Title: &title, Body: &body}); err != nil {
				return out, c.wrap(fmt.Sprintf("update issue #%d", is.GetNumber()), resp, err)
			}
		}
		out = append(out, act)
	}
	// What is left: the issues of alerts that are gone, duplicates, and
	// issues merged into another.
	var stale []*watchIssue
	seen := map[int]bool{}
	for _, list := range open {
		for _, is := range list {
			if claimed[is.GetNumber()] && !merged[is.GetNumber()] {
				continue // an alert's issue
			}
			if !seen[is.GetNumber()] {
				seen[is.GetNumber()] = true
				stale = append(stale, is)
			}
		}
	}
	sort.Slice(stale, func(i, j int) bool { return stale[i].GetNumber() < stale[j].GetNumber() })
	for _, is := range stale {
		act := IssueAction{Do: "close", Key: is.key, Number: is.GetNumber(), Title: is.GetTitle(), URL: is.GetHTMLURL()}
		note := closingNote(want[is.key], opts.Recovered)
		if merged[is.GetNumber()] {
			act.Merged, act.MergedInto = true, mergedInto[is.GetNumber()]
			note = mergedNote(act.MergedInto)
		}
		if !opts.DryRun {
			if err := c.closeIssue(ctx, is.GetNumber(), note); err != nil {
				return out, err
			}
		}
		out = append(out, act)
	}
	return out, nil
}

func mergedNote(into int) string {
	if into > 0 {
		return fmt.Sprintf("perfgate watch: this alert is now part of #%d, the one issue of its change, which lists every metric of it; closing this one.", into)
	}
	return "perfgate watch: this alert is now part of the one issue of its change, which lists every metric of it; closing this one."
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
// by the token's identity, by key, oldest first, with the keys of their
// also line. Pull requests, which the
// issues API lists too, are skipped.
func (c *Client) ownWatchIssues(ctx context.Context, labels []string) (map[string][]*watchIssue, error) {
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
			if is.IsPullRequest() || !watchMarkerRE().MatchString(is.GetBody()) {
				continue
			}
			found = append(found, is)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	out := map[string][]*watchIssue{}
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
		wi := &watchIssue{Issue: is, key: watchMarkerRE().FindStringSubmatch(is.GetBody())[1]}
		if m := alsoMarkerRE().FindStringSubmatch(is.GetBody()); m != nil {
			wi.also = strings.Fields(m[1])
		}
		out[wi.key] = append(out[wi.key], wi)
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
			return found[0].Issue, nil
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
