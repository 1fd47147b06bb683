package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/store"
)

// counterScript writes a benchmark that prints a serving block whose Mean
// TTFT is 100 plus its repetition number, and exits 1 in the repetitions
// listed in fail (a counter file counts them).
func counterScript(t *testing.T, dir string, fail ...string) string {
	t.Helper()
	counter := filepath.Join(dir, "count")
	body := "#!/bin/sh\nn=$(cat " + counter + " 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > " + counter + "\n" +
		"echo \"repetition $n starts\"\n"
	for _, f := range fail {
		body += "if [ $n = " + f + " ]; then echo \"repetition $n broke\"; exit 1; fi\n"
	}
	block := strings.ReplaceAll(servingBlock(987654, 300, 500, 0), ftoa(987654), "$((100+n))")
	body += "cat <<EOF\n" + block + "EOF\n"
	p := writeFile(t, dir, "bench.sh", body)
	os.Chmod(p, 0o755)
	return p
}

func storedTTFTs(t *testing.T, db string) []float64 {
	t.Helper()
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []float64
	if err := s.Each(store.Filter{}, func(r store.Run) error {
		out = append(out, r.Metrics["mean_ttft_ms"])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRunRepeatKeepsGoodRepetitions: with --repeat 4, a failing second
// repetition does not discard the other three (issue 11 item 8; before,
// nothing was stored): they are stored, the failure is named, exit 3.
func TestRunRepeatKeepsGoodRepetitions(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	script := counterScript(t, dir, "2")
	db := filepath.Join(dir, "history.db")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "run", "--name", "serving", "--repeat", "4", "--", script)
	if code != 3 {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "stored 3 of 3 results") {
		t.Errorf("stdout %q, want the three good repetitions stored", stdout)
	}
	for _, want := range []string{"1 of 4 repetitions failed, repetitions 1, 3, 4 kept", "repetition 2: run: the benchmark command", "exited with code 1 (repetition 2 of 4)", "the good repetitions are stored"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if got := storedTTFTs(t, db); len(got) != 3 || got[0] != 101 || got[1] != 103 || got[2] != 104 {
		t.Errorf("stored Mean TTFTs %v, want [101 103 104]", got)
	}
}

// TestRunLockedHistorySavesRuns: when the history stays locked (a sync
// holding it), the finished benchmark is not thrown away: its runs are
// saved as JSONL with the raw output beside them, exit 3, and the printed
// perfgate import command stores them once the lock is gone (issue 11
// item 8; before, the result was lost).
func TestRunLockedHistorySavesRuns(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	script := counterScript(t, dir)
	db := filepath.Join(dir, "history.db")
	holder, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PERFGATE_LOCK_TIMEOUT", "200ms")
	_, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "run", "--name", "serving", "--repeat", "2", "--", script)
	holder.Close()
	if code != 3 || !strings.Contains(stderr, "nothing is lost: the 2 run(s) are saved in ") {
		t.Fatalf("exit %d, want 3 and the runs saved; stderr:\n%s", code, stderr)
	}
	_, cmdline, ok := strings.Cut(stderr, "store them with:\n  ")
	if !ok {
		t.Fatalf("no import command in:\n%s", stderr)
	}
	cmdline = strings.TrimSpace(strings.SplitN(cmdline, "\n", 2)[0])
	args := shellWords(t, cmdline)
	if len(args) != 5 || args[0] != "perfgate" || args[1] != "--db" || args[3] != "import" {
		t.Fatalf("import command %q, want perfgate --db DB import FILE", cmdline)
	}
	if filepath.Dir(args[4]) != filepath.Join(dir, "unsaved") {
		t.Errorf("saved in %s, want the unsaved directory next to the history", args[4])
	}
	logs, _ := filepath.Glob(strings.TrimSuffix(args[4], ".jsonl") + ".output-*.log")
	if len(logs) != 2 {
		t.Fatalf("raw outputs %v, want one per repetition", logs)
	}
	if b, _ := os.ReadFile(logs[1]); !strings.Contains(string(b), "repetition 2 starts") || !strings.Contains(string(b), "Mean TTFT (ms):                          102") {
		t.Errorf("raw output of repetition 2:\n%s", b)
	}
	stdout, stderr, code := runCLI(t, "", args[1:]...)
	if code != 0 || !strings.Contains(stdout, "imported 2 runs") {
		t.Fatalf("%s: exit %d, %q %q", cmdline, code, stdout, stderr)
	}
	if got := storedTTFTs(t, db); len(got) != 2 || got[0] != 101 || got[1] != 102 {
		t.Errorf("stored Mean TTFTs %v, want [101 102]", got)
	}
}

// TestRunDoesNotLockDuringBenchmark: the history is not locked while the
// benchmark runs, only to store its result.
func TestRunDoesNotLockDuringBenchmark(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) is not installed")
	}
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	// The history exists before the run, as after earlier runs.
	if s, err := store.Open(db, store.Options{}); err != nil {
		t.Fatal(err)
	} else {
		s.Close()
	}
	block := writeFile(t, dir, "block.txt", servingBlock(100, 300, 500, 0))
	script := writeFile(t, dir, "bench.sh", "#!/bin/sh\nflock -n -x "+db+" true || echo LOCKED-DURING-BENCHMARK\ncat "+block+"\n")
	os.Chmod(script, 0o755)
	for _, rep := range []string{"1", "3"} {
		_, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "run", "--name", "serving", "--repeat", rep, "--", script)
		if code != 0 || strings.Contains(stderr, "LOCKED-DURING-BENCHMARK") {
			t.Errorf("--repeat %s: exit %d; stderr:\n%s", rep, code, stderr)
		}
	}
}

// shellWords splits a command line of words and single-quoted strings.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	var cur strings.Builder
	in, started := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '\'':
			in = !in
			started = true
		case ch == ' ' && !in:
			if started {
				out = append(out, cur.String())
				cur.Reset()
				started = false
			}
		case ch == '\\' && !in && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			started = true
		default:
			cur.WriteByte(ch)
			started = true
		}
	}
	if in {
		t.Fatalf("unbalanced quotes in %q", s)
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}
