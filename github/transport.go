package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
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
	// AttemptTimeout bounds one attempt, from sending the request to
	// closing the response body; 0: DefaultAttemptTimeout. (An
	// http.Client's Timeout would bound all attempts and the waits
	// between them, and cut a Retry-After wait short.)
	AttemptTimeout time.Duration

	// Sleep waits d or until ctx is done; nil: a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Notify, when set, is told of each retry (for a progress line).
	Notify func(method, path string, status int, err error, wait time.Duration)

	// Unreachable, when set, remembers across requests that one used up
	// its retries on network errors (nothing answered): later requests
	// are tried once, so a publication against a GitHub that is down
	// costs one round of retries, not one per comment and status.
	// NewClient sets it; copies of a Transport share it.
	Unreachable *atomic.Bool
}

// Defaults of Transport.
const (
	DefaultMaxAttempts = 5
	DefaultMaxElapsed  = 3 * time.Minute
	DefaultBaseDelay   = time.Second
	DefaultMaxDelay    = 30 * time.Second
	// DefaultAttemptTimeout bounds one attempt.
	DefaultAttemptTimeout = 30 * time.Second
	// secondaryWait is what GitHub asks for after a secondary rate limit
	// that names no time: "wait for at least one minute".
	secondaryWait = time.Minute
)

// maxPeek bounds how much of an error body is read to classify it.
const maxPeek = 64 << 10

// noBlindRetryKey marks a request's context: see NoBlindRetry.
type noBlindRetryKey struct{}

// NoBlindRetry marks the requests made with ctx as not idempotent (a POST
// that creates a comment or a check run): Transport retries them only when
// GitHub certainly did not act on them (429 and rate-limit 403s), never
// after a 5xx, a timeout or a network error, after which the object may
// exist although its response was lost. The caller looks before creating
// again.
func NoBlindRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, noBlindRetryKey{}, true)
}

// RoundTrip sends req, retrying transient failures. It refuses to send a
// request with credentials over plain http to any host but a loopback
// address, so that neither a GITHUB_API_URL nor a redirect sends the
// token unencrypted.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && (req.Header.Get("Authorization") != "" || req.Header.Get("PRIVATE-TOKEN") != "") && !loopback(req.URL.Hostname()) {
		if req.Header.Get("Authorization") == "" { // GitLab's token header (package gitlab)
			return nil, fmt.Errorf("refusing to send the GitLab token over plain http to %s: it would travel unencrypted; use the https:// URL (CI_API_V4_URL=https://HOST/api/v4)", req.URL.Scheme+"://"+req.URL.Host)
		}
		return nil, plainHTTPError(req.URL.Scheme + "://" + req.URL.Host)
	}
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
	attemptTimeout := orDur(t.AttemptTimeout, DefaultAttemptTimeout)
	start := now()
	ctx := req.Context()
	blind := ctx.Value(noBlindRetryKey{}) == nil
	// A body must be replayable to be retried: go-github's requests are
	// (http.NewRequest sets GetBody for a bytes.Buffer); others are sent
	// once.
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		r := req.Clone(actx)
		if attempt > 1 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				cancel()
				return nil, err
			}
			r.Body = body
		}
		resp, err := base.RoundTrip(r)
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body = &cancelBody{resp.Body, cancel}
			} else {
				cancel()
			}
			return resp, err
		}
		wait, retry, ambiguous := t.classify(resp, err, attempt, now())
		down := t.Unreachable
		if resp != nil && down != nil {
			down.Store(false)
		}
		if !retry || !replayable || (ambiguous && !blind) || attempt >= maxAttempts || now().Sub(start)+wait > maxElapsed || (err != nil && down != nil && down.Load()) {
			if err != nil && retry && attempt > 1 && down != nil {
				// Retried and nothing answered.
				down.Store(true)
			}
			if resp != nil {
				// The attempt's context lives until the caller has read
				// the body.
				resp.Body = &cancelBody{resp.Body, cancel}
			} else {
				cancel()
			}
			return resp, err
		}
		if resp != nil {
			// Drain so the connection is reused, then drop this response.
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxPeek))
			resp.Body.Close()
		}
		cancel()
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

// cancelBody ends an attempt's context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// classify decides whether a response or error is transient and how long
// to wait before the next attempt, and whether GitHub may have acted on
// the request all the same (ambiguous: a 5xx, a timeout, a network error;
// a rate limit is not). A response it keeps has its body restored for the
// caller. The caller has checked that the request's own context is not
// done, so a deadline here is the attempt's timeout.
func (t *Transport) classify(resp *http.Response, err error, attempt int, now time.Time) (wait time.Duration, retry, ambiguous bool) {
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return 0, false, true
		}
		return t.backoff(attempt), true, true // connection reset, EOF, the attempt's timeout
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if d, ok := retryAfter(resp.Header, now); ok {
			return d, true, true
		}
		return t.backoff(attempt), true, true
	case http.StatusTooManyRequests, http.StatusForbidden:
		body := peekBody(resp)
		limited := resp.StatusCode == http.StatusTooManyRequests ||
			resp.Header.Get("Retry-After") != "" ||
			resp.Header.Get("X-Ratelimit-Remaining") == "0" ||
			isSecondaryLimit(body)
		if !limited {
			return 0, false, false // a permission error: not transient
		}
		if d, ok := retryAfter(resp.Header, now); ok {
			return d, true, false
		}
		if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
			if reset, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
				d := time.Unix(reset, 0).Sub(now) + time.Second
				return max(d, time.Second), true, false
			}
		}
		if isSecondaryLimit(body) {
			return secondaryWait, true, false
		}
		return t.backoff(attempt), true, false
	}
	return 0, false, false
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

// loopback reports whether host is this machine (a test server, a local
// proxy), the one place a token may go over plain http.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func plainHTTPError(u string) error {
	return fmt.Errorf("refusing to send the GitHub token over plain http to %s: it would travel unencrypted; use the https:// URL (on GitHub Enterprise Server, GITHUB_API_URL=https://HOST/api/v3)", u)
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
