// Package buildkite publishes a gate's report in a Buildkite build: an
// annotation per gate id (replaced on each run, styled by the verdict),
// the JSON report as an artifact, and, when the build is for a GitHub pull
// request and a token is given, the sticky comment and commit status of
// package github. It runs buildkite-agent, never a shell.
package buildkite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/forge"
	"github.com/perfgate/perfgate/github"
)

// Env is what a Buildkite job knows of its build, read by FromEnv.
type Env struct {
	Buildkite bool   // BUILDKITE is "true"
	Commit    string // BUILDKITE_COMMIT
	Branch    string // BUILDKITE_BRANCH
	// PR is the pull request number; 0 when the build is not for one
	// (BUILDKITE_PULL_REQUEST is "false").
	PR            int
	BaseBranch    string // BUILDKITE_PULL_REQUEST_BASE_BRANCH
	DefaultBranch string // BUILDKITE_PIPELINE_DEFAULT_BRANCH
	Repo          string // BUILDKITE_REPO, the clone URL
	PRRepo        string // BUILDKITE_PULL_REQUEST_REPO, the head's clone URL
	BuildURL      string // BUILDKITE_BUILD_URL
	// Agent is the buildkite-agent to run: BUILDKITE_AGENT_PATH, else
	// the one on PATH.
	Agent string
}

// FromEnv reads the Buildkite environment through getenv. The error is
// for a value that is present and wrong (a BUILDKITE_PULL_REQUEST that is
// neither a number nor "false").
func FromEnv(getenv func(string) string) (*Env, error) {
	e := &Env{
		Buildkite:     getenv("BUILDKITE") == "true",
		Commit:        strings.TrimSpace(getenv("BUILDKITE_COMMIT")),
		Branch:        getenv("BUILDKITE_BRANCH"),
		BaseBranch:    strings.TrimSpace(getenv("BUILDKITE_PULL_REQUEST_BASE_BRANCH")),
		DefaultBranch: getenv("BUILDKITE_PIPELINE_DEFAULT_BRANCH"),
		Repo:          getenv("BUILDKITE_REPO"),
		PRRepo:        getenv("BUILDKITE_PULL_REQUEST_REPO"),
		BuildURL:      getenv("BUILDKITE_BUILD_URL"),
		Agent:         "buildkite-agent",
	}
	if a := getenv("BUILDKITE_AGENT_PATH"); a != "" {
		e.Agent = a
	}
	switch pr := strings.TrimSpace(getenv("BUILDKITE_PULL_REQUEST")); pr {
	case "", "false":
	default:
		n, err := strconv.Atoi(pr)
		if err != nil || n <= 0 {
			return e, fmt.Errorf("BUILDKITE_PULL_REQUEST %q is neither a pull request number nor false", pr)
		}
		e.PR = n
	}
	return e, nil
}

// PullRequest reports whether the build is for a pull request.
func (e *Env) PullRequest() bool { return e.PR > 0 }

var githubRepoRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`)
})

// GitHubRepo is the owner and name of BUILDKITE_REPO when it is a
// github.com repository.
func GitHubRepo(url string) (owner, name string, ok bool) {
	m := githubRepoRE().FindStringSubmatch(strings.TrimSpace(url))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// Fork reports whether the pull request's head is another repository.
func (e *Env) Fork() bool {
	return e.PR > 0 && e.PRRepo != "" && !strings.EqualFold(strings.TrimSuffix(e.PRRepo, ".git"), strings.TrimSuffix(e.Repo, ".git"))
}

// GitHubEnv is the github.Env of a build for a GitHub pull request, with
// the token of getenv (PERFGATE_GITHUB_TOKEN, GITHUB_TOKEN), or nil when
// the build's repository is not on github.com.
func (e *Env) GitHubEnv(getenv func(string) string) *github.Env {
	owner, name, ok := GitHubRepo(e.Repo)
	if !ok {
		return nil
	}
	only := func(k string) string {
		switch k {
		case "PERFGATE_GITHUB_TOKEN", "GITHUB_TOKEN", "GITHUB_API_URL":
			return getenv(k)
		}
		return ""
	}
	ge, _ := github.FromEnv(only) // without GITHUB_REPOSITORY or an event file: no error
	ge.Owner, ge.Repo = owner, name
	ge.PR = e.PR
	ge.HeadSHA = e.Commit
	ge.BaseRef = e.BaseBranch
	ge.RunURL = e.BuildURL
	ge.EventName = "buildkite"
	return ge
}

// MaxAnnotation is Buildkite's limit on an annotation body.
const MaxAnnotation = 1 << 20

// Forge publishes to a Buildkite build.
type Forge struct {
	Env *Env
	// GitHub, when set, also publishes to the GitHub pull request the
	// build is for (comment and status); nil outside one.
	GitHub *github.Forge
	// TempDir is where the JSON report is written for its upload; ""
	// is os.TempDir.
	TempDir string
}

// Name is "Buildkite".
func (f *Forge) Name() string { return "Buildkite" }

// Redact removes the GitHub token from s.
func (f *Forge) Redact(s string) string {
	if f.GitHub != nil {
		return f.GitHub.Redact(s)
	}
	return s
}

// Context is the annotation context of a gate: "perfgate", or
// "perfgate-ID" (a '/' of the id as '-').
func Context(gateID string) string {
	gateID = forge.GateID(gateID)
	if gateID == forge.DefaultGateID {
		return "perfgate"
	}
	return "perfgate-" + strings.ReplaceAll(gateID, "/", "-")
}

// Style is the annotation style of a verdict.
func Style(p *forge.Publication) string {
	switch {
	case p.Neutral:
		return "warning"
	case p.Pass:
		return "success"
	}
	return "error"
}

// Publish annotates the build with the report, uploads the JSON report,
// and publishes to GitHub when the Forge has it. Each part is independent.
func (f *Forge) Publish(ctx context.Context, p forge.Publication) forge.Outcome {
	var o forge.Outcome
	gateID := forge.GateID(p.GateID)
	if err := f.annotate(ctx, gateID, &p); err != nil {
		o.Warn(err)
	} else {
		o.Note("annotated the build (context %s, style %s)", Context(gateID), Style(&p))
	}
	if p.JSON != nil {
		if name, err := f.upload(ctx, gateID, p.JSON); err != nil {
			o.Warn(err)
		} else {
			o.Note("uploaded the JSON report as the artifact %s", name)
		}
	}
	if f.GitHub != nil && p.API {
		gp := p
		if gp.SHA == "" {
			gp.SHA = f.Env.Commit
		}
		if gp.PR == 0 {
			gp.PR = f.Env.PR
		}
		if f.Env.Fork() && gp.Comment == forge.CommentAuto {
			o.Note("pull request #%d comes from a fork: not publishing to GitHub from its build; publish from a step of your own pipeline (docs/ci/buildkite.md)", gp.PR)
			return o
		}
		o.Merge("GitHub: ", f.GitHub.Publish(ctx, gp))
	}
	return o
}

// annotate replaces the gate's annotation: --context without --append
// replaces the annotation of that context.
func (f *Forge) annotate(ctx context.Context, gateID string, p *forge.Publication) error {
	foot := f.footer(gateID, p)
	body := github.Shorten(p.Markdown, MaxAnnotation-len(foot)-64, "\n*The report is shortened to fit a Buildkite annotation; the JSON report artifact has all of it.*\n") + foot
	cmd := exec.CommandContext(ctx, f.Env.Agent, "annotate", "--context", Context(gateID), "--style", Style(p))
	cmd.Stdin = strings.NewReader(body)
	return run(cmd, "annotate the build")
}

// footer ends an annotation with the gate and the commit.
func (f *Forge) footer(gateID string, p *forge.Publication) string {
	parts := []string{"perfgate"}
	if gateID != forge.DefaultGateID {
		parts = append(parts, "gate `"+gateID+"`")
	}
	sha := p.SHA
	if sha == "" {
		sha = f.Env.Commit
	}
	if len(sha) >= 7 && strings.Trim(sha, "0123456789abcdef") == "" {
		parts = append(parts, "commit `"+sha[:7]+"`")
	}
	return "\n<sub>" + strings.Join(parts, " · ") + "</sub>\n"
}

// upload writes the JSON report to a file of its own and uploads it.
func (f *Forge) upload(ctx context.Context, gateID string, data []byte) (string, error) {
	dir, err := os.MkdirTemp(f.TempDir, "perfgate-artifact")
	if err != nil {
		return "", fmt.Errorf("cannot write the JSON report for its upload: %w", err)
	}
	defer os.RemoveAll(dir)
	name := Context(gateID) + ".json"
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		return "", fmt.Errorf("cannot write the JSON report for its upload: %w", err)
	}
	cmd := exec.CommandContext(ctx, f.Env.Agent, "artifact", "upload", name)
	cmd.Dir = dir
	return name, run(cmd, "upload the JSON report")
}

// run runs a buildkite-agent command, its output in the error.
func run(cmd *exec.Cmd, what string) error {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		if msg != "" {
			msg = ": " + msg
		}
		return fmt.Errorf("cannot %s: %s %s: %v%s (is buildkite-agent on the PATH of the step?)", what, filepath.Base(cmd.Path), strings.Join(cmd.Args[1:], " "), err, msg)
	}
	return nil
}
