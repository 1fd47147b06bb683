package github

import (
	"net/url"
	"os"
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
	w := newActionWorkspace(t, map[string]string{"DB": db})
	tmp, bare, work, git := w.tmp, w.bare, w.work, w.git
	w.write("main.json", `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`)
	w.write("pr.json", `{"metrics": {"mean_ttft_ms": 120, "completed": 500, "failed": 0}}`)
	runStep := func(event string, inputs map[string]string) (string, int) {
		t.Helper()
		log, _, code := w.run(event, inputs)
		if password != "" && strings.Contains(log, password) {
			t.Errorf("the step's log shows the database password:\n%s", log)
		}
		return log, code
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
