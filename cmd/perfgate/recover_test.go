package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// damagedHistoryFile makes a real history of 300 runs with the store and
// returns its bytes and its page size and count of pages in use (from
// its meta page).
func damagedHistoryFile(t *testing.T) (data []byte, pageSize, pages int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for c := range 30 {
		var runs []store.Run
		for b := range 10 {
			runs = append(runs, store.Run{
				Commit:    fmt.Sprintf("%040x", 1000+c),
				Benchmark: fmt.Sprintf("serving-%d", b%3),
				Time:      t0.Add(time.Duration(c*10+b) * time.Minute),
				Metrics:   map[string]float64{"mean_ttft_ms": 500 + float64(b), "output_throughput": 1234.5, "completed": 1000, "p99_itl_ms": float64(c) / 7},
				Labels:    map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct", "hardware": "910B3"},
				Source:    store.Source{Format: "vllm-serve-text", File: "bench.log", Line: b + 1},
			})
		}
		if _, err := s.Put(runs); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The meta page: page header (16 bytes), then magic, version, page
	// size, flags, root bucket (16), freelist, high water mark.
	pageSize = int(binary.LittleEndian.Uint32(data[16+8:]))
	pages = int(binary.LittleEndian.Uint64(data[16+40:]))
	return data, pageSize, pages
}

// A damaged history never crashes a perfgate process (issue 11: 69 of 80
// runs against a truncated history.db died with SIGBUS, SIGSEGV or a
// bbolt panic and a stack trace, exit 2). Whatever the damage, export and
// ingest exit 0 (harmless damage) or 3 with an error that says to run
// perfgate recover, never with a stack trace; and recover writes runs
// that import into a new history.
func TestDamagedHistoryCLI(t *testing.T) {
	parallel(t) // perfgate as processes, with their own environment: beside the other such tests
	data, ps, pages := damagedHistoryFile(t)
	used := ps * pages
	type damage struct {
		name string
		data []byte
	}
	var cases []damage
	for i := range 40 {
		off := used * i / 40
		if i < 4 {
			off = []int{0, 100, ps, 2*ps + 8}[i]
		}
		cases = append(cases, damage{fmt.Sprintf("cut at %d", off), data[:off]})
	}
	for i := range 40 {
		off := 2*ps + (used-2*ps)*i/40 + i%3*8 // page headers and the bytes after them
		d := bytes.Clone(data)
		d[off] ^= 0xff
		cases = append(cases, damage{fmt.Sprintf("flip byte %d", off), d})
	}
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "a"})
	dir := t.TempDir()
	crashed := func(stderr string) bool {
		for _, s := range []string{"panic", "goroutine ", "SIGBUS", "SIGSEGV", "fatal error"} {
			if strings.Contains(stderr, s) {
				return true
			}
		}
		return false
	}
	exits := map[string]int{}
	for i, c := range cases {
		db := filepath.Join(dir, fmt.Sprintf("h%d.db", i))
		if err := os.WriteFile(db, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"--db", db, "export"},
			{"--repo", repo, "--db", db, "ingest", "--name", "serving-new", "-"},
		} {
			cmd := cliProcess(args...)
			cmd.Stdin = strings.NewReader(servingBlock(600, 300, 1000, 0))
			cmd.Env = append(cmd.Env, "PERFGATE_LOCK_TIMEOUT=-1s")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Run()
			code := cmd.ProcessState.ExitCode()
			exits[fmt.Sprintf("%s exit %d", strings.Fields(strings.Join(args, " "))[map[bool]int{true: 2, false: 4}[args[0] == "--db"]], code)]++
			switch {
			case crashed(stderr.String()):
				t.Errorf("%s: perfgate %s crashed (exit %d):\n%.600s", c.name, strings.Join(args, " "), code, stderr.String())
			case code == 3 && !strings.Contains(stderr.String(), "perfgate recover") && !strings.Contains(stderr.String(), "not a perfgate history"):
				t.Errorf("%s: perfgate %s exits 3 without saying how to recover: %s", c.name, strings.Join(args, " "), stderr.String())
			case code != 0 && code != 3:
				t.Errorf("%s: perfgate %s exits %d, want 0 (harmless damage) or 3: %s", c.name, strings.Join(args, " "), code, stderr.String())
			}
		}
		if i%4 == 1 {
			// The other commands that read the history, on a quarter of
			// the cases: damage is the environment's (3) from every one,
			// never a usage error (2).
			for _, args := range [][]string{
				{"--repo", repo, "--db", db, "check"},
				{"--repo", repo, "--db", db, "history", "--name", "serving-1", "--metric", "mean_ttft_ms"},
				{"--repo", repo, "--db", db, "watch"},
				{"--db", db, "runs"},
			} {
				_, stderr, code := runCLI(t, "", args...)
				switch {
				case crashed(stderr):
					t.Errorf("%s: perfgate %s crashed (exit %d):\n%.600s", c.name, strings.Join(args, " "), code, stderr)
				case strings.Contains(stderr, "damaged") && code != 3:
					t.Errorf("%s: perfgate %s reports damage with exit %d, want 3: %s", c.name, strings.Join(args, " "), code, stderr)
				}
			}
		}
		if i%4 != 0 {
			continue // recover is slower: a quarter of the cases
		}
		if err := os.WriteFile(db, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		saved := filepath.Join(dir, fmt.Sprintf("h%d.jsonl", i))
		_, stderr, code := runCLI(t, "", "--db", db, "recover", "--out", saved)
		if code != 0 && code != 3 || crashed(stderr) {
			t.Errorf("%s: perfgate recover exits %d: %s", c.name, code, stderr)
			continue
		}
		if code == 3 && !strings.Contains(stderr, "perfgate import "+saved) && !strings.Contains(stderr, "no run could be read") {
			t.Errorf("%s: perfgate recover does not say how to rebuild: %s", c.name, stderr)
		}
		if _, err := os.Stat(saved); err != nil {
			continue // nothing could be read at all
		}
		if _, stderr, code := runCLI(t, "", "--db", filepath.Join(dir, fmt.Sprintf("new%d.db", i)), "import", saved); code != 0 {
			t.Errorf("%s: the recovered runs do not import (exit %d): %s", c.name, code, stderr)
		}
	}
	t.Logf("%d damaged histories: %v", len(cases), exits)
}

// recover on an undamaged history writes every run and exits 0; on a
// history cut short it writes what it can read, says what was lost and
// how to rebuild, and exits 3.
func TestRecover(t *testing.T) {
	data, ps, pages := damagedHistoryFile(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	if err := os.WriteFile(db, data, 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "", "--db", db, "recover")
	if code != 0 || strings.Count(stdout, "\n") != 300 || !strings.Contains(stderr, "recovered all 300 runs") {
		t.Fatalf("recover of an undamaged history: exit %d, %d lines, stderr %q", code, strings.Count(stdout, "\n"), stderr)
	}

	// Cut at 2/3: export fails with exit 3; recover writes what it can
	// read (how much depends on where bbolt put the pages), says what was
	// lost and how to rebuild, and exits 3 unless it read every run.
	if err := os.WriteFile(db, data[:ps*pages*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "", "--db", db, "export")
	if code != 3 || !strings.Contains(stderr, "is damaged") || !strings.Contains(stderr, "cut short") || !strings.Contains(stderr, "perfgate recover") {
		t.Fatalf("export of a cut-short history: exit %d, stderr %q", code, stderr)
	}
	saved := filepath.Join(dir, "runs.jsonl")
	_, stderr, code = runCLI(t, "", "--db", db, "recover", "--out", saved)
	got, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(got), "\n")
	wantCode := 3
	if n == 300 {
		wantCode = 0
	}
	if code != wantCode || !strings.Contains(stderr, fmt.Sprintf("recovered %d of ", n)) ||
		!strings.Contains(stderr, "damage: ") || !strings.Contains(stderr, "perfgate sync --pull-only") {
		t.Fatalf("recover of a cut-short history: exit %d, stderr %q", code, stderr)
	}
	if n > 0 && !strings.Contains(stderr, "perfgate import "+saved) {
		t.Errorf("recover does not say to import what it read: %s", stderr)
	}
	t.Logf("%s", stderr)
}
