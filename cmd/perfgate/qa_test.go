package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Usage mistakes a user makes at the prompt get a suggestion and exit 2.
func TestUsageSuggestions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"misspelt command", []string{"chek"}, `unknown command "chek"; did you mean "check"?`},
		{"misspelt flag", []string{"check", "--rulez", "x"}, "did you mean --rules?"},
		{"misspelt global flag", []string{"--dbb", "x", "check"}, "did you mean --db?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != exitBad {
				t.Errorf("exit %d, want 2; stderr:\n%s", code, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not contain %q", stderr, tt.want)
			}
		})
	}
}

// perfgate help CMD shows the command's help.
func TestHelpTopic(t *testing.T) {
	stdout, stderr, code := runCLI(t, "", "help", "check")
	if code != 0 || !strings.Contains(stdout, "perfgate check") {
		t.Errorf("help check: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// Flags typed after the arguments (perfgate compare main HEAD -o json) work
// as if typed before; run's command keeps its own flags.
func TestFlagsAfterArguments(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	ingestAt(t, repo, metricsJSON(100, 300))
	commit(t, repo, "b", map[string]string{"a": "2"})
	ingestAt(t, repo, metricsJSON(110, 300))

	stdout, stderr, code := runCLI(t, "", "--repo", repo, "compare", "HEAD~1", "HEAD", "-o", "json")
	if code != 0 || !json.Valid([]byte(stdout)) {
		t.Fatalf("compare REV REV -o json: exit %d, not JSON\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, metricsJSON(1, 2), "parse", "-", "-o", "json")
	if code != 0 || !json.Valid([]byte(stdout)) {
		t.Fatalf("parse - -o json: exit %d, not JSON\n%s\n%s", code, stdout, stderr)
	}
	args, err := normalizeArgs(newApp(&env{}), []string{"perfgate", "run", "--name", "x", "./bench.sh", "-o", "out", "--", "y"})
	if err != nil || strings.Join(args, " ") != "perfgate run --name x ./bench.sh -o out -- y" {
		t.Errorf("run's command flags moved: %q %v", args, err)
	}
}

// history without --name uses the only benchmark stored; errors about
// missing results do not repeat "no results".
func TestHistoryOnlyBenchmark(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	ingestAt(t, repo, metricsJSON(100, 300))
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "history", "--metric", "Mean TTFT")
	if code != 0 || !strings.Contains(stdout, "of serving") {
		t.Errorf("history without --name: exit %d\n%s\n%s", code, stdout, stderr)
	}
	commit(t, repo, "b", map[string]string{"a": "2"})
	_, stderr, code = runCLI(t, "", "--repo", repo, "check")
	if code != exitEnv || strings.Contains(stderr, ": no results") {
		t.Errorf("check without results: exit %d, stderr %q", code, stderr)
	}
}

// Inputs that cannot be benchmark output are refused with what to do,
// exit 2, and nothing stored.
func TestBadInputFiles(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	bin := filepath.Join(dir, "bench.bin")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"empty file", "", []string{empty}, `"` + empty + `" is empty`},
		{"binary file", "", []string{bin}, "looks like a binary file"},
		{"directory", "", []string{dir}, `directory "` + dir + `" holds no result file`},
		{"missing file", "", []string{filepath.Join(dir, "nope.txt")}, "no such file; check the path"},
		{"empty stdin", "", []string{"-"}, "stdin is empty: pipe benchmark output in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--repo", repo, "ingest", "--name", "serving"}, tt.args...)
			_, stderr, code := runCLI(t, tt.stdin, args...)
			if code != exitBad || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(repo, ".perfgate", "history.db")); err == nil {
		stdout, _, _ := runCLI(t, "", "--repo", repo, "export")
		if stdout != "" {
			t.Errorf("bad input stored runs:\n%s", stdout)
		}
	}
	// An empty export imports as nothing.
	if _, stderr, code := runCLI(t, "", "--repo", repo, "import", empty); code != 0 {
		t.Errorf("import of an empty export: exit %d: %s", code, stderr)
	}
}

// A --db that cannot be created names the history and what to do; one that
// does not exist is named on stderr rather than read silently as empty.
func TestDBPathMistakes(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	file := filepath.Join(t.TempDir(), "notadir")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The runs that could not be stored are saved in the user's cache
	// directory (perfgate/unsaved): this test's own.
	tmp := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", tmp)
	_, stderr, code := runCLI(t, metricsJSON(100, 300), "--repo", repo, "--db", filepath.Join(file, "h.db"), "ingest", "--name", "s", "-")
	if code != exitEnv || !strings.Contains(stderr, "cannot create its directory") || !strings.Contains(stderr, "pass --db") {
		t.Errorf("db under a file: exit %d, stderr %q", code, stderr)
	}
	if saved, _ := filepath.Glob(filepath.Join(tmp, "perfgate", "unsaved", "runs-*.jsonl")); len(saved) != 1 || !strings.Contains(stderr, saved[0]) {
		t.Errorf("the unstored runs: saved as %v, stderr %q", saved, stderr)
	}
	_, stderr, _ = runCLI(t, "", "--repo", repo, "--db", filepath.Join(t.TempDir(), "typo.db"), "check")
	if !strings.Contains(stderr, "typo.db\" (--db or PERFGATE_DB) does not exist") {
		t.Errorf("missing --db not named: %q", stderr)
	}
}

// bisect --stored with a misspelt --name names the benchmarks stored.
func TestBisectStoredNameTypo(t *testing.T) {
	repo := gitRepo(t)
	good := commit(t, repo, "a", map[string]string{"a": "1"})
	ingestAt(t, repo, metricsJSON(100, 300))
	commit(t, repo, "b", map[string]string{"a": "2"})
	ingestAt(t, repo, metricsJSON(120, 300))
	_, stderr, code := runCLI(t, "", "--repo", repo, "bisect", "--good", good, "--bad", "HEAD", "--metric", "Mean TTFT", "--name", "servin", "--stored")
	if code != exitBad || !strings.Contains(stderr, `did you mean --name "serving"?`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// One broken repetition among several: the check fails, and shows the
// broken run's numbers, not the median of all runs ("0 failed").
func TestCheckOneInvalidRepetition(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 3)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{"f": "1"})
	for i := 0; i < 3; i++ {
		ingestAt(t, repo, metricsJSON(100+float64(i)/10, 300))
	}
	ingestAt(t, repo, `{"metrics": {"mean_ttft_ms": 100, "output_throughput": 300, "completed": 450, "failed": 50}}`)
	cj, stderr, code := checkOut(t, repo)
	if code != exitFail || len(cj.Checks) != 1 {
		t.Fatalf("exit %d, checks %+v\n%s", code, cj.Checks, stderr)
	}
	if c := cj.Checks[0]; c.Current == nil || *c.Current != 50 || c.Samples.Current != 4 {
		t.Errorf("current %v of %d runs, want 50 failed of 4", c.Current, c.Samples.Current)
	}
	stdout, _, _ := runCLI(t, "", "--repo", repo, "check")
	if !strings.Contains(stdout, "1 of 4 runs at head are invalid") {
		t.Errorf("text report does not say which runs are invalid:\n%s", stdout)
	}
}

// A misspelt --base is named as the flag at fault, without repeating the
// fetch-depth advice.
func TestCheckBaseTypo(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 2)
	_, stderr, code := runCLI(t, "", "--repo", repo, "check", "--base", "mian")
	if code != exitBad || !strings.HasPrefix(stderr, `perfgate: --base: revision "mian"`) || strings.Count(stderr, "fetch-depth") > 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// Every command's --help ends with examples.
func TestHelpShowsExamples(t *testing.T) {
	app := newApp(&env{})
	for _, c := range app.VisibleCommands() {
		stdout, _, code := runCLI(t, "", c.Name, "--help")
		if code != 0 || !strings.Contains(stdout, "Examples:\n     perfgate ") && !strings.Contains(stdout, "Examples:\n     git ") {
			t.Errorf("perfgate %s --help has no examples:\n%s", c.Name, stdout)
		}
	}
}

// A significant improvement over five runs each reports the p-value of the
// improvement, not only the p of "worse" (1).
func TestCheckImprovedPValue(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	for i := 0; i < 5; i++ {
		ingestAt(t, repo, metricsJSON(100+float64(i)/10, 300))
	}
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "faster", map[string]string{"a": "2"})
	for i := 0; i < 5; i++ {
		ingestAt(t, repo, metricsJSON(80+float64(i)/10, 300))
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "Mean TTFT:3%", "-o", "json")
	var rep struct {
		Checks []struct {
			Metric, Verdict string
			PImproved       *float64 `json:"p_improved"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 {
		t.Fatalf("exit %d, %v\n%s", code, err, stderr)
	}
	for _, c := range rep.Checks {
		if c.Metric == "mean_ttft_ms" && (c.Verdict != "improved" || c.PImproved == nil || *c.PImproved >= 0.01) {
			t.Errorf("%s: verdict %s, p_improved %v", c.Metric, c.Verdict, c.PImproved)
		}
	}
}

// In a repository without commits, ingest and history say so, without
// blaming a flag the user did not type.
func TestNoCommitsYet(t *testing.T) {
	repo := gitRepo(t)
	for _, args := range [][]string{
		{"ingest", "--name", "s", "-"},
		{"history", "--metric", "mean_ttft_ms"},
	} {
		_, stderr, code := runCLI(t, metricsJSON(1, 2), append([]string{"--repo", repo}, args...)...)
		if code == 0 || !strings.Contains(stderr, "no commits yet") || strings.Contains(stderr, "--commit") || strings.Contains(stderr, "--branch") {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, stderr)
		}
	}
}
