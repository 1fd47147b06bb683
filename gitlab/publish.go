package gitlab

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/forge"
	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/internal/mdtext"
)

// MaxNoteLen is GitLab's limit on a note body, in characters.
const MaxNoteLen = 1_000_000

// Forge publishes to GitLab.
type Forge struct {
	Env       *Env
	Client    *Client // nil when NewClient failed (ClientErr) or no API call is wanted
	ClientErr error
}

// Name is "GitLab".
func (f *Forge) Name() string { return "GitLab" }

// Redact removes the token from s.
func (f *Forge) Redact(s string) string { return f.Env.Redact(s) }

// Publish writes the dotenv, metrics and report files in a GitLab job,
// then, with p.API, edits the merge request's note and sets the commit
// status. Each part is independent: a failure of one is a warning.
func (f *Forge) Publish(ctx context.Context, p forge.Publication) forge.Outcome {
	var o forge.Outcome
	env := f.Env
	gateID := forge.GateID(p.GateID)
	if env.GitLab && env.ProjectDir != "" {
		writeFiles(&o, env.ProjectDir, gateID, &p)
	}
	if !p.API {
		return o
	}
	if f.Client == nil {
		o.Warn(fmt.Errorf("cannot publish to GitLab: %w", f.ClientErr))
		return o
	}
	mr := p.PR
	if mr == 0 {
		mr = env.MR
	}
	sha := p.SHA
	if sha == "" {
		sha = env.SHA
	}
	switch {
	case p.Comment == forge.CommentNever:
	case mr == 0:
		if p.Comment == forge.CommentAlways {
			o.Warn(fmt.Errorf("no merge request to comment on (CI_MERGE_REQUEST_IID is not set); run in a merge request pipeline, or give the number (--pr)"))
		}
	default:
		foot := footer(env, gateID, sha)
		room := MaxNoteLen - len(github.Marker(gateID)) - 1 - len(foot)
		body := github.Shorten(mdtext.GitLab(p.Markdown), room, shortenedNote) + foot
		res, err := f.Client.UpsertNote(ctx, mr, gateID, body)
		switch {
		case err != nil:
			o.Warn(err)
		case res.Created:
			o.Note("commented on merge request !%d", mr)
		default:
			o.Note("updated the note on merge request !%d", mr)
		}
	}
	if sha == "" {
		o.Warn(fmt.Errorf("no commit to set a status on: CI_COMMIT_SHA is not set; run inside GitLab CI or give the commit (--sha)"))
		return o
	}
	st := Status{Name: forge.StatusName(gateID), State: State(&p), Description: p.Title, TargetURL: env.JobURL}
	if p.PR == 0 && p.SHA == "" && env.MR == 0 {
		st.Ref = env.Ref
	}
	if p.Neutral && !strings.HasPrefix(st.Description, "inconclusive") {
		st.Description = "inconclusive: " + st.Description
	}
	if err := f.Client.SetStatus(ctx, sha, st); err != nil {
		o.Warn(err)
	} else {
		o.Note("commit status %q: %s on %.7s", st.Name, st.State, sha)
	}
	return o
}

// State is the commit status of a verdict: success, failed, and, for an
// inconclusive gate, skipped: GitLab has no neutral state, and skipped is
// neither green nor a failure (the job itself passes, as on GitHub).
func State(p *forge.Publication) string {
	switch {
	case p.Neutral:
		return "skipped"
	case p.Pass:
		return "success"
	}
	return "failed"
}

const shortenedNote = "\n> **Note:** This report was shortened to fit GitLab's limit on a note. The job's log and `perfgate check -o markdown` have all of it.\n"

// footer ends a note with the gate, the commit and the job.
func footer(env *Env, gateID, sha string) string {
	parts := []string{"perfgate"}
	if gateID != forge.DefaultGateID {
		parts = append(parts, "gate `"+gateID+"`")
	}
	if len(sha) >= 7 {
		parts = append(parts, "commit `"+sha[:7]+"`")
	}
	if env.JobURL != "" && !strings.ContainsAny(env.JobURL, "()<> \n") {
		parts = append(parts, "[job]("+env.JobURL+")")
	}
	return "\n<sub>" + strings.Join(parts, " · ") + "</sub>\n"
}

// Files names the files a gate's publication writes in the project
// directory: the dotenv report, the metrics report and the markdown
// report. The default gate's are perfgate.env, perfgate-metrics.txt and
// perfgate-report.md; gate ID's have "perfgate-ID" (a '/' as '-').
func Files(gateID string) (dotenv, metrics, report string) {
	base := "perfgate"
	if gateID = forge.GateID(gateID); gateID != forge.DefaultGateID {
		base += "-" + strings.ReplaceAll(gateID, "/", "-")
	}
	return base + ".env", base + "-metrics.txt", base + "-report.md"
}

// writeFiles writes the report, the dotenv report (PERFGATE_VERDICT,
// PERFGATE_REPORT_FILE: a dotenv report's names are letters, digits and
// underscores) and the metrics report.
func writeFiles(o *forge.Outcome, dir, gateID string, p *forge.Publication) {
	dotenv, metrics, report := Files(gateID)
	reportPath := filepath.Join(dir, report)
	if err := os.WriteFile(reportPath, []byte(p.Markdown), 0o644); err != nil {
		o.Warn(fmt.Errorf("cannot write the report file: %w", err))
		reportPath = ""
	}
	env := "PERFGATE_VERDICT=" + p.Verdict() + "\n"
	if reportPath != "" && !strings.ContainsAny(reportPath, "\n\r\"'$`\\") {
		env += "PERFGATE_REPORT_FILE=" + reportPath + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, dotenv), []byte(env), 0o644); err != nil {
		o.Warn(fmt.Errorf("cannot write the dotenv report: %w", err))
	}
	if err := os.WriteFile(filepath.Join(dir, metrics), []byte(MetricsReport(p.Metrics)), 0o644); err != nil {
		o.Warn(fmt.Errorf("cannot write the metrics report: %w", err))
		return
	}
	o.Note("wrote %s (verdict), %s (%d metrics) and %s: name them under artifacts: reports: (dotenv, metrics)", dotenv, metrics, len(p.Metrics), report)
}

// MetricsReport is the metrics as GitLab's metrics report reads them
// (OpenMetrics text lines, name{labels} value): the name is
// perfgate_BENCHMARK_METRIC with every character that may not be in a
// name as '_', the series labels quoted and escaped.
func MetricsReport(ms []forge.Metric) string {
	lines := make([]string, 0, len(ms))
	seen := map[string]bool{}
	for _, m := range ms {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			continue
		}
		key := metricName("perfgate_"+m.Benchmark+"_"+m.Metric) + labelSet(m.Labels)
		if seen[key] {
			continue
		}
		seen[key] = true
		lines = append(lines, key+" "+strconv.FormatFloat(m.Value, 'g', -1, 64))
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// metricName keeps [a-zA-Z0-9_:], the rest as '_', not starting with a
// digit.
func metricName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9' && i > 0)
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// labelSet is {k="v",...} sorted by name, or "".
func labelSet(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	parts := make([]string, len(keys))
	for i, k := range keys {
		name := strings.ReplaceAll(metricName(k), ":", "_")
		parts[i] = name + `="` + esc.Replace(labels[k]) + `"`
	}
	return "{" + strings.Join(parts, ",") + "}"
}
