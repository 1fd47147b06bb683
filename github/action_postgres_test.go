package github

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// TestActionScriptPostgres runs the action's main step with the db input:
// the runs go to PostgreSQL, no history branch is pulled or pushed, a pull
// request gates against the database, and the password shows nowhere.
func TestActionScriptPostgres(t *testing.T) {
	db := pgtest.URL(t)
	password := ""
	if u, err := url.Parse(db); err == nil {
		password, _ = u.User.Password()
	}
	script := actionStep(t, "perfgate")
	tmp := t.TempDir()
	bin := builtPerfgate(t)
	gitEnv := []string{"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "HOME=" + tmp}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), gitEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	bare := filepath.Join(tmp, "remote.git")
	git(tmp, "init", "-q", "--bare", "-b", "main", bare)
	work := filepath.Join(tmp, "work")
	git(tmp, "init", "-q", "-b", "main", work)
	git(work, "remote", "add", "origin", "file://"+bare)
	git(work, "commit", "-q", "--allow-empty", "-m", "main")
	git(work, "push", "-q", "origin", "main")
	for name, body := range map[string]string{
		"main.json": `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`,
		"pr.json":   `{"metrics": {"mean_ttft_ms": 120, "completed": 500, "failed": 0}}`,
	} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runStep := func(event string, inputs map[string]string) (string, int) {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), gitEnv...)
		cmd.Env = append(cmd.Env, "PERFGATE="+bin, "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME="+event, "GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "output"),
			"GITHUB_REPOSITORY=o/r", "GITHUB_TOKEN=", "PERFGATE_GITHUB_TOKEN=", "GITHUB_STEP_SUMMARY=", "GITHUB_EVENT_PATH=",
			"GITHUB_BASE_REF=", "PERFGATE_GATE_ID=", "RUNNER_TEMP="+t.TempDir(), "PERFGATE_SYNC_REMOTE=", "PERFGATE_SYNC_BRANCH=", "PERFGATE_DB=")
		all := map[string]string{"COMMAND": "check", "ARGS": "", "INGEST": "", "NAME": "", "RULES": "", "BASE": "", "COMMENT": "auto", "SYNC": "true", "REPEAT": "", "MAX_RUNS": "", "DB": db}
		for k, v := range inputs {
			all[k] = v
		}
		for k, v := range all {
			cmd.Env = append(cmd.Env, "INPUT_"+k+"="+v)
		}
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if password != "" && strings.Contains(string(b), password) {
			t.Errorf("the step's log shows the database password:\n%s", b)
		}
		return string(b), code
	}

	log, code := runStep("push", map[string]string{"INGEST": filepath.Join(tmp, "main*.json"), "NAME": "serving"})
	if code != 0 {
		t.Fatalf("push: exit %d\n%s", code, log)
	}
	if refs := git(bare, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "perfgate-history") {
		t.Errorf("with db, the step pushed a history branch:\n%s", refs)
	}
	if _, err := os.Stat(filepath.Join(work, ".perfgate", "history.db")); err == nil {
		t.Error("with db, the step wrote a history file")
	}
	git(work, "checkout", "-q", "-b", "feature")
	git(work, "commit", "-q", "--allow-empty", "-m", "feature")
	log, code = runStep("pull_request", map[string]string{"INGEST": filepath.Join(tmp, "pr.json"), "NAME": "serving", "BASE": "main", "ARGS": "--rule\nMean TTFT:3%"})
	if code != 1 {
		t.Errorf("pull request against the database's baseline: exit %d, want 1\n%s", code, log)
	}
	log, code = runStep("push", map[string]string{"DB": "mysql://x"})
	if code != 2 || !strings.Contains(log, "input db: not a postgres://") {
		t.Errorf("db not a postgres URL: exit %d\n%s", code, log)
	}
}
