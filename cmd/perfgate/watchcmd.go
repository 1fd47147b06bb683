package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/store"
	"github.com/perfgate/perfgate/watch"
)

func init() {
	commandSet = append(commandSet, watchCommand)
	examples["watch"] = `
perfgate watch                                  # every series of main, text report
perfgate watch --since 2026-01-01 --benchmark 'serving-*' --metric mean_ttft_ms -o markdown
perfgate watch --github --dry-run               # which issues it would open, update and close`
}

// defaultIssueLabels label the issues watch opens unless the rules file's
// watch issue_labels or --issue-label say otherwise.
var defaultIssueLabels = []string{"perfgate", "performance-regression"}

// watchEvents are the GitHub Actions events on which watch files issues
// without --github.
var watchEvents = map[string]bool{"push": true, "schedule": true, "workflow_dispatch": true}

func watchCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "watch",
		Usage: "find changes of level and silent benchmarks on the base branch's history; open an issue per regressed change",
		Description: "Walks the first-parent history of the base branch, takes every stored series (benchmark, identity labels,\n" +
			"testbed) and metric, and reports its changes of level (docs/watch.md gives the method and its measured\n" +
			"accuracy). Exit 1 when a regression is open or a series stopped reporting, 0 otherwise.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "branch", Usage: "base branch or revision to watch (default: baseline.branch of the rules, else main)"},
			&cli.StringFlag{Name: "since", Usage: "only commits after `REV|DATE`: a revision (excluded), or a date YYYY-MM-DD or RFC 3339 (included)"},
			&cli.StringFlag{Name: "until", Usage: "only commits up to `REV|DATE`: a revision or a date YYYY-MM-DD or RFC 3339 (included)"},
			&cli.IntFlag{Name: "limit", Usage: "walk at most `N` first-parent commits (0: all)"},
			&cli.StringFlag{Name: "benchmark", Aliases: []string{"name"}, Usage: "only benchmarks matching `GLOB`, e.g. 'serving-*'"},
			&cli.StringFlag{Name: "metric", Usage: "only `METRIC`, by canonical name or label, or a metric of your own a stored result has (default: every metric but descriptive ones)"},
			rulesFileFlag(),
			ruleFlag("direction and smallest change worth reporting: "),
			&cli.BoolFlag{Name: "github", Usage: "open/update/close issues on GitHub outside Actions too; --github=false turns it off inside Actions"},
			&cli.BoolFlag{Name: "dry-run", Usage: "with GitHub issues: print what would be opened, updated and closed, change nothing"},
			&cli.StringSliceFlag{Name: "issue-label", Usage: "`LABEL` of the issues (default: the rules file's watch issue_labels, else perfgate, performance-regression); repeatable"},
		}, reportFlags()...),
		Action: func(c *cli.Context) error {
			if c.Int("limit") < 0 {
				return usageErrorf("--limit %d: must be 0 (all) or more", c.Int("limit"))
			}
			if g := c.String("benchmark"); g != "" {
				if _, err := path.Match(g, ""); err != nil {
					return usageErrorf("--benchmark %q: not a valid glob (%v); use * and ? as in a shell, e.g. --benchmark 'serving-*'", g, err)
				}
			}
			repo, cfg, err := openRepoConfig(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			opts := watch.Options{Config: cfg, Limit: c.Int("limit"), Bench: c.String("benchmark")}
			if in, ok := metric.Lookup(c.String("metric")); ok {
				opts.Metric = in.Name
			}
			if err := watchRange(c, repo, cfg.Baseline.Branch, cfg.Baseline.BranchSet, &opts); err != nil {
				return err
			}
			var rep *watch.Report
			err = withHistory(c, repo, func(h history) error {
				if m := c.String("metric"); m != "" && opts.Metric == "" {
					// A metric of one's own, when a stored result has it.
					own, err := storedMetric(h.s, m)
					if err != nil {
						return err
					}
					opts.Metric = own
				}
				opts.Accepted = watch.Acceptances(h.accepted)
				var werr error
				rep, werr = watch.Watch(c.Context, graph{r: repo, info: !opts.Since.IsZero() || !opts.Until.IsZero()}, h, opts)
				return werr
			})
			if err != nil {
				return gateError(err)
			}
			if err := writeReport(c, e, rep); err != nil {
				return err
			}
			if err := watchIssues(c, e, cfg.Watch.IssueLabels, rep, originURL(repo)); err != nil {
				return err
			}
			if rep.Failed() {
				return errGateFailed
			}
			return nil
		},
	}
}

// watchRange resolves --branch, --since and --until into opts.
func watchRange(c *cli.Context, repo *gitrepo.Repo, branch string, branchSet bool, opts *watch.Options) error {
	name, fallback := branch, !branchSet
	if c.IsSet("branch") {
		name, fallback = c.String("branch"), false
	}
	tip, ref, err := resolveBase(c, repo, name, fallback)
	if err != nil {
		return err
	}
	opts.From, opts.Ref = tip, shortRef(ref, name)
	if u := c.String("until"); u != "" {
		if t, ok := parseDate(u, true); ok {
			opts.Until = t
		} else {
			sha, err := repo.Resolve(u)
			if err != nil {
				return gitError(fmt.Errorf("--until %q is neither a date (YYYY-MM-DD, RFC 3339) nor a revision: %w", u, err))
			}
			opts.From = sha
		}
	}
	if s := c.String("since"); s != "" {
		if t, ok := parseDate(s, false); ok {
			opts.Since = t
		} else {
			sha, err := repo.Resolve(s)
			if err != nil {
				return gitError(fmt.Errorf("--since %q is neither a date (YYYY-MM-DD, RFC 3339) nor a revision: %w", s, err))
			}
			opts.Stop = sha
		}
	}
	return nil
}

// parseDate reads YYYY-MM-DD (the whole day, UTC: its end when end) or
// RFC 3339.
func parseDate(s string, end bool) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, true
	}
	return time.Time{}, false
}

// watchIssues opens, updates and closes one issue per alert (a change's
// open regressions, or a missing series) when asked
// (--github, or inside Actions on push, schedule or workflow_dispatch).
// A GitHub failure is an environment error (exit 3) after the report was
// printed.
// origin is the origin remote's URL, for the repository a dry run with
// no GITHUB_REPOSITORY names.
func watchIssues(c *cli.Context, e *env, cfgLabels []string, rep *watch.Report, origin string) error {
	if c.IsSet("github") && !c.Bool("github") {
		return nil
	}
	ghEnv, envErr := github.FromEnv(e.getenv)
	if !c.Bool("github") && !(ghEnv.Actions && watchEvents[ghEnv.EventName]) {
		if c.Bool("dry-run") {
			fmt.Fprintln(e.stderr, "perfgate: --dry-run: not publishing to GitHub (pass --github, or run in Actions on push, schedule or workflow_dispatch)")
		}
		return nil
	}
	labels := defaultIssueLabels
	if cfgLabels != nil {
		labels = cfgLabels
	}
	if c.IsSet("issue-label") {
		labels = c.StringSlice("issue-label")
	}
	var alerts []github.IssueAlert
	for _, a := range rep.Alerts() {
		alerts = append(alerts, github.IssueAlert{Key: a.Key, Title: a.Title, Body: a.Body, Also: a.Also, Formerly: a.Formerly})
	}
	var client *github.Client
	err := envErr
	if err == nil {
		client, err = github.NewClient(ghEnv, github.ClientOptions{})
	}
	if err != nil {
		if c.Bool("dry-run") {
			previewIssues(e, ghEnv, origin, labels, alerts, ghEnv.Redact(err.Error()))
			return nil
		}
		return envError(fmt.Errorf("GitHub: %s; or pass --github=false (or --dry-run to preview the issues without GitHub)", ghEnv.Redact(err.Error())))
	}
	ctx, cancel := context.WithTimeout(c.Context, publishTimeout)
	defer cancel()
	acts, err := client.SyncIssues(ctx, alerts, github.IssueOptions{Labels: labels, DryRun: c.Bool("dry-run"),
		Recovered: fmt.Sprintf("perfgate watch at %s: the alert is gone (the series recovered, or the change was accepted); closing.", shortSHA(rep.Tip))})
	verb := map[string]string{"open": "opened", "update": "updated", "unchanged": "unchanged", "close": "closed"}
	for _, a := range acts {
		v := verb[a.Do]
		if c.Bool("dry-run") {
			v = "would " + a.Do
			if a.Do == "unchanged" {
				v = "unchanged"
			}
		}
		num := "new issue"
		if a.Number > 0 {
			num = fmt.Sprintf("#%d", a.Number)
		}
		how := ""
		switch {
		case a.Adopted != "":
			how = " (its earlier issue, now the change's)"
		case a.Merged && a.MergedInto > 0:
			how = fmt.Sprintf(" (merged into #%d)", a.MergedInto)
		case a.Merged:
			how = " (merged into the change's new issue)"
		}
		fmt.Fprintf(e.stderr, "perfgate: github: %s %s %q%s\n", v, num, a.Title, how)
	}
	if err != nil {
		msg := ghEnv.Redact(err.Error())
		var ae *github.APIError
		if errors.As(err, &ae) && ae.Status == http.StatusForbidden {
			msg += " (watch opens and closes issues: grant the job permissions: issues: write)"
		}
		return envError(errors.New(msg))
	}
	return nil
}

// previewIssues is --dry-run without GitHub (no GITHUB_REPOSITORY or no
// token, as on a laptop): the issues watch would file, each in full,
// without the existing issues it would update or close, which only
// GitHub can list. why is what is missing.
func previewIssues(e *env, ghEnv *github.Env, origin string, labels []string, alerts []github.IssueAlert, why string) {
	repo := "OWNER/REPO"
	if ghEnv.Owner != "" {
		repo = ghEnv.Owner + "/" + ghEnv.Repo
	} else if name := remoteName(origin); name != "" {
		repo = name
	}
	fmt.Fprintf(e.stderr, "perfgate: --dry-run without GitHub (%s): the issues watch would open in %s, labelled %s; the open issues it would update or close are not listed\n",
		why, inert.Line(repo, 200), strings.Join(labels, ", "))
	if len(alerts) == 0 {
		fmt.Fprintln(e.stderr, "perfgate: github: no alert: no issue would be opened")
	}
	for _, a := range alerts {
		fmt.Fprintf(e.stderr, "perfgate: github: would open new issue %q\n", a.Title)
		for _, line := range strings.Split(strings.TrimRight(a.Body, "\n"), "\n") {
			fmt.Fprintf(e.stderr, "    %s\n", inert.Line(line, 500))
		}
	}
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return strings.TrimSpace(s)
}

// storedMetric resolves a --metric the vocabulary does not know: a name
// a stored result has (a metric of one's own), else bad input.
func storedMetric(st *store.Store, m string) (string, error) {
	if st != nil { // nil: no history yet
		found, err := storedHas(st, store.Filter{}, m)
		if err != nil {
			return "", err
		}
		if found {
			return m, nil
		}
	}
	return "", usageErrorf("--metric %q is not a known metric nor one a stored result has%s (perfgate parse FILE lists a result's metrics)", m, metricHint(m))
}

// storedHas reports whether a stored run the filter selects has metric m.
func storedHas(st *store.Store, f store.Filter, m string) (bool, error) {
	found := false
	err := st.Each(f, func(r store.Run) error {
		if _, ok := r.Metrics[m]; ok {
			found = true
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return false, storeError(err)
	}
	return found, nil
}

// metricHint is "; did you mean X?" for a metric name close to a known
// one, else "".
func metricHint(m string) string {
	if s := metric.Suggest(m); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}
