// Package gitlabtest is a scripted GitLab REST API (v4) for tests, as
// githubtest is for GitHub: an httptest.Server that expects an ordered list
// of calls, answers each with its canned response, and fails the test on a
// call it did not expect, on a call out of order, on a request without the
// expected PRIVATE-TOKEN, and, when the test ends, on expected calls that
// never came.
//
// The API is served under /gitlab/api/v4/, as a self-managed GitLab under
// a relative URL, so a test also proves that CI_API_V4_URL is honoured.
package gitlabtest

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/perfgate/perfgate/internal/apitest"
)

// Call is one expected request and its response; Request a request the
// server received; Server the scripted API (package apitest).
type (
	Call    = apitest.Call
	Request = apitest.Request
	Server  = apitest.Server
)

var api = apitest.API{Name: "gitlabtest", Prefix: "/gitlab/api/v4", Env: "CI_API_V4_URL", AuthHeader: "PRIVATE-TOKEN",
	Authorized: func(r *http.Request, token string) bool { return r.Header.Get("PRIVATE-TOKEN") == token }}

// New starts a server expecting calls in order, authenticated with token
// ("" accepts any). It closes and checks for unused calls at the end of
// the test.
func New(t testing.TB, token string, calls ...Call) *Server {
	return apitest.New(t, api, token, calls...)
}

// BotID is the user id of the token in User and Note.
const BotID = 77

// User is the call that asks who the token acts as.
func User() Call {
	return Call{Method: "GET", Path: "/user", Body: map[string]any{"id": BotID, "username": "project_42_bot"}}
}

// Note is a merge request note by the user id author.
func Note(id int64, body string, author int64) map[string]any {
	return map[string]any{"id": id, "body": body, "system": false, "author": map[string]any{"id": author, "username": fmt.Sprintf("user%d", author)}}
}

// NextPage is the header of a page of a list followed by page.
func NextPage(page int) map[string]string {
	return map[string]string{"X-Next-Page": fmt.Sprint(page)}
}

// DecodeBody decodes a JSON request body into a map.
func DecodeBody(t testing.TB, body []byte) map[string]any {
	t.Helper()
	return apitest.DecodeBody(t, body)
}
