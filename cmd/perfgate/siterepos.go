package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/internal/suggest"
	"github.com/perfgate/perfgate/site"
	"github.com/perfgate/perfgate/store"
)

// siteRepositories is perfgate site --repository / --all-repositories:
// a site of several repositories of one PostgreSQL history, an index
// page and one sub-site per repository (site.PrepareIndex). Each
// sub-site reads its repository's history alone (store.Scope), so no
// baseline crosses repositories. The repository checked out here walks
// --branch with git as a single site does; any other is ordered by its
// commits' first runs (store.FirstMeasured). The rules (--rules, else
// the checked-out .perfgate.yml, else the defaults) apply to every
// repository.
func siteRepositories(c *cli.Context, e *env, o string) error {
	repo, err := openRepo(c)
	if err != nil {
		repo = nil // a dashboard job needs no checkout: --db names the history
	}
	if repo != nil {
		defer repo.Close()
	}
	cfg, err := loadConfig(c, repo)
	if err != nil {
		return err
	}
	path, err := dbPath(c, repo)
	if err != nil {
		return err
	}
	if !store.IsPostgres(path) {
		return usageErrorf("site %s: the history %s is a bbolt file, which holds one repository's runs; drop the flag for that repository's site, or give a PostgreSQL history that holds several (--db postgres://USER@HOST/DB, see docs/postgres.md)", repositoryFlagName(c), redactDB(path))
	}
	s, err := openStore(c, repo, true)
	if err != nil {
		return err
	}
	defer s.Close()
	names, err := siteRepositoryNames(c, s)
	if err != nil {
		return err
	}
	here := ""
	if repo != nil {
		here = repositoryName(c, repo)
	}
	dirs, err := site.PrepareIndex(c.String("out"), names)
	if err != nil {
		return siteError(err)
	}
	repos := make([]site.RepoSite, len(names))
	var unmatched error // --benchmark or --metric matched nothing in a repository
	for i, name := range names {
		var checkout *gitrepo.Repo
		if name == here {
			checkout = repo
		}
		rs, err := siteOfRepository(c, s, checkout, cfg, name, filepath.Join(c.String("out"), dirs[i]))
		var sel *selectionError
		if errors.As(err, &sel) {
			if unmatched == nil {
				unmatched = sel.err
			}
			fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %v; its page is empty\n", sel.err)
			err = nil
		}
		if err != nil {
			return err
		}
		rs.Dir = dirs[i]
		repos[i] = *rs
	}
	if unmatched != nil && !slices.ContainsFunc(repos, func(r site.RepoSite) bool { return r.Runs > 0 }) {
		// Nothing matched anywhere: a typo, not a repository without it.
		return &exitError{code: exitBad, err: unmatched}
	}
	title := c.String("title")
	if title == "" {
		title = "perfgate"
	}
	sum, err := site.WriteIndex(c.String("out"), title, repos)
	if err != nil {
		return siteError(err)
	}
	return writeIndexSummary(c, e, o, sum)
}

// repositoryFlagName names the flag given, for messages.
func repositoryFlagName(c *cli.Context) string {
	if c.Bool("all-repositories") {
		return "--all-repositories"
	}
	return "--repository"
}

// siteRepositoryNames are the repositories to draw: --repository in the
// order given (each must have runs in the history), or every one the
// history holds.
func siteRepositoryNames(c *cli.Context, s *store.Store) ([]string, error) {
	held, err := s.Repositories()
	if err != nil {
		return nil, storeError(err)
	}
	var all []string
	for _, r := range held {
		all = append(all, r.Name)
	}
	if c.Bool("all-repositories") {
		if len(all) == 0 {
			fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: history %s holds no runs yet; the site lists no repository\n", s.Path())
		}
		return all, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, name := range c.StringSlice("repository") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, usageErrorf("--repository \"\": name a repository of the history, e.g. --repository github.com/org/engine, or use --all-repositories")
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		if !slices.Contains(all, name) {
			return nil, unknownRepository(name, all, s.Path())
		}
		out = append(out, name)
	}
	return out, nil
}

func unknownRepository(name string, all []string, db string) error {
	msg := fmt.Sprintf("--repository %q: history %s holds no runs of it", inert.Line(name, 200), db)
	if s := suggest.Closest(name, all); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	if len(all) == 0 {
		return usageErrorf("%s; it holds no runs at all yet", msg)
	}
	quoted := make([]string, len(all))
	for i, n := range all {
		quoted[i] = inert.Line(n, 200)
	}
	return usageErrorf("%s; it holds: %s (or use --all-repositories)", msg, strings.Join(quoted, ", "))
}

// siteOfRepository writes one repository's sub-site into dir: along
// --branch of checkout when the repository is checked out here, else
// along its commits in order of first run. When --benchmark or --metric
// matches nothing of this repository, it writes the site empty and
// returns it with a *selectionError.
func siteOfRepository(c *cli.Context, s *store.Store, checkout *gitrepo.Repo, cfg *gate.Config, name, dir string) (*site.RepoSite, error) {
	scoped, err := s.Scope(name)
	if err != nil {
		return nil, storeError(err)
	}
	h, err := readRecords(scoped)
	if err != nil {
		return nil, storeError(err)
	}
	opts := site.Options{
		Title: "perfgate: " + name, Benchmark: c.String("benchmark"), Metrics: c.StringSlice("metric"),
		IgnoreLabels: cfg.IgnoreLabels, Window: cfg.Baseline.Window, Rules: cfg, Accepted: h.accepted,
		Up: "../../index.html", Forge: site.ParseRemote("https://" + name),
	}
	var commits []gate.Commit
	if checkout != nil {
		h.repo = checkout
		from, ref, branch, err := siteBranch(c, checkout, cfg)
		if err != nil {
			return nil, err
		}
		if commits, err = siteCommits(c, checkout, from); err != nil {
			return nil, err
		}
		opts.Ref, opts.Forge = shortRef(ref, branch), site.ParseRemote(originURL(checkout))
	} else {
		opts.Order = site.OrderMeasured
		first, err := scoped.FirstMeasured(c.Int("max-commits"))
		if err != nil {
			return nil, storeError(err)
		}
		commits = make([]gate.Commit, len(first))
		for i, f := range first {
			commits[i] = gate.Commit{SHA: f.Commit, Time: f.First}
		}
	}
	sum, err := site.Generate(c.Context, commits, h, dir, opts)
	if errors.Is(err, site.ErrBadInput) && (opts.Benchmark != "" || len(opts.Metrics) > 0) {
		// --benchmark or --metric that matches nothing in this
		// repository, which may still match in another: an empty page.
		sel := &selectionError{fmt.Errorf("repository %s: %w", inert.Line(name, 200), err)}
		if sum, err = site.Generate(c.Context, nil, h, dir, opts); err == nil {
			return &site.RepoSite{Name: name, Order: opts.Order, Ref: opts.Ref, Summary: sum}, sel
		}
	}
	if err != nil {
		return nil, siteError(err)
	}
	return &site.RepoSite{Name: name, Order: opts.Order, Ref: opts.Ref, Summary: sum}, nil
}

// selectionError is a --benchmark or --metric that matched nothing in
// one repository; its site is written empty.
type selectionError struct{ err error }

func (e *selectionError) Error() string { return e.err.Error() }

// siteError maps an error of package site to an exit code.
func siteError(err error) error {
	if errors.Is(err, site.ErrBadInput) {
		return &exitError{code: exitBad, err: err}
	}
	return gateError(err)
}

func writeIndexSummary(c *cli.Context, e *env, o string, sum *site.IndexSummary) error {
	if o == "json" {
		return writeJSON(e.stdout, sum)
	}
	index := filepath.Join(c.String("out"), "index.html")
	fmt.Fprintf(e.stdout, "wrote %s: %d repositories, %d files\n", index, len(sum.Repositories), sum.Files)
	for _, r := range sum.Repositories {
		fmt.Fprintf(e.stdout, "  %s: %s, %d series, %d charts, %d runs at %d commits", inert.Line(r.Name, 200), r.Status, r.Series, r.Charts, r.Runs, r.Measured)
		if r.Flagged > 0 {
			fmt.Fprintf(e.stdout, "; %d charts flagged as a regression", r.Flagged)
		}
		if r.OpenRegressions > 0 {
			fmt.Fprintf(e.stdout, " (%d open regressions of perfgate watch)", r.OpenRegressions)
		}
		if r.Order == site.OrderMeasured {
			fmt.Fprint(e.stdout, "; commits in order of their first run (not checked out here)")
		}
		fmt.Fprintln(e.stdout)
	}
	return nil
}
