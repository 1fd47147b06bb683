package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// servingBlock returns a minimal vLLM bench serve result block.
func servingBlock(ttft, throughput float64, completed, failed int) string {
	return strings.Join([]string{
		"============ Serving Benchmark Result ============",
		"Successful requests:                     " + itoa(completed),
		"Failed requests:                         " + itoa(failed),
		"Benchmark duration (s):                  100.00",
		"Total input tokens:                      33418",
		"Total generated tokens:                  61516",
		"Request throughput (req/s):              2.43",
		"Output token throughput (tok/s):         " + ftoa(throughput),
		"Total token throughput (tok/s):          460.70",
		"---------------Time to First Token----------------",
		"Mean TTFT (ms):                          " + ftoa(ttft),
		"Median TTFT (ms):                        570.38",
		"P99 TTFT (ms):                           5986.31",
		"-----Time per Output Token (excl. 1st token)------",
		"Mean TPOT (ms):                          45.69",
		"Median TPOT (ms):                        44.78",
		"P99 TPOT (ms):                           95.71",
		"---------------Inter-token Latency----------------",
		"Mean ITL (ms):                           53.99",
		"Median ITL (ms):                         32.90",
		"P99 ITL (ms):                            383.97",
		"==================================================",
		"",
	}, "\n")
}

func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIngestExportImport(t *testing.T) {
	repo := gitRepo(t)
	c1 := commit(t, repo, "first", map[string]string{"a.txt": "1"})
	out := t.TempDir()
	f := writeFile(t, out, "serve.txt", servingBlock(945.18, 298.53, 500, 0))

	stdout, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--label", "hardware=910B3", f)
	if code != 0 {
		t.Fatalf("ingest exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "stored 1 of 1 results at "+c1[:12]) {
		t.Errorf("ingest output: %q", stdout)
	}
	// The history lives in the repo and git ignores it.
	if _, err := os.Stat(filepath.Join(repo, ".perfgate", "history.db")); err != nil {
		t.Fatal(err)
	}
	if st := git(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("git status not clean after ingest: %q", st)
	}
	excl, _ := os.ReadFile(filepath.Join(repo, ".git", "info", "exclude"))
	if !strings.Contains(string(excl), ".perfgate/") {
		t.Errorf(".git/info/exclude lacks .perfgate/: %q", excl)
	}

	// Re-ingesting the same file is a no-op.
	stdout, _, code = runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--label", "hardware=910B3", "-o", "json", f)
	if code != 0 {
		t.Fatalf("re-ingest exit %d", code)
	}
	var js struct {
		Commit  string `json:"commit"`
		Added   int    `json:"added"`
		Skipped int    `json:"skipped"`
	}
	if err := json.Unmarshal([]byte(stdout), &js); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if js.Added != 0 || js.Skipped != 1 || js.Commit != c1 {
		t.Errorf("re-ingest = %+v, want 0 added, 1 skipped at %s", js, c1)
	}

	// Another commit, through stdin.
	c2 := commit(t, repo, "second", map[string]string{"a.txt": "2"})
	_, stderr, code = runCLI(t, servingBlock(990, 290, 500, 0), "--repo", repo, "ingest", "--name", "serving", "--commit", "HEAD", "-")
	if code != 0 {
		t.Fatalf("stdin ingest exit %d: %s", code, stderr)
	}

	// Export: two runs, the design's shape.
	stdout, _, code = runCLI(t, "", "--repo", repo, "export")
	if code != 0 {
		t.Fatalf("export exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 {
		t.Fatalf("export gave %d lines:\n%s", len(lines), stdout)
	}
	var run struct {
		ID, Commit, Benchmark, Time string
		Metrics                     map[string]float64
		Labels                      map[string]string
		Source                      struct{ Format, File string }
	}
	if err := json.Unmarshal([]byte(lines[0]), &run); err != nil {
		t.Fatal(err)
	}
	if run.Commit != c1 || run.Benchmark != "serving" || run.Metrics["mean_ttft_ms"] != 945.18 || run.Labels["hardware"] != "910B3" || run.Source.Format != "vllm" || run.ID == "" {
		t.Errorf("exported run = %+v", run)
	}
	if !strings.Contains(lines[1], c2) {
		t.Errorf("second line is not commit %s: %s", c2, lines[1])
	}

	// Import into a fresh history (--db) gives the same export.
	db := filepath.Join(t.TempDir(), "other.db")
	dump := writeFile(t, out, "dump.jsonl", stdout)
	if _, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "import", dump); code != 0 {
		t.Fatalf("import exit %d: %s", code, stderr)
	}
	again, _, _ := runCLI(t, "", "--db", db, "--repo", repo, "export")
	if again != stdout {
		t.Errorf("round trip differs:\n%s\nvs\n%s", again, stdout)
	}
}

func TestIngestErrors(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	good := writeFile(t, dir, "good.txt", servingBlock(100, 300, 500, 0))
	bad := writeFile(t, dir, "bad.txt", "hello\n")
	truncated := writeFile(t, dir, "trunc.txt", strings.Join(strings.Split(servingBlock(100, 300, 500, 0), "\n")[:6], "\n"))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no name", []string{"ingest", good}, 2, "pass --name"},
		{"unrecognised", []string{"ingest", "--name", "b", bad}, 2, "bad.txt"},
		{"truncated block", []string{"ingest", "--name", "b", truncated}, 2, "trunc.txt:"},
		{"one bad file stores nothing", []string{"ingest", "--name", "b", good, bad}, 2, "bad.txt"},
		{"bad label", []string{"ingest", "--name", "b", "--label", "nokey", good}, 2, `--label "nokey"`},
		{"unknown commit", []string{"ingest", "--name", "b", "--commit", "nosuchbranch", good}, 2, "nosuchbranch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, tt.args...)...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr, tt.want)
			}
		})
	}
	// Nothing was stored by any of them.
	stdout, _, _ := runCLI(t, "", "--repo", repo, "export")
	if stdout != "" {
		t.Errorf("history not empty after failed ingests:\n%s", stdout)
	}
}

func TestRunCommand(t *testing.T) {
	repo := gitRepo(t)
	c1 := commit(t, repo, "first", map[string]string{"a.txt": "1"})
	script := writeFile(t, t.TempDir(), "bench.sh", "#!/bin/sh\ncat <<'EOF'\n"+servingBlock(100, 300, 500, 0)+"EOF\n")
	os.Chmod(script, 0o755)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--repeat", "2", "--", script)
	if code != 0 {
		t.Fatalf("run exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "stored 2 of 2 results at "+c1[:12]) {
		t.Errorf("run output %q", stdout)
	}
	if !strings.Contains(stderr, "Serving Benchmark Result") {
		t.Errorf("benchmark output not streamed to stderr: %q", stderr)
	}
	// Dirty tree: the run is marked dirty.
	writeFile(t, repo, "a.txt", "changed")
	stdout, _, code = runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--", script)
	if code != 0 || !strings.Contains(stdout, "working tree dirty") {
		t.Errorf("dirty run: exit %d, %q", code, stdout)
	}
	// A failing command stores nothing and says its exit code.
	fail := writeFile(t, t.TempDir(), "fail.sh", "#!/bin/sh\necho oops\nexit 7\n")
	os.Chmod(fail, 0o755)
	_, stderr, code = runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--", fail)
	if code != 3 || !strings.Contains(stderr, "exited with code 7") {
		t.Errorf("failing command: exit %d, stderr %q", code, stderr)
	}
	exp, _, _ := runCLI(t, "", "--repo", repo, "export")
	if n := strings.Count(exp, "\n"); n != 3 {
		t.Errorf("history has %d runs, want 3", n)
	}
}

func itoa(i int) string     { return strings.TrimSpace(formatValue(float64(i))) }
func ftoa(f float64) string { return formatValue(f) }
