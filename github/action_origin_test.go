package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// perfgateIn runs the built perfgate in dir as the pull request's code
// would, outside the action, and returns its output.
func (w *actionWorkspace) perfgateIn(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), w.env...), "GITHUB_ACTIONS=", "PERFGATE_DB=", "GITHUB_TOKEN=", "PERFGATE_GITHUB_TOKEN=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("perfgate %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// forgedOriginWorkspace is a repository whose main has rules (3% on Mean
// TTFT, acceptances only from the history branch) and a recorded run on
// the remote's history branch, and a pull request (feature) that regresses
// Mean TTFT by 20%. The CI's repository is the bare remote.
func forgedOriginWorkspace(t *testing.T) (*actionWorkspace, string) {
	w := newActionWorkspace(t, nil)
	server, name := filepath.Dir(w.bare), filepath.Base(w.bare)
	w.extraEnv = []string{"GITHUB_SERVER_URL=file://" + server, "GITHUB_REPOSITORY=" + strings.TrimSuffix(name, ".git"), "GITHUB_BASE_REF=main"}
	w.write("main.json", `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`)
	pr := w.write("pr.json", `{"metrics": {"mean_ttft_ms": 120, "completed": 500, "failed": 0}}`)
	rules := filepath.Join(w.work, ".perfgate.yml")
	if err := os.WriteFile(rules, []byte("rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\ntrust:\n  accept: [label, branch]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git(w.work, "add", ".perfgate.yml")
	w.git(w.work, "commit", "-q", "-m", "rules")
	w.git(w.work, "push", "-q", "origin", "main")
	if log, _, code := w.run("push", map[string]string{"INGEST": filepath.Join(w.tmp, "main.json"), "NAME": "serving"}); code != 0 || strings.Contains(log, "is not file://") {
		t.Fatalf("recording main: exit %d\n%s", code, log)
	}
	os.RemoveAll(filepath.Join(w.work, ".perfgate"))
	w.git(w.work, "checkout", "-q", "-b", "feature")
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "feature")
	return w, pr
}

// TestActionForgedOrigin: the pull request's code, run earlier in the
// same job, re-points origin at a copy of the remote whose history branch
// accepts its regression. The gate sees that origin is not the CI's
// repository: the acceptance is unverified, trust: [label, branch] does
// not admit it, the check fails and the report says why.
func TestActionForgedOrigin(t *testing.T) {
	w, pr := forgedOriginWorkspace(t)
	forged := filepath.Join(w.tmp, "forged.git")
	w.git(w.tmp, "clone", "-q", "--bare", w.bare, forged)
	w.git(w.work, "remote", "set-url", "origin", "file://"+forged)
	w.git(w.work, "config", "user.name", "attacker")
	w.git(w.work, "config", "user.email", "a@example.com")
	w.perfgateIn(w.work, "sync", "--pull-only")
	w.perfgateIn(w.work, "accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--reason", "intended")
	w.perfgateIn(w.work, "sync", "--push-only")
	os.RemoveAll(filepath.Join(w.work, ".perfgate"))

	log, outputs, code := w.run("pull_request", map[string]string{"INGEST": pr, "NAME": "serving", "BASE": "main"})
	if code != 1 || outputs["verdict"] != "fail" {
		t.Errorf("a forged origin's acceptance made the check pass: exit %d, verdict %q\n%s", code, outputs["verdict"], log)
	}
	if !strings.Contains(outputs["report"], "the repository GITHUB\\_REPOSITORY names") || !strings.Contains(outputs["report"], "of an origin that is not the CI's repository") {
		t.Errorf("the report does not say origin is not the CI's repository\n%s", outputs["report"])
	}
}

// TestActionLocalBaseBranch: the pull request's code makes a local main
// at its own commit and commits rules of its own (50%), so that, under
// --rules-from base, the merge-base is its commit and the rules its own.
// In CI the base is origin/main, the remote-tracking ref: the base's rules
// apply, the check fails, and the report names origin/main.
func TestActionLocalBaseBranch(t *testing.T) {
	w, pr := forgedOriginWorkspace(t)
	rules := filepath.Join(w.work, ".perfgate.yml")
	if err := os.WriteFile(rules, []byte("rules:\n  - metric: mean_ttft_ms\n    max_regression: 50%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.git(w.work, "commit", "-q", "-am", "wider gate")
	w.git(w.work, "branch", "-f", "main", "HEAD")

	log, outputs, code := w.run("pull_request", map[string]string{"INGEST": pr, "NAME": "serving", "BASE": "main", "ARGS": "--rules-from=base"})
	if code != 1 || outputs["verdict"] != "fail" {
		t.Errorf("a local main made the pull request's rules the base's: exit %d, verdict %q\n%s", code, outputs["verdict"], log)
	}
	if !strings.Contains(outputs["report"], "origin/main") || !strings.Contains(log, "is not origin's") {
		t.Errorf("the report does not name origin/main, or the log does not warn of the local main\n%s\n%s", outputs["report"], log)
	}
}
