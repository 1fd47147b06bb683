package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// Client is a go-github client for one repository, with the retrying
// Transport under it and the token redacted from its errors.
type Client struct {
	gh          *gh.Client
	tr          *Transport
	owner, repo string
	token       string
	pageSize    int

	login string // who the token acts as, once asked (self)
}

// ClientOptions configure NewClient.
type ClientOptions struct {
	// Transport is the retry policy; nil: a Transport with the defaults.
	// Its Base is the HTTP transport (nil: http.DefaultTransport).
	Transport *Transport
	// Timeout bounds one HTTP attempt (Transport.AttemptTimeout, unless
	// that is set); 0: DefaultAttemptTimeout. The waits between attempts
	// are bounded by Transport.MaxElapsed and the context.
	Timeout time.Duration
	// PageSize is the number of comments per page when listing; 0: 100,
	// GitHub's maximum.
	PageSize int
}

// UserAgent is sent with every request.
var UserAgent = "perfgate"

// NewClient returns a client for env's repository. It needs a token and a
// repository; the error says which is missing and how to provide it.
func NewClient(env *Env, opts ClientOptions) (*Client, error) {
	if env.Owner == "" {
		return nil, errors.New("no repository: GITHUB_REPOSITORY is not set; run inside GitHub Actions or set GITHUB_REPOSITORY=OWNER/NAME")
	}
	if env.token == "" {
		return nil, fmt.Errorf("no token: set %s (in a workflow: env: GITHUB_TOKEN: ${{ github.token }})", strings.Join(TokenVars, " or "))
	}
	base, err := url.Parse(env.APIURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL %q is not a URL; on github.com leave it unset, on GitHub Enterprise Server use https://HOST/api/v3", env.APIURL)
	}
	if base.Scheme == "http" && !loopback(base.Hostname()) {
		return nil, plainHTTPError(env.APIURL)
	}
	tr := &Transport{}
	if opts.Transport != nil {
		copied := *opts.Transport
		tr = &copied
	}
	if tr.AttemptTimeout <= 0 {
		tr.AttemptTimeout = opts.Timeout
	}
	if tr.Unreachable == nil {
		tr.Unreachable = new(atomic.Bool)
	}
	// No http.Client Timeout: it would bound all of a request's attempts
	// and the waits between them; the Transport bounds each attempt.
	c := gh.NewClient(&http.Client{Transport: tr}).WithAuthToken(env.token)
	if env.APIURL != DefaultAPIURL {
		// GitHub Enterprise Server: go-github's rules, which add /api/v3
		// to a bare host (https://HOST) and keep api.* hosts as they are.
		if c, err = c.WithEnterpriseURLs(env.APIURL, env.APIURL); err != nil {
			return nil, fmt.Errorf("GITHUB_API_URL %q: %v; use https://HOST/api/v3", env.APIURL, err)
		}
	}
	c.UserAgent = UserAgent
	return &Client{gh: c, tr: tr, owner: env.Owner, repo: env.Repo, token: env.token, pageSize: orInt(opts.PageSize, 100)}, nil
}

// BaseURL is the API root the client calls.
func (c *Client) BaseURL() string { return c.gh.BaseURL.String() }

// APIError is a failed GitHub call, with the token redacted and a hint
// for the common causes.
type APIError struct {
	Op     string // what perfgate tried, e.g. "update the PR comment"
	Status int    // HTTP status; 0 for a network error
	Msg    string
	Hint   string
}

func (e *APIError) Error() string {
	s := "GitHub: cannot " + e.Op + ": " + e.Msg
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// wrap turns a go-github error into an *APIError.
func (c *Client) wrap(op string, resp *gh.Response, err error) error {
	if err == nil {
		return nil
	}
	e := &APIError{Op: op, Msg: redact(err.Error(), c.token)}
	if resp != nil && resp.Response != nil {
		e.Status = resp.StatusCode
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		e.Status = er.Response.StatusCode
		msg := er.Message
		if msg == "" {
			msg = http.StatusText(er.Response.StatusCode)
		}
		e.Msg = redact(fmt.Sprintf("%s %s: %d %s", er.Response.Request.Method, er.Response.Request.URL.Path, er.Response.StatusCode, msg), c.token)
	}
	switch {
	case e.Status == http.StatusUnauthorized:
		e.Hint = "the token is invalid or expired; check " + strings.Join(TokenVars, " / ")
	case e.Status == http.StatusForbidden && strings.Contains(strings.ToLower(e.Msg), "not accessible"):
		e.Hint = "the token may not write here: grant the job permissions (pull-requests: write, statuses: write or checks: write); " +
			"a pull request from a fork gets a read-only token, publish it from a workflow_run workflow (see docs/github.md)"
	case e.Status == http.StatusForbidden || e.Status == http.StatusTooManyRequests:
		e.Hint = "GitHub refused or rate-limited the request (retried while the time budget allowed); publishing again later, or a token with more quota, helps"
	case e.Status == http.StatusNotFound:
		e.Hint = fmt.Sprintf("check that %s/%s exists and that the token can see it (GITHUB_API_URL for GitHub Enterprise)", c.owner, c.repo)
	case e.Status == 0 || e.Status >= 500:
		e.Hint = "GitHub is unreachable or failing (retried while the time budget allowed); check GITHUB_API_URL and the runner's network, or publish the saved report later with perfgate publish --report"
	}
	return e
}

// Marker is the hidden line that identifies a gate's sticky comment.
func Marker(gateID string) string { return "<!-- perfgate:gate=" + gateID + " -->" }

// CommentResult says what UpsertComment did.
type CommentResult struct {
	URL     string
	ID      int64
	Created bool // a new comment; otherwise the existing one was edited
	Deleted int  // duplicate sticky comments removed
}

// UpsertComment edits the sticky comment of gateID on pull request pr, or
// creates it. body is shortened to GitHub's limit and the marker is put
// first. Only create=false with no existing comment does nothing (a
// comment mode that creates only on failure); the result then has ID 0.
//
// Creating a comment is not idempotent: a create whose response was lost
// (a 5xx, a timeout) may have posted it. So a create is never retried
// blindly: after such a failure the comments are listed again, and the
// comment is created again only when the marker is still absent.
func (c *Client) UpsertComment(ctx context.Context, pr int, gateID, body string, create bool) (CommentResult, error) {
	marker := Marker(gateID)
	full := Shorten(marker+"\n"+body, MaxCommentLen, shortenedNote)
	found, err := c.ownSticky(ctx, pr, marker)
	if err != nil {
		return CommentResult{}, err
	}
	if len(found) == 0 {
		if !create {
			return CommentResult{}, nil
		}
		return c.createSticky(ctx, pr, marker, full)
	}
	keep := found[0]
	res := CommentResult{ID: keep.GetID(), URL: keep.GetHTMLURL()}
	if keep.GetBody() != full {
		cm, resp, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, keep.GetID(), &gh.IssueComment{Body: &full})
		if err != nil {
			return res, c.wrap(fmt.Sprintf("update comment %d on pull request #%d", keep.GetID(), pr), resp, err)
		}
		res.URL = cm.GetHTMLURL()
	}
	for _, dup := range found[1:] {
		resp, err := c.gh.Issues.DeleteComment(ctx, c.owner, c.repo, dup.GetID())
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			continue // deleted meanwhile, e.g. by a concurrent run
		}
		if err != nil {
			return res, c.wrap(fmt.Sprintf("delete duplicate comment %d on pull request #%d", dup.GetID(), pr), resp, err)
		}
		res.Deleted++
	}
	return res, nil
}

// ownSticky returns the comments of pr that start with marker and were
// written by the identity the token acts as, oldest first. A comment by
// anyone else that starts with the marker (an attacker's, a quote) is
// never adopted, edited nor deleted.
func (c *Client) ownSticky(ctx context.Context, pr int, marker string) ([]*gh.IssueComment, error) {
	found, err := c.findSticky(ctx, pr, marker)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	self, err := c.self(ctx)
	if err != nil {
		return nil, err
	}
	own := found[:0]
	for _, cm := range found {
		if strings.EqualFold(cm.GetUser().GetLogin(), self) {
			own = append(own, cm)
		}
	}
	return own, nil
}

// ActionsBot is the login of the comments GITHUB_TOKEN writes.
const ActionsBot = "github-actions[bot]"

// self returns the login the token acts as: GET /user, or, for a token
// that may not call it (GITHUB_TOKEN, an app's installation token, which
// get 403 "Resource not accessible by integration"), ActionsBot.
func (c *Client) self(ctx context.Context) (string, error) {
	if c.login != "" {
		return c.login, nil
	}
	u, resp, err := c.gh.Users.Get(ctx, "")
	switch {
	case err == nil && u.GetLogin() != "":
		c.login = u.GetLogin()
	case resp != nil && (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusNotFound):
		c.login = ActionsBot
	case err == nil:
		return "", &APIError{Op: "find who the token acts as", Status: resp.StatusCode, Msg: "GET /user returned no login"}
	default:
		return "", c.wrap("find who the token acts as (to adopt only its own sticky comment)", resp, err)
	}
	return c.login, nil
}

// findSticky lists every page of pr's comments and returns those that
// start with marker, oldest first.
func (c *Client) findSticky(ctx context.Context, pr int, marker string) ([]*gh.IssueComment, error) {
	var found []*gh.IssueComment
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: c.pageSize}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, pr, opts)
		if err != nil {
			return nil, c.wrap(fmt.Sprintf("list the comments of pull request #%d", pr), resp, err)
		}
		for _, cm := range page {
			if strings.HasPrefix(cm.GetBody(), marker) {
				found = append(found, cm)
			}
		}
		if resp.NextPage == 0 {
			return found, nil
		}
		opts.Page = resp.NextPage
	}
}

// maxCreates bounds the attempts to create one comment or check run after
// failures that leave it unknown whether it was created.
const maxCreates = 3

// createSticky posts the sticky comment, looking for it before posting
// again after an ambiguous failure.
func (c *Client) createSticky(ctx context.Context, pr int, marker, full string) (CommentResult, error) {
	for attempt := 1; ; attempt++ {
		cm, resp, err := c.gh.Issues.CreateComment(NoBlindRetry(ctx), c.owner, c.repo, pr, &gh.IssueComment{Body: &full})
		if err == nil {
			return CommentResult{URL: cm.GetHTMLURL(), ID: cm.GetID(), Created: true}, nil
		}
		werr := c.wrap(fmt.Sprintf("comment on pull request #%d", pr), resp, err)
		if !c.mayRetryCreate(ctx, werr, attempt, "POST", fmt.Sprintf("/repos/%s/%s/issues/%d/comments", c.owner, c.repo, pr)) {
			return CommentResult{}, werr
		}
		found, ferr := c.ownSticky(ctx, pr, marker)
		if ferr != nil {
			return CommentResult{}, werr
		}
		if len(found) > 0 { // the lost create did post it
			cm := found[0]
			res := CommentResult{URL: cm.GetHTMLURL(), ID: cm.GetID(), Created: true}
			if cm.GetBody() != full { // another run's comment, meanwhile
				ecm, resp, err := c.gh.Issues.EditComment(ctx, c.owner, c.repo, cm.GetID(), &gh.IssueComment{Body: &full})
				if err != nil {
					return res, c.wrap(fmt.Sprintf("update comment %d on pull request #%d", cm.GetID(), pr), resp, err)
				}
				res.URL, res.Created = ecm.GetHTMLURL(), false
			}
			return res, nil
		}
	}
}

// mayRetryCreate reports whether a create that failed with err may have
// been lost rather than refused (a 5xx or a network error) and may be
// tried again after a look, and waits the backoff before it.
func (c *Client) mayRetryCreate(ctx context.Context, err error, attempt int, method, path string) bool {
	var ae *APIError
	if ctx.Err() != nil || attempt >= maxCreates || !errors.As(err, &ae) || (ae.Status != 0 && ae.Status < 500) {
		return false
	}
	wait := c.tr.backoff(attempt)
	if c.tr.Notify != nil {
		c.tr.Notify(method, path, ae.Status, nil, wait)
	}
	return c.tr.sleep(ctx, wait) == nil
}

// Status is a commit status or check run outcome.
type Status struct {
	Name       string // the status context or check run name
	Success    bool
	Neutral    bool   // undecided: a neutral check run; a commit status has no such state, so pending (never green) with "inconclusive" first in its description
	Title      string // one line; a status description is cut to 140 characters
	Summary    string // markdown, for a check run's output
	DetailsURL string // the workflow run, when known
}

// maxDescription is GitHub's limit on a status description.
const maxDescription = 140

// SetStatus sets a commit status on sha.
func (c *Client) SetStatus(ctx context.Context, sha string, s Status) error {
	state := "failure"
	switch {
	case s.Neutral:
		// No neutral state: an undecided gate is never shown green
		// (a required status then waits for a decision; --check-run
		// gives a neutral check run instead).
		state = "pending"
	case s.Success:
		state = "success"
	}
	desc := cutRunes(s.Title, maxDescription)
	if s.Neutral && !strings.HasPrefix(s.Title, "inconclusive") {
		desc = cutRunes("inconclusive: "+s.Title, maxDescription)
	}
	st := &gh.RepoStatus{State: &state, Context: &s.Name, Description: &desc}
	if s.DetailsURL != "" {
		st.TargetURL = &s.DetailsURL
	}
	_, resp, err := c.gh.Repositories.CreateStatus(ctx, c.owner, c.repo, sha, st)
	return c.wrap(fmt.Sprintf("set the commit status %q on %s", s.Name, short(sha)), resp, err)
}

// CreateCheckRun creates a completed check run on sha and returns its URL.
// Like a comment, a check run is created again after an ambiguous
// failure only when a look finds no check run with its external id.
func (c *Client) CreateCheckRun(ctx context.Context, sha string, s Status) (string, error) {
	conclusion := "failure"
	switch {
	case s.Neutral:
		conclusion = "neutral"
	case s.Success:
		conclusion = "success"
	}
	status := "completed"
	title := cutRunes(s.Title, 1000)
	summary := Shorten(s.Summary, MaxCheckRunText, shortenedNote)
	externalID := "perfgate-" + randomHex(8)
	opts := gh.CreateCheckRunOptions{
		Name: s.Name, HeadSHA: sha, Status: &status, Conclusion: &conclusion, ExternalID: &externalID,
		CompletedAt: &gh.Timestamp{Time: time.Now()},
		Output:      &gh.CheckRunOutput{Title: &title, Summary: &summary},
	}
	if s.DetailsURL != "" {
		opts.DetailsURL = &s.DetailsURL
	}
	for attempt := 1; ; attempt++ {
		cr, resp, err := c.gh.Checks.CreateCheckRun(NoBlindRetry(ctx), c.owner, c.repo, opts)
		if err == nil {
			return cr.GetHTMLURL(), nil
		}
		werr := c.wrap(fmt.Sprintf("create the check run %q on %s", s.Name, short(sha)), resp, err)
		if !c.mayRetryCreate(ctx, werr, attempt, "POST", fmt.Sprintf("/repos/%s/%s/check-runs", c.owner, c.repo)) {
			return "", werr
		}
		name := s.Name
		list, _, lerr := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, sha,
			&gh.ListCheckRunsOptions{CheckName: &name, Filter: gh.String("all"), ListOptions: gh.ListOptions{PerPage: 100}})
		if lerr != nil {
			return "", werr
		}
		for _, cr := range list.CheckRuns {
			if cr.GetExternalID() == externalID { // the lost create did make it
				return cr.GetHTMLURL(), nil
			}
		}
	}
}

// FindPR returns the open pull request whose head is headRepo:branch at
// sha, for a workflow_run triggered by a fork, whose payload lists no pull
// request. It returns 0 when none matches.
func (c *Client) FindPR(ctx context.Context, headRepo, branch, sha string) (int, error) {
	owner, _, _ := strings.Cut(headRepo, "/")
	if owner == "" || branch == "" {
		return 0, nil
	}
	opts := &gh.PullRequestListOptions{State: "open", Head: owner + ":" + branch, ListOptions: gh.ListOptions{PerPage: 100}}
	prs, resp, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, opts)
	if err != nil {
		return 0, c.wrap(fmt.Sprintf("find the pull request of %s:%s", owner, branch), resp, err)
	}
	for _, p := range prs {
		if sha == "" || p.GetHead().GetSHA() == sha {
			return p.GetNumber(), nil
		}
	}
	return 0, nil
}

// PRHead returns the head commit of pull request pr, to check that a
// pull request number given with a report belongs to the commit.
func (c *Client) PRHead(ctx context.Context, pr int) (string, error) {
	p, resp, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, pr)
	if err != nil {
		return "", c.wrap(fmt.Sprintf("read pull request #%d", pr), resp, err)
	}
	return p.GetHead().GetSHA(), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
