package githubtest

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that records failures and cleanups instead of
// failing the real test.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Helper()          {}

func (r *recorder) finish() string {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return strings.Join(r.errs, "\n")
}

// TestServerFailsOnUnexpectedAndUnusedCalls: the server is only useful if
// it fails a test on a call it did not expect, a call out of order, a
// wrong token, a path outside the API root and a call that never came.
func TestServerFailsOnUnexpectedAndUnusedCalls(t *testing.T) {
	get := func(s *Server, path, token string) int {
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	tests := []struct {
		name  string
		calls []Call
		do    func(s *Server)
		want  string // "" means no failure
	}{
		{"all used", []Call{{Method: "GET", Path: "/a"}}, func(s *Server) { get(s, "/api/v3/a", "tok") }, ""},
		{"unused", []Call{{Method: "GET", Path: "/a"}, {Method: "GET", Path: "/b"}}, func(s *Server) { get(s, "/api/v3/a", "tok") }, "expected call never came: GET /b"},
		{"unexpected", nil, func(s *Server) { get(s, "/api/v3/a", "tok") }, "unexpected call GET /a"},
		{"out of order", []Call{{Method: "GET", Path: "/a"}, {Method: "GET", Path: "/b"}}, func(s *Server) { get(s, "/api/v3/b", "tok"); get(s, "/api/v3/a", "tok") }, "call 1: got GET /b"},
		{"wrong token", []Call{{Method: "GET", Path: "/a"}}, func(s *Server) { get(s, "/api/v3/a", "other") }, "wrong Authorization header"},
		{"outside the API root", []Call{{Method: "GET", Path: "/a"}}, func(s *Server) { get(s, "/a", "tok") }, "is not under /api/v3"},
		{"query", []Call{{Method: "GET", Path: "/a", Query: map[string]string{"page": "2"}}}, func(s *Server) { get(s, "/api/v3/a?page=3", "tok") }, `query page="3", want "2"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			s := New(r, "tok", tt.calls...)
			tt.do(s)
			got := r.finish()
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("failures %q, want %q", got, tt.want)
			}
		})
	}
}
