package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/github/githubtest"
)

// The history branch is a trust boundary (issue: "whoever can push to
// perfgate-history decides the verdict"). These tests play the attacks
// end to end: CI measures main and syncs; a pull request regresses TTFT
// by +100% (rule 5%); someone who can push to the branch (mallory, under
// any name) writes records or runs there with perfgate itself; then the
// pull request's check runs as CI runs it: a fresh clone, sync
// --pull-only, check publishing to a GitHub fake. Each attack either
// fails the gate, needs the trust the rules configure, or is shown in the
// pull request's comment with how it arrived.

type attackWorld struct {
	root, remote string
	mains        []string
	head         string
	n            int
	extra        []string // more arguments of the pull request's check
}

func newAttackWorld(t *testing.T) *attackWorld {
	t.Helper()
	t.Setenv("PERFGATE_TESTBED", "ci-runner")
	root, bare := bareRemote(t)
	w := &attackWorld{root: root, remote: "file://" + bare}
	ci := gitRepo(t)
	w.mains = mainHistory(t, ci, 6)
	git(t, ci, "remote", "add", "origin", w.remote)
	git(t, ci, "push", "-q", "origin", "main")
	if _, stderr, code := runCLI(t, "", "--repo", ci, "sync"); code != 0 {
		t.Fatalf("CI sync: exit %d\n%s", code, stderr)
	}
	git(t, ci, "checkout", "-q", "-b", "feature")
	w.head = commit(t, ci, "feature", map[string]string{"f.txt": "x"})
	git(t, ci, "push", "-q", "origin", "feature")
	return w
}

// clone is a fresh clone of the remote with the branch's history pulled.
func (w *attackWorld) clone(t *testing.T, name string) string {
	t.Helper()
	w.n++
	dir := filepath.Join(w.root, fmt.Sprintf("%s-%d", name, w.n))
	git(t, w.root, "clone", "-q", w.remote, dir)
	git(t, dir, "config", "user.name", name)
	git(t, dir, "config", "user.email", name+"@example.com")
	if _, stderr, code := runCLI(t, "", "--repo", dir, "sync", "--pull-only"); code != 0 {
		t.Fatalf("%s: sync --pull-only: exit %d\n%s", name, code, stderr)
	}
	return dir
}

// mallory returns a clone in which the attacker works; push shares what
// it wrote.
func (w *attackWorld) mallory(t *testing.T) string { return w.clone(t, "mallory") }

func push(t *testing.T, dir string) {
	t.Helper()
	if _, stderr, code := runCLI(t, "", "--repo", dir, "sync"); code != 0 {
		t.Fatalf("sync: exit %d\n%s", code, stderr)
	}
}

// runIDs lists the ids of the runs at commit in a clone's history.
func runIDs(t *testing.T, dir, commit string) []string {
	t.Helper()
	out, stderr, code := runCLI(t, "", "--repo", dir, "runs", "--commit", commit, "-o", "json")
	if code != 0 {
		t.Fatalf("runs: exit %d\n%s", code, stderr)
	}
	var rows struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("runs -o json: %v\n%s", err, out)
	}
	var ids []string
	for _, r := range rows.Runs {
		ids = append(ids, r.ID)
	}
	return ids
}

type prCheck struct {
	code    int
	report  checkJSON
	comment string
	stderr  string
}

// check runs the pull request's check as CI does, with the rules file
// rules ("" for none) and the pull request's labels.
func (w *attackWorld) check(t *testing.T, rules string, labels ...string) prCheck {
	t.Helper()
	dir := w.clone(t, "ci")
	git(t, dir, "checkout", "-q", "feature")
	// origin as CI has it: the repository GITHUB_REPOSITORY names (the
	// history is pulled already).
	git(t, dir, "remote", "set-url", "origin", "https://github.example/o/r.git")
	ingestAt(t, dir, metricsJSON(200, 300))
	args := []string{"--repo", dir, "check", "-o", "json", "--rule", "mean_ttft_ms:5%", "--gate-id", "serving"}
	if rules != "" {
		args = append(args, "--rules", writeFile(t, w.root, fmt.Sprintf("rules-%d.yml", w.n), rules))
	}
	args = append(args, w.extra...)
	var res prCheck
	srv := githubtest.New(t, secretToken,
		githubtest.Call{Method: "GET", Path: "/repos/o/r/issues/1/comments", Body: []any{}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/issues/1/comments", Body: githubtest.Comment(7, "x"),
			Check: func(t testing.TB, _ *http.Request, body []byte) {
				res.comment = fmt.Sprint(githubtest.DecodeBody(t, body)["body"])
			}},
		githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + w.head},
	)
	var ls []string
	for _, l := range labels {
		ls = append(ls, fmt.Sprintf(`{"name": %q}`, l))
	}
	event := `{"pull_request": {"number": 1, "head": {"sha": "` + w.head + `", "ref": "feature", "repo": {"full_name": "o/r"}}, "base": {"ref": "main"}, "labels": [` + strings.Join(ls, ", ") + `]}}`
	actionsEnv(t, srv, "pull_request", event)
	var stdout string
	stdout, res.stderr, res.code = runCLI(t, "", args...)
	if res.code <= 1 {
		if err := json.Unmarshal([]byte(stdout), &res.report); err != nil {
			t.Fatalf("check -o json: %v\n%s\n%s", err, stdout, res.stderr)
		}
	}
	return res
}

func (p prCheck) wantComment(t *testing.T, parts ...string) {
	t.Helper()
	for _, s := range parts {
		if !strings.Contains(p.comment, s) {
			t.Errorf("the pull request's comment lacks %q:\n%s", s, p.comment)
		}
	}
}

func TestHistoryBranchAttacks(t *testing.T) {
	t.Run("honest", func(t *testing.T) {
		w := newAttackWorld(t)
		if p := w.check(t, ""); p.code != 1 || p.report.verdictOf("mean_ttft_ms") != "fail" {
			t.Fatalf("the +100%% regression: exit %d, %s\n%s", p.code, p.report.verdictOf("mean_ttft_ms"), p.stderr)
		}
	})

	t.Run("invalidating main's runs", func(t *testing.T) {
		w := newAttackWorld(t)
		m := w.mallory(t)
		for _, c := range w.mains {
			args := append([]string{"--repo", m, "invalidate", "--reason", "runner was throttled"}, runIDs(t, m, c)...)
			if _, stderr, code := runCLI(t, "", args...); code != 0 {
				t.Fatalf("invalidate: exit %d\n%s", code, stderr)
			}
		}
		push(t, m)
		// Without trust settings the invalidations apply, and the comment
		// says who wrote them and which branch commit brought them.
		p := w.check(t, "")
		if p.code != 0 {
			t.Errorf("exit %d with the invalidations applied", p.code)
		}
		p.wantComment(t, "invalidated by mallory &lt;mallory@&#8203;example.com&gt;: runner was throttled", "in perfgate-history commit", "author mallory")
		// A rule that invalidations need a maintainer's label: without it
		// the gate fails as if they were not there; with it they apply.
		rules := "trust:\n  invalidate_label: perf-invalidation-ok\n"
		p = w.check(t, rules)
		if p.code != 1 || p.report.verdictOf("mean_ttft_ms") != "fail" {
			t.Errorf("invalidations without the label: exit %d, %s\n%s", p.code, p.report.verdictOf("mean_ttft_ms"), p.stderr)
		}
		p.wantComment(t, "so 6 records are not applied", `trust.invalidate\_label is "perf-invalidation-ok"`)
		if p = w.check(t, rules, "perf-invalidation-ok"); p.code != 0 {
			t.Errorf("invalidations with the label: exit %d", p.code)
		}
	})

	t.Run("accepting the pull request under a maintainer's name", func(t *testing.T) {
		w := newAttackWorld(t)
		m := w.mallory(t)
		git(t, m, "fetch", "-q", "origin", "feature")
		t.Setenv("GITHUB_ACTOR", "maintainer-alice")
		if _, stderr, code := runCLI(t, "", "--repo", m, "accept", "--commit", w.head, "--benchmark", "serving", "--metric", "mean_ttft_ms", "--reason", "intended, approved in review"); code != 0 {
			t.Fatalf("accept: exit %d\n%s", code, stderr)
		}
		push(t, m)
		p := w.check(t, "")
		if p.code != 0 || p.report.verdictOf("mean_ttft_ms") != "accepted" {
			t.Errorf("exit %d, %s", p.code, p.report.verdictOf("mean_ttft_ms"))
		}
		// The name is the writer's claim; the comment shows the branch
		// commit and its author beside it.
		p.wantComment(t, "accepted by maintainer-alice: intended, approved in review", "in perfgate-history commit", "author mallory", "after origin/main's tip")
		// Acceptances only by pull request label: the record does not apply.
		p = w.check(t, "trust:\n  accept: [label]\n")
		if p.code != 1 || p.report.verdictOf("mean_ttft_ms") != "fail" {
			t.Errorf("trust accept [label]: exit %d, %s", p.code, p.report.verdictOf("mean_ttft_ms"))
		}
		p.wantComment(t, "trust.accept is \\[label\\] and it is a history-branch record")
	})

	t.Run("a local acceptance on the runner", func(t *testing.T) {
		// The pull request's own code runs on the runner before the check
		// and may write to the runner's history file: such a record is
		// local, and trust [label, branch] leaves it out.
		w := newAttackWorld(t)
		dir := w.clone(t, "ci")
		git(t, dir, "checkout", "-q", "feature")
		ingestAt(t, dir, metricsJSON(200, 300))
		if _, stderr, code := runCLI(t, "", "--repo", dir, "accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--reason", "fine"); code != 0 {
			t.Fatalf("accept: exit %d\n%s", code, stderr)
		}
		rules := writeFile(t, w.root, "rules.yml", "trust:\n  accept: [label, branch]\n")
		cj, stderr, code := checkOut(t, dir, "--rule", "mean_ttft_ms:5%", "--rules", rules)
		if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" || !strings.Contains(stderr+strings.Join(cj.Warnings, "\n"), "it is a local (not from the history branch) record") {
			t.Errorf("local acceptance under trust [label, branch]: exit %d, %s\n%v", code, cj.verdictOf("mean_ttft_ms"), cj.Warnings)
		}
	})

	t.Run("accepting at the unmeasured merge-base under require_baseline", func(t *testing.T) {
		w := newAttackWorld(t)
		m := w.mallory(t)
		// main moves on without a measurement; the pull request's base is
		// that commit.
		git(t, m, "checkout", "-q", "main")
		base := commit(t, m, "unmeasured", map[string]string{"u.txt": "x"})
		git(t, m, "push", "-q", "origin", "main")
		git(t, m, "checkout", "-q", "-b", "feature2")
		commit(t, m, "feature2", map[string]string{"g.txt": "x"})
		git(t, m, "push", "-q", "origin", "feature2")
		if _, stderr, code := runCLI(t, "", "--repo", m, "accept", "--commit", base, "--benchmark", "serving", "--metric", "mean_ttft_ms", "--reason", "new level"); code != 0 {
			t.Fatalf("accept: exit %d\n%s", code, stderr)
		}
		push(t, m)
		dir := w.clone(t, "ci")
		git(t, dir, "checkout", "-q", "feature2")
		ingestAt(t, dir, metricsJSON(200, 300))
		cj, stderr, code := checkOut(t, dir, "--rule", "mean_ttft_ms:5%", "--require-baseline")
		if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" {
			t.Errorf("require_baseline through an acceptance at an unmeasured commit: exit %d, %s\n%s", code, cj.verdictOf("mean_ttft_ms"), stderr)
		}
	})

	t.Run("forged runs at main's commits", func(t *testing.T) {
		w := newAttackWorld(t)
		m := w.mallory(t)
		for _, c := range w.mains[1:] {
			for i := 0; i < 3; i++ {
				ingestAt(t, m, metricsJSON(10000+float64(i), 300), "--commit", c)
			}
		}
		push(t, m)
		p := w.check(t, "")
		p.wantComment(t, "runs at the baseline commit disagree", "against the median")
		if p.report.verdictOf("mean_ttft_ms") == "pass" {
			t.Errorf("verdict pass over forged runs")
		}
	})

	t.Run("forged runs at the pull request's own commit", func(t *testing.T) {
		// Mallory writes runs at the pull request's head that pull its
		// result back to main's level: the check uses only the run the
		// pull request's job stored, and names the others with the branch
		// commit and author that brought them.
		w := newAttackWorld(t)
		m := w.mallory(t)
		git(t, m, "fetch", "-q", "origin", "feature")
		for i := 0; i < 3; i++ {
			ingestAt(t, m, metricsJSON(50+float64(i), 300), "--commit", w.head)
		}
		push(t, m)
		p := w.check(t, "")
		if p.code != 1 || p.report.verdictOf("mean_ttft_ms") != "fail" {
			t.Errorf("forged runs at head: exit %d, %s\n%s", p.code, p.report.verdictOf("mean_ttft_ms"), p.stderr)
		}
		p.wantComment(t, "3 run(s) at head came from the history branch, not from this job, and are left out", "in perfgate-history commit", "author mallory", "--head-runs all uses them")
		// Told to use them, the check names them and the head runs that
		// disagree.
		w.extra = []string{"--head-runs", "all"}
		p = w.check(t, "")
		p.wantComment(t, "3 run(s) at head came from the history branch, not from this job, and are used", "author mallory", "runs at the head commit disagree")
	})

	t.Run("one forged run at the baseline commit", func(t *testing.T) {
		for _, v := range []string{"-1000", "1e308"} {
			w := newAttackWorld(t)
			m := w.mallory(t)
			last := w.mains[len(w.mains)-1]
			ingestAt(t, m, `{"metrics": {"mean_ttft_ms": `+v+`, "output_throughput": 300, "completed": 500, "failed": 0}}`, "--commit", last)
			push(t, m)
			p := w.check(t, "")
			switch v {
			case "-1000": // impossible: invalid, never a baseline
				if p.code != 1 || p.report.verdictOf("mean_ttft_ms") != "fail" {
					t.Errorf("%s: exit %d, %s", v, p.code, p.report.verdictOf("mean_ttft_ms"))
				}
			default: // possible but far off: shown with the verdict
				p.wantComment(t, "runs at the baseline commit disagree")
			}
		}
	})
}

// A pull request's own rules file cannot choose the history its gate reads:
// under --rules-from base, db: and repository: of the checked-out file are
// ignored with a warning (a db: naming a file committed in the pull
// request would otherwise be its baseline).
func TestRulesFromBaseIgnoresWorktreeDB(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 6)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "feature", map[string]string{".perfgate.yml": "db: forged.db\nrules:\n  - metric: mean_ttft_ms\n    max_regression: 50%\n"})
	if _, stderr, code := runCLI(t, metricsJSON(200, 300), "--repo", repo, "--db", filepath.Join(repo, ".perfgate", "history.db"), "ingest", "--name", "serving", "-"); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	cj, stderr, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%", "--rules-from", "base")
	if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" {
		t.Errorf("--rules-from base: exit %d, %s\n%s", code, cj.verdictOf("mean_ttft_ms"), stderr)
	}
	if !strings.Contains(stderr, "db: and repository: of the checked-out rules file are ignored under --rules-from base") {
		t.Errorf("no warning about the ignored db:\n%s", stderr)
	}
	if _, _, code := checkOut(t, repo, "--rule", "mean_ttft_ms:5%"); code == 1 {
		t.Errorf("without --rules-from base the pull request's db: applies (its empty forged history), yet the check failed on the real one")
	}
}
