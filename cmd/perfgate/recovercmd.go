package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, recoverCommand) }

func recoverCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "recover",
		Usage: "save every run a damaged history still holds as JSONL, to rebuild it with import",
		Description: "recover reads the history file without trusting it and writes every run it can read, one JSONL\n" +
			"line each (the export format). It never writes to the history. It exits 0 when it read every run\n" +
			"the history counts, 3 when runs were lost (the ones it read are still written).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write to `FILE` instead of stdout"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("recover takes no arguments (got %q); name the history with --db", c.Args().First())
			}
			r, err := openRepoOrDB(c)
			if err != nil {
				return err
			}
			if r != nil {
				defer r.Close()
			}
			path, err := dbPath(c, r)
			if err != nil {
				return err
			}
			if store.IsPostgres(path) {
				_, err := store.Salvage(path, io.Discard, 0)
				return storeError(err)
			}
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return usageErrorf("history %s does not exist: nothing to recover; pass --db (or set PERFGATE_DB) to name the damaged file", path)
			}
			timeout, err := lockTimeout()
			if err != nil {
				return err
			}
			var w io.Writer = e.stdout
			shown := "the saved runs"
			if p := c.String("out"); p != "" {
				f, err := os.Create(p)
				if err != nil {
					return usageErrorf("--out %q: %v", p, unwrapPathError(err))
				}
				defer f.Close()
				w, shown = f, p
			}
			rep, err := store.Salvage(path, w, timeout)
			if err != nil {
				return storeError(err)
			}
			return recoverSummary(e, path, shown, rep)
		},
	}
}

// recordsNote is " and N records" when there are any.
func recordsNote(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return " and 1 record"
	}
	return fmt.Sprintf(" and %d records", n)
}

// recoverSummary tells what recover read and what to do next; it returns
// an exit-3 error when runs were lost.
func recoverSummary(e *env, path, out string, rep store.SalvageReport) error {
	if !rep.Lost() && len(rep.Problems) == 0 {
		fmt.Fprintf(e.stderr, "perfgate: recovered all %d runs%s of %s; it reads without damage\n", rep.Runs, recordsNote(rep.Records), path)
		return nil
	}
	counted := "an unknown number of"
	if rep.Counted >= 0 {
		counted = fmt.Sprint(rep.Counted)
	}
	fmt.Fprintf(e.stderr, "perfgate: recovered %d of %s runs%s from the damaged history %s", rep.Runs, counted, recordsNote(rep.Records), path)
	if rep.Scanned > 0 {
		fmt.Fprintf(e.stderr, " (%d of them found by reading its pages directly)", rep.Scanned)
	}
	fmt.Fprintln(e.stderr)
	for _, p := range rep.Problems {
		fmt.Fprintf(e.stderr, "perfgate:   damage: %s\n", p)
	}
	if rep.More > 0 {
		fmt.Fprintf(e.stderr, "perfgate:   and %d more problems\n", rep.More)
	}
	if rep.Runs > 0 {
		fmt.Fprintf(e.stderr, "perfgate: to rebuild: move %s away, run `perfgate import %s`, then, if CI keeps a history branch, `perfgate sync --pull-only` to fetch the runs it holds\n", path, out)
	} else {
		fmt.Fprintf(e.stderr, "perfgate: no run could be read: move %s away and, if CI keeps a history branch, run `perfgate sync --pull-only` to fetch the runs it holds; otherwise ingest results again\n", path)
	}
	if rep.Lost() {
		return envError(fmt.Errorf("recover: %s: runs were lost to damage (see above); the %d runs read were written", path, rep.Runs))
	}
	return nil
}

// unwrapPathError drops the operation and path of an *fs.PathError.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
