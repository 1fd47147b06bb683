package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/bisect"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/internal/robust"
	"github.com/perfgate/perfgate/store"
)

// The flows of bisect and bisect-step that people stumble on (issue 15
// item 5): a script that is not committed, a --baseline without a usable
// stored result, and the stored runs outside the range that teach the
// search the noise's shape. The CLI prints the notes and messages.

// LocalScript finds the script a --run command line starts with (its
// first word, or the second after sh/bash) when it is a relative path that
// exists in the user's working tree but is missing at one of the commits
// revs (the command runs in a temporary checkout of each commit, where it
// would fail with exit code 127). It returns the command line with the
// script replaced by its absolute path in the working tree, and a note
// that says so; or cmdline unchanged and "".
func LocalScript(repo *gitrepo.Repo, cmdline string, revs ...string) (string, string) {
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
	out := cmdline[:at] + ShellQuote(abs) + cmdline[at+len(word):]
	note := fmt.Sprintf("%s is not committed at %s: each checkout runs the copy in your working tree, %s (commit it to bisect with the script of each commit)",
		word, strings.Join(missing, " and "), abs)
	return out, note
}

// ShellJoin renders argv as one sh -c command line, each word quoted with
// ShellQuote, so that no word is split or expanded.
func ShellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// CommandLine is the sh -c command line that runs argv (bisect-step's
// command, given as --run or after --): the script itself when argv is
// sh -c SCRIPT, else argv's words quoted for the shell.
func CommandLine(argv []string) string {
	if len(argv) == 3 && argv[0] == "sh" && argv[1] == "-c" {
		return argv[2]
	}
	return ShellJoin(argv)
}

// ProgramName names the command argv runs in messages: the script the
// user gave (shortened to 80 characters) when argv is sh -c SCRIPT
// (--run 'CMD'), else the program.
func ProgramName(argv []string) string {
	if len(argv) == 0 {
		return ""
	}
	if len(argv) != 3 || argv[0] != "sh" || argv[1] != "-c" {
		return argv[0]
	}
	script := strings.Join(strings.Fields(argv[2]), " ")
	if r := []rune(script); len(r) > 80 {
		script = string(r[:79]) + "…"
	}
	return script
}

// DirtyRuns counts the runs (those stored at one commit) of the target
// that carry its metric but are left out because they were made in a dirty
// working tree (a tracked file modified): perfgate does not take them as a
// reference. Invalid runs and runs of other labels do not count.
func DirtyRuns(runs []store.Run, t Target) int {
	n := 0
	for _, r := range runs {
		if _, ok := r.Metrics[t.Metric.Name]; ok && r.Dirty && r.Invalid == "" && labelsMatch(r.Labels, t.Labels) {
			n++
		}
	}
	return n
}

// MeasureBaseline runs cmdline once at sha (bisect-step's --baseline), in
// a temporary checkout of w (never the user's, which git bisect has
// moved), stores the run with sv, so that the next steps find it, and
// returns the median of the metric's values there. live shows the
// command's output as it runs; nil hides it.
// serve, when active, runs the setup and server there first (stopped
// before it returns).
func MeasureBaseline(ctx context.Context, w *Worktree, sv *Saver, t Target, sha, cmdline string, live io.Writer, serve *Serve) (float64, error) {
	m := &CommitMeasurer{
		Worktree: w,
		Saver:    sv,
		Target:   t,
		Commits:  []bisect.Commit{{SHA: sha, Short: w.Repo.Short(sha)}},
		Cmdline:  cmdline,
		Live:     live,
		Serve:    serve,
	}
	defer m.Close()
	values, err := m.Measure(ctx, 0)
	if err != nil {
		return 0, err
	}
	return robust.Median(values), nil
}

// BaselineHint is the command that stores a result at the baseline rev by
// hand, for when measuring it failed: to run before git bisect start, in
// a clean checkout.
func BaselineHint(rev string, t Target, argv []string) string {
	keys := make([]string, 0, len(t.Labels))
	for k := range t.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	labels := ""
	for _, k := range keys {
		labels += " --label " + ShellQuote(k+"="+t.Labels[k])
	}
	return fmt.Sprintf("git checkout %s && { %s; } | perfgate ingest --name %s%s - ; git checkout -",
		ShellQuote(rev), ShellJoin(argv), ShellQuote(t.Name), labels)
}

// HistoryShape returns the stored runs of the target's benchmark at the
// commits of s outside a bisect's range (shas), one slice per commit with
// two runs or more, clean and of the target's setup and testbed (Stored's
// rules), and how many runs they hold in all: their spread teaches the
// search the noise's shape (bisect.Options.History). mark, when not nil,
// marks the runs invalidated on record (their Invalid reason) before they
// are read. An error means the history could not be read, or holds
// several setups; the search then does without.
func HistoryShape(s *store.Store, t Target, shas []string, mark func(map[string][]store.Run) error) (history [][]float64, n int, err error) {
	commits, err := s.Commits(t.Name)
	if err != nil {
		return nil, 0, err
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
	runs, err := s.ByBenchmark(t.Name, outside)
	if err == nil && mark != nil {
		err = mark(runs)
	}
	if err != nil {
		return nil, 0, err
	}
	known, _, err := Stored(runs, t, outside)
	if err != nil {
		return nil, 0, err
	}
	for i := range outside {
		if vs := known[i]; len(vs) >= 2 {
			history = append(history, vs)
			n += len(vs)
		}
	}
	return history, n, nil
}
