package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, ingestCommand) }

func ingestCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "ingest",
		Usage:     "parse benchmark output and store it in the history under a commit",
		ArgsUsage: "FILE... (- for stdin; a pattern such as 'results/*.json' is expanded by perfgate)",
		Description: "Every result block of every file is stored in one transaction: all or nothing.\n" +
			"Re-ingesting an identical result is a no-op. Without --name, results need a name of\n" +
			"their own (Go benchmarks, AISBench tasks, guidellm strategies); with --name and a named\n" +
			"result, the benchmark is NAME/RESULT-NAME.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "benchmark `NAME` the results are stored under"},
			&cli.StringFlag{Name: "commit", Value: "HEAD", Usage: "the commit the results measured (any revision)"},
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE` (model, hardware, ...); repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "input format: " + strings.Join(ingest.Formats(), ", ")},
			testbedFlag(),
			maxDocFlag(),
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() == 0 {
				return usageErrorf("ingest: no FILE given; pass one or more files, or - to read stdin")
			}
			labels, err := parseLabels(c.StringSlice("label"))
			if err != nil {
				return err
			}
			opts, err := readOptions(c)
			if err != nil {
				return err
			}
			results, err := parseFiles(e, c.Args().Slice(), opts)
			if err != nil {
				return err
			}
			repo, err := openRepo(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			o, err := measureOrigin(c, e, repo, c.String("commit"), !c.IsSet("commit"), c.Args().Slice(),
				"if they measure HEAD as committed, ingest again with --commit HEAD")
			if err != nil {
				return err
			}
			runs, err := toRuns(results, o.spec(runSpec{root: repo.Root(), name: c.String("name"), labels: labels, time: time.Now()}))
			if err != nil {
				return err
			}
			return storeRuns(c, e, repo, runs, out)
		},
	}
}

var fullSHA = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })

// resolveCommit resolves rev; for HEAD of the working tree (checkDirty) it
// also reports whether the tree has uncommitted changes. A full SHA that is
// not in this clone is accepted with a warning (CI often measures a commit
// it has not fetched).
func resolveCommit(c *cli.Context, repo *gitrepo.Repo, rev string, checkDirty bool) (string, bool, error) {
	sha, err := repo.Resolve(rev)
	if err != nil {
		if fullSHA().MatchString(strings.ToLower(rev)) {
			fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: commit %s is not in this clone; storing under it anyway\n", rev)
			return strings.ToLower(rev), false, nil
		}
		if !c.IsSet("commit") {
			return "", false, gitError(err) // HEAD, which the user did not type
		}
		return "", false, gitError(fmt.Errorf("--commit: %w", err))
	}
	dirty := false
	if checkDirty {
		dirty, err = repo.Dirty(c.Context)
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: cannot tell whether the working tree is dirty: %v\n", err)
			dirty = false
		}
	}
	return sha, dirty, nil
}

type runSpec struct {
	root     string // repository root: files inside it are recorded relative to it
	name     string
	labels   map[string]string
	commit   string
	dirty    bool
	tree     string  // the working tree's hash, for dirty runs
	machine  machine // the testbed and its environment
	time     time.Time
	command  []string
	exitCode int
}

// toRuns turns parsed results into history runs.
func toRuns(results []ingest.Result, spec runSpec) ([]store.Run, error) {
	runs := make([]store.Run, 0, len(results))
	for i, r := range results {
		bench := benchmarkName(spec.name, r.Name)
		if bench == "" {
			return nil, usageErrorf("%s:%d: this %s result has no name of its own; pass --name BENCH (for example --name serving-qwen)", r.File, r.Line, r.Format)
		}
		labels := make(map[string]string, len(r.Labels)+len(spec.labels))
		for k, v := range r.Labels {
			labels[k] = v
		}
		for k, v := range spec.labels {
			labels[k] = v
		}
		file := sourceFile(r.File, spec.root)
		runs = append(runs, store.Run{
			Commit:    spec.commit,
			Benchmark: bench,
			// Blocks of one file keep their order in time.
			Time:     spec.time.Add(time.Duration(i) * time.Microsecond),
			Metrics:  r.Metrics,
			Labels:   labels,
			Source:   store.Source{Format: r.Format, File: file, Line: r.Line},
			Command:  spec.command,
			ExitCode: spec.exitCode,
			Dirty:    spec.dirty,
			Invalid:  invalidReason(r.Metrics),
			Testbed:  spec.machine.testbed,
			Env:      spec.machine.env,
			Tree:     spec.tree,
		})
	}
	return runs, nil
}

// benchmarkName combines --name with the result's own name.
func benchmarkName(flag, own string) string {
	switch {
	case flag == "":
		return own
	case own == "":
		return flag
	}
	return flag + "/" + own
}

// invalidReason marks a result where more than 5% of requests failed: it
// must never become a baseline (DESIGN.md "Verdict").
func invalidReason(m map[string]float64) string {
	failed, okF := m["failed"]
	completed, okC := m["completed"]
	if !okF || !okC || failed+completed <= 0 {
		return ""
	}
	if frac := failed / (failed + completed); frac > 0.05 {
		return fmt.Sprintf("%g of %g requests failed (%.1f%% > 5%%)", failed, failed+completed, 100*frac)
	}
	return ""
}

// storeRuns writes runs in one transaction and reports what was stored.
func storeRuns(c *cli.Context, e *env, repo *gitrepo.Repo, runs []store.Run, out string) error {
	s, err := openStore(c, repo, false)
	if err != nil {
		return err
	}
	added, err := s.Put(runs)
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return storeError(err)
	}
	for _, r := range runs {
		if r.Invalid != "" {
			fmt.Fprintf(e.stderr, "perfgate: warning: %s:%d: result is invalid and will not be used as a baseline: %s\n", r.Source.File, r.Source.Line, r.Invalid)
		}
	}
	benches := map[string]int{}
	for _, r := range runs {
		benches[r.Benchmark]++
	}
	names := make([]string, 0, len(benches))
	for b := range benches {
		names = append(names, b)
	}
	sort.Strings(names)
	commit := ""
	if len(runs) > 0 {
		commit = runs[0].Commit
	}
	if out == "json" {
		type item struct {
			ID        string `json:"id"`
			Benchmark string `json:"benchmark"`
			Format    string `json:"format"`
			File      string `json:"file"`
			Line      int    `json:"line"`
			Dirty     bool   `json:"dirty,omitempty"`
			Invalid   string `json:"invalid,omitempty"`
			Testbed   string `json:"testbed,omitempty"`
		}
		items := make([]item, len(runs))
		for i, r := range runs {
			items[i] = item{store.ContentID(r), r.Benchmark, r.Source.Format, r.Source.File, r.Source.Line, r.Dirty, r.Invalid, r.Testbed}
		}
		return writeJSON(e.stdout, map[string]any{"commit": commit, "added": added, "skipped": len(runs) - added, "runs": items})
	}
	dirty := ""
	if len(runs) > 0 && runs[0].Dirty {
		dirty = "working tree dirty; "
	}
	where := ""
	if len(runs) > 0 && runs[0].Testbed != "" {
		where = fmt.Sprintf(" on testbed %q", runs[0].Testbed)
	}
	fmt.Fprintf(e.stdout, "stored %d of %d results at %s%s (%s%d already stored)\n", added, len(runs), short(commit), where, dirty, len(runs)-added)
	for _, b := range names {
		fmt.Fprintf(e.stdout, "  %-40s %d\n", b, benches[b])
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// sourceFile is the stable name a run records for its input: "-" for
// stdin, a path relative to the repository root for files inside it (so
// re-ingesting the same file from another directory is still a no-op),
// else the absolute path.
func sourceFile(file, root string) string {
	if file == "<stdin>" || file == "-" || file == "" {
		return "-"
	}
	if strings.HasPrefix(file, "output of ") {
		return file
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return file
	}
	if root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}
