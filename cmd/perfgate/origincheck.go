package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/gitrepo"
)

// inActions reports whether perfgate runs in GitHub Actions.
func inActions() bool { return os.Getenv("GITHUB_ACTIONS") == "true" }

// ciBase resolves a base branch name in CI through origin's
// remote-tracking ref (refs/remotes/origin/NAME) rather than a local
// branch of that name, which the pull request's code could have made
// (git branch -f main HEAD) so that the merge-base is its own commit. It
// says so when a local branch of that name points elsewhere. ok is false
// outside CI or when origin has no such branch.
func ciBase(c *cli.Context, repo *gitrepo.Repo, name string) (sha, ref string, ok bool) {
	if !(inActions() || inForgeCI()) || name == "" || strings.HasPrefix(name, "refs/") || strings.ContainsAny(name, "~^:@ ") {
		return "", "", false
	}
	ref = "refs/remotes/origin/" + name
	sha, err := repo.Resolve(ref)
	if err != nil {
		if sha, ok := gitlabDiffBase(c, repo, name); ok {
			return sha, sha, true
		}
		return "", "", false
	}
	if local, err := repo.Resolve("refs/heads/" + name); err == nil && local != sha {
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: the local branch %s (%s) is not origin's (%s): in CI the base is origin/%s, the remote-tracking ref\n", name, repo.Short(local), repo.Short(sha), name)
	}
	return sha, ref, true
}

// originMismatch describes how origin differs from the repository the CI
// says this is (GITHUB_SERVER_URL/GITHUB_REPOSITORY), or "" when it is
// that one or perfgate is not in GitHub Actions: the pull request's code
// can re-point origin at a repository it made, whose history branch then
// holds what it likes.
func originMismatch(repo *gitrepo.Repo) string {
	want := strings.TrimSpace(os.Getenv("GITHUB_REPOSITORY"))
	if !inActions() || want == "" || repo == nil {
		return ""
	}
	server := strings.TrimRight(strings.TrimSpace(os.Getenv("GITHUB_SERVER_URL")), "/")
	if server == "" {
		server = "https://github.com"
	}
	got := originURL(repo)
	norm := func(u string) string {
		return strings.ToLower(remoteName(strings.TrimSuffix(strings.TrimRight(u, "/"), ".git")))
	}
	if got != "" && norm(got) == norm(server+"/"+want) {
		return ""
	}
	shown := remoteName(got)
	if shown == "" {
		shown = "none"
	}
	return fmt.Sprintf("origin (%s) is not %s/%s, the repository GITHUB_REPOSITORY names", shown, server, want)
}

// distrustBranch makes the records that came from the history branch of
// an origin that is not the CI's repository count as SourceUnverified,
// which no trust: section lists: under trust: they no longer change a
// verdict, and the report says why.
func (h *history) distrustBranch() int {
	n := 0
	for i := range h.accepted {
		if h.accepted[i].Source == gate.SourceBranch {
			h.accepted[i].Source = gate.SourceUnverified
			n++
		}
	}
	for run, src := range h.invalidSource {
		if src == gate.SourceBranch {
			h.invalidSource[run] = gate.SourceUnverified
			n++
		}
	}
	return n
}
