package github

import (
	"context"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/forge"
)

// The publication types are the forge package's, shared with Buildkite
// and GitLab.
type (
	CommentMode = forge.CommentMode
	Publication = forge.Publication
	Outcome     = forge.Outcome
)

// Comment modes.
const (
	CommentAuto   = forge.CommentAuto
	CommentAlways = forge.CommentAlways
	CommentNever  = forge.CommentNever
)

// CommentModes lists the valid modes, for messages.
var CommentModes = forge.CommentModes

// ParseCommentMode reads a mode; "true" and "false" (an Action's boolean
// input) mean auto and never.
func ParseCommentMode(s string) (CommentMode, error) { return forge.ParseCommentMode(s) }

// DefaultGateID names the gate when a workflow runs only one.
const DefaultGateID = forge.DefaultGateID

// CheckGateID validates a gate id: letters, digits, '.', '_', '/' and
// '-', starting with a letter or digit, at most 100 characters.
func CheckGateID(id string) error { return forge.CheckGateID(id) }

// StatusName is the status context or check run name of a gate.
func StatusName(gateID string) string { return forge.StatusName(gateID) }

// Forge publishes to GitHub: the forge.Forge of a workflow (or of another
// CI system building a GitHub pull request, which fills Env itself).
type Forge struct {
	Env       *Env
	Client    *Client // nil when NewClient failed (ClientErr) or no API call is wanted
	ClientErr error
}

// Name is "GitHub".
func (f *Forge) Name() string { return "GitHub" }

// Redact removes the token from s.
func (f *Forge) Redact(s string) string { return f.Env.Redact(s) }

// Publish publishes p; see the function Publish.
func (f *Forge) Publish(ctx context.Context, p Publication) Outcome {
	return Publish(ctx, f.Env, f.Client, f.ClientErr, p)
}

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
			o.Warn(fmt.Errorf("cannot write the job summary: %w", err))
		} else if len(p.Markdown) >= MaxStepSummary {
			o.Note("wrote the report to the job summary, shortened: it is %d bytes, over GitHub's limit of 1 MiB for a job summary (the report-file output names a file with the whole report)", len(p.Markdown))
		} else {
			o.Note("wrote the report to the job summary")
		}
	}
	if env.OutputFile != "" {
		writeOutputs(&o, env, gateID, verdict, p.Markdown)
	}
	if !p.API {
		return o
	}
	if client == nil {
		o.Warn(fmt.Errorf("cannot publish to GitHub: %w", clientErr))
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
			o.Warn(err)
		} else if n == 0 {
			o.Note("no open pull request from %s:%s has its head at %s (closed, or pushed to since): not commenting", env.HeadRepo, env.HeadBranch, short(sha))
		}
		pr = n
	}

	switch {
	case p.Comment == CommentNever:
	case pr == 0:
		if p.Comment == CommentAlways {
			o.Warn(fmt.Errorf("no pull request to comment on (event %q); run on pull_request, or give the number (--pr)", env.EventName))
		}
	case forkPR(env) && p.Comment == CommentAuto:
		o.Note("pull request #%d comes from the fork %s, whose token is read-only: not commenting; publish from a workflow_run workflow (docs/github.md)", pr, env.HeadRepo)
	default:
		foot := footer(env, gateID, sha)
		room := MaxCommentLen - Len(Marker(gateID)) - 1 - Len(foot)
		body := Shorten(p.Markdown, room, shortenedNote) + foot
		res, err := client.UpsertComment(ctx, pr, gateID, body, true)
		switch {
		case err != nil:
			o.Warn(err)
		case res.Created:
			o.Note("commented on pull request #%d%s", pr, urlSuffix(res.URL))
		default:
			o.Note("updated the comment on pull request #%d%s", pr, urlSuffix(res.URL))
		}
		if res.Deleted > 0 {
			o.Note("removed %d duplicate perfgate comment(s)", res.Deleted)
		}
	}

	if sha == "" {
		o.Warn(fmt.Errorf("no commit to set a status on: GITHUB_SHA is not set; run inside GitHub Actions or give the commit (--sha)"))
		return o
	}
	if forkPR(env) && p.Comment != CommentAlways {
		// The read-only token cannot set a status either; the job's own
		// check shows the verdict.
		o.Note("not setting a status from the fork's read-only token: the job's result shows the verdict")
		return o
	}
	st := Status{Name: StatusName(gateID), Success: p.Pass, Neutral: p.Neutral, Title: p.Title, Summary: p.Markdown, DetailsURL: env.RunURL}
	if p.CheckRun {
		url, err := client.CreateCheckRun(ctx, sha, st)
		if err != nil {
			o.Warn(err)
		} else {
			o.Note("check run %q: %s on %s %s", st.Name, verdict, short(sha), url)
		}
	} else {
		if err := client.SetStatus(ctx, sha, st); err != nil {
			o.Warn(err)
		} else {
			o.Note("commit status %q: %s on %s", st.Name, verdict, short(sha))
		}
	}
	return o
}

// writeOutputs writes the step outputs: the verdict, the report cut to
// GitHub's limit, and the path of a file with the whole report.
func writeOutputs(o *Outcome, env *Env, gateID, verdict, markdown string) {
	file, err := env.WriteReportFile(gateID, markdown)
	if err != nil {
		o.Warn(err)
	}
	outputs, shortened := ReportOutputs(verdict, markdown, file)
	if err := env.WriteOutputs(outputs); err != nil {
		o.Warn(fmt.Errorf("cannot write the step outputs: %w", err))
		return
	}
	if shortened {
		whole := "perfgate check -o markdown --out FILE writes it whole"
		if file != "" {
			whole = "the whole report is in " + file + " (the report-file output)"
		}
		o.Note("the report is %d bytes, over the 120 KiB a step output can hold and still be read through env: in a later step (Linux limits one environment variable to 128 KiB): the report output holds it shortened to %d bytes; %s",
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
