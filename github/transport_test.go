package github

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scripted is a RoundTripper answering from a list.
type scripted struct {
	t      *testing.T
	resps  []*http.Response
	errs   []error
	n      int
	bodies []string
}

func (s *scripted) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.n >= len(s.resps) {
		s.t.Fatalf("attempt %d: no response left", s.n+1)
	}
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		s.bodies = append(s.bodies, string(b))
	}
	resp, err := s.resps[s.n], s.errs[s.n]
	s.n++
	if resp != nil {
		resp.Request = r
	}
	return resp, err
}

func response(status int, header map[string]string, body string) *http.Response {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body))}
}

func TestTransportClassify(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		resp  *http.Response
		err   error
		retry bool
		wait  time.Duration // 0: an exponential backoff
	}{
		{"200", response(200, nil, ""), nil, false, 0},
		{"404", response(404, nil, ""), nil, false, 0},
		{"422", response(422, nil, ""), nil, false, 0},
		{"500", response(500, nil, ""), nil, true, 0},
		{"502", response(502, nil, ""), nil, true, 0},
		{"503 with Retry-After", response(503, map[string]string{"Retry-After": "7"}, ""), nil, true, 7 * time.Second},
		{"429 without headers", response(429, nil, ""), nil, true, 0},
		{"429 with an HTTP date", response(429, map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, ""), nil, true, 90 * time.Second},
		{"403 primary limit until reset", response(403, map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1767269000"}, `{"message":"API rate limit exceeded"}`), nil, true, time.Unix(1767269000, 0).Sub(now) + time.Second},
		{"403 secondary limit", response(403, nil, `{"message":"You have exceeded a secondary rate limit"}`), nil, true, time.Minute},
		{"403 permission", response(403, nil, `{"message":"Resource not accessible by integration"}`), nil, false, 0},
		{"network error", nil, errors.New("connection reset by peer"), true, 0},
		{"the attempt's timeout", nil, context.DeadlineExceeded, true, 0},
		{"canceled", nil, context.Canceled, false, 0},
	}
	tr := &Transport{BaseDelay: time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, retry, ambiguous := tr.classify(tt.resp, tt.err, 1, now)
			if retry != tt.retry {
				t.Fatalf("retry %v, want %v", retry, tt.retry)
			}
			// A rate limit was refused before GitHub acted; a 5xx or a
			// network error may have been acted on.
			wantAmbiguous := tt.err != nil || tt.resp.StatusCode >= 500
			if retry && ambiguous != wantAmbiguous {
				t.Errorf("ambiguous %v, want %v", ambiguous, wantAmbiguous)
			}
			if !retry {
				return
			}
			if tt.wait == 0 {
				if wait < 500*time.Millisecond || wait > time.Second {
					t.Errorf("backoff %v, want 0.5-1s", wait)
				}
			} else if wait != tt.wait {
				t.Errorf("wait %v, want %v", wait, tt.wait)
			}
			if tt.resp != nil {
				// The body the classification read is still there for go-github.
				b, _ := io.ReadAll(tt.resp.Body)
				if tt.name == "403 secondary limit" && !strings.Contains(string(b), "secondary") {
					t.Errorf("body lost: %q", b)
				}
			}
		})
	}
}

func TestTransportBackoffGrowsAndCaps(t *testing.T) {
	tr := &Transport{BaseDelay: time.Second, MaxDelay: 8 * time.Second}
	for attempt, hi := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 9: 8 * time.Second, 70: 8 * time.Second} {
		for i := 0; i < 20; i++ {
			if d := tr.backoff(attempt); d < hi/2 || d > hi {
				t.Errorf("attempt %d: backoff %v, want %v-%v", attempt, d, hi/2, hi)
			}
		}
	}
}

func TestTransportReplaysBody(t *testing.T) {
	base := &scripted{t: t,
		resps: []*http.Response{response(502, nil, ""), response(201, nil, "{}")},
		errs:  []error{nil, nil}}
	var waits []time.Duration
	tr := &Transport{Base: base, Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	req, _ := http.NewRequest("POST", "https://api.github.com/x", strings.NewReader(`{"body":"hello"}`))
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("got %v, %v", resp, err)
	}
	if len(base.bodies) != 2 || base.bodies[0] != base.bodies[1] || base.bodies[1] != `{"body":"hello"}` {
		t.Errorf("bodies sent %q, want the same body twice", base.bodies)
	}
	if len(waits) != 1 {
		t.Errorf("waits %v", waits)
	}

	// A body that cannot be replayed is sent once.
	base = &scripted{t: t, resps: []*http.Response{response(502, nil, "")}, errs: []error{nil}}
	tr.Base = base
	req, _ = http.NewRequest("POST", "https://api.github.com/x", io.NopCloser(strings.NewReader("x")))
	req.GetBody = nil
	if resp, _ := tr.RoundTrip(req); resp.StatusCode != 502 || base.n != 1 {
		t.Errorf("a one-shot body was retried (%d attempts)", base.n)
	}
}

func TestTransportStopsOnCancel(t *testing.T) {
	base := &scripted{t: t, resps: []*http.Response{response(503, nil, "")}, errs: []error{nil}}
	ctx, cancel := context.WithCancel(context.Background())
	tr := &Transport{Base: base, Sleep: func(ctx context.Context, d time.Duration) error { cancel(); return ctx.Err() }}
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.github.com/x", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if base.n != 1 {
		t.Errorf("%d attempts after cancel", base.n)
	}
}

// TestTransportNoBlindRetry: a request marked NoBlindRetry is retried
// after a rate limit, which GitHub refused before acting, and returned as
// is after a 502 or a network error, which it may have acted on.
func TestTransportNoBlindRetry(t *testing.T) {
	sleep := func(context.Context, time.Duration) error { return nil }
	post := func() *http.Request {
		req, _ := http.NewRequestWithContext(NoBlindRetry(context.Background()), "POST", "https://api.github.com/x", strings.NewReader(`{}`))
		return req
	}
	base := &scripted{t: t,
		resps: []*http.Response{response(429, map[string]string{"Retry-After": "1"}, ""), response(502, nil, "")},
		errs:  []error{nil, nil}}
	tr := &Transport{Base: base, Sleep: sleep}
	if resp, err := tr.RoundTrip(post()); err != nil || resp.StatusCode != 502 || base.n != 2 {
		t.Errorf("got %v %v after %d attempts, want the 502 after 2", resp, err, base.n)
	}
	base = &scripted{t: t, resps: []*http.Response{nil}, errs: []error{errors.New("connection reset by peer")}}
	tr.Base = base
	if _, err := tr.RoundTrip(post()); err == nil || base.n != 1 {
		t.Errorf("a network error on a NoBlindRetry request: %v after %d attempts", err, base.n)
	}
}

// TestTransportWaitsBeyondAttemptTimeout: the attempt timeout bounds each
// attempt, not the waits between them: a Retry-After longer than the
// timeout is waited for (an http.Client Timeout would have cut it).
func TestTransportWaitsBeyondAttemptTimeout(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &Transport{AttemptTimeout: 300 * time.Millisecond}}
	resp, err := hc.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body) // the attempt's context lives until Close
	resp.Body.Close()
	if err != nil || string(b) != "ok" || n != 2 {
		t.Errorf("body %q, %v after %d attempts", b, err, n)
	}

	// A server slower than the attempt timeout: the attempt is abandoned
	// and retried.
	slow := 0
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slow++
		if slow == 1 {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv2.Close()
	hc = &http.Client{Transport: &Transport{AttemptTimeout: 200 * time.Millisecond, BaseDelay: 10 * time.Millisecond}}
	resp, err = hc.Get(srv2.URL)
	if err != nil || resp.StatusCode != 200 || slow != 2 {
		t.Fatalf("slow server: %v %v after %d attempts", resp, err, slow)
	}
	resp.Body.Close()
}

// TestTransportRemembersUnreachable: once a request used up its retries on
// network errors, the next request (the status after the comment) is
// tried once, not retried again; an answer clears the memory.
func TestTransportRemembersUnreachable(t *testing.T) {
	sleep := func(context.Context, time.Duration) error { return nil }
	get := func() *http.Request {
		req, _ := http.NewRequest("GET", "https://api.github.com/x", nil)
		return req
	}
	refused := errors.New("dial tcp: connection refused")
	base := &scripted{t: t, resps: make([]*http.Response, 6), errs: []error{refused, refused, refused, refused, refused, refused}}
	tr := &Transport{Base: base, Sleep: sleep, Unreachable: new(atomic.Bool)}
	if _, err := tr.RoundTrip(get()); err == nil || base.n != DefaultMaxAttempts {
		t.Fatalf("first request: %v after %d attempts, want %d", err, base.n, DefaultMaxAttempts)
	}
	if _, err := tr.RoundTrip(get()); err == nil || base.n != DefaultMaxAttempts+1 {
		t.Errorf("second request: %v, %d attempts in all, want one more", err, base.n)
	}
	base = &scripted{t: t, resps: []*http.Response{response(200, nil, ""), nil, response(200, nil, "")}, errs: []error{nil, refused, nil}}
	tr.Base = base
	if resp, err := tr.RoundTrip(get()); err != nil || resp.StatusCode != 200 {
		t.Fatalf("GitHub back: %v %v", resp, err)
	}
	if resp, err := tr.RoundTrip(get()); err != nil || resp.StatusCode != 200 || base.n != 3 {
		t.Errorf("after an answer a network error is retried again: %v %v after %d attempts", resp, err, base.n)
	}
}

// TestTokenNeverOverPlainHTTP: a GITHUB_API_URL or a request with the
// token on plain http is refused before anything is sent, except to a
// loopback address (a test server, a local proxy).
func TestTokenNeverOverPlainHTTP(t *testing.T) {
	for _, api := range []string{"http://github.com/api/v3", "http://ghe.example.com", "http://api.github.com"} {
		env, err := FromEnv(mapEnv(map[string]string{"GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": testToken, "GITHUB_API_URL": api}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewClient(env, ClientOptions{})
		if err == nil || !strings.Contains(err.Error(), "refusing to send the GitHub token over plain http") || !strings.Contains(err.Error(), "https://") {
			t.Errorf("GITHUB_API_URL=%s: %v", api, err)
		}
	}
	// The transport refuses too, whatever built the request (a redirect
	// to http on the same host keeps the Authorization header).
	s := &scripted{t: t}
	tr := &Transport{Base: s}
	for _, u := range []string{"http://github.com/api/v3/user", "http://[::ffff:10.0.0.1]/x"} {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), "plain http") {
			t.Errorf("%s: %v", u, err)
		}
	}
	if s.n != 0 {
		t.Errorf("%d requests were sent", s.n)
	}
	for _, u := range []string{"http://127.0.0.1:8080/x", "http://localhost/x", "http://[::1]/x"} {
		s := &scripted{t: t, resps: []*http.Response{response(200, nil, "{}")}, errs: []error{nil}}
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		if _, err := (&Transport{Base: s}).RoundTrip(req); err != nil || s.n != 1 {
			t.Errorf("%s (loopback): %v, %d requests", u, err, s.n)
		}
	}
}
