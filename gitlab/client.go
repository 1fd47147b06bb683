package gitlab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/perfgate/perfgate/github"
)

// Client calls the GitLab REST API with the token of an Env.
type Client struct {
	api     string
	project string
	token   string
	http    *http.Client
}

// NewClient returns a client of env's API and project. tr retries (a
// github.Transport: the same backoff, Retry-After and refusal to send the
// token over plain http); nil uses its defaults.
func NewClient(env *Env, tr *github.Transport) (*Client, error) {
	if env.token == "" {
		return nil, fmt.Errorf("no token: set %s to a project access token with the api scope (a masked CI/CD variable; a job token cannot write notes)", TokenVar)
	}
	if env.ProjectID == "" {
		return nil, fmt.Errorf("no project: CI_PROJECT_ID is not set; run inside GitLab CI")
	}
	u, err := url.Parse(env.APIURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("CI_API_V4_URL %q is not an http(s) URL, e.g. https://gitlab.example.com/api/v4", env.APIURL)
	}
	if tr == nil {
		tr = &github.Transport{}
	}
	if tr.Unreachable == nil {
		tr.Unreachable = new(atomic.Bool)
	}
	// The token is a header of GitLab's own: a redirect to another host
	// would carry it there, so none is followed.
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Client{api: env.APIURL, project: env.ProjectID, token: env.token, http: &http.Client{Transport: tr, CheckRedirect: noRedirect}}, nil
}

// APIError is a response GitLab gave with an error status.
type APIError struct {
	Op      string
	Status  int
	Message string
}

func (e *APIError) Error() string {
	hint := ""
	switch e.Status {
	case http.StatusUnauthorized:
		hint = fmt.Sprintf("; %s is not a valid token", TokenVar)
	case http.StatusForbidden:
		hint = fmt.Sprintf("; give the token of %s the api scope and a role of Reporter or more (Developer for statuses)", TokenVar)
	case http.StatusNotFound:
		hint = "; check CI_PROJECT_ID and that the token's project is this one"
	}
	msg := ""
	if e.Message != "" {
		msg = ": " + e.Message
	}
	return fmt.Sprintf("cannot %s: GitLab answered HTTP %d%s%s", e.Op, e.Status, msg, hint)
}

// do sends a request with a JSON body (nil: none) and decodes a JSON
// answer into out (nil: ignored). It returns the response headers.
func (c *Client) do(ctx context.Context, op, method, path string, query url.Values, body, out any) (http.Header, error) {
	u := c.api + "/projects/" + url.PathEscape(c.project) + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("cannot %s: %v", op, err)
	}
	req.Header.Set("PRIVATE-TOKEN", c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot %s: %v", op, scrub(err, c.token))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if resp.StatusCode >= 300 {
		return resp.Header, &APIError{Op: op, Status: resp.StatusCode, Message: apiMessage(data)}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("cannot %s: GitLab's answer is not the JSON expected: %v", op, err)
		}
	}
	return resp.Header, nil
}

// scrub removes the token from an error's text.
func scrub(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "***"))
}

// apiMessage is GitLab's message of an error body, one line, cut.
func apiMessage(data []byte) string {
	var m struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	s := ""
	if json.Unmarshal(data, &m) == nil {
		switch v := m.Message.(type) {
		case string:
			s = v
		case nil:
			s = m.Error
		default:
			b, _ := json.Marshal(v)
			s = string(b)
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// Note is a merge request note.
type Note struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	System bool   `json:"system"`
	Author struct {
		ID       int64  `json:"id"`
		Username string `json:"username"`
	} `json:"author"`
}

// self is the id of the token's user.
func (c *Client) self(ctx context.Context) (int64, error) {
	var u struct {
		ID int64 `json:"id"`
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.api+"/user", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("PRIVATE-TOKEN", c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("cannot find the token's user: %v", scrub(err, c.token))
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode >= 300 {
		return 0, &APIError{Op: "find the token's user (GET /user)", Status: resp.StatusCode, Message: apiMessage(data)}
	}
	if err := json.Unmarshal(data, &u); err != nil || u.ID == 0 {
		return 0, fmt.Errorf("cannot find the token's user: GitLab's answer names no id")
	}
	return u.ID, nil
}

// maxPages bounds the pages of notes read.
const maxPages = 100

// findNote returns the token user's note on mr holding marker, or nil.
func (c *Client) findNote(ctx context.Context, mr int, marker string, self int64) (*Note, error) {
	path := fmt.Sprintf("/merge_requests/%d/notes", mr)
	for page := 1; page <= maxPages; {
		var notes []Note
		q := url.Values{"per_page": {"100"}, "page": {strconv.Itoa(page)}, "sort": {"asc"}, "order_by": {"created_at"}}
		h, err := c.do(ctx, fmt.Sprintf("list the notes of merge request !%d", mr), http.MethodGet, path, q, nil, &notes)
		if err != nil {
			return nil, err
		}
		for i := range notes {
			n := &notes[i]
			if !n.System && n.Author.ID == self && strings.Contains(n.Body, marker) {
				return n, nil
			}
		}
		next, err := strconv.Atoi(strings.TrimSpace(h.Get("X-Next-Page")))
		if err != nil || next <= page {
			return nil, nil
		}
		page = next
	}
	return nil, nil
}

// NoteResult is what UpsertNote did.
type NoteResult struct {
	Created bool
	ID      int64
}

// UpsertNote edits the token user's note on mr that holds the gate's
// marker, or creates one: one note per gate id, edited on each run.
func (c *Client) UpsertNote(ctx context.Context, mr int, gateID, body string) (NoteResult, error) {
	marker := github.Marker(gateID)
	full := marker + "\n" + body
	self, err := c.self(ctx)
	if err != nil {
		return NoteResult{}, err
	}
	n, err := c.findNote(ctx, mr, marker, self)
	if err != nil {
		return NoteResult{}, err
	}
	payload := map[string]string{"body": full}
	if n != nil {
		var out Note
		_, err := c.do(ctx, fmt.Sprintf("edit note %d of merge request !%d", n.ID, mr), http.MethodPut, fmt.Sprintf("/merge_requests/%d/notes/%d", mr, n.ID), nil, payload, &out)
		return NoteResult{ID: n.ID}, err
	}
	var out Note
	_, err = c.do(github.NoBlindRetry(ctx), fmt.Sprintf("create a note on merge request !%d", mr), http.MethodPost, fmt.Sprintf("/merge_requests/%d/notes", mr), nil, payload, &out)
	return NoteResult{Created: true, ID: out.ID}, err
}

// Status is a commit status.
type Status struct {
	Name        string
	State       string // pending, running, success, failed, canceled, skipped
	Description string
	TargetURL   string
	Ref         string
}

// maxDescription bounds a status description.
const maxDescription = 255

// SetStatus sets a commit status on sha. Setting the state a status
// already has is no change: GitLab's "Cannot transition status" for it is
// not an error.
func (c *Client) SetStatus(ctx context.Context, sha string, s Status) error {
	body := map[string]string{"state": s.State, "name": s.Name, "description": cut(s.Description, maxDescription)}
	if s.TargetURL != "" {
		body["target_url"] = s.TargetURL
	}
	if s.Ref != "" {
		body["ref"] = s.Ref
	}
	_, err := c.do(ctx, fmt.Sprintf("set the commit status %q on %.7s", s.Name, sha), http.MethodPost, "/statuses/"+url.PathEscape(sha), nil, body, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest && strings.Contains(ae.Message, "Cannot transition status via :"+transition(s.State)+" from :"+s.State) {
		return nil
	}
	return err
}

// transition is GitLab's event that reaches state.
func transition(state string) string {
	switch state {
	case "success":
		return "succeed"
	case "failed":
		return "drop"
	case "skipped":
		return "skip"
	case "running":
		return "run"
	case "pending":
		return "enqueue"
	case "canceled":
		return "cancel"
	}
	return state
}

// MRHead returns the head commit of merge request mr.
func (c *Client) MRHead(ctx context.Context, mr int) (string, error) {
	var m struct {
		SHA string `json:"sha"`
	}
	_, err := c.do(ctx, fmt.Sprintf("read merge request !%d", mr), http.MethodGet, fmt.Sprintf("/merge_requests/%d", mr), nil, nil, &m)
	return m.SHA, err
}

// cut shortens s to n runes.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
