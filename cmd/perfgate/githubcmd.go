package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/forge"
	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/github"
)

func init() { commandSet = append(commandSet, publishCommand) }

// publishTimeout bounds everything one publication does on GitHub,
// retries included.
const publishTimeout = 4 * time.Minute

// githubFlags are the flags check and publish share to control GitHub
// publishing.
func githubFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "github", Usage: "publish to GitHub (PR comment, status, job summary, outputs) outside Actions too; --github=false turns it off inside Actions"},
		&cli.BoolFlag{Name: "check-run", Usage: "publish the verdict as a check run instead of a commit status (needs checks: write)"},
		&cli.StringFlag{Name: "gate-id", Value: github.DefaultGateID, EnvVars: []string{"PERFGATE_GATE_ID"},
			Usage: "`ID` of this gate: one sticky PR comment and one status per gate id, for workflows that run several gates",
			Action: func(_ *cli.Context, v string) error {
				if v == "" {
					return nil // an empty PERFGATE_GATE_ID: the default
				}
				if err := github.CheckGateID(v); err != nil {
					return usageErrorf("--gate-id: %v", err)
				}
				return nil
			}},
		&cli.StringFlag{Name: "comment", Value: string(github.CommentAuto), Usage: "when to comment on the pull request: " + strings.Join(github.CommentModes, ", "),
			Action: func(_ *cli.Context, v string) error {
				if _, err := github.ParseCommentMode(v); err != nil {
					return usageErrorf("--comment: %v", err)
				}
				return nil
			}},
	}
}

// publishReport publishes a check's report to GitHub when perfgate runs
// inside GitHub Actions with a token, or with --github: a failure is a
// warning on stderr and never changes the verdict or the exit code.
func publishReport(c *cli.Context, e *env, rep *gate.Report) {
	if c.IsSet("github") && !c.Bool("github") {
		return
	}
	ghEnv, err := github.FromEnv(e.getenv)
	forced := c.Bool("github")
	if !ghEnv.Actions && !forced {
		publishCI(c, e, rep) // Buildkite, GitLab
		return
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "perfgate: warning: %s\n", ghEnv.Redact(err.Error()))
	}
	pub, perr := publication(c, rep)
	if perr != nil {
		fmt.Fprintf(e.stderr, "perfgate: warning: cannot publish to GitHub: %v\n", perr)
		return
	}
	pub.API = forced || ghEnv.HasToken()
	out := runPublication(c.Context, e, ghEnv, pub)
	for _, n := range out.Notes {
		fmt.Fprintf(e.stderr, "perfgate: github: %s\n", ghEnv.Redact(n))
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(e.stderr, "perfgate: warning: %s (the verdict stands)\n", ghEnv.Redact(w.Error()))
	}
}

// publication renders a report for GitHub with the flags' settings.
func publication(c *cli.Context, rep *gate.Report) (github.Publication, error) {
	mode, err := github.ParseCommentMode(c.String("comment"))
	if err != nil {
		return github.Publication{}, usageErrorf("--comment: %v", err)
	}
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		return github.Publication{}, err
	}
	return github.Publication{
		GateID:   c.String("gate-id"),
		Pass:     !rep.Failed(),
		Neutral:  rep.Undecided(),
		Title:    statusTitle(rep),
		Markdown: md.String(),
		Comment:  mode,
		CheckRun: c.Bool("check-run"),
	}, nil
}

// runPublication makes the client and publishes, within publishTimeout.
func runPublication(ctx context.Context, e *env, ghEnv *github.Env, pub github.Publication) github.Outcome {
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	var client *github.Client
	var cerr error
	if pub.API {
		tr := &github.Transport{Notify: func(method, path string, status int, err error, wait time.Duration) {
			what := fmt.Sprintf("HTTP %d", status)
			if err != nil {
				what = ghEnv.Redact(err.Error())
			}
			fmt.Fprintf(e.stderr, "perfgate: GitHub %s %s: %s; retrying in %s\n", method, path, what, wait.Round(100*time.Millisecond))
		}}
		client, cerr = github.NewClient(ghEnv, github.ClientOptions{Transport: tr})
	}
	return github.Publish(ctx, ghEnv, client, cerr, pub)
}

// statusTitle is the one-line verdict of a commit status or check run.
func statusTitle(rep *gate.Report) string {
	s := rep.Summary
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	var title string
	if rep.Failed() {
		add(s.Fail, "failed")
		add(s.Missing, "missing")
		title = fmt.Sprintf("%s of %d checks", strings.Join(parts, ", "), s.Checks)
		if len(parts) == 0 {
			title = fmt.Sprintf("failed (%d checks)", s.Checks)
		}
	} else if rep.Undecided() && s.Checks == 0 {
		title = "no check applied: no rule matched the results, not a pass"
	} else if rep.Undecided() && rep.Uncompared() == s.Inconclusive {
		title = fmt.Sprintf("inconclusive: %d of %d checks compared nothing (no comparable baseline), none failed", s.Inconclusive, s.Checks)
	} else if rep.Undecided() {
		title = fmt.Sprintf("inconclusive: %d of %d checks undecided, none failed", s.Inconclusive, s.Checks)
	} else {
		title = fmt.Sprintf("%d checks passed", s.Checks)
		add(s.Improved, "improved")
		add(s.Accepted, "accepted")
		add(s.Inconclusive, "inconclusive")
		add(s.New, "new")
		if len(parts) > 0 {
			title += " (" + strings.Join(parts, ", ") + ")"
		}
	}
	if b := rep.Baseline.Commit; len(b) >= 7 {
		title += " against " + b[:7]
	} else {
		title += ", no measured baseline"
	}
	return title
}

func publishCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "publish",
		Usage: "publish a saved check report to GitHub, Buildkite or GitLab (for pull requests from forks, from a trusted workflow or pipeline)",
		Description: "Reads the JSON report of perfgate check -o json --out FILE and publishes it as check does inside\n" +
			"GitHub Actions: the sticky PR comment, the commit status (or --check-run), the job summary and\n" +
			"the step outputs. In a workflow_run workflow the pull request and commit come from the run that\n" +
			"triggered it; a pull request from a fork is found by its head branch. The token comes from\n" +
			"PERFGATE_GITHUB_TOKEN or GITHUB_TOKEN. Exit 0 when everything was published, 3 when GitHub\n" +
			"could not be reached or refused, 2 for a bad report or flag. See docs/github.md.\n\n" +
			"In a Buildkite build (BUILDKITE=true) it annotates the build instead, and comments on the GitHub\n" +
			"pull request the build is for when a GitHub token is given; in GitLab CI (GITLAB_CI=true) it edits\n" +
			"the merge request's note (--pr is the merge request's iid, checked against the commit) and sets\n" +
			"the commit status with PERFGATE_GITLAB_TOKEN. See docs/ci/buildkite.md and docs/ci/gitlab.md.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "report", Usage: "the JSON report `FILE` written by perfgate check -o json --out FILE"},
			&cli.StringFlag{Name: "pr", Usage: "pull request `NUMBER` (default: from the event); checked against the commit"},
			&cli.StringFlag{Name: "sha", Usage: "commit `SHA` to set the status on (default: from the event)"},
			&cli.StringFlag{Name: "site-url", EnvVars: []string{"PERFGATE_SITE_URL"}, Usage: "`URL` where perfgate site publishes the history, for the comment's chart links; the report's own site_url is never used (a fork writes the report)"},
		}, githubFlags()...),
		Action: func(c *cli.Context) error {
			path := c.String("report")
			if path == "" {
				return usageErrorf("publish: --report FILE is required (the file written by perfgate check -o json --out FILE)")
			}
			f, err := os.Open(path)
			if err != nil {
				return usageErrorf("--report %q: %v; check the path (in a workflow_run workflow, download the artifact first)", path, err)
			}
			rep, err := gate.ReadReport(f)
			f.Close()
			if err != nil {
				return usageErrorf("--report %q: %v", path, err)
			}
			// Links go where the publishing repository says, never where
			// the report (a fork's artifact) says.
			rep.SiteURL = ""
			if u := c.String("site-url"); u != "" {
				if !gate.ValidSiteURL(u) {
					return usageErrorf("--site-url %q: give the https URL perfgate site is published at, e.g. https://OWNER.github.io/REPO/ (no query, fragment, quotes or spaces)", u)
				}
				rep.SiteURL = u
			}
			ghEnv, err := github.FromEnv(e.getenv)
			if err != nil {
				return usageErrorf("%s", ghEnv.Redact(err.Error()))
			}
			if !ghEnv.Actions && !c.Bool("github") {
				if f, api, err := ciForge(e); f != nil {
					if err != nil {
						return usageErrorf("%s", f.Redact(err.Error()))
					}
					return publishCIFlags(c, e, f, api, rep)
				}
			}
			pub, err := publication(c, rep)
			if err != nil {
				return err
			}
			pub.API = !(c.IsSet("github") && !c.Bool("github"))
			pub.SHA = strings.TrimSpace(c.String("sha"))
			if pub.SHA != "" && !fullSHA().MatchString(pub.SHA) {
				return usageErrorf("--sha %q is not a full commit id (40 lowercase hex digits); give the commit the status belongs on (in a workflow_run workflow, github.event.workflow_run.head_sha), or leave --sha out", pub.SHA)
			}
			if s := c.String("pr"); s != "" {
				n, err := github.ParsePR(s)
				if err != nil {
					return usageErrorf("--pr: %v", err)
				}
				pub.PR = n
				if err := checkPRHead(c.Context, ghEnv, n, pub.SHA); err != nil {
					return err
				}
			}
			return publishOutcome(e, runPublication(c.Context, e, ghEnv, pub), ghEnv.Redact)
		},
	}
}

// publishCIFlags reads publish's --pr and --sha for Buildkite or GitLab.
func publishCIFlags(c *cli.Context, e *env, f forge.Forge, api bool, rep *gate.Report) error {
	sha := strings.TrimSpace(c.String("sha"))
	if sha != "" && !fullSHA().MatchString(sha) {
		return usageErrorf("--sha %q is not a full commit id (40 lowercase hex digits); give the commit the status belongs on, or leave --sha out", sha)
	}
	pr := 0
	if s := c.String("pr"); s != "" {
		n, err := github.ParsePR(strings.TrimPrefix(strings.TrimSpace(s), "!"))
		if err != nil {
			return usageErrorf("--pr: %v", err)
		}
		pr = n
	}
	return publishCIReport(c, e, f, api, rep, pr, sha)
}

// checkPRHead refuses a pull request number whose head is not the commit
// being published: a number read from an artifact of an untrusted
// workflow must not let it comment on another pull request.
func checkPRHead(ctx context.Context, ghEnv *github.Env, pr int, sha string) error {
	if sha == "" {
		sha = ghEnv.HeadSHA
	}
	if sha == "" {
		return nil
	}
	client, err := github.NewClient(ghEnv, github.ClientOptions{})
	if err != nil {
		return envError(fmt.Errorf("publish: %v", err))
	}
	ctx, cancel := context.WithTimeout(ctx, publishTimeout)
	defer cancel()
	head, err := client.PRHead(ctx, pr)
	if err != nil {
		return envError(fmt.Errorf("publish: %v", err))
	}
	if head != sha {
		return usageErrorf("--pr %d: the pull request's head is %.12s, not the commit being published %.12s; give the pull request of this commit (or --sha)", pr, head, sha)
	}
	return nil
}
