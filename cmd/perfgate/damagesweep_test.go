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

// A one-byte damage sweep: in every page of a real history, each of three
// bytes of the page's structure (its element count, and its first
// element's first two fields: the bytes bbolt walks by) is flipped in turn, and every
// command that reads or writes the history runs on the copy. Each ends
// with exit 3 naming the damage, or exit 0/1 with an answer drawn from
// the history's real content (export's lines are lines of the undamaged
// export), never with a crash, a usage error, or a hang.
func TestDamageSweepEveryPage(t *testing.T) {
	repo := gitRepo(t)
	var shas []string
	for i := range 12 {
		shas = append(shas, commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"m.txt": fmt.Sprint(i)}))
	}
	db := filepath.Join(t.TempDir(), "history.db")
	s, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for c, sha := range shas {
		var runs []store.Run
		for b := range 12 {
			runs = append(runs, store.Run{
				Commit: sha, Benchmark: fmt.Sprintf("serving-%d", b%4), Time: t0.Add(time.Duration(c*12+b) * time.Minute),
				Metrics: map[string]float64{"mean_ttft_ms": 500 + float64(b) + float64(c%3), "output_throughput": 1234.5, "completed": 1000, "failed": 0},
				Labels:  map[string]string{"model": "Qwen/Qwen2.5-7B-Instruct", "rep": fmt.Sprint(b / 4)},
				Source:  store.Source{Format: "vllm-serve-text", File: "bench.log", Line: b + 1},
			})
		}
		if _, err := s.Put(runs); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutRecords([]store.Record{{Kind: store.RecordAccept, Commit: shas[5], Benchmark: "serving-1", Metric: "mean_ttft_ms", Reason: "intended", By: "ci", Time: t0}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	data, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(data[16+8:]))
	pages := int(binary.LittleEndian.Uint64(data[16+40:]))
	good, stderr, code := runCLI(t, "", "--db", db, "export")
	if code != 0 {
		t.Fatalf("export of the undamaged history: exit %d\n%s", code, stderr)
	}
	goodLines := map[string]bool{}
	for _, l := range strings.Split(good, "\n") {
		goodLines[l] = true
	}
	commands := func(db, out string) [][]string {
		return [][]string{
			{"--db", db, "export"},
			{"--db", db, "runs"},
			{"--repo", repo, "--db", db, "check", "--rule", "mean_ttft_ms:5%"},
			{"--repo", repo, "--db", db, "history", "--name", "serving-1", "--metric", "mean_ttft_ms"},
			{"--repo", repo, "--db", db, "watch"},
			{"--repo", repo, "--db", db, "compare", shas[3], shas[10]},
			{"--repo", repo, "--db", db, "site", "--out", out},
			{"--repo", repo, "--db", db, "accept", "--benchmark", "serving-2", "--metric", "mean_ttft_ms", "--reason", "sweep"},
			{"--repo", repo, "--db", db, "ingest", "--name", "serving-new", "-"},
		}
	}
	crashed := func(stderr string) bool {
		for _, s := range []string{"panic", "goroutine ", "SIGBUS", "SIGSEGV", "fatal error"} {
			if strings.Contains(stderr, s) {
				return true
			}
		}
		return false
	}
	t.Setenv("PERFGATE_LOCK_TIMEOUT", "-1s")
	dir := t.TempDir()
	exits := map[string]int{}
	cases := 0
	for i := 0; i < (pages-2)*3; i++ { // pages 0 and 1 are the meta pages, which bbolt checksums
		// The element count, and the first two fields of the first
		// element: a leaf's flags and offset, a branch's offset and key
		// size (the key offset whose damage once looped forever).
		pg := 2 + i/3
		off := pg*ps + []int{10, 16, 20}[i%3]
		cases++
		d := bytes.Clone(data)
		d[off] ^= 0xff
		for ci := range commands("", "") {
			path := filepath.Join(dir, fmt.Sprintf("p%d-c%d.db", pg, ci))
			if err := os.WriteFile(path, d, 0o644); err != nil {
				t.Fatal(err)
			}
			args := commands(path, filepath.Join(dir, fmt.Sprintf("site-%d-%d", pg, ci)))[ci]
			type result struct {
				stdout, stderr string
				code           int
			}
			done := make(chan result, 1)
			go func() {
				o, e, c := runCLI(t, servingBlock(600, 300, 1000, 0), args...)
				done <- result{o, e, c}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(60 * time.Second):
				t.Fatalf("page %d byte %d: perfgate %s still runs after 60 s", pg, off, strings.Join(args, " "))
			}
			name := args[len(args)-1]
			for _, a := range args {
				if !strings.HasPrefix(a, "-") && a != repo && a != path && a != "" {
					name = a
					break
				}
			}
			exits[fmt.Sprintf("%s %d", name, r.code)]++
			where := fmt.Sprintf("page %d byte %d: perfgate %s", pg, off, strings.Join(args, " "))
			switch {
			case crashed(r.stderr):
				t.Errorf("%s crashed (exit %d):\n%.600s", where, r.code, r.stderr)
			case r.code == 3 && !strings.Contains(r.stderr, "perfgate recover") && !strings.Contains(r.stderr, "not a perfgate history") && !strings.Contains(r.stderr, "no results"):
				t.Errorf("%s exits 3 without naming the damage or what to do: %s", where, r.stderr)
			case r.code != 0 && r.code != 1 && r.code != 3:
				t.Errorf("%s exits %d, want 0, 1 or 3: %s", where, r.code, r.stderr)
			case r.code == 0 && name == "export":
				for _, l := range strings.Split(r.stdout, "\n") {
					if !goodLines[l] {
						t.Errorf("%s exports a line the history never held: %.300s", where, l)
						break
					}
				}
				if r.stdout != good {
					t.Errorf("%s exits 0 but exports %d of the %d runs: damage that loses runs is exit 3", where, strings.Count(r.stdout, "\n"), strings.Count(good, "\n"))
				}
			}
		}
	}
	t.Logf("%d damaged copies (%d pages of %d bytes, 3 bytes each), %d commands each: %v", cases, pages-2, ps, len(commands("", "")), exits)
}
