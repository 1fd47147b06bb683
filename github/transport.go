package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Transport retries transient GitHub failures; see the package comment.
// The zero value uses the defaults below over http.DefaultTransport.
type Transport struct {
	Base        http.RoundTripper // nil: http.DefaultTransport
	MaxAttempts int               // attempts per request; 0: DefaultMaxAttempts
	MaxElapsed  time.Duration     // total time per request, waits included; 0: DefaultMaxElapsed
	BaseDelay   time.Duration     // first backoff; 0: DefaultBaseDelay
	MaxDelay    time.Duration     // longest backoff without a server-given time; 0: DefaultMaxDelay

	// Sleep waits d or until ctx is done; nil: a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Notify, when set, is told of each retry (for a progress line).
	Notify func(method, path string, status int, err error, wait time.Duration)
}

// Defaults of Transport.
const (
	DefaultMaxAttempts = 5
	DefaultMaxElapsed  = 3 * time.Minute
	DefaultBaseDelay   = time.Second
	DefaultMaxDelay    = 30 * time.Second
	// secondaryWait is what GitHub asks for after a secondary rate limit
	// that names no time: "wait for at least one minute".
	secondaryWait = time.Minute
)

// maxPeek bounds how much of an error body is read to classify it.
const maxPeek = 64 << 10

// RoundTrip sends req, retrying transient failures.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	now := t.Now
	if now == nil {
		now = time.Now
	}
	maxAttempts := orInt(t.MaxAttempts, DefaultMaxAttempts)
	maxElapsed := orDur(t.MaxElapsed, DefaultMaxElapsed)
	start := now()
	ctx := req.Context()
	// A body must be replayable to be retried: go-github's requests are
	// (http.NewRequest sets GetBody for a bytes.Buffer); others are sent
	// once.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		resp, err := base.RoundTrip(r)
		if ctx.Err() != nil {
			return resp, err
		}
		wait, retry := t.classify(resp, err, attempt, now())
		if !retry || !replayable || attempt >= maxAttempts || now().Sub(start)+wait > maxElapsed {
			return resp, err
		}
		if resp != nil {
			// Drain so the connection is reused, then drop this response.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPeek))
			resp.Body.Close()
		}
		if t.Notify != nil {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Notify(req.Method, req.URL.Path, status, err, wait)
		}
		if serr := t.sleep(ctx, wait); serr != nil {
			return nil, serr
		}
	}
}

// classify decides whether a response or error is transient and how long
// to wait before the next attempt. A response it keeps has its body
// restored for the caller.
func (t *Transport) classify(resp *http.Response, err error, attempt int, now time.Time) (time.Duration, bool) {
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return 0, false
		}
		return t.backoff(attempt), true // connection reset, EOF, timeouts
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if d, ok := retryAfter(resp.Header, now); ok {
			return d, true
		}
		return t.backoff(attempt), true
	case http.StatusTooManyRequests, http.StatusForbidden:
		body := peekBody(resp)
		limited := resp.StatusCode == http.StatusTooManyRequests ||
			resp.Header.Get("Retry-After") != "" ||
			resp.Header.Get("X-Ratelimit-Remaining") == "0" ||
			isSecondaryLimit(body)
		if !limited {
			return 0, false // a permission error: not transient
		}
		if d, ok := retryAfter(resp.Header, now); ok {
			return d, true
		}
		if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
				d := time.Unix(reset, 0).Sub(now) + time.Second
				return max(d, time.Second), true
			}
		}
		if isSecondaryLimit(body) {
			return secondaryWait, true
		}
		return t.backoff(attempt), true
	}
	return 0, false
}

// backoff is the exponential wait before attempt+1, with full jitter in
// its upper half so concurrent jobs do not retry in step.
func (t *Transport) backoff(attempt int) time.Duration {
	d := orDur(t.BaseDelay, DefaultBaseDelay) << (attempt - 1)
	if m := orDur(t.MaxDelay, DefaultMaxDelay); d > m || d <= 0 {
		d = m
	}
	return d/2 + rand.N(d/2+1)
}

func (t *Transport) sleep(ctx context.Context, d time.Duration) error {
	if t.Sleep != nil {
		return t.Sleep(ctx, d)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfter reads Retry-After: delay-seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// peekBody reads up to maxPeek bytes of the body and puts them back.
func peekBody(resp *http.Response) []byte {
	if resp.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxPeek))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

// isSecondaryLimit recognises GitHub's secondary (abuse) rate limit body.
func isSecondaryLimit(body []byte) bool {
	s := strings.ToLower(string(body))
	return strings.Contains(s, "secondary rate limit") || strings.Contains(s, "abuse detection") ||
		strings.Contains(s, "secondary-rate-limits")
}

func orInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orDur(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// describeWait formats a retry for a progress line.
func describeWait(method, path string, status int, err error, wait time.Duration) string {
	what := fmt.Sprintf("HTTP %d", status)
	if err != nil {
		what = err.Error()
	}
	return fmt.Sprintf("GitHub %s %s: %s; retrying in %s", method, path, what, wait.Round(100*time.Millisecond))
}
