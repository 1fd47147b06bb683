package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// TestMistypedDBURL: a --db or PERFGATE_DB value with "://" that is not a
// PostgreSQL URL is a usage error naming where it came from, with a
// did-you-mean, and writes nothing into the working tree; the password is
// never printed. A missing history whose path looks like a URL says so.
func TestMistypedDBURL(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	bench := writeFile(t, t.TempDir(), "b.json", metricsJSON(100, 300))
	rulesRepo := gitRepo(t)
	commit(t, rulesRepo, "rules", map[string]string{".perfgate.yml": "db: postgre://db.internal/perf\n"})
	tests := []struct {
		name   string
		env    string
		args   []string
		source string
	}{
		{"flag", "", []string{"--db", "postgress://perf:hunter22@db.internal/perf", "ingest", "--name", "s", bench}, "--db"},
		{"env", "postgress://perf:hunter22@db.internal/perf", []string{"ingest", "--name", "s", bench}, "PERFGATE_DB"},
		{"env, reading", "mysql://db.internal/perf", []string{"runs"}, "PERFGATE_DB"},
		{"rules file", "", []string{"--repo", rulesRepo, "runs"}, "db: in the rules file"},
		{"rules file, check", "", []string{"--repo", rulesRepo, "check"}, ".perfgate.yml:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PERFGATE_DB", tt.env)
			t.Chdir(repo)
			stdout, stderr, code := runCLI(t, "", tt.args...)
			if code != exitBad || !strings.Contains(stderr, tt.source) || !strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "postgres://") {
				t.Errorf("exit %d, want %d naming %s with a did-you-mean\n%s%s", code, exitBad, tt.source, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "hunter22") {
				t.Errorf("the password was printed:\n%s%s", stdout, stderr)
			}
			for _, r := range []string{repo, rulesRepo} {
				if st := git(t, r, "status", "--porcelain", "--ignored"); strings.TrimSpace(st) != "" {
					t.Errorf("the working tree was written to:\n%s", st)
				}
			}
		})
	}
	t.Run("missing, URL-like", func(t *testing.T) {
		t.Chdir(repo)
		_, stderr, _ := runCLI(t, "", "--db", "postgres:/db.internal/perf", "runs")
		if !strings.Contains(stderr, "does not exist") || !strings.Contains(stderr, "looks like a URL") {
			t.Errorf("no URL hint:\n%s", stderr)
		}
		if _, err := os.Stat(filepath.Join(repo, "postgres:")); err == nil {
			t.Error("a directory postgres: was created")
		}
	})
}

// TestBisectTestbed: bisect takes --testbed, as watch's advice gives it.
// With --stored it searches that testbed's runs alone (here the step is
// on box-a only, and box-b's runs would hide it); running a command, it
// stores the new runs under it. A flag error writes flags with two dashes.
func TestBisectTestbed(t *testing.T) {
	repo, shas := bisectRepo(t)
	db := filepath.Join(t.TempDir(), "h.db")
	for _, tb := range []string{"box-a", "box-b"} {
		for _, i := range []int{0, 0, 0, 20, 28, 29, 36, 48, 48} {
			ttft := 500.0
			if i >= stepCommit && tb == "box-a" {
				ttft = 560
			}
			ttft *= 1 + 0.001*float64(len(tb)+i%7)
			if _, stderr, code := runCLI(t, servingBlock(ttft, 300, 500, 0), "--repo", repo, "--db", db, "ingest", "--name", "serving", "--testbed", tb, "--commit", shas[i], "-"); code != 0 {
				t.Fatalf("ingest: %s", stderr)
			}
		}
	}
	args := []string{"--repo", repo, "--db", db, "bisect", "--good", shas[0], "--metric", "Mean TTFT", "--name", "serving", "--stored"}
	bj, _ := bisectOut(t, append(args, "--testbed", "box-a")...)
	if bj.Culprit == nil || *bj.Culprit != shas[stepCommit] || bj.Runs != 0 {
		t.Errorf("--testbed box-a: culprit %v after %d runs (%s), want %s", bj.Culprit, bj.Runs, bj.Reason, shas[stepCommit][:7])
	}
	if bj, _ := bisectOut(t, append(args, "--testbed", "box-b")...); bj.Verdict != "no-step" {
		t.Errorf("--testbed box-b: verdict %s, want no-step", bj.Verdict)
	}

	noise(t, 5)
	runDB := filepath.Join(t.TempDir(), "r.db")
	run := []string{"--repo", repo, "--db", runDB, "bisect", "--good", shas[0], "--metric", "Mean TTFT", "--name", "serving", "--testbed", "box-c", "--max-runs", "8", "--run", benchCmd}
	if _, stderr, code := runCLI(t, "", run...); code > 6 {
		t.Fatalf("bisect --run: exit %d\n%s", code, stderr)
	}
	exp, _, _ := runCLI(t, "", "--db", runDB, "export")
	if !strings.Contains(exp, `"testbed":"box-c"`) || strings.Count(exp, `"testbed":`) != strings.Count(exp, `"testbed":"box-c"`) {
		t.Errorf("the runs bisect made are not all of testbed box-c:\n%.2000s", exp)
	}

	_, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "bisect", "--testbd", "box-a")
	if code != exitBad || !strings.Contains(stderr, "not defined: --testbd") || !strings.Contains(stderr, "did you mean --testbed?") {
		t.Errorf("exit %d, want --testbd with two dashes and a did-you-mean:\n%s", code, stderr)
	}
}

// TestFormatAndImportHints: --format vlm names the closest format and all
// of them; import of a benchmark's output (not a perfgate export) says
// which format it reads as and the ingest command that stores it, without
// warning about "unknown fields of a newer perfgate".
func TestFormatAndImportHints(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	db := filepath.Join(t.TempDir(), "h.db")
	bench := filepath.Join("..", "..", "ingest", "testdata", "vllm-json", "ascend_nightly_columns.json")
	tests := []struct {
		name string
		args []string
		want []string
		not  string
	}{
		{"ingest --format vlm", []string{"ingest", "--format", "vlm", "--name", "s", bench}, []string{`did you mean "vllm"?`, "valid formats: auto,"}, ""},
		{"parse --format vlm", []string{"parse", "--format", "vlm", bench}, []string{`did you mean "vllm"?`}, ""},
		{"import a benchmark file", []string{"import", bench}, []string{"not a perfgate export", "(vllm-json)", "perfgate ingest --name BENCHMARK "}, "newer perfgate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "--db", db}, tt.args...)...)
			if code != exitBad {
				t.Errorf("exit %d, want %d\n%s%s", code, exitBad, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tt.not != "" && strings.Contains(stderr, tt.not) {
				t.Errorf("stderr says %q:\n%s", tt.not, stderr)
			}
		})
	}
}

// TestWatchDryRunWithoutGitHub: watch --github --dry-run on a laptop (no
// GITHUB_REPOSITORY, no token) previews the issues it would file, in the
// repository the origin remote names, and exits as watch does; without
// --dry-run the missing environment is still an error that says how to
// preview.
func TestWatchDryRunWithoutGitHub(t *testing.T) {
	repo, _ := watchRepo(t)
	git(t, repo, "remote", "add", "origin", "git@github.com:acme/engine.git")
	for _, v := range []string{"GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_TOKEN", "PERFGATE_GITHUB_TOKEN", "GH_TOKEN"} {
		t.Setenv(v, "")
	}
	_, stderr, code := runCLI(t, "", "--repo", repo, "watch", "--github", "--dry-run")
	for _, want := range []string{"--dry-run without GitHub", "github.com/acme/engine", "would open new issue", "serving", "stopped reporting: batch"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1 (watch's open regression)\n%s", code, stderr)
	}
	_, stderr, code = runCLI(t, "", "--repo", repo, "watch", "--github")
	if code != exitEnv || !strings.Contains(stderr, "--dry-run to preview") {
		t.Errorf("exit %d, want %d\n%s", code, exitEnv, stderr)
	}
}

// TestPostgresIdentityMoved: a checkout stores runs on PostgreSQL with no
// remote (its identity is its path), then gains an origin remote (its
// identity becomes the remote's name) and no longer sees its runs. Reading
// says which identity is used and which the database holds, and how to
// choose; storing says so too in this case; repository: restores them.
func TestPostgresIdentityMoved(t *testing.T) {
	t.Setenv("PERFGATE_DB", pgtest.URL(t))
	t.Setenv("PERFGATE_REPOSITORY", "")
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	ingestAt(t, repo, metricsJSON(100, 300))
	git(t, repo, "remote", "add", "origin", "git@github.com:acme/engine.git")
	path := checkoutPathOf(t, repo)
	_, stderr, _ := runCLI(t, "", "--repo", repo, "history", "--name", "serving", "--metric", "Mean TTFT")
	for _, want := range []string{`no runs of repository "github.com/acme/engine"`, "origin remote's URL", strconv.Quote(path) + " (1 runs)", "this checkout's path", "repository: " + path} {
		if !strings.Contains(stderr, want) {
			t.Errorf("history: stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Count(stderr, "holds no runs") != 1 {
		t.Errorf("said %d times:\n%s", strings.Count(stderr, "holds no runs"), stderr)
	}
	_, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--testbed", "box", writeFile(t, t.TempDir(), "b.json", metricsJSON(101, 300)))
	if code != 0 || !strings.Contains(stderr, "this checkout's path") {
		t.Errorf("ingest: exit %d, want the note on the moved identity:\n%s", code, stderr)
	}
	// Now the new identity has runs: nothing is said.
	if _, stderr, _ := runCLI(t, "", "--repo", repo, "runs"); strings.Contains(stderr, "holds no runs") {
		t.Errorf("runs: said with runs of its own:\n%s", stderr)
	}
	t.Setenv("PERFGATE_REPOSITORY", path)
	if out, stderr, _ := runCLI(t, "", "--repo", repo, "export"); strings.Count(out, "\n") != 1 || strings.Contains(stderr, "holds no runs") {
		t.Errorf("PERFGATE_REPOSITORY=%s: %q\n%s", path, out, stderr)
	}
	// A new repository in a shared database stores its first runs quietly.
	fresh := gitRepo(t)
	git(t, fresh, "remote", "add", "origin", "git@github.com:acme/plugin.git")
	commit(t, fresh, "one", map[string]string{"a.txt": "1"})
	t.Setenv("PERFGATE_REPOSITORY", "")
	if _, stderr, code := runCLI(t, "", "--repo", fresh, "ingest", "--name", "serving", writeFile(t, t.TempDir(), "b.json", metricsJSON(101, 300))); code != 0 || strings.Contains(stderr, "holds no runs") {
		t.Errorf("a new repository's first ingest: exit %d\n%s", code, stderr)
	}
}

// checkoutPathOf is the identity of a checkout without a remote: its
// absolute path, symlinks as git reports them.
func checkoutPathOf(t *testing.T, repo string) string {
	t.Helper()
	return filepath.ToSlash(strings.TrimSpace(git(t, repo, "rev-parse", "--show-toplevel")))
}

// TestSectionsWarnedOnce: a log of nine sections of one benchmark's block
// is warned about once, shortly, with the count of headings, by parse and
// by ingest alike.
func TestSectionsWarnedOnce(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "ingest", "testdata", "vllm", "unclosed_complete.txt"))
	if err != nil {
		t.Fatal(err)
	}
	block := string(data[:strings.Index(string(data), "42.96")+len("42.96")]) + "\n" + strings.Repeat("=", 50) + "\n"
	doc := "# Optimisation log\n\n"
	for i := range 9 {
		doc += "## Change " + strconv.Itoa(i) + "\n\n```\n" + block + "```\n\n"
	}
	file := writeFile(t, t.TempDir(), "log.md", doc)
	repo := gitRepo(t)
	commit(t, repo, "one", map[string]string{"a.txt": "1"})
	for _, args := range [][]string{{"parse", file}, {"ingest", "--name", "serving", "--testbed", "box", file}} {
		_, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "--db", filepath.Join(t.TempDir(), "h.db")}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", args[0], code, stderr)
		}
		var said []string
		for _, l := range strings.Split(stderr, "\n") {
			if strings.Contains(l, "heading") {
				said = append(said, l)
			}
		}
		if len(said) != 1 || !strings.Contains(said[0], "8 blocks repeat") || !strings.Contains(said[0], "under 9 headings") || len(said[0])-len(file) > 300 {
			t.Errorf("%s: want one short warning naming 9 headings, got %d:\n%s", args[0], len(said), strings.Join(said, "\n"))
		}
	}
}
