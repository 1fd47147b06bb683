package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestActionHistoryFailsClosed: when the history cannot be pulled, the
// Action's check fails with exit 3 instead of passing every regression as
// new, unless the workflow sets require-history: false; a push the remote
// refuses fails the step too.
func TestActionHistoryFailsClosed(t *testing.T) {
	script := actionStep(t, "perfgate")
	tmp := t.TempDir()
	bin := builtPerfgate(t)
	env := append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+tmp)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	bare := filepath.Join(tmp, "remote.git")
	git(tmp, "init", "-q", "--bare", "-b", "main", bare)
	work := filepath.Join(tmp, "work")
	git(tmp, "init", "-q", "-b", "main", work)
	git(work, "remote", "add", "origin", "file://"+bare)
	git(work, "commit", "-q", "--allow-empty", "-m", "main")
	git(work, "push", "-q", "origin", "main")
	result := filepath.Join(tmp, "pr.json")
	if err := os.WriteFile(result, []byte(`{"metrics": {"mean_ttft_ms": 100000, "failed": 0}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(event string, inputs map[string]string) (string, int) {
		t.Helper()
		cmd := exec.Command("bash", "-e", "-c", script)
		cmd.Dir = work
		cmd.Env = append(env, "PERFGATE="+bin, "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME="+event,
			"GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "output"), "RUNNER_TEMP="+t.TempDir(), "GITHUB_REPOSITORY=o/r", "GITHUB_TOKEN=",
			"PERFGATE_GITHUB_TOKEN=", "GITHUB_STEP_SUMMARY=", "GITHUB_EVENT_PATH=", "GITHUB_BASE_REF=", "PERFGATE_GATE_ID=",
			"PERFGATE_SYNC_REMOTE=", "PERFGATE_SYNC_BRANCH=", "PERFGATE_DB=")
		in := map[string]string{"COMMAND": "check", "ARGS": "", "INGEST": result, "NAME": "serving", "RULES": "",
			"BASE": "main", "COMMENT": "never", "SYNC": "true", "REQUIRE_HISTORY": ""}
		for k, v := range inputs {
			in[k] = v
		}
		for k, v := range in {
			cmd.Env = append(cmd.Env, "INPUT_"+k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}

	// The remote cannot be read: the check fails with exit 3.
	git(work, "remote", "set-url", "origin", "file://"+filepath.Join(tmp, "gone.git"))
	log, code := run("pull_request", nil)
	if code != 3 || !strings.Contains(log, "::error title=perfgate sync::") || !strings.Contains(log, "require-history: false") {
		t.Errorf("check without its history: exit %d, want 3 with an error naming require-history\n%s", code, log)
	}
	// Opting out gates against what the job has (nothing: new, pass).
	os.RemoveAll(filepath.Join(work, ".perfgate"))
	log, code = run("pull_request", map[string]string{"REQUIRE_HISTORY": "false"})
	if code != 0 || !strings.Contains(log, "::warning title=perfgate sync::") {
		t.Errorf("require-history: false: exit %d, want 0 with a warning\n%s", code, log)
	}

	// The remote refuses the push: the step fails, loudly.
	git(work, "remote", "set-url", "origin", "file://"+bare)
	hook := filepath.Join(bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'protected branch' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(work, ".perfgate"))
	log, code = run("push", map[string]string{"RULES": "", "BASE": ""})
	if code != 3 || !strings.Contains(log, "could not push the new runs") {
		t.Errorf("refused push: exit %d, want 3\n%s", code, log)
	}
}
