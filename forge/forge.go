// Package forge is what the CI systems perfgate reports to share: a
// Publication (one gate's verdict and report), the Outcome of publishing
// it, and the Forge interface that GitHub (package github), Buildkite
// (package buildkite) and GitLab (package gitlab) implement. cmd/perfgate
// wires the one the environment names; nothing here knows a CI system.
package forge

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Forge is where a gate's report goes: a pull request comment, a build
// annotation, a merge request note, a commit status.
type Forge interface {
	// Name is the CI system, for messages ("GitHub", "Buildkite", "GitLab").
	Name() string
	// Publish publishes p. A failure is a warning in the Outcome: it never
	// changes the verdict.
	Publish(ctx context.Context, p Publication) Outcome
	// Redact removes the forge's secrets from s before it is printed.
	Redact(s string) string
}

// CommentMode says when Publish comments on the pull (merge) request.
type CommentMode string

// Comment modes.
const (
	// CommentAuto comments on a pull request when the token can, and is
	// quiet otherwise: no pull request (a push), a fork's read-only token.
	CommentAuto CommentMode = "auto"
	// CommentAlways comments like auto and warns when it cannot.
	CommentAlways CommentMode = "always"
	// CommentNever does not comment.
	CommentNever CommentMode = "never"
)

// CommentModes lists the valid modes, for messages.
var CommentModes = []string{string(CommentAuto), string(CommentAlways), string(CommentNever)}

// ParseCommentMode reads a mode; "true" and "false" (an Action's boolean
// input) mean auto and never.
func ParseCommentMode(s string) (CommentMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto", "true", "yes", "on":
		return CommentAuto, nil
	case "always":
		return CommentAlways, nil
	case "never", "false", "no", "off":
		return CommentNever, nil
	}
	return "", fmt.Errorf("%q is not a comment mode; choose one of: %s", s, strings.Join(CommentModes, ", "))
}

// DefaultGateID names the gate when a pipeline runs only one.
const DefaultGateID = "perfgate"

var gateIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,99}$`) })

// CheckGateID validates a gate id: letters, digits, '.', '_', '/' and
// '-', starting with a letter or digit, at most 100 characters.
func CheckGateID(id string) error {
	if !gateIDRE().MatchString(id) {
		return fmt.Errorf("%q is not a gate id; use letters, digits, '.', '_', '/' and '-' (at most 100, starting with a letter or digit), e.g. serving-a100", id)
	}
	return nil
}

// GateID is id, or DefaultGateID when id is "".
func GateID(id string) string {
	if id == "" {
		return DefaultGateID
	}
	return id
}

// StatusName is the status context (check run, annotation context) of a
// gate: "perfgate", or "perfgate/ID" for another gate id.
func StatusName(gateID string) string {
	if gateID == "" || gateID == DefaultGateID {
		return "perfgate"
	}
	return "perfgate/" + gateID
}

// Metric is one measured value of the head, for a CI system's metrics
// report.
type Metric struct {
	Benchmark string
	Labels    map[string]string
	Metric    string
	Value     float64
}

// Publication is one gate's report, ready to publish.
type Publication struct {
	GateID string // "" means DefaultGateID
	Pass   bool   // the verdict
	// Neutral: the gate could not decide (inconclusive, not failed).
	Neutral  bool
	Title    string // one line: the verdict sentence
	Markdown string // the report
	Comment  CommentMode
	// CheckRun: on GitHub, a check run instead of a commit status.
	CheckRun bool
	// API enables the calls that need a token (comment, status); files
	// (job summary, outputs, annotations) are written whenever their CI
	// system asks for them.
	API bool
	// PR and SHA override what the environment names (PR is a merge
	// request's iid on GitLab).
	PR  int
	SHA string
	// JSON is the JSON report, for a build artifact; nil: none.
	JSON []byte
	// Metrics are the head's values, for a metrics report.
	Metrics []Metric
}

// Verdict is "pass", "fail" or "inconclusive".
func (p *Publication) Verdict() string {
	switch {
	case p.Neutral:
		return "inconclusive"
	case p.Pass:
		return "pass"
	}
	return "fail"
}

// Outcome is what Publish did: notes to show, and warnings for what it
// could not do. A warning never changes a gate's verdict.
type Outcome struct {
	Notes    []string
	Warnings []error
}

// Failed reports whether anything that was asked for failed.
func (o *Outcome) Failed() bool { return len(o.Warnings) > 0 }

// Note records what was done.
func (o *Outcome) Note(format string, args ...any) {
	o.Notes = append(o.Notes, fmt.Sprintf(format, args...))
}

// Warn records what could not be done.
func (o *Outcome) Warn(err error) { o.Warnings = append(o.Warnings, err) }

// Merge appends other's notes, each prefixed with prefix, and its
// warnings (which name their forge already).
func (o *Outcome) Merge(prefix string, other Outcome) {
	for _, n := range other.Notes {
		o.Notes = append(o.Notes, prefix+n)
	}
	o.Warnings = append(o.Warnings, other.Warnings...)
}
