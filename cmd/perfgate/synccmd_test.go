package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bareRemote makes a bare repository, remote.git, in a temporary folder
// (root) with main as its default branch: the remote that syncs go through.
func bareRemote(t *testing.T) (root, bare string) {
	t.Helper()
	root = t.TempDir()
	bare = filepath.Join(root, "remote.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	return root, bare
}

// TestSyncCIToDeveloper is the history's trip: CI measures main and
// pushes the runs with perfgate sync; a developer's clone pulls them and
// its local pre-merge check finds CI's baselines.
func TestSyncCIToDeveloper(t *testing.T) {
	parallel(t)
	root, bare := bareRemote(t)
	remote := "file://" + bare

	// CI: main's history, measured and synced.
	ci := gitRepo(t)
	mainHistory(t, ci, 6)
	git(t, ci, "remote", "add", "origin", remote)
	git(t, ci, "push", "-q", "origin", "main")
	stdout, stderr, code := runCLI(t, "", "--repo", ci, "sync")
	if code != 0 || !strings.Contains(stdout, "pushed 6 runs") {
		t.Fatalf("CI sync: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// The developer: a fresh clone, a regressed branch measured locally.
	dev := filepath.Join(root, "dev")
	git(t, root, "clone", "-q", remote, dev)
	git(t, dev, "checkout", "-q", "-b", "work")
	commit(t, dev, "work", map[string]string{"w.txt": "x"})
	ingestAt(t, dev, metricsJSON(118, 300))
	// Without CI's history there is no baseline: the check cannot fail.
	cj, stderr, code := checkOut(t, dev, "--rule", "mean_ttft_ms:3%")
	if code != 0 || cj.verdictOf("mean_ttft_ms") != "new" {
		t.Fatalf("before sync: exit %d, %+v\n%s", code, cj, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", dev, "sync", "--pull-only", "-o", "json")
	if code != 0 {
		t.Fatalf("dev sync: exit %d\n%s", code, stderr)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(stdout), &raw); err != nil {
		t.Fatalf("sync -o json: %v\n%s", err, stdout)
	}
	if raw["pulled"] != float64(6) || raw["pushed"] != float64(0) || raw["files_on_branch"] != float64(1) || raw["format"] != float64(2) {
		t.Errorf("sync -o json: %s", stdout)
	}
	cj, stderr, code = checkOut(t, dev, "--rule", "mean_ttft_ms:3%")
	if code != 1 || cj.verdictOf("mean_ttft_ms") != "fail" {
		t.Errorf("after sync: exit %d, %+v\n%s", code, cj, stderr)
	}
	// --pull-only pushed nothing: the remote still has CI's 6 runs.
	if n := strings.Count(git(t, bare, "ls-tree", "-r", "--name-only", "perfgate-history"), ".jsonl"); n != 1 {
		t.Errorf("remote has %d files of runs, want 1 (CI's push)", n)
	}
	// A plain sync shares the developer's run; a second one is a no-op.
	stdout, _, code = runCLI(t, "", "--repo", dev, "sync")
	if code != 0 || !strings.Contains(stdout, "pushed 1 run; 2 files on the branch") {
		t.Errorf("dev push: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = runCLI(t, "", "--repo", ci, "sync")
	if !strings.Contains(stdout, "pulled 1 run, pushed 0 runs") {
		t.Errorf("CI pull: %s", stdout)
	}
}

func TestSyncCommandErrors(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 1)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"both only flags", []string{"--repo", repo, "sync", "--pull-only", "--push-only"}, 2, "exclude each other"},
		{"no remote", []string{"--repo", repo, "sync"}, 2, `no remote "origin" to sync with`},
		{"bad -o", []string{"--repo", repo, "sync", "-o", "xml"}, 2, `-o "xml"`},
		{"not a repository", []string{"--repo", t.TempDir(), "sync"}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, tt.code, stderr, tt.want)
			}
		})
	}
	// An unreachable remote is the environment (3).
	git(t, repo, "remote", "add", "origin", "file://"+filepath.Join(t.TempDir(), "missing.git"))
	if _, stderr, code := runCLI(t, "", "--repo", repo, "sync"); code != 3 || !strings.Contains(stderr, "cannot fetch from origin") {
		t.Errorf("unreachable remote: exit %d, %q", code, stderr)
	}
	// Push-only without a history: nothing to do.
	empty := gitRepo(t)
	commit(t, empty, "c", map[string]string{"a": "1"})
	git(t, empty, "remote", "add", "origin", "file://"+filepath.Join(t.TempDir(), "missing.git"))
	if stdout, stderr, code := runCLI(t, "", "--repo", empty, "sync", "--push-only"); code != 0 || !strings.Contains(stdout, "pushed 0 runs") {
		t.Errorf("push-only without history: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(empty, ".perfgate")); err == nil {
		t.Errorf("push-only created a history")
	}
}

// TestSyncTokenNeverShown: a git server on loopback that refuses the
// push and echoes the credentials it got in its error: neither the token
// nor the credentials of the remote's URL reach the output.
func TestSyncTokenNeverShown(t *testing.T) {
	var gotAuth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = append(gotAuth, r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "no: "+r.Header.Get("Authorization")+" "+r.URL.String())
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	repo := gitRepo(t)
	mainHistory(t, repo, 1)
	t.Setenv("GITHUB_TOKEN", secretToken)
	t.Setenv("GITHUB_SERVER_URL", "http://"+u.Host)
	for _, remote := range []string{srv.URL + "/o/r.git", "http://user:" + secretToken + "@" + u.Host + "/o/r.git"} {
		git(t, repo, "config", "remote.origin.url", remote)
		stdout, stderr, code := runCLI(t, "", "--repo", repo, "sync")
		if code != 3 || !strings.Contains(stderr, "cannot fetch from origin") {
			t.Errorf("remote %s: exit %d, want 3 with the remote named\n%s", strings.ReplaceAll(remote, secretToken, "***"), code, stderr)
		}
		noToken(t, "sync's output", stdout, stderr)
	}
	if len(gotAuth) == 0 || gotAuth[0] == "" {
		t.Errorf("the token was not sent to the GITHUB_SERVER_URL host: %q", gotAuth)
	}
}

// TestNewerPerfgateFields: runs exported, or pushed to the history branch,
// by a newer perfgate with fields this one does not know still import
// (CRLF line ends too): the fields are ignored with one warning, not the
// runs.
func TestNewerPerfgateFields(t *testing.T) {
	parallel(t)
	root, bare := bareRemote(t)
	ci := gitRepo(t)
	mainHistory(t, ci, 3)
	exp, _, code := runCLI(t, "", "--repo", ci, "export")
	if code != 0 || strings.Count(exp, "\n") != 3 {
		t.Fatalf("export: exit %d\n%s", code, exp)
	}
	newer := strings.ReplaceAll(exp, `"benchmark":`, `"host":{"gpu":"910B"},"benchmark":`)
	newer = strings.ReplaceAll(newer, "\n", "\r\n")
	f := writeFile(t, root, "newer.jsonl", newer)
	db := filepath.Join(root, "other.db")
	stdout, stderr, code := runCLI(t, "", "--repo", ci, "--db", db, "import", f)
	if code != 0 || !strings.Contains(stdout, "imported 3 runs") || strings.Count(stderr, "warning") != 1 ||
		!strings.Contains(stderr, `newer.jsonl:1: ignored the unknown field "host"`) {
		t.Errorf("import: exit %d\n%s%s", code, stdout, stderr)
	}
	if again, _, _ := runCLI(t, "", "--repo", ci, "--db", db, "export"); again != exp {
		t.Errorf("export after import differs:\n%s\nwant\n%s", again, exp)
	}

	// The history branch, written by a newer perfgate.
	git(t, ci, "remote", "add", "origin", "file://"+bare)
	git(t, ci, "push", "-q", "origin", "main")
	if _, stderr, code := runCLI(t, "", "--repo", ci, "sync"); code != 0 {
		t.Fatalf("sync: exit %d\n%s", code, stderr)
	}
	edit := filepath.Join(root, "edit")
	git(t, root, "clone", "-q", "-b", "perfgate-history", "file://"+bare, edit)
	files := strings.Fields(git(t, edit, "ls-files", "*.jsonl"))
	if len(files) == 0 {
		t.Fatalf("no files of runs on the branch: %s", git(t, edit, "ls-files"))
	}
	for _, p := range files {
		b, err := os.ReadFile(filepath.Join(edit, p))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, edit, p, strings.ReplaceAll(string(b), `"benchmark":`, `"host":{"gpu":"910B"},"benchmark":`))
	}
	git(t, edit, "commit", "-q", "-am", "newer perfgate")
	git(t, edit, "push", "-q", "origin", "perfgate-history")
	dev := filepath.Join(root, "dev")
	git(t, root, "clone", "-q", "file://"+bare, dev)
	stdout, stderr, code = runCLI(t, "", "--repo", dev, "sync", "--pull-only")
	if code != 0 || !strings.Contains(stdout, "pulled 3 runs") || !strings.Contains(stderr, `ignored the unknown field "host"`) {
		t.Errorf("sync of a newer history: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestSyncPushRejected: a remote whose hook refuses the push: exit 3, the
// message says what to do, and the runs stay in the local history.
func TestSyncPushRejected(t *testing.T) {
	_, bare := bareRemote(t)
	writeFile(t, filepath.Join(bare, "hooks"), "pre-receive", "#!/bin/sh\necho denied by policy >&2\nexit 1\n")
	os.Chmod(filepath.Join(bare, "hooks", "pre-receive"), 0o755)
	repo := gitRepo(t)
	mainHistory(t, repo, 2)
	git(t, repo, "remote", "add", "origin", "file://"+bare)
	_, stderr, code := runCLI(t, "", "--repo", repo, "sync")
	if code != 3 || !strings.Contains(stderr, "the remote refused it") || !strings.Contains(stderr, "--pull-only") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	if exp, _, _ := runCLI(t, "", "--repo", repo, "export"); strings.Count(exp, "\n") != 2 {
		t.Errorf("local history after a refused push:\n%s", exp)
	}
}
