package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/perfgate/perfgate/gitrepo"
)

// onPullRequest reports whether perfgate runs in GitHub Actions for a
// pull request, whose checked-out files (the rules file among them) are
// the pull request's own.
func onPullRequest() bool {
	return (os.Getenv("GITHUB_ACTIONS") == "true" && strings.HasPrefix(os.Getenv("GITHUB_EVENT_NAME"), "pull_request")) ||
		ciChangeBase(os.Getenv) != "" // a Buildkite pull request, a GitLab merge request
}

// baseHistory returns the history keys (db:, repository:) a pull
// request's job may use: those of the rules file as the base branch has
// it, at origin's remote-tracking ref (refs/remotes/origin/BASE, which the
// pull request's code cannot make by creating a local branch), whatever
// the pull request's copy (pr, read from path) says. When that ref or file
// cannot be read, the pull request's own keys stay, marked untrusted: its
// db: then gets no credentials from the environment.
func baseHistory(c *cli.Context, repo *gitrepo.Repo, path string, pr historySettings) historySettings {
	if repo != nil && repo.Root() != "" && !inTree(repo.Root(), path) {
		return pr // a rules file the workflow gives from outside the checkout
	}
	base := strings.TrimSpace(os.Getenv("GITHUB_BASE_REF"))
	if base == "" {
		base = ciChangeBase(os.Getenv)
	}
	ref := "refs/remotes/origin/" + base
	data, ok, err := baseRules(repo, path, ref, base)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s: cannot read the base branch's rules file at %s (%v); its db: is the pull request's own and gets no credentials from the environment (PGPASSWORD, ~/.pgpass): give the history with --db or PERFGATE_DB, or fetch the base (fetch-depth: 0)\n", path, ref, err)
		pr.untrusted = pr.DB != ""
		return pr
	}
	var b historySettings
	if ok && yaml.Unmarshal(data, &b) != nil {
		b = historySettings{}
	}
	b.DB, b.Repository = strings.TrimSpace(b.DB), strings.TrimSpace(b.Repository)
	if b != pr {
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s: db: and repository: differ from the base branch's rules file (%s); a pull request does not choose its history: using the base's\n", path, ref)
	}
	return b
}

// baseRules reads the rules file at path as committed at ref.
func baseRules(repo *gitrepo.Repo, path, ref, base string) ([]byte, bool, error) {
	if base == "" {
		return nil, false, fmt.Errorf("GITHUB_BASE_REF is not set")
	}
	if repo == nil || repo.Root() == "" {
		return nil, false, fmt.Errorf("not in a git working tree")
	}
	sha, err := repo.Resolve(ref)
	if err != nil {
		return nil, false, err
	}
	file := filepath.ToSlash(path)
	if abs, err := filepath.Abs(path); err == nil {
		if rel, err := filepath.Rel(repo.Root(), abs); err == nil && !strings.HasPrefix(rel, "..") {
			file = filepath.ToSlash(rel)
		}
	}
	return repo.ReadFile(sha, file)
}

// inTree reports whether path lies inside the working tree at root.
func inTree(root, path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return true
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	rel, err := filepath.Rel(root, abs)
	return err != nil || !(rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// fromUntrustedRules reports whether the history is the db: of a pull
// request's own rules file (neither --db nor PERFGATE_DB gave it).
func fromUntrustedRules(c *cli.Context, repo *gitrepo.Repo) bool {
	return c.String("db") == "" && rulesHistory(c, repo).untrusted
}
