package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/runner"
	"github.com/perfgate/perfgate/store"
)

// abBench is a stand-in benchmark on a machine whose speed drifts: every
// run is 2% slower than the one before (the 12 runs of a session drift by
// over 20%), with 1% of noise, on top of the level of the commit's
// level.txt. A counter file outside the checkouts counts the runs.
func abBench(t *testing.T, dir string) string {
	t.Helper()
	counter := filepath.Join(dir, "counter")
	ttft := `$(awk -v n=$n -v l=$(cat level.txt) 'BEGIN { srand(n); printf "%.3f", l * (1 + 0.02*n) * (1 + 0.01*(rand()-0.5)) }')`
	block := strings.ReplaceAll(servingBlock(987654, 300, 500, 0), ftoa(987654), ttft)
	p := writeFile(t, dir, "bench.sh", "#!/bin/sh\nn=$(cat "+counter+" 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > "+counter+"\n"+
		"echo \"$PERFGATE_AB_SIDE $PERFGATE_COMMIT\" >> "+filepath.Join(dir, "order")+"\ncat <<EOF\n"+block+"EOF\n")
	os.Chmod(p, 0o755)
	return p
}

func TestABOrder(t *testing.T) {
	var got strings.Builder
	for i := range 8 {
		if runner.ABOrder(i) {
			got.WriteByte('B')
		} else {
			got.WriteByte('A')
		}
	}
	if got.String() != "ABBAABBA" {
		t.Errorf("order %s, want ABBAABBA", got.String())
	}
}

// TestAB: on a machine that drifts by over 20% during the session, the
// paired verdict still finds a 10% regression of head (fail, exit 1) and
// passes an unchanged head; every run is stored under its commit, and the
// user's checkout (HEAD, index, files, uncommitted changes) is untouched.
func TestAB(t *testing.T) {
	for _, tt := range []struct {
		name      string
		headLevel string
		code      int
		verdict   string
	}{
		{"10% regression", "110", 1, "fail"},
		{"unchanged", "100", 0, "pass"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			base := commit(t, repo, "base", map[string]string{"level.txt": "100\n", "other.txt": "x\n"})
			head := commit(t, repo, "head", map[string]string{"level.txt": tt.headLevel + "\n", "other.txt": "y\n"})
			// An uncommitted change: ab measures the committed HEAD.
			os.WriteFile(filepath.Join(repo, "other.txt"), []byte("edited\n"), 0o644)
			statusBefore, headBefore := git(t, repo, "status", "--porcelain"), git(t, repo, "rev-parse", "HEAD")
			dir := t.TempDir()
			script := abBench(t, dir)
			db := filepath.Join(dir, "history.db")
			if v := os.Getenv("PERFGATE_DB"); store.IsPostgres(v) {
				db = v // TestOnPostgres
			}
			work := t.TempDir()
			stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "ab", "--base", "HEAD~1", "--repeat", "6", "--name", "serving",
				"--rule", "mean_ttft_ms:5%", "--workdir", work, "-o", "json", "--", script)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s\nstdout:\n%s", code, tt.code, stderr, stdout)
			}
			var rep struct {
				Verdict string `json:"verdict"`
				Checks  []struct {
					Verdict string   `json:"verdict"`
					Method  string   `json:"method"`
					Change  *float64 `json:"change"`
				} `json:"checks"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%v\n%s", err, stdout)
			}
			if rep.Verdict != tt.verdict || len(rep.Checks) != 1 || rep.Checks[0].Method != "paired" {
				t.Errorf("report %+v, want %s from one paired check\n%s", rep, tt.verdict, stdout)
			}
			if !strings.Contains(stderr, "ab measures the committed HEAD") || !strings.Contains(stderr, "stored 12 of 12 results (6 at base") {
				t.Errorf("stderr:\n%s", stderr)
			}
			// The runs alternate A B B A ... and each ran at its own commit.
			order, _ := os.ReadFile(filepath.Join(dir, "order"))
			lines := strings.Split(strings.TrimSpace(string(order)), "\n")
			want := []string{"base " + base, "head " + head, "head " + head, "base " + base}
			for i, l := range lines {
				if l != want[i%4] {
					t.Errorf("run %d: %q, want %q", i+1, l, want[i%4])
				}
			}
			if len(lines) != 12 {
				t.Errorf("%d runs, want 12", len(lines))
			}
			if s, h := git(t, repo, "status", "--porcelain"), git(t, repo, "rev-parse", "HEAD"); s != statusBefore || h != headBefore {
				t.Errorf("the checkout changed: status %q -> %q, HEAD %s -> %s", statusBefore, s, headBefore, h)
			}
			if b, _ := os.ReadFile(filepath.Join(repo, "other.txt")); string(b) != "edited\n" {
				t.Errorf("the uncommitted change is gone: %q", b)
			}
			emptyWorkdir(t, work)
			exp, _, _ := runCLI(t, "", "--repo", repo, "--db", db, "export")
			if strings.Count(exp, `"commit":"`+base) != 6 || strings.Count(exp, `"commit":"`+head) != 6 {
				t.Errorf("stored runs:\n%s", exp)
			}
		})
	}
}

// TestABUsage: missing or contradictory flags are bad usage (exit 2)
// that says what to pass.
func TestABUsage(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "base", map[string]string{"level.txt": "100\n"})
	commit(t, repo, "head", map[string]string{"level.txt": "110\n"})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "s", "--", "true"}, "--base is required"},
		{[]string{"--base", "HEAD~1", "--", "true"}, "--name is required"},
		{[]string{"--base", "HEAD~1", "--name", "s"}, "no command given"},
		{[]string{"--base", "HEAD~1", "--name", "s", "--repeat", "1", "--", "true"}, "at least 2 runs"},
		{[]string{"--base", "HEAD", "--name", "s", "--", "true"}, "are the same commit"},
		{[]string{"--base", "nope", "--name", "s", "--", "true"}, "--base"},
	} {
		_, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "ab"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("ab %v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestABLockedHistory: when the history stays locked, ab still reports
// its verdict from the runs it made, saves them aside with the import
// command, and exits 3 (1 if the gate fails).
func TestABLockedHistory(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "base", map[string]string{"level.txt": "100\n"})
	commit(t, repo, "head", map[string]string{"level.txt": "100\n"})
	dir := t.TempDir()
	script := abBench(t, dir)
	db := filepath.Join(dir, "history.db")
	holder, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	t.Setenv("PERFGATE_LOCK_TIMEOUT", "100ms")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "ab", "--base", "HEAD~1", "--repeat", "3", "--name", "serving",
		"--rule", "mean_ttft_ms:5%", "--", script)
	if code != 3 || !strings.HasPrefix(stdout, "PASS") || !strings.Contains(stderr, "nothing is lost: the 6 run(s) are saved in") || !strings.Contains(stderr, " import ") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// TestABTestbedAndTokens: every run ab stores records the testbed
// (--testbed), the report names it, and the benchmark command gets no
// GitHub token.
func TestABTestbedAndTokens(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "base", map[string]string{"level.txt": "100\n"})
	commit(t, repo, "head", map[string]string{"level.txt": "100\n"})
	t.Setenv("GITHUB_TOKEN", "ghs_secret1")
	t.Setenv("PERFGATE_GITHUB_TOKEN", "secret2")
	dir := t.TempDir()
	bench := abBench(t, dir)
	seen := filepath.Join(dir, "env")
	script := writeFile(t, dir, "wrap.sh", "#!/bin/sh\nenv >> "+seen+"\nexec "+bench+"\n")
	os.Chmod(script, 0o755)
	db := filepath.Join(dir, "history.db")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "ab", "--base", "HEAD~1", "--repeat", "2", "--name", "serving",
		"--rule", "mean_ttft_ms:5%", "--testbed", "ab-box", "-o", "json", "--", script)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	var rep struct {
		Testbeds []string `json:"testbeds"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Testbeds) != 1 || rep.Testbeds[0] != "ab-box" {
		t.Errorf("report testbeds %q (%v), want [ab-box]\n%s", rep.Testbeds, err, stdout)
	}
	exp, _, _ := runCLI(t, "", "--db", db, "export")
	if n := strings.Count(exp, `"testbed":"ab-box"`); n != 4 {
		t.Errorf("%d of 4 stored runs record the testbed:\n%s", n, exp)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"secret1", "secret2"} {
		if strings.Contains(string(b), s) {
			t.Errorf("the benchmark command saw a token (%s)", s)
		}
	}
}
