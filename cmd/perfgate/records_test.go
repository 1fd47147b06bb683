package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type runsJSON struct {
	Runs []struct {
		ID, Commit, Benchmark, Testbed, Time, Invalid string
		ForCommit                                     string `json:"for_commit"`
		Flags                                         []string
	} `json:"runs"`
}

func listRuns(t *testing.T, repo string, args ...string) runsJSON {
	t.Helper()
	stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "runs", "-o", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("runs: exit %d\n%s", code, stderr)
	}
	var rj runsJSON
	if err := json.Unmarshal([]byte(stdout), &rj); err != nil {
		t.Fatalf("runs -o json: %v\n%s", err, stdout)
	}
	return rj
}

func setUser(t *testing.T, repo string) {
	t.Helper()
	t.Setenv("GITHUB_ACTOR", "")
	git(t, repo, "config", "user.name", "Ada")
	git(t, repo, "config", "user.email", "ada@example.com")
}

// TestAcceptAndInvalidateSurviveSync: CI accepts a step on main and
// invalidates a bad run, syncs; a developer's clone pulls both: its check
// of an unchanged branch passes against the new level, a further
// regression fails, and the invalidated run is listed as invalid.
func TestAcceptAndInvalidateSurviveSync(t *testing.T) {
	root, bare := bareRemote(t)
	remote := "file://" + bare

	ci := gitRepo(t)
	setUser(t, ci)
	shas := mainHistory(t, ci, 8)
	step := commit(t, ci, "new default: TTFT for throughput", map[string]string{"main.txt": "step"})
	ingestAt(t, ci, metricsJSON(130, 300))
	for i := 0; i < 2; i++ {
		commit(t, ci, "after the step", map[string]string{"main.txt": "after" + string(rune('a'+i))})
		ingestAt(t, ci, metricsJSON(130*(1+0.004*float64(i)), 300))
	}
	stdout, stderr, code := runCLI(t, "", "--repo", ci, "accept", "--benchmark", "serving", "--metric", "Mean TTFT", "--commit", step, "--reason", "trade TTFT for throughput")
	if code != 0 || !strings.Contains(stdout, "accepted mean_ttft_ms of serving at "+step[:7]) || !strings.Contains(stdout, "by Ada <ada@example.com>") {
		t.Fatalf("accept: exit %d\n%s%s", code, stdout, stderr)
	}
	bad := listRuns(t, ci, "--commit", shas[3])
	if len(bad.Runs) != 1 || len(bad.Runs[0].Flags) != 0 {
		t.Fatalf("runs of %s: %+v", shas[3], bad.Runs)
	}
	badID := bad.Runs[0].ID
	stdout, stderr, code = runCLI(t, "", "--repo", ci, "invalidate", badID[:10], "--reason", "runner was throttled")
	if code != 0 || !strings.Contains(stdout, "invalidated run "+badID) {
		t.Fatalf("invalidate: exit %d\n%s%s", code, stdout, stderr)
	}
	git(t, ci, "remote", "add", "origin", remote)
	git(t, ci, "push", "-q", "origin", "main")
	stdout, stderr, code = runCLI(t, "", "--repo", ci, "sync")
	if code != 0 || !strings.Contains(stdout, "pushed 11 runs") || !strings.Contains(stdout, "records (accepted changes, invalidated runs): pulled 0, pushed 2") {
		t.Fatalf("CI sync: exit %d\n%s%s", code, stdout, stderr)
	}
	if files := git(t, bare, "ls-tree", "-r", "--name-only", "perfgate-history", "records/"); strings.Count(files, ".jsonl") != 1 {
		t.Errorf("records on the branch: %q, want one file", files)
	}

	dev := filepath.Join(root, "dev")
	git(t, root, "clone", "-q", remote, dev)
	stdout, stderr, code = runCLI(t, "", "--repo", dev, "sync", "--pull-only", "-o", "json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(stdout), &raw); code != 0 || err != nil || raw["records_pulled"] != float64(2) {
		t.Fatalf("dev sync: exit %d %v\n%s%s", code, err, stdout, stderr)
	}
	// The invalidation is on record in the clone.
	inv := listRuns(t, dev, "--commit", shas[3])
	if len(inv.Runs) != 1 || strings.Join(inv.Runs[0].Flags, ",") != "invalid" || inv.Runs[0].Invalid != "invalidated by Ada <ada@example.com>: runner was throttled" {
		t.Errorf("runs in the clone: %+v", inv.Runs)
	}
	// Unchanged against the new level: pass; worse again: fail.
	git(t, dev, "checkout", "-q", "-b", "work")
	commit(t, dev, "work", map[string]string{"w.txt": "x"})
	ingestAt(t, dev, metricsJSON(130.5, 300))
	cj, stderr, code := checkOut(t, dev, "--rule", "mean_ttft_ms:5%")
	if code != 0 || cj.verdictOf("mean_ttft_ms") != "pass" {
		t.Errorf("unchanged branch after the accepted step: exit %d, %+v\n%s", code, cj, stderr)
	}
	commit(t, dev, "worse", map[string]string{"w.txt": "y"})
	ingestAt(t, dev, metricsJSON(165, 300))
	cj, stderr, code = checkOut(t, dev, "--rule", "mean_ttft_ms:5%")
	if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" {
		t.Errorf("a further regression: exit %d, %+v\n%s", code, cj, stderr)
	}
	// Accepted before merge, by label: shown as accepted, not a failure.
	stdout, stderr, code = runCLI(t, "", "--repo", dev, "check", "--rule", "mean_ttft_ms:5%", "--accept-label", "perf-accepted", "-o", "markdown")
	if code != 0 || !strings.Contains(stdout, "☑️ accepted") || !strings.Contains(stdout, "pull request label \"perf-accepted\"") {
		t.Errorf("check --accept-label: exit %d\n%s%s", code, stdout, stderr)
	}
	// In Actions, the label must be on the pull request.
	event := filepath.Join(t.TempDir(), "event.json")
	os.WriteFile(event, []byte(`{"pull_request":{"number":7,"labels":[{"name":"other"}]}}`), 0o644)
	t.Setenv("GITHUB_EVENT_PATH", event)
	_, stderr, code = runCLI(t, "", "--repo", dev, "check", "--rule", "mean_ttft_ms:5%", "--accept-label", "perf-accepted", "--github=false")
	if code != 1 || !strings.Contains(stderr, `does not carry the label "perf-accepted"`) {
		t.Errorf("label absent from the pull request: exit %d\n%s", code, stderr)
	}
	// In Actions on a push, the flag accepts nothing.
	os.WriteFile(event, []byte(`{"after":"`+strings.Repeat("a", 40)+`"}`), 0o644)
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_EVENT_NAME", "push")
	_, stderr, code = runCLI(t, "", "--repo", dev, "check", "--rule", "mean_ttft_ms:5%", "--accept-label", "perf-accepted", "--github=false")
	if code != 1 || !strings.Contains(stderr, "names no pull request's labels") {
		t.Errorf("label on a push: exit %d\n%s", code, stderr)
	}
	t.Setenv("GITHUB_ACTIONS", "")
	t.Setenv("GITHUB_EVENT_PATH", "")
	// history shows the accepted change.
	stdout, _, code = runCLI(t, "", "--repo", dev, "history", "--name", "serving", "--metric", "mean_ttft_ms", "--branch", "origin/main")
	if code != 0 || !strings.Contains(stdout, "change at "+step[:7]+" accepted by Ada <ada@example.com>: trade TTFT for throughput") {
		t.Errorf("history: exit %d\n%s", code, stdout)
	}
	// A second sync both ways moves nothing.
	stdout, _, _ = runCLI(t, "", "--repo", dev, "sync")
	if strings.Contains(stdout, "records (") {
		t.Errorf("second sync moved records again:\n%s", stdout)
	}
}

// TestInvalidatedRunNeverBaseline: a bad run at the merge-base makes an
// unchanged branch fail; once invalidated, the check takes the nearest
// valid ancestor as its baseline and passes. The run stays in the history.
func TestInvalidatedRunNeverBaseline(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	shas := mainHistory(t, repo, 3)
	bogus := commit(t, repo, "main 3", map[string]string{"main.txt": "3"})
	ingestAt(t, repo, metricsJSON(60, 300)) // a run that measured nothing real
	git(t, repo, "checkout", "-q", "-b", "work")
	commit(t, repo, "work", map[string]string{"w.txt": "x"})
	ingestAt(t, repo, metricsJSON(100.5, 300))
	cj, _, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
	if code != 1 || cj.Baseline.Commit != bogus {
		t.Fatalf("before: exit %d, baseline %s, want a fail against %s", code, cj.Baseline.Commit, bogus)
	}
	runs := listRuns(t, repo, "--commit", bogus)
	if _, stderr, code := runCLI(t, "", "--repo", repo, "invalidate", runs.Runs[0].ID, "--reason", "benchmark ran on a stub"); code != 0 {
		t.Fatalf("invalidate: exit %d\n%s", code, stderr)
	}
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
	if code != 0 || cj.verdictOf("mean_ttft_ms") != "pass" || cj.Baseline.Commit != shas[2] {
		t.Errorf("after: exit %d, baseline %s (want %s), %+v\n%s", code, cj.Baseline.Commit, shas[2], cj, stderr)
	}
	if all := listRuns(t, repo); len(all.Runs) != 5 {
		t.Errorf("runs after invalidate: %d, want all 5 kept", len(all.Runs))
	}
	// Invalidating it again records nothing new.
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "invalidate", runs.Runs[0].ID, "--reason", "again")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "already invalid") {
		t.Errorf("again: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestRecordCommandErrors(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	shas := mainHistory(t, repo, 2)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown run", []string{"invalidate", "0123456789abcdef", "--reason", "x"}, 2, `no run "0123456789abcdef" in the history`},
		{"unknown run names runs", []string{"invalidate", "0123456789abcdef", "--reason", "x"}, 2, "perfgate runs lists the stored runs"},
		{"not an id", []string{"invalidate", "zz", "--reason", "x"}, 2, `"zz" is not a run id`},
		{"no ids", []string{"invalidate", "--reason", "x"}, 2, "give the ids of the runs"},
		{"no reason", []string{"invalidate", "0123456789abcdef"}, 2, "--reason is required"},
		{"accept no benchmark", []string{"accept", "--metric", "mean_ttft_ms", "--reason", "x"}, 2, "--benchmark is required"},
		{"accept unknown benchmark", []string{"accept", "--benchmark", "servin", "--metric", "mean_ttft_ms", "--reason", "x"}, 2, `did you mean "serving"?`},
		{"accept unknown metric", []string{"accept", "--benchmark", "serving", "--metric", "mean_ttft", "--reason", "x"}, 2, `--metric "mean_ttft" is not a known metric`},
		{"accept bad commit", []string{"accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--commit", "nope", "--reason", "x"}, 2, "--commit"},
		{"accept no reason", []string{"accept", "--benchmark", "serving", "--metric", "mean_ttft_ms"}, 2, "--reason is required"},
		{"accept control chars", []string{"accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--reason", "a\x1b[31mb"}, 2, "control character"},
		{"runs bad date", []string{"runs", "--since", "yesterday"}, 2, `--since "yesterday" is not a date`},
		{"runs bad glob", []string{"runs", "--benchmark", "[x"}, 2, "not a valid glob"},
		{"runs bad -o", []string{"runs", "-o", "xml"}, 2, `-o "xml"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tc.code, stderr, tc.want)
			}
		})
	}
	// Nothing was recorded by the failed commands.
	if all := listRuns(t, repo); len(all.Runs) != 2 {
		t.Errorf("runs: %+v", all)
	}
	_ = shas
}

// TestRunsFilters: runs lists every run with its flags, and the filters
// select by benchmark glob, commit, testbed and time; -o json is the data.
func TestRunsFilters(t *testing.T) {
	repo := gitRepo(t)
	shas := mainHistory(t, repo, 3)
	ingestAt(t, repo, metricsJSON(50, 10), "--name", "other-bench", "--testbed", "laptop")
	all := listRuns(t, repo)
	if len(all.Runs) != 4 {
		t.Fatalf("runs: %+v", all)
	}
	for _, r := range all.Runs {
		if len(r.ID) != 32 || len(r.Commit) != 40 || r.Time == "" || r.Flags == nil {
			t.Errorf("run %+v", r)
		}
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"--benchmark", "serv*"}, 3},
		{[]string{"--benchmark", "other-*"}, 1},
		{[]string{"--commit", shas[0]}, 1},
		{[]string{"--commit", "HEAD"}, 2},
		{[]string{"--testbed", "laptop"}, 1},
		{[]string{"--since", "2999-01-01"}, 0},
		{[]string{"--until", "2000-01-01"}, 0},
		{[]string{"--since", "2000-01-01", "--benchmark", "serving"}, 3},
	} {
		if got := listRuns(t, repo, tc.args...); len(got.Runs) != tc.want {
			t.Errorf("runs %v: %d runs, want %d", tc.args, len(got.Runs), tc.want)
		}
	}
	stdout, _, code := runCLI(t, "", "--repo", repo, "runs", "--benchmark", "other-*")
	if code != 0 || !strings.HasPrefix(stdout, "ID") || !strings.Contains(stdout, "laptop") || !strings.Contains(stdout, "other-bench") {
		t.Errorf("runs text: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = runCLI(t, "", "--repo", repo, "runs", "-o", "json", "--since", "2999-01-01")
	if strings.TrimSpace(stdout) != "{\n  \"runs\": []\n}" {
		t.Errorf("empty runs -o json: %q", stdout)
	}
}

// TestRunsGolden: the text and JSON listings of a fixed history (imported
// with ids and times), with a dirty run and one invalidated on record.
func TestRunsGolden(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	c1 := commit(t, repo, "one", map[string]string{"a": "1"})
	c2 := commit(t, repo, "two", map[string]string{"a": "2"})
	line := func(id, commit, bench, tm, extra string) string {
		return `{"id":"` + id + `","commit":"` + commit + `","benchmark":"` + bench + `","time":"` + tm + `","metrics":{"mean_ttft_ms":100},"labels":{"model":"m"},"source":{"format":"generic-json","file":"r.json"}` + extra + "}\n"
	}
	dump := line(strings.Repeat("1", 32), c1, "serving", "2026-01-02T03:04:05Z", `,"testbed":"ci-a100"`) +
		line(strings.Repeat("2", 32), c2, "serving", "2026-01-03T03:04:05Z", `,"testbed":"ci-a100"`) +
		line(strings.Repeat("3", 32), c2, "batch", "2026-01-04T03:04:05Z", `,"dirty":true`)
	if _, stderr, code := runCLI(t, dump, "--repo", repo, "import", "-"); code != 0 {
		t.Fatalf("import: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--repo", repo, "invalidate", strings.Repeat("1", 8), "--reason", "runner was throttled"); code != 0 {
		t.Fatalf("invalidate: exit %d\n%s", code, stderr)
	}
	for _, o := range []string{"text", "json"} {
		stdout, stderr, code := runCLI(t, "", "--repo", repo, "runs", "-o", o)
		if code != 0 {
			t.Fatalf("runs -o %s: exit %d\n%s", o, code, stderr)
		}
		golden(t, "runs."+o, stdout) // git's fixed dates and identity make the commit ids stable
	}
}

// TestAcceptSeveralMetrics: every --metric given is accepted (not only
// the last), and --all-metrics accepts each metric of the benchmark at
// the commit.
func TestAcceptSeveralMetrics(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	mainHistory(t, repo, 2)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--metric", "output_throughput", "--reason", "new default")
	if code != 0 || !strings.Contains(stdout, "accepted mean_ttft_ms of serving") || !strings.Contains(stdout, "accepted output_throughput of serving") {
		t.Fatalf("accept two metrics: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "accept", "--benchmark", "serving", "--all-metrics", "--commit", "HEAD~1", "--reason", "new default", "-o", "json")
	if code != 0 || strings.Count(stdout, `"kind":"accept"`) != 4 {
		t.Fatalf("accept --all-metrics: exit %d, want 4 records\n%s%s", code, stdout, stderr)
	}
	for _, m := range []string{"mean_ttft_ms", "output_throughput", "completed", "failed"} {
		if !strings.Contains(stdout, `"metric":"`+m+`"`) {
			t.Errorf("accept --all-metrics did not accept %s:\n%s", m, stdout)
		}
	}
	if _, stderr, code = runCLI(t, "", "--repo", repo, "accept", "--benchmark", "serving", "--all-metrics", "--metric", "mean_ttft_ms", "--reason", "x"); code != 2 || !strings.Contains(stderr, "--all-metrics") {
		t.Errorf("--metric with --all-metrics: exit %d\n%s", code, stderr)
	}
}

// TestInvalidatedAtHeadAndUndo: a run invalidated at head is left out as
// it is in baselines (not a failure of the commit): with none left the
// commit is not measured, with the command that measures it; a run
// measured again decides; an invalidation withdrawn on record (invalidate
// --undo) makes the run count again, is shown where the verdict is, and
// is exported with the run.
func TestInvalidatedAtHeadAndUndo(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	mainHistory(t, repo, 6)
	git(t, repo, "checkout", "-q", "-b", "work")
	commit(t, repo, "harmless", map[string]string{"w.txt": "x"})
	ingestAt(t, repo, metricsJSON(100.5, 300))
	first := listRuns(t, repo, "--commit", "HEAD").Runs[0].ID
	if _, stderr, code := runCLI(t, "", "--repo", repo, "invalidate", first, "--reason", "runner was throttled"); code != 0 {
		t.Fatalf("invalidate: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:5%")
	if code != exitEnv || !strings.Contains(stderr, "no valid results") || !strings.Contains(stderr, "runner was throttled") || !strings.Contains(stderr, "perfgate run --name BENCH") {
		t.Fatalf("all head runs invalidated: exit %d, want %d, not measured\n%s%s", code, exitEnv, stdout, stderr)
	}
	ingestAt(t, repo, metricsJSON(100.2, 300))
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
	if code != 0 || cj.verdictOf("mean_ttft_ms") != "pass" {
		t.Fatalf("measured again: exit %d, %+v\n%s", code, cj, stderr)
	}
	for _, ch := range cj.Checks {
		if ch.Verdict == "fail" {
			t.Errorf("the invalidated run failed the commit: %+v", ch)
		}
	}
	if stdout, _, _ := runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:5%"); !strings.Contains(stdout, "left out at head") || !strings.Contains(stdout, "runner was throttled") {
		t.Errorf("the report does not say the invalidated run was left out:\n%s", stdout)
	}

	stdout, stderr, code = runCLI(t, "", "--repo", repo, "invalidate", "--undo", first[:10], "--reason", "the throttling was elsewhere")
	if code != 0 || !strings.Contains(stdout, "withdrew the invalidation of run "+first) {
		t.Fatalf("invalidate --undo: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, r := range listRuns(t, repo, "--commit", "HEAD").Runs {
		if r.Invalid != "" {
			t.Errorf("run %s still invalid after --undo: %s", r.ID, r.Invalid)
		}
	}
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "check", "--rule", "mean_ttft_ms:5%")
	if code != 0 || !strings.Contains(stdout, "counts again: invalidation withdrawn by Ada <ada@example.com>: the throttling was elsewhere") {
		t.Errorf("check after --undo: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code = runCLI(t, "", "--repo", repo, "invalidate", "--undo", first, "--reason", "again"); code != 2 || !strings.Contains(stderr, "not invalidated on record") {
		t.Errorf("--undo of a valid run: exit %d\n%s", code, stderr)
	}
	stdout, _, _ = runCLI(t, "", "--repo", repo, "export")
	if !strings.Contains(stdout, `"kind":"revalidate"`) || !strings.Contains(stdout, `"kind":"invalidate"`) {
		t.Errorf("export lacks the records of the run:\n%s", stdout)
	}
	// Invalidated again after the withdrawal: the newest record decides.
	if _, stderr, code = runCLI(t, "", "--repo", repo, "invalidate", first, "--reason", "throttled after all"); code != 0 {
		t.Fatalf("invalidate again: exit %d\n%s", code, stderr)
	}
	if rs := listRuns(t, repo, "--commit", "HEAD").Runs; !strings.Contains(rs[0].Invalid+rs[1].Invalid, "throttled after all") {
		t.Errorf("invalidated again, runs: %+v", rs)
	}
}
