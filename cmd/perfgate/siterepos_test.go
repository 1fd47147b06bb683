package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// repoHistory is the JSONL of one serving benchmark measured at each of
// shas, an hour apart from start, TTFT wobbling about 1% around level and
// stepping up by step (a factor) for the last back commits.
func repoHistory(shas []string, start time.Time, level, step float64, back int) string {
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7, -1.0, 0.5}
	var b strings.Builder
	for i, sha := range shas {
		v := level * (1 + wobble[i%len(wobble)]/100)
		if i >= len(shas)-back {
			v *= step
		}
		fmt.Fprintf(&b, `{"commit":%q,"benchmark":"serving","time":%q,"metrics":{"mean_ttft_ms":%.3f,"output_throughput":300},"labels":{"model":"qwen2.5-7b"},"source":{"format":"generic-json","file":"bench.json"}}`+"\n",
			sha, start.Add(time.Duration(i)*time.Hour).Format(time.RFC3339), v)
	}
	return b.String()
}

// TestSiteRepositoriesOnPostgres: one database holds an engine and its
// fork, which share their commits. The engine's TTFT steps up 30% at its
// last 6 commits; the fork's, measured at the same commits, does not.
// site --all-repositories, run in the engine's checkout, draws both: the
// engine along git's first-parent history with its regression flagged,
// the fork (not checked out here) along its commits in order of first
// run, with no regression, since nothing of one repository is a baseline
// or a run of the other. --repository picks one; outside any checkout
// every repository is ordered by its runs; a bbolt history, an unknown
// name or both flags are usage errors.
func TestSiteRepositoriesOnPostgres(t *testing.T) {
	pgtest.Server(t)
	db := pgtest.URL(t)
	t.Setenv("PERFGATE_DB", db)
	engine := gitRepo(t)
	git(t, engine, "remote", "add", "origin", "git@github.com:org/engine.git")
	var shas []string
	for i := range 30 {
		shas = append(shas, commit(t, engine, fmt.Sprintf("change %d", i), map[string]string{"f.txt": fmt.Sprint(i)}))
	}
	fork := filepath.Join(t.TempDir(), "fork")
	git(t, filepath.Dir(fork), "clone", "-q", engine, fork)
	git(t, fork, "remote", "set-url", "origin", "https://github.com/org/fork.git")
	start := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range []struct {
		dir, jsonl string
	}{
		{engine, repoHistory(shas, start, 100, 1.3, 6)},
		{fork, repoHistory(shas, start, 100, 1, 0)},
	} {
		if _, stderr, code := runCLI(t, r.jsonl, "--repo", r.dir, "import", "-"); code != 0 {
			t.Fatalf("import into %s: exit %d: %s", r.dir, code, stderr)
		}
	}

	out := filepath.Join(t.TempDir(), "site")
	stdout, stderr, code := runCLI(t, "", "--repo", engine, "site", "--out", out, "--all-repositories")
	if code != 0 {
		t.Fatalf("site --all-repositories: exit %d: %s", code, stderr)
	}
	golden(t, "site-repositories.text", strings.ReplaceAll(stdout, out, "OUT"))
	stdout, stderr, code = runCLI(t, "", "--repo", engine, "site", "--out", out, "--all-repositories", "-o", "json")
	if code != 0 {
		t.Fatalf("site --all-repositories -o json: exit %d: %s", code, stderr)
	}
	var sum struct {
		Repositories []struct {
			Name, Dir, Order, Ref, Status string
			Commits, Runs, Flagged        int
			Open                          int `json:"open_regressions"`
			Latest                        struct{ SHA string }
		}
		Flagged int
		Open    int `json:"open_regressions"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(sum.Repositories) != 2 {
		t.Fatalf("repositories %+v, want the engine and its fork", sum.Repositories)
	}
	e, f := sum.Repositories[0], sum.Repositories[1]
	if e.Name != "github.com/org/engine" || e.Order != "" || e.Ref != "main" || e.Status != "regression" || e.Flagged != 1 || e.Open != 1 || e.Runs != 30 || e.Commits != 30 || e.Latest.SHA != shas[29] {
		t.Errorf("engine %+v: want git's order of main, 30 runs (of 2 metrics each, counted once), the regression flagged and open", e)
	}
	if f.Name != "github.com/org/fork" || f.Order != "measured" || f.Status != "ok" || f.Flagged != 0 || f.Open != 0 || f.Runs != 30 || f.Commits != 30 || f.Latest.SHA != shas[29] {
		t.Errorf("fork %+v: want its own 30 runs in order of first run, nothing flagged", f)
	}
	if sum.Flagged != 1 || sum.Open != 1 {
		t.Errorf("index flags %d charts, %d open; want the engine's 1 and 1", sum.Flagged, sum.Open)
	}
	page, err := os.ReadFile(filepath.Join(out, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="r/github.com-org-engine/index.html">github.com/org/engine</a>`, `data-repository="github.com/org/fork" data-status="ok"`, `data-repository="github.com/org/engine" data-status="regression"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	// The fork's chart: its own level, no regression, links to its forge.
	chart, err := os.ReadFile(filepath.Join(out, f.Dir, "data", "s", "serving", "mean_ttft_ms.js"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(chart), "130.") || strings.Contains(string(chart), `"flag":"regression"`) {
		t.Errorf("the fork's chart shows the engine's regression: %.400s", chart)
	}
	commits, err := os.ReadFile(filepath.Join(out, f.Dir, "data", "commits.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(commits), `"forge":{"kind":"github","repo":"https://github.com/org/fork"},"order":"measured"`) {
		t.Errorf("the fork's commits.js: %.300s", commits)
	}

	// One repository, from outside any checkout: ordered by its runs.
	out2 := filepath.Join(t.TempDir(), "site")
	stdout, stderr, code = runCLI(t, "", "--repo", t.TempDir(), "site", "--out", out2, "--repository", "github.com/org/engine", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"order": "measured"`) || strings.Contains(stdout, "org/fork") || !strings.Contains(stdout, `"status": "regression"`) {
		t.Errorf("site --repository engine outside a checkout: exit %d, %s%s", code, stdout, stderr)
	}

	// A benchmark only the fork has: the engine's page is empty, with a
	// warning; a benchmark no repository has is a usage error.
	extra := fmt.Sprintf(`{"commit":%q,"benchmark":"fork-only","time":"2026-03-01T00:00:00Z","metrics":{"mean_ttft_ms":5},"source":{"format":"generic-json","file":"x.json"}}`+"\n", shas[0])
	if _, stderr, code := runCLI(t, extra, "--repo", fork, "import", "-"); code != 0 {
		t.Fatalf("import into the fork: %s", stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", engine, "site", "--out", t.TempDir(), "--all-repositories", "--benchmark", "fork-only", "-o", "json")
	if code != 0 || !strings.Contains(stderr, `repository github.com/org/engine: --benchmark "fork-only" matches none`) || !strings.Contains(stdout, `"status": "empty"`) || !strings.Contains(stdout, `"runs": 1,`) {
		t.Errorf("site --benchmark of the fork alone: exit %d\n%s%s", code, stdout, stderr)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--all-repositories", "--benchmark", "nowhere"}, `--benchmark "nowhere" matches none`},
		{[]string{"--repository", "github.com/org/engin"}, `did you mean "github.com/org/engine"?`},
		{[]string{"--repository", "github.com/org/engine", "--all-repositories"}, "give one"},
		{[]string{"--all-repositories"}, "bbolt file, which holds one repository"},
		{[]string{"--repository", ""}, "--repository \"\""},
	} {
		db := db
		if tt.want == "bbolt file, which holds one repository" {
			db = filepath.Join(t.TempDir(), "h.db")
		}
		_, stderr, code := runCLI(t, "", append([]string{"--db", db, "--repo", engine, "site", "--out", t.TempDir()}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("site %v: exit %d, %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
