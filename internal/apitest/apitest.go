// Package apitest is a scripted REST API for tests, shared by githubtest
// and gitlabtest: an httptest.Server that expects an ordered list of
// calls, answers each with its canned response, and fails the test on a
// call it did not expect, on a call out of order, on a request without
// the expected token, and, when the test ends, on expected calls that
// never came.
package apitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Call is one expected request and its response.
type Call struct {
	Method string
	Path   string            // relative to the API root, e.g. /repos/o/r/issues/1/comments
	Query  map[string]string // query parameters the request must have (a subset)
	Status int               // 0: 200 (201 for POST)
	Header map[string]string // response headers
	Body   any               // response body: a string as is, anything else as JSON
	// Check, when set, inspects the request and its body.
	Check func(t testing.TB, r *http.Request, body []byte)
}

// Request is a request the server received.
type Request struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// API says which service a Server plays: its name (in failures), the path
// its API is served under, and how a request carries the token.
type API struct {
	Name   string // "githubtest"
	Prefix string // "/api/v3"
	Env    string // the variable that names the API root, for failures
	// Authorized reports whether r carries token; AuthHeader names the
	// header, for failures.
	Authorized func(r *http.Request, token string) bool
	AuthHeader string
}

// Server is the scripted API.
type Server struct {
	*httptest.Server
	api   API
	t     testing.TB
	token string

	mu       sync.Mutex
	calls    []Call
	next     int
	requests []Request
}

// New starts a server expecting calls in order, authenticated with token
// ("" accepts any). It closes and checks for unused calls at the end of
// the test.
func New(t testing.TB, api API, token string, calls ...Call) *Server {
	s := &Server{api: api, t: t, token: token, calls: calls}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.calls[s.next:] {
			t.Errorf("%s: expected call never came: %s %s", api.Name, c.Method, c.Path)
		}
	})
	return s
}

// APIURL is the API root to put in the service's variable.
func (s *Server) APIURL() string { return s.URL + s.api.Prefix }

// Expect appends calls to the script.
func (s *Server) Expect(calls ...Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, calls...)
}

// Requests returns every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path, ok := strings.CutPrefix(r.URL.Path, s.api.Prefix)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
	var c *Call
	if s.next < len(s.calls) {
		c = &s.calls[s.next]
	}
	s.mu.Unlock()

	fail := func(format string, args ...any) {
		s.t.Errorf(s.api.Name+": "+format, args...)
		// 418 is not retried, so a wrong call fails once and fast.
		http.Error(w, `{"message":"unexpected call"}`, http.StatusTeapot)
	}
	if !ok {
		fail("%s %s is not under %s: %s was not used", r.Method, r.URL.Path, s.api.Prefix, s.api.Env)
		return
	}
	if c == nil {
		fail("unexpected call %s %s?%s (no more calls expected)", r.Method, path, r.URL.RawQuery)
		return
	}
	if c.Method != r.Method || c.Path != path {
		fail("call %d: got %s %s?%s, want %s %s", s.next+1, r.Method, path, r.URL.RawQuery, c.Method, c.Path)
		return
	}
	q := r.URL.Query()
	for k, v := range c.Query {
		if q.Get(k) != v {
			fail("call %d %s %s: query %s=%q, want %q", s.next+1, r.Method, path, k, q.Get(k), v)
			return
		}
	}
	if s.token != "" && !s.api.Authorized(r, s.token) {
		fail("call %d %s %s: no or wrong %s header", s.next+1, r.Method, path, s.api.AuthHeader)
		return
	}
	s.mu.Lock()
	s.next++
	s.mu.Unlock()
	if c.Check != nil {
		c.Check(s.t, r, body)
	}
	for k, v := range c.Header {
		w.Header().Set(k, v)
	}
	status := c.Status
	if status == 0 {
		status = http.StatusOK
		if r.Method == http.MethodPost {
			status = http.StatusCreated
		}
	}
	var out []byte
	switch b := c.Body.(type) {
	case nil:
		out = []byte("{}")
	case string:
		out = []byte(b)
	default:
		var err error
		if out, err = json.Marshal(b); err != nil {
			s.t.Errorf("%s: response body: %v", s.api.Name, err)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// NextLink is a Link header (RFC 8288, as GitHub paginates) naming page
// as the next page of path.
func (s *Server) NextLink(path string, page int) map[string]string {
	u := s.APIURL() + path + "?" + url.Values{"page": {fmt.Sprint(page)}, "per_page": {"100"}}.Encode()
	return map[string]string{"Link": fmt.Sprintf("<%s>; rel=\"next\"", u)}
}

// DecodeBody decodes a JSON request body into a map.
func DecodeBody(t testing.TB, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Errorf("apitest: request body is not JSON: %v\n%s", err, body)
	}
	return m
}
