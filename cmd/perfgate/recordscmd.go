package main

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/histsync"
	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/internal/suggest"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
)

// accept, invalidate and runs: the history's records (store.Record).

func init() {
	commandSet = append(commandSet, acceptCommand, invalidateCommand, runsCommand)
	examples["accept"] = `
perfgate accept --benchmark serving --metric mean_ttft_ms --commit 1a2b3c4 --reason "trade TTFT for throughput (#123)"
perfgate accept --benchmark serving --metric "Mean TTFT" --reason "new default"   # HEAD, e.g. a pull request before merge`
	examples["invalidate"] = `
perfgate runs --commit HEAD                      # find the run's id
perfgate invalidate 3fa2c1d0 --reason "runner was throttled"
perfgate invalidate --undo 3fa2c1d0 --reason "the throttling was elsewhere"`
	examples["runs"] = `
perfgate runs --benchmark 'serving-*' --since 2026-01-01
perfgate runs --commit HEAD -o json`
}

// readRecords reads the history's records into the gate adapter: the
// reasons runs were invalidated, and the accepted changes.
func readRecords(s *store.Store) (history, error) {
	h := history{s: s}
	recs, err := s.Records()
	if err != nil {
		return h, err
	}
	vias, err := histsync.RecordVias(s)
	if err != nil {
		return h, err
	}
	for _, r := range recs {
		source, via := recordSource(vias, r.ID)
		if v, ok := vias[r.ID]; ok {
			if h.arrived == nil {
				h.arrived = map[string]time.Time{}
			}
			h.arrived[r.ID] = v.Time
		}
		switch r.Kind {
		case store.RecordInvalidate:
			if h.invalid == nil {
				h.invalid, h.invalidSource, h.invalidVia, h.invalidRecord = map[string]string{}, map[string]string{}, map[string]string{}, map[string]string{}
			}
			h.invalid[r.Run] = fmt.Sprintf("invalidated by %s: %s", r.By, r.Reason)
			h.invalidSource[r.Run], h.invalidVia[r.Run], h.invalidRecord[r.Run] = source, via, r.ID
			delete(h.withdrawn, r.Run)
		case store.RecordRevalidate: // records are oldest first: the newest decides
			if _, ok := h.invalid[r.Run]; !ok {
				continue
			}
			delete(h.invalid, r.Run)
			if h.withdrawn == nil {
				h.withdrawn = map[string]string{}
			}
			h.withdrawn[r.Run] = fmt.Sprintf("invalidation withdrawn by %s: %s", r.By, r.Reason)
		case store.RecordAccept:
			h.accepted = append(h.accepted, gate.Acceptance{Commit: r.Commit, Benchmark: r.Benchmark, Metric: r.Metric, Reason: r.Reason, By: r.By, Time: r.Time, Source: source, Via: via})
			h.acceptedRecord = append(h.acceptedRecord, r.ID)
		}
	}
	return h, nil
}

// recordSource says where a record comes from (gate.SourceBranch when a
// sync pulled it from the history branch, else gate.SourceLocal) and how
// it arrived, as reports show it.
func recordSource(vias map[string]histsync.Via, id string) (source, via string) {
	v, ok := vias[id]
	if !ok {
		return gate.SourceLocal, "recorded in this history, not from the history branch"
	}
	return gate.SourceBranch, fmt.Sprintf("arrived %s in %s commit %s, author %s",
		v.Time.UTC().Format("2006-01-02 15:04 UTC"), inert.Line(v.Branch, 100), shortCommit(v.Commit), inert.Line(v.Author, 200))
}

// shortCommit is a commit id's first 12 digits.
func shortCommit(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// flagLate adds to how each record arrived that it arrived on the history
// branch after the base branch's tip (base, named name) was measured: a
// record written while a pull request waits, which the report's reader
// should look at first. Nothing is flagged when base has no run.
func (h *history) flagLate(base, name string) error {
	if h.s == nil || len(h.arrived) == 0 {
		return nil
	}
	runs, err := h.s.ByCommit(base)
	if err != nil || len(runs) == 0 {
		return err
	}
	measured := runs[0].Time
	for _, r := range runs[1:] {
		if r.Time.Before(measured) {
			measured = r.Time
		}
	}
	late := func(id string) string {
		if at, ok := h.arrived[id]; ok && !at.Before(measured.Truncate(time.Second)) { // git keeps seconds
			return fmt.Sprintf("; after %s's tip %s was measured (%s)", inert.Line(name, 100), shortCommit(base), measured.UTC().Format("2006-01-02 15:04 UTC"))
		}
		return ""
	}
	for i := range h.accepted {
		if i < len(h.acceptedRecord) {
			h.accepted[i].Via += late(h.acceptedRecord[i])
		}
	}
	for run, id := range h.invalidRecord {
		h.invalidVia[run] += late(id)
	}
	return nil
}

// prLabels are the labels of the pull request a GitHub Actions run is
// for (nil outside Actions or on events of no pull request).
func prLabels(e *env) []string {
	ghEnv, err := github.FromEnv(e.getenv)
	if err != nil || !ghEnv.Actions {
		return nil
	}
	return ghEnv.PRLabels
}

// applyTrust leaves out the records the rules' trust section does not
// trust (gate.TrustConfig): their acceptances and invalidations do not
// change the verdict. prLabels are the pull request's labels (nil when
// the check is of no pull request). It returns what it left out, for the
// report: one line per reason, with the records it left out for it.
func (h *history) applyTrust(t gate.TrustConfig, prLabels []string) []string {
	byWhy := map[string][]string{}
	kept := h.accepted[:0:0]
	for _, a := range h.accepted {
		if ok, why := t.AcceptanceApplies(a.Source); !ok {
			byWhy[why] = append(byWhy[why], fmt.Sprintf("%s at %s", a.Shown(), shortCommit(a.Commit)))
			continue
		}
		kept = append(kept, a)
	}
	h.accepted = kept
	for run, what := range h.invalid {
		if ok, why := t.InvalidationApplies(h.invalidSource[run], prLabels); !ok {
			byWhy[why] = append(byWhy[why], fmt.Sprintf("run %s %s [%s]", run[:min(8, len(run))], what, h.invalidVia[run]))
			delete(h.invalid, run)
		}
	}
	var out []string
	for why, recs := range byWhy {
		sort.Strings(recs)
		out = append(out, fmt.Sprintf("%s, so %s not applied: %s", why, plural(len(recs), "record is", "records are"), strings.Join(recs, "; ")))
	}
	sort.Strings(out)
	return out
}

// plural formats a count with the singular or plural noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// markInvalidated sets the Invalid reason of the runs invalidated on
// record, for the commands that read runs without the gate (bisect).
func markInvalidated(s *store.Store, runs map[string][]store.Run) error {
	h, err := readRecords(s)
	if err != nil || len(h.invalid) == 0 {
		return err
	}
	for _, rs := range runs {
		for i := range rs {
			if why, ok := h.invalid[rs[i].ID]; ok && rs[i].Invalid == "" {
				rs[i].Invalid = why
			}
		}
	}
	return nil
}

// whoAmI names who records a decision: $GITHUB_ACTOR in GitHub Actions,
// else the git identity (user.name <user.email>).
func whoAmI(e *env, repo *gitrepo.Repo) (string, error) {
	if a := strings.TrimSpace(e.getenv("GITHUB_ACTOR")); a != "" {
		return a, nil
	}
	if repo != nil {
		name, email := repo.User()
		switch {
		case name != "" && email != "":
			return fmt.Sprintf("%s <%s>", name, email), nil
		case name != "":
			return name, nil
		case email != "":
			return email, nil
		}
	}
	return "", usageErrorf("who is deciding? perfgate records the git identity: set it with git config user.name \"Your Name\" and git config user.email you@example.com (in GitHub Actions, GITHUB_ACTOR is used)")
}

// reasonFlag is --reason, required by accept and invalidate.
func reasonFlag(what string) cli.Flag {
	return &cli.StringFlag{Name: "reason", Usage: "why " + what + " (`TEXT`, one line; shown in reports and PR comments)"}
}

func checkReason(c *cli.Context, example string) (string, error) {
	r := strings.TrimSpace(c.String("reason"))
	if r == "" {
		return "", usageErrorf("%s: --reason is required: say why, e.g. --reason %q", c.Command.Name, example)
	}
	return r, nil
}

func acceptCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "accept",
		Usage: "record that a change of a benchmark's metric at a commit was intended: from there on its new level is the reference",
		Description: "The record is stored in the history and shared by perfgate sync. check cuts the window of that\n" +
			"benchmark's metric at the commit (first-parent: earlier results are no reference), so later pull\n" +
			"requests are neither blamed nor excused by the change; a pull request whose head is accepted passes\n" +
			"that metric as \"accepted by WHO: reason\"; watch reports a change at the commit as accepted and closes\n" +
			"its issue. Who: $GITHUB_ACTOR in GitHub Actions, else git's user.name and user.email.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "benchmark", Aliases: []string{"name"}, Usage: "benchmark `NAME` (as stored; perfgate runs lists them)"},
			&cli.StringSliceFlag{Name: "metric", Usage: "`METRIC`, by canonical name or label (e.g. mean_ttft_ms, \"Mean TTFT\"); repeat it to accept several"},
			&cli.BoolFlag{Name: "all-metrics", Usage: "accept every metric the benchmark's runs at the commit report (all metrics of one change, as watch lists them)"},
			&cli.StringFlag{Name: "commit", Value: "HEAD", Usage: "the commit whose change is accepted (any `REV`)"},
			reasonFlag("the change is intended"),
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() > 0 {
				return usageErrorf("accept takes no arguments (got %q); name the change with --benchmark, --metric and --commit", c.Args().First())
			}
			bench := strings.TrimSpace(c.String("benchmark"))
			if bench == "" {
				return usageErrorf("accept: --benchmark is required, e.g. --benchmark serving (perfgate runs lists the benchmarks)")
			}
			metrics, all := c.StringSlice("metric"), c.Bool("all-metrics")
			switch {
			case len(metrics) == 0 && !all:
				return usageErrorf("accept: --metric is required, e.g. --metric mean_ttft_ms (repeat it for several, or --all-metrics for every metric of the benchmark at the commit)")
			case len(metrics) > 0 && all:
				return usageErrorf("accept: --metric and --all-metrics together: give one (--all-metrics accepts every metric of the benchmark at the commit)")
			}
			reason, err := checkReason(c, "trade TTFT for throughput (#123)")
			if err != nil {
				return err
			}
			repo, err := openRepo(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			commit, err := repo.Resolve(c.String("commit"))
			if err != nil {
				return gitError(fmt.Errorf("--commit: %w", err))
			}
			by, err := whoAmI(e, repo)
			if err != nil {
				return err
			}
			st, err := openStore(c, repo, false)
			if err != nil {
				return err
			}
			defer st.Close()
			benches, err := st.Benchmarks()
			if err != nil {
				return storeError(err)
			}
			if !slices.Contains(benches, bench) {
				hint := "the history has no benchmark yet: ingest or sync first"
				if len(benches) > 0 {
					hint = "the history has: " + strings.Join(benches, ", ")
					if s := suggest.Closest(bench, benches); s != "" {
						hint = fmt.Sprintf("did you mean %q? %s", s, hint)
					}
				}
				return usageErrorf("--benchmark %q: no such benchmark in the history %s; %s", bench, displayPath(st.Path()), hint)
			}
			var names []string
			if all {
				if names, err = metricsAt(st, bench, commit); err != nil {
					return err
				}
				if len(names) == 0 {
					return usageErrorf("--all-metrics: benchmark %s has no run at %s: name the commit watch reports the change at with --commit (perfgate runs --benchmark %s lists its commits)", bench, repo.Short(commit), bench)
				}
			}
			for _, m := range metrics {
				name, err := acceptedMetric(st, bench, m)
				if err != nil {
					return err
				}
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
			recs := make([]store.Record, len(names))
			for i, name := range names {
				recs[i] = store.Record{Kind: store.RecordAccept, Commit: commit, Benchmark: bench, Metric: name, Reason: reason, By: by}
			}
			if _, err := st.PutRecords(recs); err != nil {
				return storeError(err)
			}
			if out == "json" {
				return writeRecordJSON(e, recs...)
			}
			for _, name := range names {
				fmt.Fprintf(e.stdout, "accepted %s of %s at %s, by %s: %s\n", name, bench, repo.Short(commit), by, reason)
			}
			fmt.Fprintln(e.stderr, "perfgate: recorded in the history; perfgate sync shares it")
			return nil
		},
	}
}

// acceptedMetric resolves --metric: a metric perfgate knows, or a name a
// run of the benchmark has.
func acceptedMetric(st *store.Store, bench, m string) (string, error) {
	if in, ok := metric.Lookup(m); ok {
		return in.Name, nil
	}
	found, err := storedHas(st, store.Filter{Benchmark: bench}, m)
	if err != nil {
		return "", err
	}
	if found {
		return m, nil
	}
	return "", usageErrorf("--metric %q is not a known metric nor one benchmark %s has%s (perfgate parse FILE lists a result's metrics)", m, bench, metricHint(m))
}

var errStop = fmt.Errorf("stop")

// metricsAt lists, sorted, the metrics the benchmark's valid runs at the
// commit report: what accept --all-metrics accepts.
func metricsAt(st *store.Store, bench, commit string) ([]string, error) {
	runs, err := st.ByCommit(commit)
	if err != nil {
		return nil, storeError(err)
	}
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Benchmark != bench {
			continue
		}
		for m := range r.Metrics {
			seen[m] = true
		}
	}
	names := make([]string, 0, len(seen))
	for m := range seen {
		names = append(names, m)
	}
	sort.Strings(names)
	return names, nil
}

func writeRecordJSON(e *env, recs ...store.Record) error {
	var b []byte
	for i := range recs {
		b = append(store.AppendRecordJSON(b, &recs[i]), '\n')
	}
	_, err := e.stdout.Write(b)
	return err
}

func invalidateCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "invalidate",
		Usage:     "mark runs invalid on record: they stay in the history but are never a baseline or part of a window again",
		ArgsUsage: "RUN_ID...",
		Description: "Each RUN_ID is a run's id as perfgate runs prints it (or a unique prefix of 4 or more hex digits).\n" +
			"Nothing is deleted: the invalidation is a record of its own, with who and why, shared by perfgate sync.\n" +
			"--undo withdraws an invalidation on record the same way (a revalidate record; the newest record of a run decides).\n" +
			"Who: $GITHUB_ACTOR in GitHub Actions, else git's user.name and user.email.",
		Flags: []cli.Flag{
			reasonFlag("the runs are invalid (with --undo: why the invalidation is withdrawn)"),
			&cli.BoolFlag{Name: "undo", Usage: "withdraw the runs' invalidation on record: they count again (a record of its own, with who and why)"},
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() == 0 {
				return usageErrorf("invalidate: give the ids of the runs, e.g. perfgate invalidate 3fa2c1d0 --reason \"runner was throttled\" (perfgate runs lists them)")
			}
			reason, err := checkReason(c, "runner was throttled")
			if err != nil {
				return err
			}
			repo, err := openRepoOrDB(c)
			if err != nil {
				return err
			}
			if repo != nil {
				defer repo.Close()
			}
			by, err := whoAmI(e, repo)
			if err != nil {
				return err
			}
			st, err := openStore(c, repo, false)
			if err != nil {
				return err
			}
			defer st.Close()
			h, err := readRecords(st)
			if err != nil {
				return storeError(err)
			}
			undo := c.Bool("undo")
			// Every id is resolved before anything is written: all or none.
			var recs []store.Record
			seen := map[string]bool{}
			for _, arg := range c.Args().Slice() {
				keys, err := st.FindRuns(strings.TrimSpace(arg))
				if err != nil {
					return usageErrorf("%q is not a run id: give the id perfgate runs prints (32 hex digits, or a unique prefix of 4 or more)", arg)
				}
				switch {
				case len(keys) == 0:
					return usageErrorf("no run %q in the history %s: perfgate runs lists the stored runs and their ids", arg, displayPath(st.Path()))
				case len(keys) > 1:
					var ids []string
					for _, k := range keys[:min(len(keys), 5)] {
						ids = append(ids, k.ID)
					}
					return usageErrorf("run id prefix %q is ambiguous: it matches %s%s; give more digits", arg, strings.Join(ids, ", "), map[bool]string{true: ", ...", false: ""}[len(keys) > 5])
				}
				k := keys[0]
				if seen[k.ID] {
					continue
				}
				seen[k.ID] = true
				if undo {
					if _, ok := h.invalid[k.ID]; !ok {
						return usageErrorf("run %s is not invalidated on record, so there is nothing to withdraw (perfgate runs --commit %s shows its flags; a run whose own results are invalid stays so)", k.ID, k.Commit[:12])
					}
					recs = append(recs, store.Record{Kind: store.RecordRevalidate, Commit: k.Commit, Run: k.ID, Reason: reason, By: by})
					continue
				}
				if why, ok := h.invalid[k.ID]; ok {
					fmt.Fprintf(e.stderr, "perfgate: run %s is already invalid (%s); not recorded again\n", k.ID, why)
					continue
				}
				recs = append(recs, store.Record{Kind: store.RecordInvalidate, Commit: k.Commit, Run: k.ID, Reason: reason, By: by})
			}
			if len(recs) > 0 {
				if _, err := st.PutRecords(recs); err != nil {
					return storeError(err)
				}
			}
			if out == "json" {
				return writeRecordJSON(e, recs...)
			}
			for _, r := range recs {
				what := "invalidated"
				if undo {
					what = "withdrew the invalidation of"
				}
				fmt.Fprintf(e.stdout, "%s run %s (commit %s), by %s: %s\n", what, r.Run, r.Commit[:12], by, reason)
			}
			if len(recs) > 0 {
				fmt.Fprintln(e.stderr, "perfgate: recorded in the history (the runs stay); perfgate sync shares it")
			}
			return nil
		},
	}
}

// runRow is one line of perfgate runs.
type runRow struct {
	ID        string            `json:"id"`
	Commit    string            `json:"commit"`
	Benchmark string            `json:"benchmark"`
	Testbed   string            `json:"testbed"`
	Time      time.Time         `json:"time"`
	Labels    map[string]string `json:"labels,omitempty"`
	Flags     []string          `json:"flags"`
	Invalid   string            `json:"invalid,omitempty"`
	// ForCommit is the commit a run flagged before-commit measured: a
	// dirty run at its parent on a working tree that held exactly the
	// commit's files, which check counts as the commit's.
	ForCommit string `json:"for_commit,omitempty"`
}

// measuredBefore returns the dirty runs at commit's first parent that
// measured its files before it was made (runner.MeasuredBefore), oldest
// first; none when the commit cannot be read.
func measuredBefore(s *store.Store, repo *gitrepo.Repo, commit string) ([]store.Run, error) {
	parent, states, err := repo.CommitStates(commit)
	if err != nil || parent == "" || len(states) == 0 {
		return nil, nil
	}
	prs, err := s.ByCommit(parent)
	if err != nil {
		return nil, err
	}
	out := runner.MeasuredBefore(prs, states)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

func runsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "list the stored runs: id, commit, benchmark, testbed, labels, time, flags (dirty, invalid)",
		Description: "Oldest first. FLAGS: dirty (measured on uncommitted changes, never pushed nor a baseline),\n" +
			"before-commit (with --commit: a dirty run at its parent on a tree holding exactly the commit's files,\n" +
			"which check counts as the commit's; listed after the commit's own runs),\n" +
			"invalid (its own results were invalid, or perfgate invalidate marked it; never a baseline).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "benchmark", Aliases: []string{"name"}, Usage: "only benchmarks matching `GLOB`, e.g. 'serving-*'"},
			&cli.StringFlag{Name: "commit", Usage: "only runs of this commit (any `REV`)"},
			&cli.StringFlag{Name: "since", Usage: "only runs stored at or after `DATE` (YYYY-MM-DD or RFC 3339)"},
			&cli.StringFlag{Name: "until", Usage: "only runs stored up to `DATE` (YYYY-MM-DD: the whole day, or RFC 3339)"},
			&cli.StringFlag{Name: "testbed", Usage: "only runs measured on testbed `NAME` (a glob)"},
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.NArg() > 0 {
				return usageErrorf("runs takes no arguments (got %q); filter with --benchmark, --commit, --since, --until, --testbed", c.Args().First())
			}
			var f store.Filter
			for _, fl := range []struct {
				name string
				dst  *time.Time
				end  bool
			}{{"since", &f.Since, false}, {"until", &f.Until, true}} {
				if v := c.String(fl.name); v != "" {
					t, ok := parseDate(v, fl.end)
					if !ok {
						return usageErrorf("--%s %q is not a date: use YYYY-MM-DD or RFC 3339 (2026-01-02T15:04:05Z)", fl.name, v)
					}
					if fl.end {
						t = t.Add(time.Nanosecond) // Filter.Until excludes
					}
					*fl.dst = t
				}
			}
			glob := c.String("benchmark")
			if _, err := path.Match(glob, ""); err != nil {
				return usageErrorf("--benchmark %q is not a valid glob (path.Match syntax: *, ?, [a-z])", glob)
			}
			tb := c.String("testbed")
			if _, err := path.Match(tb, ""); err != nil {
				return usageErrorf("--testbed %q is not a valid glob (path.Match syntax: *, ?, [a-z])", tb)
			}
			repo, err := openRepoOrDB(c)
			if err != nil {
				return err
			}
			if repo != nil {
				defer repo.Close()
			}
			if rev := c.String("commit"); rev != "" {
				if repo == nil {
					return usageErrorf("--commit needs a git repository to resolve %q; run inside one or pass --repo", rev)
				}
				if f.Commit, err = repo.Resolve(rev); err != nil {
					return gitError(fmt.Errorf("--commit: %w", err))
				}
			}
			var rows []runRow
			err = withHistory(c, repo, func(h history) error {
				if h.s == nil {
					return nil
				}
				add := func(r store.Run, forCommit string) error {
					if glob != "" {
						if ok, _ := path.Match(glob, r.Benchmark); !ok {
							return nil
						}
					}
					if tb != "" {
						if ok, _ := path.Match(tb, r.Testbed); !ok {
							return nil
						}
					}
					row := runRow{ID: r.ID, Commit: r.Commit, Benchmark: r.Benchmark, Testbed: r.Testbed, Time: r.Time.UTC(), Labels: r.Labels, Flags: []string{}, ForCommit: forCommit}
					if r.Dirty {
						row.Flags = append(row.Flags, "dirty")
					}
					if forCommit != "" {
						row.Flags = append(row.Flags, "before-commit")
					}
					if s := h.toSample(r); s.Invalid != "" {
						row.Flags = append(row.Flags, "invalid")
						row.Invalid = s.Invalid
					}
					rows = append(rows, row)
					return nil
				}
				if err := h.s.Each(f, func(r store.Run) error { return add(r, "") }); err != nil {
					return err
				}
				if f.Commit == "" {
					return nil
				}
				before, err := measuredBefore(h.s, repo, f.Commit)
				for _, r := range before {
					if (f.Since.IsZero() || !r.Time.Before(f.Since)) && (f.Until.IsZero() || r.Time.Before(f.Until)) {
						add(r, f.Commit)
					}
				}
				return err
			})
			if err != nil {
				return storeError(err)
			}
			if out == "json" {
				if rows == nil {
					rows = []runRow{}
				}
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(map[string]any{"runs": rows})
			}
			if len(rows) == 0 {
				fmt.Fprintln(e.stderr, "perfgate: no run matches (perfgate runs without filters lists them all)")
				return nil
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCOMMIT\tBENCHMARK\tTESTBED\tLABELS\tTIME\tFLAGS")
			for _, r := range rows {
				flags := strings.Join(r.Flags, ",")
				if flags == "" {
					flags = "-"
				}
				if r.ForCommit != "" {
					flags += " (of " + r.ForCommit[:12] + ")"
				}
				if r.Invalid != "" {
					flags += " (" + r.Invalid + ")"
				}
				tbName := r.Testbed
				if tbName == "" {
					tbName = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Commit[:12], r.Benchmark, tbName, labelList(r.Labels), r.Time.Format(time.RFC3339), flags)
			}
			return tw.Flush()
		},
	}
}

// labelList is a run's labels as k=v,k=v sorted by key; "-" for none.
func labelList(labels map[string]string) string {
	if len(labels) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}

// labelAcceptance is the acceptance of a pull request by label (check
// --accept-label): in GitHub Actions only when the event's pull request
// carries the label (on other events nothing is accepted); outside Actions
// the user passing the label is the decision. nil when nothing is accepted.
func labelAcceptance(c *cli.Context, e *env, repo *gitrepo.Repo, head string) (*gate.Acceptance, error) {
	label := strings.TrimSpace(c.String("accept-label"))
	if label == "" {
		return nil, nil
	}
	ghEnv, err := github.FromEnv(e.getenv)
	if err != nil {
		return nil, envError(fmt.Errorf("--accept-label: cannot read the pull request's labels: %s", ghEnv.Redact(err.Error())))
	}
	switch {
	case ghEnv.PRLabels != nil && !slices.Contains(ghEnv.PRLabels, label):
		fmt.Fprintf(e.stderr, "perfgate: pull request #%d does not carry the label %q: nothing is accepted by label\n", ghEnv.PR, label)
		return nil, nil
	case ghEnv.PRLabels == nil && ghEnv.Actions:
		// A workflow that passes the flag on every event accepts nothing
		// on a push: only a pull request's own label accepts.
		fmt.Fprintf(e.stderr, "perfgate: --accept-label %q: this %s event names no pull request's labels: nothing is accepted by label\n", label, ghEnv.EventName)
		return nil, nil
	}
	by, err := whoAmI(e, repo)
	if err != nil {
		by = "unknown"
	}
	fmt.Fprintf(e.stderr, "perfgate: label %q accepts the changes of %s (by %s)\n", label, repo.Short(head), by)
	return &gate.Acceptance{Commit: head, Reason: fmt.Sprintf("pull request label %q", label), By: by, Time: time.Now().UTC()}, nil
}
