package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/perfgate/perfgate/ingest"
)

// Result files (perfgate run --result-file).
//
// Some benchmarks print a summary but write their full result, the
// per-request measurements included, to a file: vLLM's `vllm bench serve
// --save-result --save-detailed --result-dir D --result-filename F`.
// With Command.ResultFile (a path or glob, relative to the command's
// working directory), Exec reads the files it names once the command
// exited with status 0, with ingest's format detection and the command's
// SLO, and their results replace those parsed from the output. A file
// the run did not write (one that was there before it started, unchanged)
// is stale: for a path, an error naming it; for a glob, it is left out
// (an earlier repetition's file), and an error only when no file is new.

// fileStamp is what tells a file written by the run from one that was
// there before: its modification time and size.
type fileStamp struct {
	mod  time.Time
	size int64
}

// pattern is the result file pattern in the command's working directory.
func (c Command) pattern() string {
	if !filepath.IsAbs(c.ResultFile) && c.Dir != "" {
		return filepath.Join(c.Dir, c.ResultFile)
	}
	return c.ResultFile
}

// resultFiles expands the command's result file pattern: the regular
// files it matches, each with its stamp.
func (c Command) resultFiles() (map[string]fileStamp, error) {
	names, err := filepath.Glob(c.pattern())
	if err != nil {
		return nil, resultFileErrorf("--result-file %q is not a valid path or glob: %v; write a path such as results/serve.json or a glob such as 'results/*.json'", c.ResultFile, err)
	}
	out := make(map[string]fileStamp, len(names))
	for _, n := range names {
		st, err := os.Stat(n)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		out[n] = fileStamp{st.ModTime(), st.Size()}
	}
	return out, nil
}

// resultFileError is a result file missing, stale or unreadable; Exec
// returns it as the output's parse error (bad input, as ParseError).
type resultFileError struct{ msg string }

func (e *resultFileError) Error() string { return e.msg }

func resultFileErrorf(format string, args ...any) error {
	return &resultFileError{fmt.Sprintf(format, args...)}
}

// readResultFiles parses the result files the run wrote: those absent from
// before (the stamps taken when it started) or changed since, or modified
// after start.
func (c Command) readResultFiles(before map[string]fileStamp, start time.Time) ([]ingest.Result, error) {
	after, err := c.resultFiles()
	if err != nil {
		return nil, err
	}
	where := ""
	if c.Dir != "" && !filepath.IsAbs(c.ResultFile) {
		where = " in the benchmark's working directory"
	}
	var fresh, stale []string
	for n, st := range after {
		if old, ok := before[n]; ok && old.mod.Equal(st.mod) && old.size == st.size && st.mod.Before(start) {
			stale = append(stale, n)
			continue
		}
		fresh = append(fresh, n)
	}
	sort.Strings(fresh)
	sort.Slice(stale, func(i, j int) bool { return after[stale[i]].mod.After(after[stale[j]].mod) })
	switch {
	case len(fresh) == 0 && len(stale) > 0:
		return nil, resultFileErrorf("%s: --result-file %q: %q is stale: it was last written %s, before this run started (%s), so the run wrote no result file; check that the benchmark saves its result there (vLLM: --save-result --result-dir DIR --result-filename NAME) and that it finished",
			c.sourceName(), c.ResultFile, c.shownPath(stale[0]), after[stale[0]].mod.Format(time.RFC3339), start.Format(time.RFC3339))
	case len(fresh) == 0 && c.matchesDir() != "":
		return nil, resultFileErrorf("%s: --result-file %q: %q is a directory; give the files in it, e.g. --result-file '%s'",
			c.sourceName(), c.ResultFile, c.shownPath(c.matchesDir()), filepath.Join(c.shownPath(c.matchesDir()), "*.json"))
	case len(fresh) == 0:
		return nil, resultFileErrorf("%s: --result-file %q: no file matches it%s after the run; check that the benchmark saves its result there (vLLM: --save-result --result-dir DIR --result-filename NAME); a relative path is relative to where the benchmark runs",
			c.sourceName(), c.ResultFile, where)
	}
	var results []ingest.Result
	for _, n := range fresh {
		rs, err := c.parseResultFile(n)
		if err != nil {
			return nil, err
		}
		results = append(results, rs...)
	}
	return results, nil
}

// matchesDir returns a directory the pattern matches, "" when none.
func (c Command) matchesDir() string {
	names, _ := filepath.Glob(c.pattern())
	for _, n := range names {
		if st, err := os.Stat(n); err == nil && st.IsDir() {
			return n
		}
	}
	return ""
}

// shownPath is a result file's path as the user wrote it: relative to the
// command's directory when it was given relative.
func (c Command) shownPath(n string) string {
	if c.Dir != "" && !filepath.IsAbs(c.ResultFile) {
		if r, err := filepath.Rel(c.Dir, n); err == nil {
			return r
		}
	}
	return n
}

// parseResultFile reads one result file with ingest's detection.
func (c Command) parseResultFile(n string) ([]ingest.Result, error) {
	name := c.shownPath(n)
	f, err := os.Open(n)
	if err != nil {
		return nil, resultFileErrorf("--result-file: cannot open %q: %v", name, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(8 << 10); len(head) == 0 {
		return nil, resultFileErrorf("--result-file: %q is empty: check that the benchmark finished writing it", name)
	} else if bytes.IndexByte(head, 0) >= 0 {
		return nil, resultFileErrorf("--result-file: %q looks like a binary file, not a benchmark result; check the path", name)
	}
	r := ingest.NewReader(br, name, ingest.Options{SLO: c.SLO})
	var out []ingest.Result
	for r.Scan() {
		out = append(out, r.Result())
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &ingest.Error{File: name, Err: ingest.ErrUnrecognized,
			Msg: "--result-file: no benchmark result in the file: " + strings.Join(r.Notes(), "; ")}
	}
	return out, nil
}

// CheckResultFile checks a --result-file pattern before anything runs:
// not empty, and a valid glob.
func CheckResultFile(p string) error {
	if strings.TrimSpace(p) == "" {
		return fmt.Errorf("--result-file is empty; give the path (or glob) of the file the benchmark writes its result to, e.g. --result-file results/serve.json")
	}
	if _, err := filepath.Glob(p); err != nil {
		return fmt.Errorf("--result-file %q is not a valid path or glob: %v; write a path such as results/serve.json or a glob such as 'results/*.json'", p, err)
	}
	return nil
}
