package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/bisect"
	"github.com/perfgate/perfgate/gitrepo"
)

// The flows of bisect and bisect-step that people stumble on (issue 15
// item 5): a script that is not committed, a --baseline without a usable
// stored result. Each is one helper, called from bisectcmd.go.

// localScript finds the script a --run command line starts with (its
// first word, or the second after sh/bash) when it is a relative path that
// exists in the user's working tree but is missing at one of the commits
// (the command runs in a temporary checkout of each commit, where it would
// fail with exit code 127). It returns the command line with the script
// replaced by its absolute path in the working tree, and a note that says
// so; or cmdline unchanged and "".
func localScript(repo *gitrepo.Repo, cmdline string, revs ...string) (string, string) {
	root := repo.Root()
	if root == "" {
		return cmdline, ""
	}
	words := strings.Fields(cmdline)
	idx := 0
	if len(words) > 1 && (words[0] == "sh" || words[0] == "bash") {
		idx = 1
	}
	if idx >= len(words) {
		return cmdline, ""
	}
	word := words[idx]
	if !strings.Contains(word, "/") || filepath.IsAbs(word) || strings.ContainsAny(word, "'\"$`\\*?[]{}~;&|<>()") {
		return cmdline, ""
	}
	rel := path.Clean(word)
	if strings.HasPrefix(rel, "../") || rel == ".." {
		return cmdline, ""
	}
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if fi, err := os.Stat(abs); err != nil || !fi.Mode().IsRegular() {
		return cmdline, ""
	}
	var missing []string
	for _, rev := range revs {
		if ok, err := repo.HasFile(rev, rel); err == nil && !ok {
			missing = append(missing, repo.Short(rev))
		}
	}
	if len(missing) == 0 {
		return cmdline, ""
	}
	at := strings.Index(cmdline, word)
	out := cmdline[:at] + shellQuote(abs) + cmdline[at+len(word):]
	note := fmt.Sprintf("%s is not committed at %s: each checkout runs the copy in your working tree, %s (commit it to bisect with the script of each commit)",
		word, strings.Join(missing, " and "), abs)
	return out, note
}

// shellQuote quotes s for sh -c.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}~;&|<>()#!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin renders argv as one sh -c command line.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

// dirtyAt counts the stored runs of the benchmark at sha that carry the
// metric but were left out because they were made in a dirty working tree
// (a tracked file modified): perfgate does not take them as a reference.
func dirtyAt(c *cli.Context, repo *gitrepo.Repo, sp bisectSpec, sha string) int {
	s, err := openStore(c, repo, true)
	if err != nil || s == nil {
		return 0
	}
	defer s.Close()
	runs, err := s.ByBenchmark(sp.name, []string{sha})
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range runs[sha] {
		if _, ok := r.Metrics[sp.metric.Name]; ok && r.Dirty && r.Invalid == "" && labelsMatch(r.Labels, sp.labels) {
			n++
		}
	}
	return n
}

// measureBaseline runs the benchmark once at the --baseline commit, in a
// temporary checkout (never the user's, which git bisect has moved), and
// stores the run, so that the next steps find it. It returns the metric's
// value there.
func measureBaseline(ctx context.Context, c *cli.Context, e *env, repo *gitrepo.Repo, sp bisectSpec, sha string, argv []string) (float64, error) {
	cmdline := shellJoin(argv)
	if len(argv) == 3 && argv[0] == "sh" && argv[1] == "-c" {
		cmdline = argv[2]
	}
	cmdline, note := localScript(repo, cmdline, sha)
	if note != "" {
		fmt.Fprintf(e.stderr, "perfgate: bisect-step: %s\n", note)
	}
	parser := newStreamParser("output of the command at --baseline "+repo.Short(sha), sp.format)
	wt := &bisect.Worktree{Repo: repo}
	res, err := wt.Run(ctx, sha, cmdline, io.MultiWriter(e.stderr, parser))
	results, perr := parser.Finish()
	if err != nil {
		return 0, err
	}
	if res.ExitCode != 0 {
		return 0, fmt.Errorf("the command exited %d there", res.ExitCode)
	}
	if perr != nil {
		return 0, perr
	}
	if len(results) == 0 {
		return 0, fmt.Errorf("the command printed no benchmark result there")
	}
	runs, err := toRuns(results, runSpec{name: sp.name, labels: sp.labels, commit: sha, time: time.Now(), command: []string{"sh", "-c", cmdline}})
	if err != nil {
		return 0, err
	}
	var values []float64
	for _, r := range runs {
		if v, ok := r.Metrics[sp.metric.Name]; ok && r.Benchmark == sp.name && r.Invalid == "" {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return 0, fmt.Errorf("its output has no valid %s of %s", sp.metric.Name, sp.name)
	}
	if !c.Bool("no-store") {
		if err := storeStep(c, repo, runs); err != nil {
			fmt.Fprintf(e.stderr, "perfgate: warning: bisect-step: the baseline's result was not stored: %v\n", err)
		}
	}
	return medianOf(values), nil
}

// baselineHint is the command that stores a result at the baseline by
// hand, for when measuring it here failed: to run before git bisect start,
// in a clean checkout.
func baselineHint(rev string, sp bisectSpec, argv []string) string {
	labels := ""
	for _, k := range sortedKeys(sp.labels) {
		labels += " --label " + shellQuote(k+"="+sp.labels[k])
	}
	return fmt.Sprintf("git checkout %s && { %s; } | perfgate ingest --name %s%s - ; git checkout -",
		shellQuote(rev), shellJoin(argv), shellQuote(sp.name), labels)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// baselineFallback is bisect-step's reference when --baseline has no
// usable stored result: it says why (none stored, or only runs from a
// dirty working tree), measures the baseline once in a temporary checkout
// and stores it; when that fails, it prints the command that stores one.
func baselineFallback(c *cli.Context, e *env, repo *gitrepo.Repo, sp bisectSpec, rev, sha string, argv []string) (float64, error) {
	why := fmt.Sprintf("no stored %s result with %s", sp.name, sp.metric.Name)
	if n := dirtyAt(c, repo, sp, sha); n > 0 {
		why = fmt.Sprintf("its %d stored %s result(s) were made in a dirty working tree (a tracked file was modified), and a dirty run is never a reference", n, sp.name)
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: --baseline %s: %s; measuring %s once in a temporary checkout\n", rev, why, repo.Short(sha))
	v, err := measureBaseline(c.Context, c, e, repo, sp, sha, argv)
	if err != nil {
		return 0, stepConfigErrorf("--baseline %s: %s, and measuring it failed: %v; store a result there before git bisect start:\n  %s\nor pass --reference VALUE", rev, why, err, baselineHint(rev, sp, argv))
	}
	stored := "stored for the next steps"
	if c.Bool("no-store") {
		stored = "not stored (--no-store): every step measures it again"
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: --baseline %s: %s %s, %s\n", rev, sp.metric.Name, strconv.FormatFloat(v, 'g', 6, 64), stored)
	return v, nil
}

// historyShape returns the stored runs of the benchmark at commits outside
// the searched range (shas), one slice per commit with two runs or more,
// made in a clean tree with the metric and the --label setup (nil when
// several setups are stored): their spread teaches the search the noise's
// shape (bisect.Options.History). A history that cannot be read gives
// nil; the search does without.
func historyShape(c *cli.Context, e *env, repo *gitrepo.Repo, sp bisectSpec, shas []string) [][]float64 {
	s, err := openStore(c, repo, true)
	if err != nil || s == nil {
		return nil
	}
	defer s.Close()
	commits, err := s.Commits(sp.name)
	if err != nil {
		return nil
	}
	inRange := make(map[string]bool, len(shas))
	for _, sha := range shas {
		inRange[sha] = true
	}
	var outside []string
	for _, sha := range commits {
		if !inRange[sha] {
			outside = append(outside, sha)
		}
	}
	runs, err := s.ByBenchmark(sp.name, outside)
	if err != nil {
		return nil
	}
	// One setup only: runs of another testbed have another noise.
	byIdentity := map[string][][]float64{}
	for _, sha := range outside {
		vs := map[string][]float64{}
		for _, r := range runs[sha] {
			if v, ok := r.Metrics[sp.metric.Name]; ok && !r.Dirty && r.Invalid == "" && labelsMatch(r.Labels, sp.labels) {
				id := identityKey(r.Labels)
				vs[id] = append(vs[id], v)
			}
		}
		for id, v := range vs {
			if len(v) >= 2 {
				byIdentity[id] = append(byIdentity[id], v)
			}
		}
	}
	if len(byIdentity) != 1 {
		return nil
	}
	for _, history := range byIdentity {
		n := 0
		for _, h := range history {
			n += len(h)
		}
		fmt.Fprintf(e.stderr, "perfgate: bisect: the noise's shape also learns from %d stored runs at %d commits outside the range\n", n, len(history))
		return history
	}
	return nil
}
