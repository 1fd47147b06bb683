package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
	"github.com/perfgate/perfgate/testbed"
)

// testbedFlag is --testbed on the commands that store runs.
func testbedFlag() cli.Flag {
	return &cli.StringFlag{Name: "testbed", EnvVars: []string{"PERFGATE_TESTBED"},
		Usage: "name the machine that measured the results, `NAME`; runs of different testbeds are never compared (default: testbed: in .perfgate.yml, else derived from the accelerators, CPU, OS/arch and CI runner; a file ingested outside CI is of testbed unknown, never compared, unless it names its testbed)"}
}

// machine is what a stored run records about where it was measured.
type machine struct {
	testbed string
	env     map[string]string
	named   bool // --testbed, PERFGATE_TESTBED or the rules file's testbed: named it
}

// detectMachine names the testbed: --testbed (or PERFGATE_TESTBED), else
// the rules file's testbed:, else the name derived from the environment,
// whose facts are recorded in every case. A rules file that does not
// parse is an error: runs stored under a wrong testbed would never be
// compared with their own series.
func detectMachine(c *cli.Context, e *env, repo *gitrepo.Repo) (machine, error) {
	det := testbed.Detect(c.Context, testbed.Options{Getenv: e.getenv})
	for _, w := range det.Warnings {
		fmt.Fprintf(e.stderr, "perfgate: warning: %s\n", w)
	}
	m := machine{testbed: det.Name(), env: det.Map()}
	_, fromEnv := os.LookupEnv("PERFGATE_TESTBED")
	name := strings.TrimSpace(c.String("testbed"))
	if !hasFlag(c, "testbed") {
		name = strings.TrimSpace(e.getenv("PERFGATE_TESTBED")) // bisect-step has no --testbed
	}
	if (c.IsSet("testbed") && !fromEnv) || name != "" {
		if name == "" || len(name) > 200 || strings.ContainsAny(name, "\r\n") {
			return m, usageErrorf("--testbed %q: give a name of one line, at most 200 bytes, e.g. --testbed ci-910b (or leave it out to derive one from the machine: %q)", c.String("testbed"), m.testbed)
		}
		m.testbed, m.named = name, true
		return m, nil
	}
	if repo.Root() == "" {
		return m, nil
	}
	path := filepath.Join(repo.Root(), ".perfgate.yml")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, usageErrorf("%s: %v", displayPath(path), err)
	}
	cfg, err := gate.ParseRules(displayPath(path), data)
	if err != nil {
		return m, gateError(fmt.Errorf("%w (read for its testbed: setting; fix it, or pass --testbed)", err))
	}
	if cfg.Testbed != "" {
		m.testbed, m.named = cfg.Testbed, true
	}
	return m, nil
}

// fileTestbeds sets the testbed of runs read from files outside CI: such
// a file may have been measured anywhere (a log pasted from a CI runner
// onto a laptop), so, unless --testbed (PERFGATE_TESTBED, the rules
// file's testbed:) named the machine, a run's testbed is what its file
// says (a "testbed" label, which then leaves the labels), else
// testbed.Unknown, which compares with unknown results only, with one
// warning per command. Runs read
// from stdin, and every run in CI (testbed.InCI), were measured here.
func fileTestbeds(e *env, m machine, runs []store.Run) {
	if m.named || testbed.InCI(e.getenv) {
		return
	}
	unknown := map[string]bool{}
	var files []string
	for i := range runs {
		r := &runs[i]
		if r.Source.File == "-" || r.Source.File == "" {
			continue
		}
		if tb := strings.TrimSpace(r.Labels[gate.TestbedLabel]); tb != "" {
			r.Testbed = tb
			delete(r.Labels, gate.TestbedLabel)
			continue
		}
		r.Testbed, r.Env = testbed.Unknown, nil
		if !unknown[r.Source.File] {
			unknown[r.Source.File] = true
			files = append(files, r.Source.File)
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(e.stderr, "perfgate: warning: %s: outside CI perfgate cannot tell which machine measured a file, so its results are stored with testbed %q: they compare with other %q results (your own files), never with a named machine's; to name the machine, ingest with --testbed NAME (this machine is %q; perfgate runs lists the testbeds stored)\n",
			changeList(files), testbed.Unknown, testbed.Unknown, m.testbed)
	}
}

// workingTree is the working-tree hash of HEAD's checkout ("" when it
// holds exactly HEAD). Untracked files count, except perfgate's own: the
// outputs (paths as runs record them: the files being ingested and those
// the runs already stored at the commit were read from, since a
// benchmark's result files are not code) and the history itself. A tree perfgate cannot read is
// reported and taken as clean.
func workingTree(c *cli.Context, e *env, repo *gitrepo.Repo, outputs []string) (gitrepo.WorkTree, error) {
	skip := map[string]bool{}
	for _, f := range outputs {
		skip[f] = true
	}
	if p, err := dbPath(c, repo); err == nil {
		skip[runner.SourceFile(p, repo.Root())] = true
	}
	tree, err := repo.TreeState(c.Context, func(p string) bool { return skip[p] })
	if err != nil {
		fmt.Fprintf(e.stderr, "perfgate: warning: cannot tell whether the working tree has uncommitted changes: %v\n", err)
		return gitrepo.WorkTree{}, nil
	}
	return tree, nil
}

// outputsAt returns the files being ingested and the files the runs
// stored at commit were read from, as runs record them (relative to the
// repository root); nothing from a history that does not exist or cannot
// be read (the command that stores the runs reports that itself).
func outputsAt(c *cli.Context, repo *gitrepo.Repo, commit string, files []string) []string {
	inputs := make([]string, len(files))
	for i, f := range files {
		inputs[i] = runner.SourceFile(f, repo.Root())
	}
	path, err := dbPath(c, repo)
	if err != nil {
		return inputs
	}
	if _, err := os.Stat(path); err != nil && !store.IsPostgres(path) {
		return inputs
	}
	timeout, err := lockTimeout()
	if err != nil {
		return inputs
	}
	s, err := store.Open(path, store.Options{ReadOnly: true, Timeout: timeout, Repository: repositoryName(c, repo)})
	if err != nil {
		return inputs
	}
	defer s.Close()
	runs, err := s.ByCommit(commit)
	if err != nil {
		return inputs
	}
	return append(sources(runs), inputs...)
}

// sources lists the files runs were read from.
func sources(runs []store.Run) []string {
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.Source.File)
	}
	return out
}

// warnDirty says what storing results of a working tree with changes
// means, and which files made it so.
func warnDirty(e *env, changed []string, how string) {
	fmt.Fprintf(e.stderr, "perfgate: warning: the working tree has uncommitted changes (%s), so these results are stored as HEAD's working tree (dirty): check compares them while the tree holds exactly these changes, but they never become a baseline and sync does not share them; %s\n",
		changeList(changed), how)
}

// changeList names up to five changed paths.
func changeList(paths []string) string {
	const most = 5
	if len(paths) <= most {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:most], ", "), len(paths)-most)
}

// currentTreeRuns returns the dirty runs at head whose working-tree hash
// is tree: the runs of the working tree as it is now, on any branch.
func currentTreeRuns(runs []store.Run, tree string) (match []store.Run, other int) {
	for _, r := range runs {
		if !r.Dirty {
			continue
		}
		if r.Tree == tree {
			match = append(match, r)
		} else {
			other++
		}
	}
	return match, other
}

// origin is where results are being measured: the commit, the working
// tree's hash when it has changes (checkTree), and the machine.
type origin struct {
	commit  string
	tree    string   // the working tree's hash; "" when clean
	changed []string // the paths that made it dirty
	machine machine
}

// measureOrigin resolves rev and records the machine and, for HEAD's
// checkout, the working tree, warning when it has changes (hint says
// what else to do). inputs are the files being ingested.
func measureOrigin(c *cli.Context, e *env, repo *gitrepo.Repo, rev string, checkTree bool, inputs []string, hint string) (origin, error) {
	commit, _, err := resolveCommit(c, repo, rev, false)
	if err != nil {
		return origin{}, err
	}
	o := origin{commit: commit}
	if o.machine, err = detectMachine(c, e, repo); err != nil {
		return o, err
	}
	if checkTree {
		wt, err := workingTree(c, e, repo, outputsAt(c, repo, commit, inputs))
		if err != nil {
			return o, err
		}
		o.tree, o.changed = wt.Hash, wt.Changed
		if o.tree != "" {
			// In CI a build step that leaves files behind would
			// otherwise leave a main branch without baselines.
			warnDirty(e, o.changed, hint)
		}
	}
	return o, nil
}

// spec fills the origin's part of a runner.Spec: the commit, the working
// tree (dirty, and its hash) and the machine.
func (o origin) spec(s runner.Spec) runner.Spec {
	s.Commit, s.Dirty, s.Tree = o.commit, o.tree != "", o.tree
	return o.machine.spec(s)
}

// spec fills the machine's part of a runner.Spec: the testbed and its
// environment.
func (m machine) spec(s runner.Spec) runner.Spec {
	s.Testbed, s.Env = m.testbed, m.env
	return s
}

// warnTreeChanged reports a benchmark command that changed the working
// tree (wrote files that are neither ignored nor outside the repository):
// its runs record the tree as it was, which check no longer finds.
func warnTreeChanged(c *cli.Context, e *env, repo *gitrepo.Repo, o origin) {
	now, err := workingTree(c, e, repo, outputsAt(c, repo, o.commit, nil))
	if err != nil || now.Hash == o.tree {
		return
	}
	if o.tree == "" {
		// The runs measured HEAD as committed; what comes next here does not.
		fmt.Fprintf(e.stderr, "perfgate: warning: the benchmark command left files in the clean working tree (%s): these runs are stored as %s's, as it was clean when they ran, but the next run or ingest here measures a tree with changes (dirty, never a baseline); write the command's output outside the repository or add it to .gitignore\n", changeList(now.Changed), short(o.commit))
		return
	}
	fmt.Fprintf(e.stderr, "perfgate: warning: the benchmark command changed the working tree (now %s): these runs record the tree as it was before, so perfgate check on the tree as it is now does not use them; write the command's output outside the repository or add it to .gitignore, then run again\n", changeList(now.Changed))
}

// hasFlag reports whether the command defines a flag.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}

func anyDirty(runs []store.Run) bool {
	for _, r := range runs {
		if r.Dirty {
			return true
		}
	}
	return false
}
