package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/slo"
	"github.com/perfgate/perfgate/store"
	"github.com/perfgate/perfgate/testbed"
)

func init() { commandSet = append(commandSet, checkCommand, compareCommand, historyCommand) }

// graph adapts the repository to gate.Graph. Subjects and dates are read
// only when info is set: check needs commit ids only, history shows them.
type graph struct {
	r    *gitrepo.Repo
	info bool
}

func (g graph) MergeBase(a, b string) (string, error) { return g.r.MergeBase(a, b) }

func (g graph) FirstParents(from string, n int) ([]gate.Commit, error) {
	shas, err := g.r.FirstParentAncestors(from, n)
	out := make([]gate.Commit, 0, len(shas))
	for _, sha := range shas {
		if !g.info {
			out = append(out, gate.Commit{SHA: sha})
			continue
		}
		c, cerr := g.r.Commit(sha)
		if cerr != nil {
			return out, cerr
		}
		out = append(out, gate.Commit{SHA: c.SHA, Subject: c.Subject, Time: c.CommitTime})
	}
	return out, err
}

// history adapts the store to gate.History; a missing history is empty.
// Its records apply: an invalidated run reads as invalid (never a
// baseline nor in a window), and accepted are the recorded acceptances.
type history struct {
	s       *store.Store
	repo    *gitrepo.Repo     // finds runs measured before a commit was made; nil: none
	invalid map[string]string // run id -> why it was invalidated
	// invalidSource: run id -> where its invalidation comes from
	// (gate.SourceBranch, gate.SourceLocal)
	invalidSource  map[string]string
	invalidVia     map[string]string    // run id -> how its invalidation arrived
	showVia        bool                 // a check: reasons of invalidations on record say how they arrived
	invalidRecord  map[string]string    // run id -> the id of the record that invalidated it
	acceptedRecord []string             // the record id of each of accepted
	arrived        map[string]time.Time // record id -> when it arrived on the history branch
	accepted       []gate.Acceptance
	leaveOut       map[string]bool // run ids not used (runs at head from the branch, see headRunsFromBranch)
	// withdrawn: run id -> who withdrew its invalidation and why
	// (perfgate invalidate --undo), when that is its newest record.
	withdrawn map[string]string
}

func (h history) Samples(commits []string) (map[string][]gate.Sample, error) {
	if h.s == nil {
		return map[string][]gate.Sample{}, nil
	}
	runs, err := h.s.ByCommits(commits)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]gate.Sample, len(runs))
	for c, rs := range runs {
		if len(rs) == 0 {
			continue
		}
		ss := make([]gate.Sample, 0, len(rs))
		for _, r := range rs {
			if !h.leaveOut[r.ID] {
				ss = append(ss, h.toSample(r))
			}
		}
		if len(ss) == 0 {
			continue
		}
		out[c] = ss
	}
	if err := h.measuredBefore(commits, runs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// measuredBefore adds to out, for each commit without a clean run, the
// runs measured on its parent's working tree holding exactly the commit's
// changes (run on a dirty tree, then commit it as is): they measured the
// commit. Only commits whose first parent has such dirty runs are diffed.
func (h history) measuredBefore(commits []string, runs map[string][]store.Run, out map[string][]gate.Sample) error {
	if h.repo == nil {
		return nil
	}
	asked := make(map[string]bool, len(commits)) // their runs are in runs, if any
	for _, c := range commits {
		asked[c] = true
	}
	unclean := make([]bool, len(commits))
	some := false
	for i, c := range commits {
		unclean[i] = true
		for _, r := range runs[c] {
			unclean[i] = unclean[i] && r.Dirty
		}
		some = some || unclean[i]
	}
	if !some {
		return nil
	}
	// gate asks for pages of a first-parent chain, newest first: one walk
	// of it gives every parent; other lists cost a walk per commit.
	chain, _ := h.repo.FirstParentAncestors(commits[0], len(commits)+1)
	isChain := len(chain) >= len(commits) && slices.Equal(chain[:len(commits)], commits)
	parentOf := map[string]string{}
	var parents []string
	for i, c := range commits {
		if !unclean[i] {
			continue
		}
		var p string
		if isChain {
			if i+1 >= len(chain) {
				continue // the root
			}
			p = chain[i+1]
		} else {
			fp, err := h.repo.FirstParentAncestors(c, 2)
			if err != nil || len(fp) < 2 {
				continue // a commit not in this clone, or a root
			}
			p = fp[1]
		}
		parentOf[c] = p
		if !asked[p] {
			parents = append(parents, p)
		}
	}
	if len(parentOf) == 0 {
		return nil
	}
	more := map[string][]store.Run{}
	if len(parents) > 0 {
		var err error
		if more, err = h.s.ByCommits(parents); err != nil {
			return err
		}
	}
	for _, c := range commits {
		p, ok := parentOf[c]
		if !ok {
			continue
		}
		prs, ok := runs[p]
		if !ok {
			prs = more[p]
		}
		if !anyTree(prs) {
			continue
		}
		_, states, err := h.repo.CommitStates(c)
		if err != nil {
			continue // the commit cannot be read: its own runs only
		}
		for _, r := range runner.MeasuredBefore(prs, states) {
			s := h.toSample(r)
			s.Commit, s.Dirty, s.Before = c, false, p
			out[c] = append(out[c], s)
		}
	}
	return nil
}

// anyTree reports whether some run is dirty with a working-tree hash.
func anyTree(runs []store.Run) bool {
	for _, r := range runs {
		if r.Dirty && r.Tree != "" {
			return true
		}
	}
	return false
}

func (h history) toSample(r store.Run) gate.Sample {
	invalid := r.Invalid
	if why, ok := h.invalid[r.ID]; ok && invalid == "" {
		invalid = why
		if via := h.invalidVia[r.ID]; via != "" && h.showVia {
			invalid += " [" + via + "]"
		}
	}
	s := gate.Sample{ID: r.ID, Commit: r.Commit, Benchmark: r.Benchmark, Labels: r.Labels, Metrics: r.Metrics, Time: r.Time, Dirty: r.Dirty, Invalid: invalid, Testbed: r.Testbed,
		OnRecord: r.Invalid == "" && invalid != ""}
	if len(r.Requests) > 0 {
		s.Requests = slo.Lazy(r.Requests) // decoded only if a check asks
	}
	return s
}

// gateError maps gate failures: bad rules and missing results are bad
// input (2); git and store failures keep their own mapping.
func gateError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gate.ErrBadConfig), errors.Is(err, gate.ErrNoSuchSeries):
		return &exitError{code: exitBad, err: err}
	case errors.Is(err, gate.ErrNoResults):
		// What was asked for is not in the history (measure it, or
		// sync): the environment's state, not a mistake typed (3).
		return envError(err)
	case errors.Is(err, gitrepo.ErrUnknownRevision):
		return &exitError{code: exitBad, err: err}
	case errors.Is(err, gitrepo.ErrShallow), errors.Is(err, gitrepo.ErrMissingObject), errors.Is(err, gitrepo.ErrNotRepository):
		return envError(err)
	case errors.Is(err, store.ErrLocked):
		return envError(err)
	}
	return err
}

// ruleFlag is --rule, the same shorthand wherever rules are taken; what
// says what the command uses them for ("" for check itself).
func ruleFlag(what string) cli.Flag {
	return &cli.StringSliceFlag{Name: "rule", Usage: what + "a rule in shorthand, repeatable: 'mean_ttft_ms:3%' (worse by at most 3%), 'failed<=0' or 'p99_ttft_ms<6000' (a bound), 'output_throughput>=250' (a floor), 'my_latency:5%:lower' (a metric of your own, with its direction)"}
}

// openRepoConfig opens the repository and reads its rules (loadConfig):
// what check, compare, history, ab, site and watch start with. The caller
// closes the repository; it is closed here when the rules are bad.
func openRepoConfig(c *cli.Context) (*gitrepo.Repo, *gate.Config, error) {
	repo, err := openRepo(c)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := loadConfig(c, repo)
	if err != nil {
		repo.Close()
		return nil, nil, err
	}
	return repo, cfg, nil
}

// loadConfig reads --rules (default .perfgate.yml at the repo root, when it
// exists; repo may be nil outside a checkout) and appends the --rule
// shorthands.
func loadConfig(c *cli.Context, repo *gitrepo.Repo) (*gate.Config, error) {
	var cfg *gate.Config
	path := c.String("rules")
	name := path // as the user typed it
	if path == "" && repo != nil && repo.Root() != "" {
		def := filepath.Join(repo.Root(), ".perfgate.yml")
		if _, err := os.Stat(def); err == nil {
			path, name = def, displayPath(def)
		}
	}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, usageErrorf("--rules %q: %v; pass an existing rules file, or leave --rules out to use .perfgate.yml at the repo root", path, err)
		}
		cfg, err = gate.ParseRules(name, data)
		if err != nil {
			return nil, gateError(err)
		}
	} else {
		cfg = gate.DefaultConfig()
	}
	if err := ruleFlags(c, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ruleFlags adds the --rule shorthands to cfg, each once (when the rules
// file or an earlier --rule has it, it is not added again).
func ruleFlags(c *cli.Context, cfg *gate.Config) error {
	for _, s := range c.StringSlice("rule") {
		r, err := gate.ParseRuleFlag(s)
		if err != nil {
			return gateError(err)
		}
		cfg.AddRule(r)
	}
	return nil
}

// checkFlags applies check's flags that set what the rules file may:
// --require-baseline and --site-url.
func checkFlags(c *cli.Context, cfg *gate.Config) error {
	if c.Bool("require-baseline") {
		cfg.RequireBaseline = true
	}
	if u := c.String("site-url"); u != "" {
		if !gate.ValidSiteURL(u) {
			return usageErrorf("--site-url %q: give the https URL perfgate site is published at, e.g. https://OWNER.github.io/REPO/ (no query, fragment, quotes or spaces)", u)
		}
		cfg.SiteURL = u
	}
	return nil
}

// displayPath names a file in messages and reports: relative to the
// working directory when it is below it (a PR comment should not show a
// runner's home), else as given.
func displayPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// resolveBase resolves the base branch as CI checkouts have it: a local
// branch, else origin's (a CI clone often has only origin/main). When the
// name is only the default (neither --base nor baseline.branch gave it)
// and there is no main, the base is master, else the branch origin/HEAD
// points to (the remote's default branch), and perfgate says which it
// took on stderr.
func resolveBase(c *cli.Context, repo *gitrepo.Repo, name string, fallback bool) (string, string, error) {
	if sha, ref, ok := ciBase(c, repo, name); ok {
		return sha, ref, nil
	}
	sha, ref, err := repo.ResolveBranch(name)
	if err != nil && fallback && errors.Is(err, gitrepo.ErrUnknownRevision) {
		if s, r, ok := fallbackBranch(c, repo, name, "--base"); ok {
			return s, r, nil
		}
	}
	if err != nil {
		where, hint := "base branch", "pass --base REV, or set baseline.branch in .perfgate.yml"
		switch {
		case c.IsSet("base"):
			where, hint = "--base", "check the spelling: git branch -a lists the branches"
		case !fallback:
			where, hint = "baseline.branch of the rules file", "fix baseline.branch, or pass --base REV"
		}
		if !strings.Contains(err.Error(), "fetch-depth") {
			hint += "; in CI fetch it with fetch-depth: 0"
		}
		err = fmt.Errorf("%s: %w (%s)", where, err, hint)
		if c.IsSet("base") {
			return "", "", gitError(err) // a name typed on the command line: bad input (2)
		}
		// The default or configured base branch missing from this clone
		// is the environment's state (a shallow CI checkout): 3.
		return "", "", envError(err)
	}
	return sha, ref, nil
}

// fallbackBranch is the base branch when the default name (main) is not
// there: master, else the branch origin/HEAD points to, said on stderr
// with the rules key and the flag (--base, --branch) that choose it.
func fallbackBranch(c *cli.Context, repo *gitrepo.Repo, name, flag string) (sha, ref string, ok bool) {
	for _, alt := range []string{"master", "origin/HEAD"} {
		s, r, err := repo.ResolveBranch(alt)
		if err != nil {
			continue
		}
		fmt.Fprintf(c.App.ErrWriter, "perfgate: no branch %q; using %s as the base branch (set baseline.branch in .perfgate.yml or pass %s to choose)\n", name, shortRef(r, alt), flag)
		return s, r, true
	}
	return "", "", false
}

// writeReport prints doc in the -o format to stdout, or to --out with a
// text copy on stdout, so a CI log and a PR comment come from one run.
// Text is coloured only on a terminal, and not when NO_COLOR is set.
func writeReport(c *cli.Context, e *env, doc gate.Document) error {
	format := strings.ToLower(c.String("output"))
	color := e.isTTY && e.getenv("NO_COLOR") == "" // https://no-color.org
	valid := gate.Formats(doc)
	ok := false
	for _, f := range valid {
		if f == format || (format == "md" && f == "markdown") {
			ok = true
		}
	}
	if !ok {
		return usageErrorf("-o %q is not valid for %s; choose one of: %s", c.String("output"), c.Command.Name, strings.Join(valid, ", "))
	}
	if p := c.String("out"); p != "" {
		if err := writeOutFile(p, func(w io.Writer) error { return gate.Write(w, doc, format, false) }); err != nil {
			return err
		}
		if format == "text" {
			return nil
		}
		return writeText(e, doc, color)
	}
	if format == "text" {
		return writeText(e, doc, color)
	}
	return gate.Write(e.stdout, doc, format, false)
}

// writeText prints a text report: fitted to the terminal's width (100
// columns, or $COLUMNS) when stdout is one, at full width when piped.
func writeText(e *env, doc gate.Document, color bool) error {
	if !e.isTTY {
		return gate.Write(e.stdout, doc, "text", color)
	}
	var b strings.Builder
	if err := gate.Write(&b, doc, "text", color); err != nil {
		return err
	}
	_, err := io.WriteString(e.stdout, gate.FitText(b.String(), terminalWidth(e)))
	return err
}

// terminalWidth is $COLUMNS when the shell exports it, else 100.
func terminalWidth(e *env) int {
	if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n >= 40 {
		return n
	}
	return 100
}

// writeOutFile creates --out FILE and writes it with write: a file that
// cannot be created is bad usage (exit 2), a failed write the environment.
func writeOutFile(p string, write func(io.Writer) error) error {
	f, err := os.Create(p)
	if err != nil {
		return usageErrorf("--out %q: %v", p, err)
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return envError(fmt.Errorf("--out %q: %v", p, werr))
	}
	return nil
}

func rulesFileFlag() cli.Flag {
	return &cli.StringFlag{Name: "rules", Usage: "rules `FILE` (default .perfgate.yml at the repo root)"}
}

func reportFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "report format: text, markdown, json"},
		&cli.StringFlag{Name: "out", Usage: "write the report to `FILE` (unless -o text, a text copy also goes to stdout)"},
	}
}

// withHistory opens the history read-only for the duration of fn.
func withHistory(c *cli.Context, repo *gitrepo.Repo, fn func(history) error) error {
	s, err := openStore(c, repo, true)
	if err != nil {
		return err
	}
	if s == nil {
		return fn(history{})
	}
	defer s.Close()
	h, err := readRecords(s)
	if err != nil {
		return storeError(err)
	}
	h.repo = repo
	return fn(h)
}

func checkCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "gate HEAD (or --head) against its baseline on the base branch; exit 1 on a regression",
		Description: "The baseline is the merge-base of head and the base branch, or the nearest measured\n" +
			"first-parent ancestor within baseline.max_distance. Rules come from .perfgate.yml (or\n" +
			"--rules) and --rule; without any, a documented default set applies.\n" +
			"Shorthand: --rule 'mean_ttft_ms:3%' --rule 'Mean TTFT:3%' --rule 'failed<=0' --rule 'p99_ttft_ms<6000'",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "head", Value: "HEAD", Usage: "the commit under test (any revision)"},
			&cli.StringFlag{Name: "base", Usage: "base branch or revision (default: baseline.branch of the rules, else main)"},
			rulesFileFlag(),
			ruleFlag(""),
			&cli.BoolFlag{Name: "require-baseline", Usage: "a check with no baseline fails instead of passing as new (require_baseline: true in the rules file)"},
			&cli.StringFlag{Name: "rules-from", Value: "worktree", EnvVars: []string{"PERFGATE_RULES_FROM"}, Usage: "where the rules file is read: `worktree` (as checked out, the default) or base (as committed at the merge-base with the base branch, so a pull request cannot widen its own gate)"},
			&cli.StringFlag{Name: "accept-label", Usage: "pull request `LABEL` that accepts its performance changes: when the pull request carries it (in Actions read from the pull request event, and nothing is accepted on other events; outside Actions, giving it is enough), failing checks show \"accepted by ...\" and do not fail"},
			&cli.StringFlag{Name: "site-url", EnvVars: []string{"PERFGATE_SITE_URL"}, Usage: "`URL` where perfgate site publishes the history: the markdown report links each check that did not pass to its chart (site_url in the rules file)"},
			headRunsFlag(),
		}, append(reportFlags(), githubFlags()...)...),
		Action: func(c *cli.Context) error {
			repo, cfg, err := openRepoConfig(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			if err := checkFlags(c, cfg); err != nil {
				return err
			}
			rep, err := checkHead(c, e, repo, cfg, c.String("head"), !c.IsSet("head"))
			if err != nil {
				return err
			}
			if err := writeReport(c, e, rep); err != nil {
				return err
			}
			publishReport(c, e, rep)
			if rep.Failed() {
				return errGateFailed
			}
			return nil
		},
	}
}

// checkHead gates headRev against the base branch (--base, else the
// rules' baseline.branch, else main) on the stored results; checkTree
// checks the working tree's runs when it has uncommitted changes (check
// without --head, run --repeat auto).
func checkHead(c *cli.Context, e *env, repo *gitrepo.Repo, cfg *gate.Config, headRev string, checkTree bool) (*gate.Report, error) {
	head, err := repo.Resolve(headRev)
	if err != nil {
		return nil, gitError(fmt.Errorf("--head: %w", err))
	}
	baseName := c.String("base")
	fallback := baseName == "" && !cfg.Baseline.BranchSet
	if baseName == "" {
		// A Buildkite pull request's or GitLab merge request's base
		// branch, as --base would name it.
		if baseName = ciChangeBase(e.getenv); baseName != "" {
			fallback = false
		}
	}
	if baseName == "" {
		baseName = cfg.Baseline.Branch
	}
	if baseName == "" {
		baseName = gate.DefaultBranch
	}
	base, ref, err := resolveBase(c, repo, baseName, fallback)
	if err != nil {
		return nil, err
	}
	if cfg, err = rulesFrom(c, repo, cfg, head, base); err != nil {
		return nil, err
	}
	mode, err := headRunsMode(c, e)
	if err != nil {
		return nil, err
	}
	var rep *gate.Report
	var fromBranch string // the warning about head's runs from the branch
	err = withHistory(c, repo, func(h history) error {
		if err := h.flagLate(base, shortRef(ref, baseName)); err != nil {
			return err
		}
		var mismatch []string
		if m := originMismatch(repo); m != "" && h.distrustBranch() > 0 {
			m += ": its history branch's records are unverified, and no trust: section admits them"
			fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s\n", m)
			mismatch = append(mismatch, m)
		}
		untrusted := append(mismatch, h.applyTrust(cfg.Trust, prLabels(e))...)
		h.showVia = true
		if w, err := headRunsFromBranch(mode, repo, &h, head); err != nil {
			return err
		} else if w != "" {
			untrusted, fromBranch = append(untrusted, w), w
		}
		opts := gate.CheckOptions{Head: head, Base: base, BaseRef: shortRef(ref, baseName), Config: cfg, Accepted: h.accepted}
		if la, err := labelAcceptance(c, e, repo, head); err != nil {
			return err
		} else if la != nil {
			opts.Accepted = append(append([]gate.Acceptance(nil), opts.Accepted...), *la)
		}
		if checkTree {
			samples, unmeasured, err := workingTreeSamples(c, e, repo, h, head)
			if err != nil {
				return err
			}
			opts.HeadSamples, opts.Unmeasured = samples, unmeasured
		}
		if err := checkRuleBenchmarks(cfg, h, opts.HeadSamples); err != nil {
			return err
		}
		var cerr error
		rep, cerr = gate.Check(c.Context, graph{r: repo}, h, opts)
		if cerr == nil {
			// What the trust section left out is shown where the verdict is.
			rep.Warnings = append(rep.Warnings, untrusted...)
			rep.Notes = append(rep.Notes, h.withdrawnNotes(rep)...)
		}
		return cerr
	})
	if errors.Is(err, gate.ErrNoResults) {
		// The commit checked has no results in the history (measure it,
		// or sync): the environment's state, not a mistake typed (3).
		if fromBranch != "" {
			err = fmt.Errorf("%w; %s", err, fromBranch)
		}
		return nil, envError(err)
	}
	if err != nil {
		return nil, gateError(err)
	}
	return rep, nil
}

// withdrawnNotes says, with who and why, which runs of head and of the
// checks' baseline commits count again because their invalidation was
// withdrawn on record (perfgate invalidate --undo).
func (h history) withdrawnNotes(rep *gate.Report) []string {
	if len(h.withdrawn) == 0 || h.s == nil {
		return nil
	}
	commits := []string{rep.Head}
	for _, c := range rep.Checks {
		if c.BaselineCommit != "" && !slices.Contains(commits, c.BaselineCommit) {
			commits = append(commits, c.BaselineCommit)
		}
	}
	runs, err := h.s.ByCommits(commits)
	if err != nil {
		return nil
	}
	var out []string
	for _, c := range commits {
		for _, r := range runs[c] {
			if why, ok := h.withdrawn[r.ID]; ok {
				out = append(out, fmt.Sprintf("run %s of %s at %s counts again: %s", r.ID[:8], r.Benchmark, shortCommit(c), why))
			}
		}
	}
	return out
}

// checkRuleBenchmarks refuses a rule whose benchmark glob matches no
// benchmark of the history or of head's runs (exit 2, gate.Config.
// CheckBenchmarks): a typo there would turn the gate green for good.
func checkRuleBenchmarks(cfg *gate.Config, h history, head []gate.Sample) error {
	var names []string
	if h.s != nil {
		stored, err := h.s.Benchmarks()
		if err != nil {
			return storeError(err)
		}
		names = stored
	}
	for _, s := range head {
		names = append(names, s.Benchmark)
	}
	return cfg.CheckBenchmarks(names)
}

func shortRef(ref, fallback string) string {
	for _, p := range []string{"refs/heads/", "refs/remotes/", "refs/tags/"} {
		if s, ok := strings.CutPrefix(ref, p); ok {
			return s
		}
	}
	return fallback
}

func compareCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "side-by-side table of two commits' results, or of two label values of one commit; no verdict",
		ArgsUsage: "REV_A REV_B | [REV] --a-label KEY=A --b-label KEY=B",
		Description: "With --a-label and --b-label, one commit's results (REV, default HEAD) are split by\n" +
			"label: those with the A label against those with the B label, series keyed by their\n" +
			"other labels. The sections of an optimisation log ingested with --section-label NAME,\n" +
			"or the engine configurations of a tuning table, side by side.",
		Flags: append([]cli.Flag{rulesFileFlag(),
			&cli.StringFlag{Name: "a-label", Usage: "side A: the results of REV (default HEAD) with label `KEY=VALUE`; with --b-label"},
			&cli.StringFlag{Name: "b-label", Usage: "side B: the results of REV with label `KEY=VALUE` (the same KEY as --a-label, or another)"},
		}, reportFlags()...),
		Action: func(c *cli.Context) error {
			if c.IsSet("a-label") || c.IsSet("b-label") {
				return compareLabels(c, e)
			}
			if c.NArg() != 2 {
				got := fmt.Sprintf("got %d arguments", c.NArg())
				if c.NArg() == 1 {
					got = "got 1 argument"
				}
				return usageErrorf("compare: give two revisions, e.g. perfgate compare main HEAD (%s)", got)
			}
			// The rules file's ignore_labels say which labels do not
			// identify a series, as in check.
			repo, cfg, err := openRepoConfig(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			var shas [2]string
			for i, rev := range c.Args().Slice() {
				if shas[i], err = repo.Resolve(rev); err != nil {
					return gitError(err)
				}
			}
			var cmp *gate.Comparison
			err = withHistory(c, repo, func(h history) error {
				var cerr error
				cmp, cerr = gate.Compare(c.Context, gate.WithCapacity(h, cfg.SLOs, cfg.IgnoreLabels), gate.CompareOptions{A: shas[0], B: shas[1], IgnoreLabels: cfg.IgnoreLabels,
					Graph: graph{r: repo}, MaxDistance: cfg.Baseline.MaxDistance})
				return cerr
			})
			if err != nil {
				return gateError(err)
			}
			return writeReport(c, e, cmp)
		},
	}
}

// compareLabels is compare --a-label/--b-label: two label values of one
// commit side by side.
func compareLabels(c *cli.Context, e *env) error {
	var sides [2]gate.LabelSide
	for i, flag := range []string{"a-label", "b-label"} {
		v := c.String(flag)
		k, val, ok := strings.Cut(v, "=")
		k = strings.TrimSpace(k)
		if !c.IsSet(flag) || !ok || k == "" {
			return usageErrorf("compare: --a-label and --b-label go together, each KEY=VALUE, e.g. --a-label section=Baseline --b-label 'section=Merge rope q/k' (--%s is %q)", flag, v)
		}
		sides[i] = gate.LabelSide{Key: k, Value: strings.TrimSpace(val)}
	}
	if sides[0] == sides[1] {
		return usageErrorf("compare: --a-label and --b-label are both %s=%q; name two different values", sides[0].Key, sides[0].Value)
	}
	if c.NArg() > 1 {
		return usageErrorf("compare: with --a-label and --b-label give at most one revision, the commit whose results are compared (got %d arguments)", c.NArg())
	}
	rev := "HEAD"
	if c.NArg() == 1 {
		rev = c.Args().First()
	}
	repo, cfg, err := openRepoConfig(c)
	if err != nil {
		return err
	}
	defer repo.Close()
	sha, err := repo.Resolve(rev)
	if err != nil {
		return gitError(err)
	}
	var cmp *gate.Comparison
	err = withHistory(c, repo, func(h history) error {
		var cerr error
		cmp, cerr = gate.CompareLabels(c.Context, h, gate.CompareLabelsOptions{Commit: sha, A: sides[0], B: sides[1], IgnoreLabels: cfg.IgnoreLabels})
		return cerr
	})
	if err != nil {
		return gateError(err)
	}
	return writeReport(c, e, cmp)
}

func historyCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "history",
		Usage: "a metric over first-parent commits: text with a sparkline, csv, json, markdown",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "benchmark `NAME`"},
			&cli.StringFlag{Name: "metric", Usage: "metric, by canonical name or label (e.g. mean_ttft_ms, \"Mean TTFT\")"},
			&cli.StringFlag{Name: "branch", Value: "HEAD", Usage: "walk the first-parent history of this branch or revision"},
			&cli.IntFlag{Name: "limit", Value: 30, Usage: "show at most `N` measured commits"},
			&cli.StringSliceFlag{Name: "label", Usage: "only series with identity label `KEY=VALUE`; repeatable"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "text", Usage: "text, csv, json, markdown"},
			&cli.StringFlag{Name: "out", Usage: "write to `FILE` (unless -o text, a text copy also goes to stdout)"},
			rulesFileFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.String("metric") == "" {
				return usageErrorf("history: --metric is required, e.g. --metric mean_ttft_ms")
			}
			if c.Int("limit") < 1 {
				return usageErrorf("--limit %d: must be at least 1", c.Int("limit"))
			}
			labels, err := parseLabels(c.StringSlice("label"))
			if err != nil {
				return err
			}
			repo, cfg, err := openRepoConfig(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			if !c.IsSet("branch") {
				// HEAD of a repository without commits: say that, not
				// "no branch HEAD".
				if _, err := repo.Resolve("HEAD"); err != nil {
					return gitError(err)
				}
			}
			from, ref, err := repo.ResolveBranch(c.String("branch"))
			if err != nil {
				return gitError(fmt.Errorf("--branch: %w", err))
			}
			var tr *gate.Trend
			err = withHistory(c, repo, func(h history) error {
				var terr error
				// Capacity at the rules file's SLO is a series like any other.
				ch := gate.WithCapacity(h, cfg.SLOs, cfg.IgnoreLabels)
				tr, terr = gate.ReadTrend(c.Context, graph{r: repo, info: true}, ch, gate.TrendOptions{
					From: from, Ref: shortRef(ref, c.String("branch")), Benchmark: c.String("name"),
					Metric: c.String("metric"), Labels: labels, Limit: c.Int("limit"), IgnoreLabels: cfg.IgnoreLabels, Accepted: h.accepted,
				})
				return terr
			})
			if err != nil {
				return gateError(err)
			}
			return writeReport(c, e, tr)
		},
	}
}

// hereTestbed is the testbed perfgate run takes on this machine without
// --testbed: PERFGATE_TESTBED, else the name derived from the machine.
func hereTestbed(c *cli.Context, e *env) string {
	if name := strings.TrimSpace(e.getenv("PERFGATE_TESTBED")); name != "" {
		return name
	}
	return testbed.Detect(c.Context, testbed.Options{Getenv: e.getenv}).Name()
}

// workingTreeSamples returns the results of the local pre-merge flow:
// when the working tree has changes (untracked files count), the dirty
// runs stored at HEAD whose working-tree hash is the tree's as it is now,
// from whatever branch they were made on; HEAD's clean results, if any,
// are a baseline like any other. Runs of earlier states of the tree are
// never used. With no run of this tree, HEAD's clean results are checked
// when there are any, the report saying first that the tree was not
// measured (unmeasured, with the command that measures it), else it is an
// error saying to measure the tree. It returns nil (check HEAD's stored
// results) for a clean tree.
func workingTreeSamples(c *cli.Context, e *env, repo *gitrepo.Repo, h history, head string) (samples []gate.Sample, unmeasured string, err error) {
	if h.s == nil {
		return nil, "", nil
	}
	runs, err := h.s.ByCommit(head)
	if err != nil {
		return nil, "", err
	}
	if !anyDirty(runs) {
		return nil, "", nil // nothing measured on a working tree: HEAD's results, and no git status
	}
	wt, err := workingTree(c, e, repo, sources(runs))
	if err != nil || wt.Hash == "" {
		return nil, "", err
	}
	match, other := currentTreeRuns(runs, wt.Hash)
	if len(match) == 0 {
		committed, err := h.Samples([]string{head}) // with the runs measured before head was committed
		if err != nil {
			return nil, "", err
		}
		clean := 0
		for _, s := range committed[head] {
			if !s.Dirty {
				clean++
			}
		}
		if clean == 0 {
			return nil, "", &exitError{code: exitBad, err: fmt.Errorf("no results of the working tree as it is now: the %d working-tree run(s) stored at %s measured other changes (files were edited, added or removed since), and they are not used; measure this tree first (%s), or commit and check the commit",
				other, repo.Short(head), runner.MeasureCommand(runs, hereTestbed(c, e)))}
		}
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: no results of the working tree as it is now (%d working-tree run(s) at %s measured other changes and are not used); checking %s's committed results\n", other, repo.Short(head), repo.Short(head))
		return nil, fmt.Sprintf("the tree's changes (%s) were not measured, its %d run(s) measured earlier edits; measure it with %s",
			changeList(wt.Changed), other, runner.MeasureCommand(runs, hereTestbed(c, e))), nil
	}
	out := make([]gate.Sample, len(match))
	for i, r := range match {
		out[i] = h.toSample(r)
	}
	msg := fmt.Sprintf("perfgate: checking %d run(s) of the working tree as it is now (uncommitted changes) against %s", len(out), repo.Short(head))
	if other > 0 {
		msg += fmt.Sprintf("; %d run(s) of earlier states of the tree are not used", other)
	}
	fmt.Fprintln(c.App.ErrWriter, msg)
	return out, "", nil
}

// rulesFrom returns the rules check applies: cfg (the working tree's) for
// --rules-from worktree; for --rules-from base, the rules file as
// committed at the merge-base of head and base (none there: the default
// rules), with the --rule, --require-baseline and --site-url flags applied
// again. A pull request then cannot widen its own gate by editing the
// rules file; the base branch it is compared with stays what --base (or
// the working tree's baseline.branch) named.
func rulesFrom(c *cli.Context, repo *gitrepo.Repo, cfg *gate.Config, head, base string) (*gate.Config, error) {
	switch from := c.String("rules-from"); from {
	case "", "worktree":
		return cfg, nil
	case "base":
	default:
		return nil, usageErrorf("--rules-from %q: use worktree (the rules file as checked out) or base (as committed at the merge-base)", from)
	}
	mb, err := repo.MergeBase(head, base)
	if err != nil {
		return nil, gitError(fmt.Errorf("merge-base of %s and %s: %w", repo.Short(head), repo.Short(base), err))
	}
	file := ".perfgate.yml"
	if p := c.String("rules"); p != "" {
		file = filepath.ToSlash(p)
		if abs, err := filepath.Abs(p); err == nil && repo.Root() != "" {
			if rel, err := filepath.Rel(repo.Root(), abs); err == nil && !strings.HasPrefix(rel, "..") {
				file = filepath.ToSlash(rel)
			}
		}
	}
	data, ok, err := repo.ReadFile(mb, file)
	if err != nil {
		return nil, gitError(fmt.Errorf("--rules-from base: reading %s at %s: %w", file, repo.Short(mb), err))
	}
	out := gate.DefaultConfig()
	if ok {
		if out, err = gate.ParseRules(repo.Short(mb)+":"+file, data); err != nil {
			return nil, gateError(err)
		}
	}
	if err := ruleFlags(c, out); err != nil {
		return nil, err
	}
	if err := checkFlags(c, out); err != nil {
		return nil, err
	}
	return out, nil
}
