package github

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActionHistoryFailsClosed: when the history cannot be pulled, the
// Action's check fails with exit 3 instead of passing every regression as
// new, unless the workflow sets require-history: false; a push the remote
// refuses fails the step too.
func TestActionHistoryFailsClosed(t *testing.T) {
	w := newActionWorkspace(t, map[string]string{"NAME": "serving", "BASE": "main", "COMMENT": "never", "REQUIRE_HISTORY": ""})
	tmp, bare, work, git := w.tmp, w.bare, w.work, w.git
	w.defaults["INGEST"] = w.write("pr.json", `{"metrics": {"mean_ttft_ms": 100000, "failed": 0}}`)
	run := func(event string, inputs map[string]string) (string, int) {
		t.Helper()
		log, _, code := w.run(event, inputs)
		return log, code
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

// TestActionRecordJobGatesMain: the record job on main runs check too, as
// docs/github.md says: a regression that reached main turns the job red
// (exit 1, verdict fail), and its runs are pushed to the history all the
// same, as main's new level.
func TestActionRecordJobGatesMain(t *testing.T) {
	w := newActionWorkspace(t, map[string]string{"NAME": "serving", "COMMENT": "never"})
	runs := func() int {
		t.Helper()
		out := w.git(w.bare, "log", "-p", "--format=", "perfgate-history")
		return strings.Count(out, "\n+{")
	}
	for i, ttft := range []string{"100", "101", "99", "130"} {
		if i > 0 {
			w.git(w.work, "commit", "-q", "--allow-empty", "-m", "main "+ttft)
		}
		w.defaults["INGEST"] = w.write("bench-"+ttft+".json", `{"metrics": {"mean_ttft_ms": `+ttft+`, "failed": 0}}`)
		log, outputs, code := w.run("push", nil)
		regressed := ttft == "130"
		if regressed && (code != 1 || outputs["verdict"] != "fail") {
			t.Errorf("the regression on main: exit %d, verdict %q, want 1 and fail\n%s", code, outputs["verdict"], log)
		}
		if !regressed && code != 0 {
			t.Errorf("main at %s: exit %d\n%s", ttft, code, log)
		}
		if n := runs(); n != i+1 {
			t.Errorf("after main at %s the history branch holds %d runs, want %d\n%s", ttft, n, i+1, log)
		}
	}
}
