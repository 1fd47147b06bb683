package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/site"
)

func init() { commandSet = append(commandSet, siteCommand) }

func siteCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "site",
		Usage: "write a static dashboard of the history (works from file:// and GitHub Pages)",
		Description: "Walks the first-parent history of --branch and writes an overview of every series (benchmark,\n" +
			"identity labels, testbed) and a chart per series and metric into --out. A row is flagged as a regression\n" +
			"when perfgate watch has an open regression on it (same rules and acceptances) or its latest commit is\n" +
			"beyond the noise band. The site loads nothing\n" +
			"from the network. Commits link to the forge of the origin remote (GitHub, GHES, GitLab).\n\n" +
			"On a PostgreSQL history that holds several repositories, --repository (repeatable) or --all-repositories\n" +
			"writes an index page of them and one site per repository under r/NAME/, each drawn from its own runs\n" +
			"alone. The repository checked out here walks --branch; any other is drawn along its measured commits\n" +
			"in order of their first run (its git history is not at hand). The rules apply to every repository.\n\n" +
			"Examples:\n  perfgate site --out _site\n  perfgate site --out _site --branch main --benchmark 'serving-*' --metric mean_ttft_ms --title 'Serving'\n" +
			"  perfgate --db postgres://reader@db/perf site --out _site --all-repositories\n" +
			"  perfgate --db postgres://reader@db/perf site --out _site --repository github.com/org/engine --repository github.com/org/plugin",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the site to `DIR` (new, empty, or a site written before)"},
			&cli.StringFlag{Name: "branch", Usage: "walk the first-parent history of this `BRANCH` (default: baseline.branch of the rules, else main)"},
			&cli.StringFlag{Name: "benchmark", Aliases: []string{"name"}, Usage: "only benchmarks matching this `GLOB`, e.g. 'serving-*'"},
			&cli.StringSliceFlag{Name: "metric", Usage: "only this metric (canonical name or label); repeatable"},
			&cli.StringFlag{Name: "title", Usage: "page `TITLE` (default \"perfgate: BRANCH\")"},
			&cli.IntFlag{Name: "max-commits", Value: 10000, Usage: "walk at most `N` first-parent commits"},
			&cli.StringSliceFlag{Name: "repository", Usage: "draw this repository of a PostgreSQL history (`NAME` as stored, e.g. github.com/org/engine) on a page of several; repeatable"},
			&cli.BoolFlag{Name: "all-repositories", Usage: "draw every repository a PostgreSQL history holds, on a page of several"},
			rulesFileFlag(),
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			o, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.String("out") == "" {
				return usageErrorf("site: --out is required, e.g. perfgate site --out _site")
			}
			if c.Int("max-commits") < 1 {
				return usageErrorf("--max-commits %d: must be at least 1", c.Int("max-commits"))
			}
			if c.IsSet("repository") || c.Bool("all-repositories") {
				if c.IsSet("repository") && c.Bool("all-repositories") {
					return usageErrorf("site: --repository and --all-repositories: give one; --all-repositories draws every repository the history holds")
				}
				return siteRepositories(c, e, o)
			}
			repo, cfg, err := openRepoConfig(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			from, ref, branch, err := siteBranch(c, repo, cfg)
			if err != nil {
				return err
			}
			commits, err := siteCommits(c, repo, from)
			if err != nil {
				return err
			}
			opts := site.Options{
				Title: c.String("title"), Ref: shortRef(ref, branch), Benchmark: c.String("benchmark"),
				Metrics: c.StringSlice("metric"), IgnoreLabels: cfg.IgnoreLabels, Window: cfg.Baseline.Window,
				Forge: site.ParseRemote(originURL(repo)), Rules: cfg,
			}
			var sum *site.Summary
			err = withHistory(c, repo, func(h history) error {
				var gerr error
				opts.Accepted = h.accepted
				sum, gerr = site.Generate(c.Context, commits, gate.WithCapacity(h, cfg.SLOs, cfg.IgnoreLabels), c.String("out"), opts)
				return gerr
			})
			if errors.Is(err, site.ErrBadInput) {
				return &exitError{code: exitBad, err: err}
			}
			if err != nil {
				return gateError(err)
			}
			return writeSiteSummary(c, e, o, sum)
		},
	}
}

// siteBranch resolves the branch the site walks: --branch, else the
// rules' baseline.branch, else main, which falls back to master or
// origin's default branch as check's base does (said on stderr).
func siteBranch(c *cli.Context, repo *gitrepo.Repo, cfg *gate.Config) (sha, ref, name string, err error) {
	name = c.String("branch")
	where := "--branch"
	if name == "" {
		name, where = cmp(cfg.Baseline.Branch, gate.DefaultBranch), "the default branch main"
		if cfg.Baseline.BranchSet {
			where = "baseline.branch of the rules file"
		}
	}
	sha, ref, err = repo.ResolveBranch(name)
	if err == nil {
		return sha, ref, name, nil
	}
	if !c.IsSet("branch") && !cfg.Baseline.BranchSet && errors.Is(err, gitrepo.ErrUnknownRevision) {
		if s, r, ok := fallbackBranch(c, repo, name, "--branch"); ok {
			return s, r, name, nil
		}
	}
	err = fmt.Errorf("%s: %w", where, err)
	if c.IsSet("branch") {
		return "", "", "", gitError(err) // a name typed on the command line: bad input (2)
	}
	// The default or configured branch missing from this clone is the
	// environment's state (a shallow CI checkout), as for check: 3.
	return "", "", "", envError(err)
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// siteCommits lists the first-parent commits from the branch tip, oldest
// first, with subjects and author dates; a shallow clone gives what it has.
func siteCommits(c *cli.Context, repo *gitrepo.Repo, from string) ([]gate.Commit, error) {
	shas, err := repo.FirstParentAncestors(from, c.Int("max-commits"))
	if err != nil {
		var se *gitrepo.ShallowError
		if !errors.As(err, &se) {
			return nil, gitError(err)
		}
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %v; the site shows the %d commits this clone has (fetch with fetch-depth: 0 for all)\n", err, len(shas))
	}
	out := make([]gate.Commit, len(shas))
	for i, sha := range shas {
		ci, err := repo.Commit(sha)
		if err != nil {
			return nil, gitError(err)
		}
		out[len(shas)-1-i] = gate.Commit{SHA: ci.SHA, Subject: ci.Subject, Time: ci.AuthorTime}
	}
	return out, nil
}

// originURL is the origin remote's URL, "" when there is none: read
// from the config files, or asked of git when they include others.
func originURL(repo *gitrepo.Repo) string {
	if repo.Root() == "" {
		return ""
	}
	if url, ok := repo.OriginURL(); ok {
		return url
	}
	out, err := exec.Command("git", "-C", repo.Root(), "config", "--get", "remote.origin.url").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func writeSiteSummary(c *cli.Context, e *env, o string, sum *site.Summary) error {
	if o == "json" {
		return writeJSON(e.stdout, sum)
	}
	index := filepath.Join(c.String("out"), "index.html")
	fmt.Fprintf(e.stdout, "wrote %s: %d series, %d charts, %d runs at %d commits, %d files", index, sum.Series, sum.Charts, sum.Runs, sum.Measured, sum.Files)
	if sum.Flagged > 0 {
		fmt.Fprintf(e.stdout, "; %d charts flagged as a regression", sum.Flagged)
	}
	if sum.OpenRegressions > 0 {
		fmt.Fprintf(e.stdout, " (%d open regressions of perfgate watch)", sum.OpenRegressions)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
