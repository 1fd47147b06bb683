package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/perfgate/perfgate/ingest"
	"github.com/perfgate/perfgate/store"
)

// Spec says what parsed results are stored as.
type Spec struct {
	Root   string // repository root: files inside it are recorded relative to it
	Name   string // --name; combined with a result's own name as NAME/OWN
	Labels map[string]string
	Commit string
	Dirty  bool
	// Tree is the working tree's hash (gitrepo.TreeState) for dirty runs:
	// check uses only the runs of the tree as it is now.
	Tree string
	// Testbed names the machine that measured the results, and Env holds
	// the facts of its environment (package testbed).
	Testbed  string
	Env      map[string]string
	Time     time.Time
	Command  []string
	ExitCode int
}

// inputError is bad input (exit 2): errors.Is(err, store.ErrBadInput).
type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == store.ErrBadInput }

// ToRuns turns parsed results into history runs, as perfgate ingest
// stores them: a result without a name of its own needs Spec.Name; labels
// of the spec override the result's; a result where more than 5% of the
// requests failed is marked invalid; every run records the spec's
// testbed, environment and working-tree hash, and the result's request
// summary when its file carried per-request measurements.
func ToRuns(results []ingest.Result, spec Spec) ([]store.Run, error) {
	runs := make([]store.Run, 0, len(results))
	for i, r := range results {
		bench := BenchmarkName(spec.Name, r.Name)
		if bench == "" {
			return nil, &inputError{fmt.Sprintf("%s:%d: this %s result has no name of its own; pass --name BENCH (for example --name serving-qwen)", r.File, r.Line, r.Format)}
		}
		labels := make(map[string]string, len(r.Labels)+len(spec.Labels))
		for k, v := range r.Labels {
			labels[k] = v
		}
		for k, v := range spec.Labels {
			labels[k] = v
		}
		var reqs []byte
		if r.Requests != nil {
			reqs = r.Requests.Marshal()
		}
		runs = append(runs, store.Run{
			Commit:    spec.Commit,
			Benchmark: bench,
			// Blocks of one file keep their order in time.
			Time:     spec.Time.Add(time.Duration(i) * time.Microsecond),
			Metrics:  r.Metrics,
			Labels:   labels,
			Source:   store.Source{Format: r.Format, File: SourceFile(r.File, spec.Root), Line: r.Line},
			Command:  spec.Command,
			ExitCode: spec.ExitCode,
			Dirty:    spec.Dirty,
			Invalid:  resultInvalid(r),
			Testbed:  spec.Testbed,
			Env:      spec.Env,
			Tree:     spec.Tree,
			Requests: reqs,
		})
	}
	return runs, nil
}

// BenchmarkName combines --name with the result's own name.
func BenchmarkName(flag, own string) string {
	switch {
	case flag == "":
		return own
	case own == "":
		return flag
	}
	return flag + "/" + own
}

// resultInvalid is the tool's own verdict (ingest.Result.Invalid), else
// invalidReason.
func resultInvalid(r ingest.Result) string {
	if r.Invalid != "" {
		return r.Invalid
	}
	return invalidReason(r.Metrics)
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

// SourceFile is the stable name a run records for its input: "-" for
// stdin, a path relative to the repository root for files inside it (so
// re-ingesting the same file from another directory is still a no-op),
// else the absolute path.
func SourceFile(file, root string) string {
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

// MeasuredBefore returns the runs of parentRuns that measured a commit
// before it was made: the dirty runs whose working-tree hash is one of
// states, the states the parent's checkout had when it held exactly the
// commit's files (gitrepo.CommitStates). A run measured, then committed as
// is, counts for the commit: it measured those files.
func MeasuredBefore(parentRuns []store.Run, states []string) []store.Run {
	var out []store.Run
	for _, r := range parentRuns {
		if r.Dirty && r.Tree != "" && slices.Contains(states, r.Tree) {
			out = append(out, r)
		}
	}
	return out
}

// MeasureCommand is the command that measures the working tree again as
// the dirty runs among runs were measured: perfgate run with the
// benchmark, the testbed (when it is neither "unknown" nor here, the
// testbed this machine takes without the flag), the --setup, --server,
// --ready or --ready-log and --result-file the latest such run made by
// perfgate run recorded, and its command; else with placeholders.
func MeasureCommand(runs []store.Run, here string) string {
	var last *store.Run
	for i := range runs {
		r := &runs[i]
		if r.Dirty && len(r.Command) > 0 && (last == nil || r.Time.After(last.Time)) {
			last = r
		}
	}
	if last == nil {
		return "perfgate run --name BENCH -- CMD"
	}
	words := []string{"perfgate", "run", "--name", shellQuote(last.Benchmark)}
	if last.Testbed != "" && last.Testbed != "unknown" && last.Testbed != here {
		words = append(words, "--testbed", shellQuote(last.Testbed))
	}
	for _, f := range []struct{ fact, flag string }{
		{FactSetup, "--setup"}, {FactServer, "--server"}, {FactReadyURL, "--ready"}, {FactReadyLog, "--ready-log"},
		{FactResultFile, "--result-file"},
	} {
		if v := last.Env[f.fact]; v != "" {
			words = append(words, f.flag, shellQuote(v))
		}
	}
	words = append(words, "--")
	for _, a := range last.Command {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
