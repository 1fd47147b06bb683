package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// cliHelperEnv makes the test binary act as the perfgate command (its
// arguments follow on the command line), so tests can start real
// perfgate processes. Test files' init functions run after those of the
// package's other files, so every command is registered by then.
const cliHelperEnv = "PERFGATE_TEST_CLI"

func init() {
	if os.Getenv(cliHelperEnv) == "1" {
		os.Exit(run(context.Background(), append([]string{"perfgate"}, os.Args[1:]...), os.Stdin, os.Stdout, os.Stderr))
	}
}

// cliProcess returns a command that runs perfgate as a separate process.
func cliProcess(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliHelperEnv+"=1")
	return cmd
}

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
	// Every run records the command and its exit status; only the last
	// one the dirty tree.
	lines := strings.Split(strings.TrimSpace(exp), "\n")
	for i, line := range lines {
		var r struct {
			Commit   string
			Command  []string
			ExitCode *int `json:"exit_code"`
			Dirty    bool
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Commit != c1 || len(r.Command) != 1 || r.Command[0] != script || r.ExitCode == nil || *r.ExitCode != 0 || r.Dirty != (i == 2) {
			t.Errorf("run %d = %+v, want commit %s, command [%s], exit code 0, dirty %v", i, r, c1, script, i == 2)
		}
	}
}

// TestRunFailures: a repetition that fails, a command killed by a signal
// and output without a result store nothing and say why.
func TestRunFailures(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	block := writeFile(t, dir, "block.txt", servingBlock(100, 300, 500, 0))
	count := filepath.Join(dir, "count")
	// Succeeds once, then fails with exit code 5.
	second := writeFile(t, dir, "second.sh", fmt.Sprintf("#!/bin/sh\nn=$(cat %[1]q 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > %[1]q\n[ $n -ge 2 ] && exit 5\ncat %[2]q\n", count, block))
	killed := writeFile(t, dir, "killed.sh", "#!/bin/sh\necho started\nkill -9 $$\n")
	nothing := writeFile(t, dir, "nothing.sh", "#!/bin/sh\necho all good\n")
	for _, f := range []string{second, killed, nothing} {
		os.Chmod(f, 0o755)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		// The good first repetition is kept (issue 11 item 8), the failures named.
		{"second repetition fails", []string{"--repeat", "3", "--", second}, 3, []string{"2 of 3 repetitions failed, repetition 1 kept", "exited with code 5 (repetition 2 of 3)", "exited with code 5 (repetition 3 of 3)"}},
		{"killed", []string{"--", killed}, 3, []string{"was killed by signal 9", "nothing was stored"}},
		{"no result", []string{"--", nothing}, 2, []string{"no result block found", "nothing was stored"}},
		{"missing command", []string{"--", filepath.Join(dir, "nope")}, 3, []string{"cannot start", "check the command and PATH"}},
		{"no command", nil, 2, []string{"no command given"}},
		{"bad repeat", []string{"--repeat", "0", "--", nothing}, 2, []string{`--repeat "0"`}},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "run", "--name", "serving"}, tt.args...)...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", tt.name, code, tt.code, stderr)
		}
		for _, w := range tt.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr %q lacks %q", tt.name, stderr, w)
			}
		}
	}
	exp, _, _ := runCLI(t, "", "--repo", repo, "export")
	if lines := strings.Split(strings.TrimSpace(exp), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `(run 1)"`) {
		t.Errorf("want only the good first repetition stored, got:\n%s", exp)
	}
}

// watchWriter collects output and closes seen when it first contains want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, _ := w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return n, nil
}

// TestRunStreamsLive: the benchmark's first line reaches perfgate's
// stderr while the benchmark still runs (it waits for the test to see
// that line before it prints its result).
func TestRunStreamsLive(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	block := writeFile(t, dir, "block.txt", servingBlock(100, 300, 500, 0))
	goFile := filepath.Join(dir, "go")
	script := writeFile(t, dir, "bench.sh", fmt.Sprintf("#!/bin/sh\necho warming up\ni=0\nwhile [ ! -f %[1]q ]; do sleep 0.05; i=$((i+1)); [ $i -gt 200 ] && exit 9; done\ncat %[2]q\n", goFile, block))
	os.Chmod(script, 0o755)
	stderr := &watchWriter{want: "warming up", seen: make(chan struct{})}
	seen := stderr.seen
	go func() {
		select {
		case <-seen:
			os.WriteFile(goFile, nil, 0o644)
		case <-time.After(20 * time.Second):
		}
	}()
	var stdout bytes.Buffer
	code := run(context.Background(), []string{"perfgate", "--repo", repo, "run", "--name", "serving", "--", script}, strings.NewReader(""), &stdout, stderr)
	if code != 0 {
		t.Fatalf("run exit %d (the output was not streamed while the command ran?): %s", code, stderr.buf.String())
	}
	if !strings.Contains(stdout.String(), "stored 1 of 1 results") {
		t.Errorf("stdout %q", stdout.String())
	}
}

// TestIngestConcurrentProcesses runs four perfgate processes at once, each
// ingesting five results one invocation at a time into the same history:
// every run is stored.
func TestIngestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	repo := gitRepo(t)
	c1 := commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	const workers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				f := writeFile(t, dir, fmt.Sprintf("w%d-%d.txt", w, j), servingBlock(float64(1000*w+j)+0.5, 300, 500, 0))
				out, err := cliProcess("--repo", repo, "ingest", "--name", fmt.Sprintf("worker-%d", w), f).CombinedOutput()
				if err != nil || !bytes.Contains(out, []byte("stored 1 of 1 results")) {
					errs <- fmt.Errorf("worker %d, file %d: %v: %s", w, j, err, out)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := store.Open(filepath.Join(repo, ".perfgate", "history.db"), store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.ByCommit(c1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range runs {
		got[fmt.Sprintf("%s %g", r.Benchmark, r.Metrics["mean_ttft_ms"])] = true
	}
	for w := range workers {
		for j := range each {
			if k := fmt.Sprintf("worker-%d %g", w, float64(1000*w+j)+0.5); !got[k] {
				t.Errorf("run %q was lost", k)
			}
		}
	}
	if len(runs) != workers*each {
		t.Errorf("%d runs stored, want %d", len(runs), workers*each)
	}
}

// TestIngestFromSubdirectory ingests from a subdirectory of the working
// tree without --repo, under revisions users type: the history is at the
// repository root and files are recorded relative to it.
func TestIngestFromSubdirectory(t *testing.T) {
	repo := gitRepo(t)
	c1 := commit(t, repo, "first", map[string]string{"sub/a.txt": "1"})
	git(t, repo, "tag", "-a", "-m", "release", "v1")
	c2 := commit(t, repo, "second", map[string]string{"sub/a.txt": "2"})
	commit(t, repo, "third", map[string]string{"sub/a.txt": "3"})
	writeFile(t, filepath.Join(repo, "sub"), "serve.txt", servingBlock(100, 300, 500, 0))
	t.Chdir(filepath.Join(repo, "sub"))
	for rev, want := range map[string]string{"v1": c1, "main~1": c2, c2[:8]: c2} {
		stdout, stderr, code := runCLI(t, "", "ingest", "--name", "serving", "--commit", rev, "-o", "json", "serve.txt")
		if code != 0 || !strings.Contains(stdout, `"commit": "`+want+`"`) || !strings.Contains(stdout, `"file": "sub/serve.txt"`) {
			t.Errorf("ingest --commit %s: exit %d, %s %s; want commit %s, file sub/serve.txt", rev, code, stdout, stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, ".perfgate", "history.db")); err != nil {
		t.Errorf("history not at the repository root: %v", err)
	}
	_, stderr, code := runCLI(t, "", "ingest", "--name", "serving", "--commit", "@{u}", "serve.txt")
	if code != 2 || !strings.Contains(stderr, `"@{u}"`) || !strings.Contains(stderr, "no upstream") {
		t.Errorf("ingest --commit @{u} without upstream: exit %d, %q", code, stderr)
	}
}

// TestImportStdinAndSince imports an export from stdin into another
// history, and exports with --since.
func TestImportStdinAndSince(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	f := writeFile(t, t.TempDir(), "serve.txt", servingBlock(100, 300, 500, 0))
	if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", f); code != 0 {
		t.Fatal(stderr)
	}
	dump, _, _ := runCLI(t, "", "--repo", repo, "export")
	db := filepath.Join(t.TempDir(), "h.db")
	stdout, stderr, code := runCLI(t, dump, "--db", db, "--repo", repo, "import", "-")
	if code != 0 || !strings.Contains(stdout, "imported 1 runs (0 already stored)") {
		t.Fatalf("import -: exit %d, %q %q", code, stdout, stderr)
	}
	if stdout, _, _ := runCLI(t, dump, "--db", db, "--repo", repo, "import", "-"); !strings.Contains(stdout, "imported 0 runs (1 already stored)") {
		t.Errorf("re-import: %q", stdout)
	}
	if got, _, _ := runCLI(t, "", "--db", db, "export", "--since", "24h"); got != dump {
		t.Errorf("export --since 24h = %q, want %q", got, dump)
	}
	if got, _, code := runCLI(t, "", "--db", db, "export", "--since", "2999-01-01"); code != 0 || got != "" {
		t.Errorf("export --since 2999-01-01: exit %d, %q", code, got)
	}
	if _, stderr, code := runCLI(t, "", "--db", db, "export", "--since", "last week"); code != 2 || !strings.Contains(stderr, `--since "last week"`) {
		t.Errorf("export --since 'last week': exit %d, %q", code, stderr)
	}
	bad := writeFile(t, t.TempDir(), "bad.jsonl", dump+"{\"commit\": 1}\n")
	if _, stderr, code := runCLI(t, "", "--db", filepath.Join(t.TempDir(), "x.db"), "import", bad); code != 2 || !strings.Contains(stderr, "bad.jsonl:2:") {
		t.Errorf("import of a bad line: exit %d, %q", code, stderr)
	}
}

// TestStoreLocked: while another holder has the history, ingest gives up
// after PERFGATE_LOCK_TIMEOUT with exit code 3 and says who holds it and
// what to do.
func TestStoreLocked(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	f := writeFile(t, t.TempDir(), "serve.txt", servingBlock(100, 300, 500, 0))
	db := filepath.Join(t.TempDir(), "h.db")
	holder, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	t.Setenv("PERFGATE_LOCK_TIMEOUT", "200ms")
	for _, args := range [][]string{{"ingest", "--name", "serving", f}, {"export"}} {
		_, stderr, code := runCLI(t, "", append([]string{"--db", db, "--repo", repo}, args...)...)
		if code != 3 {
			t.Errorf("%s while locked: exit %d, want 3; %q", args[0], code, stderr)
		}
		for _, want := range []string{db, "is in use by another process (pid", "after 200ms", "retry", "--db"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s while locked: stderr %q lacks %q", args[0], stderr, want)
			}
		}
	}
	t.Setenv("PERFGATE_LOCK_TIMEOUT", "soon")
	if _, stderr, code := runCLI(t, "", "--db", db, "--repo", repo, "ingest", "--name", "serving", f); code != 2 || !strings.Contains(stderr, `PERFGATE_LOCK_TIMEOUT "soon" is not a duration`) {
		t.Errorf("bad PERFGATE_LOCK_TIMEOUT: exit %d, %q", code, stderr)
	}
}

func itoa(i int) string     { return strings.TrimSpace(formatValue(float64(i))) }
func ftoa(f float64) string { return formatValue(f) }

// TestIngestDirtyTree: ingest without --commit on a tree with uncommitted
// changes stores dirty runs and warns how to store them as HEAD instead;
// --commit HEAD stores a clean run.
func TestIngestDirtyTree(t *testing.T) {
	t.Setenv("CI", "true") // a file measured here: no unknown-testbed warning
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	writeFile(t, repo, "a.txt", "changed")
	writeFile(t, repo, "serve.txt", servingBlock(100, 300, 500, 0))
	t.Chdir(repo)
	stdout, stderr, code := runCLI(t, "", "ingest", "--name", "serving", "-o", "json", "serve.txt")
	if code != 0 || !strings.Contains(stdout, `"dirty": true`) || !strings.Contains(stderr, "--commit HEAD") {
		t.Errorf("dirty ingest: exit %d, stdout %s, stderr %q; want a dirty run and a warning naming --commit HEAD", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "ingest", "--name", "serving", "--commit", "HEAD", "-o", "json", "serve.txt")
	if code != 0 || strings.Contains(stdout, `"dirty"`) || strings.Contains(stderr, "warning") {
		t.Errorf("ingest --commit HEAD: exit %d, stdout %s, stderr %q; want a clean run, no warning", code, stdout, stderr)
	}
}

// TestIngestGlobs: ingest expands file patterns itself, so a workflow
// passes them after -- with no shell: a file a pull request names
// "--label=owned=yes.txt" is read as a file, never taken for a flag.
func TestIngestGlobs(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	dir := t.TempDir()
	writeFile(t, dir, "a.json", metricsJSON(100, 300))
	writeFile(t, dir, "b.json", metricsJSON(101, 300))
	writeFile(t, dir, "--label=owned=yes.txt", metricsJSON(102, 300))
	writeFile(t, dir, "lit*.json", metricsJSON(103, 300))
	if err := os.Mkdir(filepath.Join(dir, "sub.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "-o", "json", "--", "*")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var got struct {
		Runs []struct{ File string }
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, r := range got.Runs {
		files = append(files, filepath.Base(r.File))
	}
	if want := []string{"--label=owned=yes.txt", "a.json", "b.json", "lit*.json"}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("ingested %q, want %q", files, want)
	}
	exp, _, _ := runCLI(t, "", "--repo", repo, "export")
	if strings.Contains(exp, `"owned":`) {
		t.Errorf("a file name became a label:\n%s", exp)
	}
	// A file whose name has a * is itself, not a pattern; a pattern that
	// matches nothing (directories do not count) is an error naming it.
	if _, stderr, code := runCLI(t, "", "--repo", repo, "parse", "--", "lit*.json"); code != 0 {
		t.Errorf("a literal file name with *: exit %d\n%s", code, stderr)
	}
	for _, pattern := range []string{"*.csv", "sub*", "[.json"} {
		_, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--", pattern)
		if code != 2 || !strings.Contains(stderr, fmt.Sprintf("%q", pattern)) {
			t.Errorf("%s: exit %d\n%s", pattern, code, stderr)
		}
	}
}
