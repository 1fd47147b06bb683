package github

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// CommentMode says when Publish comments on the pull request.
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

// DefaultGateID names the gate when a workflow runs only one.
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

// StatusName is the status context or check run name of a gate.
func StatusName(gateID string) string {
	if gateID == "" || gateID == DefaultGateID {
		return "perfgate"
	}
	return "perfgate/" + gateID
}

// Publication is one gate's report, ready to publish.
type Publication struct {
	GateID string // "" means DefaultGateID
	Pass   bool   // the verdict
	// Neutral: the gate could not decide (inconclusive, not failed):
	// a neutral check run, and a commit status that says so.
	Neutral  bool
	Title    string // one line: the verdict sentence
	Markdown string // the report
	Comment  CommentMode
	CheckRun bool // a check run instead of a commit status
	// API enables the calls that need a token (comment, status); the job
	// summary and outputs are written whenever their files are set.
	API bool
	// PR and SHA override what the environment names.
	PR  int
	SHA string
}

// Outcome is what Publish did: notes to show, and warnings for what it
// could not do. A warning never changes a gate's verdict.
type Outcome struct {
	Notes    []string
	Warnings []error
}

// Failed reports whether anything that was asked for failed.
func (o *Outcome) Failed() bool { return len(o.Warnings) > 0 }

func (o *Outcome) note(format string, args ...any) {
	o.Notes = append(o.Notes, fmt.Sprintf(format, args...))
}
func (o *Outcome) warn(err error) { o.Warnings = append(o.Warnings, err) }

// Publish writes the job summary and outputs, then, with p.API, comments
// on the pull request and sets the status. client may be nil when
// NewClient failed; its error is then given as clientErr. Each part is
// independent: a failure of one is a warning and the others still run.
func Publish(ctx context.Context, env *Env, client *Client, clientErr error, p Publication) Outcome {
	var o Outcome
	gateID := p.GateID
	if gateID == "" {
		gateID = DefaultGateID
	}
	verdict := "fail"
	if p.Pass {
		verdict = "pass"
	}
	if p.Neutral {
		verdict = "inconclusive"
	}
	if env.StepSummary != "" {
		if err := env.AppendStepSummary(p.Markdown); err != nil {
			o.warn(fmt.Errorf("cannot write the job summary: %w", err))
		} else if len(p.Markdown) >= MaxStepSummary {
			o.note("wrote the report to the job summary, shortened: it is %d bytes, over GitHub's limit of 1 MiB for a job summary (the report-file output names a file with the whole report)", len(p.Markdown))
		} else {
			o.note("wrote the report to the job summary")
		}
	}
	if env.OutputFile != "" {
		o.writeOutputs(env, gateID, verdict, p.Markdown)
	}
	if !p.API {
		return o
	}
	if client == nil {
		o.warn(fmt.Errorf("cannot publish to GitHub: %w", clientErr))
		return o
	}
	pr := p.PR
	if pr == 0 {
		pr = env.PR
	}
	sha := p.SHA
	if sha == "" {
		sha = env.HeadSHA
	}
	if pr == 0 && env.EventName == "workflow_run" && env.HeadRepo != "" && prTrigger(env.TriggerEvent) {
		n, err := client.FindPR(ctx, env.HeadRepo, env.HeadBranch, sha)
		if err != nil {
			o.warn(err)
		} else if n == 0 {
			o.note("no open pull request from %s:%s has its head at %s (closed, or pushed to since): not commenting", env.HeadRepo, env.HeadBranch, short(sha))
		}
		pr = n
	}

	switch {
	case p.Comment == CommentNever:
	case pr == 0:
		if p.Comment == CommentAlways {
			o.warn(fmt.Errorf("no pull request to comment on (event %q); run on pull_request, or give the number (--pr)", env.EventName))
		}
	case forkPR(env) && p.Comment == CommentAuto:
		o.note("pull request #%d comes from the fork %s, whose token is read-only: not commenting; publish from a workflow_run workflow (docs/github.md)", pr, env.HeadRepo)
	default:
		foot := footer(env, gateID, sha)
		room := MaxCommentLen - Len(Marker(gateID)) - 1 - Len(foot)
		body := Shorten(p.Markdown, room, shortenedNote) + foot
		res, err := client.UpsertComment(ctx, pr, gateID, body, true)
		switch {
		case err != nil:
			o.warn(err)
		case res.Created:
			o.note("commented on pull request #%d%s", pr, urlSuffix(res.URL))
		default:
			o.note("updated the comment on pull request #%d%s", pr, urlSuffix(res.URL))
		}
		if res.Deleted > 0 {
			o.note("removed %d duplicate perfgate comment(s)", res.Deleted)
		}
	}

	if sha == "" {
		o.warn(fmt.Errorf("no commit to set a status on: GITHUB_SHA is not set; run inside GitHub Actions or give the commit (--sha)"))
		return o
	}
	if forkPR(env) && p.Comment != CommentAlways {
		// The read-only token cannot set a status either; the job's own
		// check shows the verdict.
		o.note("not setting a status from the fork's read-only token: the job's result shows the verdict")
		return o
	}
	st := Status{Name: StatusName(gateID), Success: p.Pass, Neutral: p.Neutral, Title: p.Title, Summary: p.Markdown, DetailsURL: env.RunURL}
	if p.CheckRun {
		url, err := client.CreateCheckRun(ctx, sha, st)
		if err != nil {
			o.warn(err)
		} else {
			o.note("check run %q: %s on %s %s", st.Name, verdict, short(sha), url)
		}
	} else {
		if err := client.SetStatus(ctx, sha, st); err != nil {
			o.warn(err)
		} else {
			o.note("commit status %q: %s on %s", st.Name, verdict, short(sha))
		}
	}
	return o
}

// writeOutputs writes the step outputs: the verdict, the report cut to
// GitHub's limit, and the path of a file with the whole report.
func (o *Outcome) writeOutputs(env *Env, gateID, verdict, markdown string) {
	file, err := env.WriteReportFile(gateID, markdown)
	if err != nil {
		o.warn(err)
	}
	outputs, shortened := ReportOutputs(verdict, markdown, file)
	if err := env.WriteOutputs(outputs); err != nil {
		o.warn(fmt.Errorf("cannot write the step outputs: %w", err))
		return
	}
	if shortened {
		whole := "perfgate check -o markdown --out FILE writes it whole"
		if file != "" {
			whole = "the whole report is in " + file + " (the report-file output)"
		}
		o.note("the report is %d bytes, over the 120 KiB a step output can hold and still be read through env: in a later step (Linux limits one environment variable to 128 KiB): the report output holds it shortened to %d bytes; %s",
			len(markdown), len(outputs["report"]), whole)
	}
}

// prTrigger reports whether a workflow_run's triggering event is a pull
// request's (or unknown), whose pull request may be looked up by head.
func prTrigger(event string) bool {
	return event == "" || event == "pull_request" || event == "pull_request_target"
}

// forkPR reports a pull_request event from a fork, whose token is
// read-only (pull_request_target and workflow_run run with the base
// repository's token).
func forkPR(env *Env) bool {
	return env.Fork() && env.EventName == "pull_request"
}

// footer ends a comment with the gate, the commit and the run.
func footer(env *Env, gateID, sha string) string {
	parts := []string{"perfgate"}
	if gateID != DefaultGateID {
		parts = append(parts, "gate `"+gateID+"`")
	}
	if sha != "" {
		parts = append(parts, "commit `"+short(sha)+"`")
	}
	if env.RunURL != "" {
		parts = append(parts, "[workflow run]("+env.RunURL+")")
	}
	return "\n<sub>" + strings.Join(parts, " · ") + "</sub>\n"
}

// urlSuffix is ": URL", or nothing when the API returned no URL.
func urlSuffix(u string) string {
	if u == "" {
		return ""
	}
	return ": " + u
}
