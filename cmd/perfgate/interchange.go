package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, exportCommand, importCommand) }

func exportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write the history as JSONL, one run per line, oldest first, then its records (acceptances, invalidations of those runs)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only runs at or after `TIME` (RFC 3339, a date like 2026-01-31, or a duration ago like 72h)"},
			&cli.StringFlag{Name: "name", Aliases: []string{"benchmark"}, Usage: "only runs of benchmark `NAME`"},
			&cli.StringFlag{Name: "commit", Usage: "only runs of commit `REV`"},
			&cli.StringFlag{Name: "out", Usage: "write to `FILE` instead of stdout"},
		},
		Action: func(c *cli.Context) error {
			f := store.Filter{Benchmark: c.String("name")}
			if s := c.String("since"); s != "" {
				t, err := parseSince(s, time.Now())
				if err != nil {
					return err
				}
				f.Since = t
			}
			r, err := openRepoOrDB(c)
			if err != nil {
				return err
			}
			if r != nil {
				defer r.Close()
			}
			if rev := c.String("commit"); rev != "" {
				if r == nil {
					return usageErrorf("--commit needs a git repository to resolve %q; run inside one or pass --repo", rev)
				}
				sha, err := r.Resolve(rev)
				if err != nil {
					return gitError(fmt.Errorf("--commit: %w", err))
				}
				f.Commit = sha
			}
			s, err := openStore(c, r, true)
			if err != nil {
				return err
			}
			if s == nil {
				return nil // no history yet: nothing to export
			}
			defer s.Close()
			var w io.Writer = e.stdout
			if p := c.String("out"); p != "" {
				file, err := os.Create(p)
				if err != nil {
					return usageErrorf("--out %q: %v", p, err)
				}
				defer file.Close()
				w = file
			}
			bw := bufio.NewWriterSize(w, 1<<16)
			n, recs, err := s.ExportRecords(bw, f)
			if err != nil {
				return storeError(err)
			}
			if err := bw.Flush(); err != nil {
				return envError(fmt.Errorf("export: write failed: %v", err))
			}
			fmt.Fprintf(e.stderr, "perfgate: exported %d runs%s\n", n, recordsNote(recs))
			return nil
		},
	}
}

// parseSince reads an RFC 3339 time, a date, or a duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageErrorf("--since %q is not a time: use RFC 3339 (2026-01-31T12:00:00Z), a date (2026-01-31) or a duration ago (72h)", s)
}

func importCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "add runs from a JSONL export (one run per line) to the history",
		ArgsUsage: "FILE (- for stdin)",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("import: give exactly one FILE (or - for stdin), got %d arguments", c.NArg())
			}
			name := c.Args().First()
			in, closeIn, err := openInput(e, name, "a perfgate export (JSONL)", true)
			if err != nil {
				return err
			}
			defer closeIn()
			r, err := openRepoOrDB(c)
			if err != nil {
				return err
			}
			if r != nil {
				defer r.Close()
			}
			s, err := openStore(c, r, false)
			if err != nil {
				return err
			}
			shown := name
			if shown == "-" {
				shown = "<stdin>"
			}
			// The unknown-field warnings wait for the outcome: a
			// benchmark's own output given to import is said once, as
			// such, not as fields of a newer perfgate.
			var warnings []string
			unknown := func(line int, field string) {
				warnings = append(warnings, fmt.Sprintf("perfgate: warning: %s:%d: ignored the unknown field %s (here and on later lines); written by a newer perfgate? Upgrade to keep it\n",
					shown, line, field))
			}
			recAdded, recTotal := 0, 0
			added, skipped, err := s.Import(bufio.NewReaderSize(in, 1<<16), store.ImportOptions{File: name, Unknown: unknown,
				Records: func(a, t int) { recAdded, recTotal = a, t }})
			if cerr := s.Close(); err == nil && cerr != nil {
				err = cerr
			}
			if err != nil && errors.Is(err, store.ErrBadInput) && name != "-" {
				if hint := benchmarkFileHint(name); hint != "" {
					return usageErrorf("%v%s", err, hint)
				}
			}
			for _, w := range warnings {
				fmt.Fprint(e.stderr, w)
			}
			if err != nil {
				return storeError(err)
			}
			fmt.Fprintf(e.stdout, "imported %d runs (%d already stored)", added, skipped)
			if recTotal > 0 {
				fmt.Fprintf(e.stdout, " and %d records (%d already stored)", recAdded, recTotal-recAdded)
			}
			fmt.Fprintln(e.stdout)
			return nil
		},
	}
}

// benchmarkFileHint is the note for import given a benchmark tool's output
// instead of a perfgate export: the format it reads as, and the ingest
// command that stores it ("" when it does not read as one).
func benchmarkFileHint(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := ingest.NewReader(io.LimitReader(f, 16<<20), name, ingest.Options{})
	if !r.Scan() {
		return ""
	}
	return fmt.Sprintf("; %s is not a perfgate export (JSONL of stored runs) but a benchmark's output (%s): store its results with perfgate ingest --name BENCHMARK %s",
		strconv.Quote(name), inert.Line(r.Result().Format, 40), runner.ShellQuote(name))
}
