package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/bisect"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/runner"
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
func dirtyAt(c *cli.Context, repo *gitrepo.Repo, sp runner.Target, sha string) int {
	s, err := openStore(c, repo, true)
	if err != nil || s == nil {
		return 0
	}
	defer s.Close()
	runs, err := s.ByBenchmark(sp.Name, []string{sha})
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range runs[sha] {
		if _, ok := r.Metrics[sp.Metric.Name]; ok && r.Dirty && r.Invalid == "" && hasLabels(r.Labels, sp.Labels) {
			n++
		}
	}
	return n
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// measureBaseline runs the benchmark once at the --baseline commit, in a
// temporary checkout (never the user's, which git bisect has moved), and
// stores the run, so that the next steps find it. It returns the metric's
// value there.
func measureBaseline(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, sha string, argv []string) (float64, error) {
	cmdline := shellJoin(argv)
	if len(argv) == 3 && argv[0] == "sh" && argv[1] == "-c" {
		cmdline = argv[2]
	}
	cmdline, note := localScript(repo, cmdline, sha)
	if note != "" {
		fmt.Fprintf(e.stderr, "perfgate: bisect-step: %s\n", note)
	}
	m := &runner.CommitMeasurer{
		Worktree: &runner.Worktree{Repo: repo},
		Saver:    saver(c, repo),
		Target:   sp,
		Commits:  []bisect.Commit{{SHA: sha, Short: repo.Short(sha)}},
		Cmdline:  cmdline,
		Live:     e.stderr,
	}
	values, err := m.Measure(c.Context, 0)
	if err != nil {
		return 0, err
	}
	return medianOf(values), nil
}

// baselineHint is the command that stores a result at the baseline by
// hand, for when measuring it here failed: to run before git bisect start,
// in a clean checkout.
func baselineHint(rev string, sp runner.Target, argv []string) string {
	labels := ""
	for _, k := range sortedKeys(sp.Labels) {
		labels += " --label " + shellQuote(k+"="+sp.Labels[k])
	}
	return fmt.Sprintf("git checkout %s && { %s; } | perfgate ingest --name %s%s - ; git checkout -",
		shellQuote(rev), shellJoin(argv), shellQuote(sp.Name), labels)
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
func baselineFallback(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, rev, sha string, argv []string) (float64, error) {
	why := fmt.Sprintf("no stored %s result with %s", sp.Name, sp.Metric.Name)
	if n := dirtyAt(c, repo, sp, sha); n > 0 {
		why = fmt.Sprintf("its %d stored %s result(s) were made in a dirty working tree (a tracked file was modified), and a dirty run is never a reference", n, sp.Name)
	}
	if c.Bool("no-store") {
		return 0, stepConfigErrorf("--baseline %s: %s; with --no-store it is not measured here (every step would run it again): store a result there before git bisect start:\n  %s\nor pass --reference VALUE", rev, why, baselineHint(rev, sp, argv))
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: --baseline %s: %s; measuring %s once in a temporary checkout\n", rev, why, repo.Short(sha))
	v, err := measureBaseline(c, e, repo, sp, sha, argv)
	if err != nil {
		return 0, stepConfigErrorf("--baseline %s: %s, and measuring it failed: %v; store a result there before git bisect start:\n  %s\nor pass --reference VALUE", rev, why, err, baselineHint(rev, sp, argv))
	}
	fmt.Fprintf(e.stderr, "perfgate: bisect-step: --baseline %s: %s %s, stored for the next steps\n", rev, sp.Metric.Name, strconv.FormatFloat(v, 'g', 6, 64))
	return v, nil
}

// historyShape returns the stored runs of the benchmark at commits outside
// the searched range (shas), one slice per commit with two runs or more,
// clean and of the target's setup and testbed (runner.Stored's rules; nil
// when several setups are stored): their spread teaches the search the
// noise's shape (bisect.Options.History). A history that cannot be read
// gives nil; the search does without.
func historyShape(c *cli.Context, e *env, repo *gitrepo.Repo, sp runner.Target, shas []string) [][]float64 {
	s, err := openStore(c, repo, true)
	if err != nil || s == nil {
		return nil
	}
	defer s.Close()
	commits, err := s.Commits(sp.Name)
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
	runs, err := s.ByBenchmark(sp.Name, outside)
	if err == nil {
		err = markInvalidated(s, runs)
	}
	if err != nil {
		return nil
	}
	known, _, err := runner.Stored(runs, sp, outside)
	if err != nil {
		return nil
	}
	var history [][]float64
	n := 0
	for i := range outside {
		if vs := known[i]; len(vs) >= 2 {
			history = append(history, vs)
			n += len(vs)
		}
	}
	if len(history) > 0 {
		fmt.Fprintf(e.stderr, "perfgate: bisect: the noise's shape also learns from %d stored runs at %d commits outside the range\n", n, len(history))
	}
	return history
}
