package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/buildkite"
	"github.com/perfgate/perfgate/forge"
	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/gitlab"
	"github.com/perfgate/perfgate/gitrepo"
)

// ciChangeBase is the base branch of the pull (merge) request a Buildkite
// or GitLab build is for (BUILDKITE_PULL_REQUEST_BASE_BRANCH,
// CI_MERGE_REQUEST_TARGET_BRANCH_NAME), or "" outside one. GitHub's is
// GITHUB_BASE_REF, which the Action passes as --base.
func ciChangeBase(getenv func(string) string) string {
	switch {
	case getenv("BUILDKITE") == "true":
		if pr := strings.TrimSpace(getenv("BUILDKITE_PULL_REQUEST")); pr != "" && pr != "false" {
			return strings.TrimSpace(getenv("BUILDKITE_PULL_REQUEST_BASE_BRANCH"))
		}
	case getenv("GITLAB_CI") == "true":
		if strings.TrimSpace(getenv("CI_MERGE_REQUEST_IID")) != "" {
			return strings.TrimSpace(getenv("CI_MERGE_REQUEST_TARGET_BRANCH_NAME"))
		}
	}
	return ""
}

// inForgeCI reports whether perfgate runs in Buildkite or GitLab CI,
// whose base branch is origin's remote-tracking ref as in Actions.
func inForgeCI() bool {
	return os.Getenv("BUILDKITE") == "true" || os.Getenv("GITLAB_CI") == "true"
}

// gitlabDiffBase is, in a GitLab merge request pipeline whose clone has
// no origin/TARGET (GitLab fetches only the pipeline's ref), the merge
// request's diff base (CI_MERGE_REQUEST_DIFF_BASE_SHA) when it is the
// target branch being resolved and the clone has it.
func gitlabDiffBase(c *cli.Context, repo *gitrepo.Repo, name string) (string, bool) {
	if os.Getenv("GITLAB_CI") != "true" || name == "" || name != strings.TrimSpace(os.Getenv("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")) {
		return "", false
	}
	base := strings.TrimSpace(os.Getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA"))
	if !fullSHA().MatchString(base) {
		return "", false
	}
	sha, err := repo.Resolve(base + "^{commit}")
	if err != nil {
		return "", false
	}
	fmt.Fprintf(c.App.ErrWriter, "perfgate: origin/%s is not fetched; using the merge request's diff base %s (CI_MERGE_REQUEST_DIFF_BASE_SHA) as the base: git fetch origin %s gives its later history too\n", name, repo.Short(sha), name)
	return sha, true
}

// ciForge is the Buildkite or GitLab forge of the environment, with the
// calls that need a token enabled when one is given; nil outside both.
func ciForge(e *env) (forge.Forge, bool, error) {
	switch {
	case e.getenv("BUILDKITE") == "true":
		bkEnv, err := buildkite.FromEnv(e.getenv)
		f := &buildkite.Forge{Env: bkEnv}
		api := false
		if bkEnv.PullRequest() {
			if ge := bkEnv.GitHubEnv(e.getenv); ge != nil && ge.HasToken() {
				client, cerr := github.NewClient(ge, github.ClientOptions{Transport: retryNotice(e, "GitHub", ge.Redact)})
				f.GitHub = &github.Forge{Env: ge, Client: client, ClientErr: cerr}
				api = true
			}
		}
		return f, api, err
	case e.getenv("GITLAB_CI") == "true":
		glEnv, err := gitlab.FromEnv(e.getenv)
		f := &gitlab.Forge{Env: glEnv}
		if glEnv.HasToken() {
			f.Client, f.ClientErr = gitlab.NewClient(glEnv, retryNotice(e, "GitLab", glEnv.Redact))
		}
		return f, glEnv.HasToken(), err
	}
	return nil, false, nil
}

// retryNotice is a transport that says each retry on stderr.
func retryNotice(e *env, name string, redact func(string) string) *github.Transport {
	return &github.Transport{Notify: func(method, path string, status int, err error, wait time.Duration) {
		what := fmt.Sprintf("HTTP %d", status)
		if err != nil {
			what = redact(err.Error())
		}
		fmt.Fprintf(e.stderr, "perfgate: %s %s %s: %s; retrying in %s\n", name, method, path, what, wait.Round(100*time.Millisecond))
	}}
}

// forgePublication adds what Buildkite and GitLab publish beyond GitHub:
// the JSON report (an artifact) and the head's values (a metrics report).
func forgePublication(pub forge.Publication, rep *gate.Report) forge.Publication {
	var js bytes.Buffer
	if gate.Write(&js, rep, "json", false) == nil {
		pub.JSON = js.Bytes()
	}
	for _, c := range rep.Checks {
		if c.Current != nil {
			pub.Metrics = append(pub.Metrics, forge.Metric{Benchmark: c.Benchmark, Labels: c.Labels, Metric: c.Metric, Value: *c.Current})
		}
	}
	return pub
}

// publishCI publishes a check's report to Buildkite or GitLab when
// perfgate runs in one: a failure is a warning, never the verdict.
func publishCI(c *cli.Context, e *env, rep *gate.Report) {
	f, api, err := ciForge(e)
	if f == nil {
		return
	}
	name := strings.ToLower(f.Name())
	if err != nil {
		fmt.Fprintf(e.stderr, "perfgate: warning: %s\n", f.Redact(err.Error()))
	}
	pub, perr := publication(c, rep)
	if perr != nil {
		fmt.Fprintf(e.stderr, "perfgate: warning: cannot publish to %s: %v\n", f.Name(), perr)
		return
	}
	pub = forgePublication(pub, rep)
	pub.API = api
	ctx, cancel := context.WithTimeout(c.Context, publishTimeout)
	defer cancel()
	out := f.Publish(ctx, pub)
	for _, n := range out.Notes {
		fmt.Fprintf(e.stderr, "perfgate: %s: %s\n", name, f.Redact(n))
	}
	for _, w := range out.Warnings {
		fmt.Fprintf(e.stderr, "perfgate: warning: %s (the verdict stands)\n", f.Redact(w.Error()))
	}
}

// publishCIReport is publish --report in Buildkite or GitLab: pr is a
// merge request's iid on GitLab, checked against sha as on GitHub.
func publishCIReport(c *cli.Context, e *env, f forge.Forge, api bool, rep *gate.Report, pr int, sha string) error {
	pub, err := publication(c, rep)
	if err != nil {
		return err
	}
	pub = forgePublication(pub, rep)
	pub.API = api && !(c.IsSet("github") && !c.Bool("github"))
	pub.PR, pub.SHA = pr, sha
	ctx, cancel := context.WithTimeout(c.Context, publishTimeout)
	defer cancel()
	if gl, ok := f.(*gitlab.Forge); ok && pr != 0 {
		if gl.Client == nil {
			return envError(fmt.Errorf("publish: %s", f.Redact(gl.ClientErr.Error())))
		}
		want := sha
		if want == "" {
			want = gl.Env.SHA
		}
		head, err := gl.Client.MRHead(ctx, pr)
		if err != nil {
			return envError(fmt.Errorf("publish: %s", f.Redact(err.Error())))
		}
		if want != "" && head != want {
			return usageErrorf("--pr %d: the merge request's head is %.12s, not the commit being published %.12s; give the merge request of this commit (or --sha)", pr, head, want)
		}
	}
	return publishOutcome(e, f.Publish(ctx, pub), f.Redact)
}

// publishOutcome prints what perfgate publish did, redacted, and makes its
// failures one environment error (exit 3).
func publishOutcome(e *env, out forge.Outcome, redact func(string) string) error {
	for _, n := range out.Notes {
		fmt.Fprintf(e.stdout, "%s\n", redact(n))
	}
	if out.Failed() {
		msgs := make([]string, len(out.Warnings))
		for i, w := range out.Warnings {
			msgs[i] = redact(w.Error())
		}
		return envError(fmt.Errorf("publish: %s", strings.Join(msgs, "\nperfgate: publish: ")))
	}
	return nil
}
