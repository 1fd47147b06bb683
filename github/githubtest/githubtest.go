// Package githubtest is a scripted GitHub REST API for tests: an
// httptest.Server that expects an ordered list of calls, answers each with
// its canned response, and fails the test on a call it did not expect, on
// a call out of order, on a request without the expected token, and, when
// the test ends, on expected calls that never came.
//
// The API is served under /api/v3/, as on GitHub Enterprise Server, so a
// test also proves that GITHUB_API_URL is honoured.
package githubtest

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

var api = apitest.API{Name: "githubtest", Prefix: "/api/v3", Env: "GITHUB_API_URL", AuthHeader: "Authorization",
	Authorized: func(r *http.Request, token string) bool { return r.Header.Get("Authorization") == "Bearer "+token }}

// New starts a server expecting calls in order, authenticated with token
// ("" accepts any). It closes and checks for unused calls at the end of
// the test.
func New(t testing.TB, token string, calls ...Call) *Server {
	return apitest.New(t, api, token, calls...)
}

// Bot is the author of Comment's comments: the login of GITHUB_TOKEN.
const Bot = "github-actions[bot]"

// Comment is an issue comment by Bot as the API returns it.
func Comment(id int64, body string) map[string]any {
	return CommentBy(id, body, Bot)
}

// CommentBy is an issue comment by login.
func CommentBy(id int64, body, login string) map[string]any {
	return map[string]any{"id": id, "body": body, "html_url": fmt.Sprintf("https://github.example/o/r/pull/1#issuecomment-%d", id),
		"user": map[string]any{"login": login}}
}

// User is the call that asks who the token acts as: GET /user answers
// login, or, when login is "", 403 as it does for GITHUB_TOKEN.
func User(login string) Call {
	if login == "" {
		return Call{Method: "GET", Path: "/user", Status: http.StatusForbidden,
			Body: `{"message":"Resource not accessible by integration","documentation_url":"https://docs.github.com/rest/users/users#get-the-authenticated-user"}`}
	}
	return Call{Method: "GET", Path: "/user", Body: map[string]any{"login": login, "id": 1, "type": "User"}}
}

// DecodeBody decodes a JSON request body into a map.
func DecodeBody(t testing.TB, body []byte) map[string]any {
	t.Helper()
	return apitest.DecodeBody(t, body)
}
