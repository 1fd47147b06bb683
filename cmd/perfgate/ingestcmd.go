package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/runner"
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
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "benchmark `NAME` the results are stored under"},
			&cli.StringFlag{Name: "commit", Value: "HEAD", Usage: "the commit the results measured (any revision)"},
			&cli.StringSliceFlag{Name: "label", Usage: "identity label `KEY=VALUE` (model, hardware, ...); repeatable"},
			&cli.StringFlag{Name: "format", Value: "auto", Usage: "benchmark format of the files (auto detects): " + strings.Join(ingest.Formats(), ", ")},
			testbedFlag(),
			maxDocFlag(),
			sectionLabelFlag(),
			sloFlag(),
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
			if _, clash := labels[opts.SectionLabel]; clash && opts.SectionLabel != "" {
				return usageErrorf("--section-label %s and --label %s=%s name the same label; drop one of them", opts.SectionLabel, opts.SectionLabel, labels[opts.SectionLabel])
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
			runs, err := runner.ToRuns(results, o.spec(runner.Spec{Root: repo.Root(), Name: c.String("name"), Labels: labels, Time: time.Now()}))
			if err != nil {
				return storeError(err)
			}
			fileTestbeds(e, o.machine, runs)
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

// storeRuns writes runs in one transaction and reports what was stored.
func storeRuns(c *cli.Context, e *env, repo *gitrepo.Repo, runs []store.Run, out string, raw ...string) error {
	added, err := saver(c, repo).Save(runs, raw...)
	if err != nil {
		return storeError(err)
	}
	return reportStored(e, runs, added, out, nil)
}

// reportStored says what was stored: warnings on stderr, the summary on
// stdout (-o json: with the extra fields).
func reportStored(e *env, runs []store.Run, added int, out string, extra map[string]any) error {
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
		doc := map[string]any{"commit": commit, "added": added, "skipped": len(runs) - added, "runs": items}
		for k, v := range extra {
			doc[k] = v
		}
		return writeJSON(e.stdout, doc)
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

// saver writes to the history of --db (or the repository's), opening it
// only for each write.
func saver(c *cli.Context, repo *gitrepo.Repo) *runner.Saver {
	db, _ := dbPath(c, repo) // when it fails, so does Open, and says why
	return &runner.Saver{Open: func() (*store.Store, error) { return openStore(c, repo, false) }, DB: redactDB(db)}
}
