package github

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The secrets a test puts where perfgate and the action get them, and
// looks for in what the benchmark could read.
const (
	secretToken = "ghs_secretTokenOfTheTest0123456789"
	secretPG    = "pg-secret-password-of-the-test"
)

// dumpAncestors is a benchmark that reads the environment of every
// ancestor process it can (/proc/PPID/environ, then that process's parent,
// up to PID 1) into dump, the errors into dump.err, and then prints a
// result perfgate can store.
const dumpAncestors = `#!/bin/sh
p=$PPID
while [ -n "$p" ] && [ "$p" -gt 1 ]; do
  echo "== $p $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-80)" >> "$DUMP"
  tr '\0' '\n' 2>> "$DUMP.err" < /proc/$p/environ >> "$DUMP"
  p=$(awk '/^PPid:/ { print $2 }' /proc/$p/status)
done
echo '{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}'
`

// unprivileged makes cmd run as nobody when the test runs as root (root
// may read any process's environment, dumpable or not), after handing
// the directories it needs to nobody.
func unprivileged(t *testing.T, cmd *exec.Cmd, dirs ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	const nobody = 65534
	for _, d := range dirs {
		err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, nobody, nobody)
		})
		if err != nil {
			t.Fatal(err)
		}
		// t.TempDir's parents are root's 0700 directories.
		for p := filepath.Dir(d); p != "/" && p != "."; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
}

// copyExecutable copies the built perfgate into dir, for a process that
// may not read the build's directory.
func copyExecutable(t *testing.T, src, dir string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(dir, "perfgate")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// checkDump fails the test when the benchmark's dump holds a secret, or
// when the dump shows the benchmark never ran.
func checkDump(t *testing.T, dump, log string) {
	t.Helper()
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the benchmark did not run (no %s): %v\n%s", dump, err, log)
	}
	errs, _ := os.ReadFile(dump + ".err")
	for _, s := range []string{secretToken, secretPG} {
		if strings.Contains(string(data), s) {
			t.Errorf("the benchmark read a secret (%s) from an ancestor's environment:\n%s", s, data)
		}
	}
	if !strings.Contains(string(data), "== ") {
		t.Errorf("the benchmark saw no ancestor:\n%s\n%s", data, log)
	}
	t.Logf("ancestors' environments as the benchmark read them:\n%s\nerrors:\n%s", data, errs)
}

// TestPerfgateRunIsUndumpable: perfgate run starts a benchmark without
// the tokens and PGPASSWORD in its environment, and the benchmark cannot
// read them from perfgate's own either (/proc/PPID/environ): perfgate
// made itself undumpable, so a process of the same user gets EACCES.
func TestPerfgateRunIsUndumpable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/environ is Linux's")
	}
	w := newActionWorkspace(t, nil)
	bin := copyExecutable(t, w.bin, w.tmp)
	bench := w.write("bench.sh", dumpAncestors)
	dump := filepath.Join(w.tmp, "dump")
	cmd := exec.Command(bin, "run", "--name=serving", "--format=generic", "--", "sh", bench)
	cmd.Dir = w.work
	cmd.Env = append(append([]string(nil), w.env...), "DUMP="+dump, "PERFGATE_GITHUB_TOKEN="+secretToken, "GITHUB_TOKEN="+secretToken,
		"PGPASSWORD="+secretPG, "PERFGATE_DB=", "GITHUB_ACTIONS=")
	unprivileged(t, cmd, w.tmp)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("perfgate run: %v\n%s", err, out)
	}
	checkDump(t, dump, string(out))
	if errs, _ := os.ReadFile(dump + ".err"); !strings.Contains(string(errs), "Permission denied") {
		t.Errorf("reading perfgate's /proc/PID/environ was not refused: %q", errs)
	}
}

// actionEnv is the env: of the action's step id as the runner would set it
// for inputs (by input name) on event, with outputs the earlier steps'.
// It knows the few expression forms action.yml uses, and fails on any
// other, so a step's env cannot change without this test seeing it.
func actionEnv(t *testing.T, id, event, bin string, inputs, outputs map[string]string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Steps []struct {
				ID  string            `yaml:"id"`
				Env map[string]string `yaml:"env"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	trusted := event == "push" || event == "schedule" || event == "workflow_dispatch"
	const guard = `(inputs.command != 'run' || contains(fromJSON('["push","schedule","workflow_dispatch"]'), github.event_name))`
	plain := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) \}\}$`)
	guarded := regexp.MustCompile(`^\$\{\{ ` + regexp.QuoteMeta(guard) + ` && inputs\.([a-z-]+) \|\| '' \}\}$`)
	given := regexp.MustCompile(`^\$\{\{ inputs\.([a-z-]+) != '' \}\}$`)
	withheld := `${{ inputs.command == 'run' && inputs.db != '' && !contains(fromJSON('["push","schedule","workflow_dispatch"]'), github.event_name) }}`
	for _, s := range action.Runs.Steps {
		if s.ID != id {
			continue
		}
		var env []string
		for name, expr := range s.Env {
			var v string
			var m []string
			switch {
			case name == "PERFGATE":
				v = bin
			case expr == "${{ steps.pull.outputs.pulled }}":
				v = outputs["pulled"]
			case expr == withheld:
				v = boolString(inputs["command"] == "run" && inputs["db"] != "" && !trusted)
			default:
				if m = plain.FindStringSubmatch(expr); m != nil {
					v = inputs[m[1]]
				} else if m = guarded.FindStringSubmatch(expr); m != nil {
					if inputs["command"] != "run" || trusted {
						v = inputs[m[1]]
					}
				} else if m = given.FindStringSubmatch(expr); m != nil {
					v = boolString(inputs[m[1]] != "")
				} else {
					t.Fatalf("step %s: env %s: an expression this test does not know: %s", id, name, expr)
				}
			}
			env = append(env, name+"="+v)
		}
		return env
	}
	t.Fatalf("action.yml has no step %q", id)
	return nil
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestActionRunHoldsNoSecret runs the action with command run on a pull
// request, as the runner would run its steps (the history pulled in a
// step of its own, then the step that starts the benchmark), with a token
// and PGPASSWORD given to the action: the benchmark, the pull request's
// code, reads the environment of every ancestor it can, and finds neither
// the token nor the password; the history was still pulled.
func TestActionRunHoldsNoSecret(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/environ is Linux's")
	}
	w := newActionWorkspace(t, nil)
	bin := copyExecutable(t, w.bin, w.tmp)
	bench := w.write("bench.sh", dumpAncestors)
	dump := filepath.Join(w.tmp, "dump")
	runnerTemp := filepath.Join(w.tmp, "runner-temp")
	if err := os.Mkdir(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"command": "run", "args": "--name=serving\n--format=generic\n--\nsh\n" + bench, "sync": "true", "require-history": "true",
		"token": secretToken, "comment": "auto"}
	// The history on the remote, as main's record job left it.
	w.write("main.json", `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`)
	if log, _, code := w.run("push", map[string]string{"INGEST": filepath.Join(w.tmp, "main.json"), "NAME": "serving"}); code != 0 {
		t.Fatalf("recording main: exit %d\n%s", code, log)
	}
	os.RemoveAll(filepath.Join(w.work, ".perfgate"))
	w.git(w.work, "checkout", "-q", "-b", "feature")
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "feature")

	outputs := map[string]string{}
	var log strings.Builder
	for _, id := range []string{"pull", "perfgate"} {
		out := filepath.Join(runnerTemp, id+".output")
		cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", actionStep(t, id))
		cmd.Dir = w.work
		// The secrets come only through the action's inputs.
		cmd.Env = append(append(append([]string(nil), w.env...), "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request", "GITHUB_OUTPUT="+out,
			"GITHUB_REPOSITORY=o/r", "GITHUB_TOKEN=", "GITHUB_STEP_SUMMARY=", "GITHUB_EVENT_PATH=", "GITHUB_BASE_REF=main", "RUNNER_TEMP="+runnerTemp,
			"DUMP="+dump, "PERFGATE_DB=", "PERFGATE_SYNC_REMOTE=", "PERFGATE_SYNC_BRANCH="),
			actionEnv(t, id, "pull_request", bin, inputs, outputs)...)
		unprivileged(t, cmd, w.tmp)
		b, err := cmd.CombinedOutput()
		log.Write(b)
		if err != nil {
			t.Fatalf("step %s: %v\n%s", id, err, log.String())
		}
		if data, err := os.ReadFile(out); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok && !strings.Contains(k, "<<") {
					outputs[k] = v
				}
			}
		}
	}
	if outputs["pulled"] != "true" || !strings.Contains(log.String(), "stored") {
		t.Errorf("the history was not pulled before the run, or the run not stored: outputs %v\n%s", outputs, log.String())
	}
	checkDump(t, dump, log.String())
}

// TestActionRunRefusesDBOnPullRequest: command run with the db input on a
// pull request stops before anything runs (exit 2), and the step that
// would start the benchmark never had the URL; on a push it has it.
func TestActionRunRefusesDBOnPullRequest(t *testing.T) {
	const db = "postgres://perfgate:" + secretPG + "@db.internal/perf"
	inputs := map[string]string{"command": "run", "args": "--\ntrue", "sync": "true", "db": db, "token": secretToken, "comment": "auto"}
	env := strings.Join(actionEnv(t, "perfgate", "pull_request", "perfgate", inputs, nil), "\n")
	if strings.Contains(env, secretPG) || strings.Contains(env, secretToken) || !strings.Contains(env, "INPUT_DB_WITHHELD=true") {
		t.Errorf("the step that starts the benchmark on a pull request gets:\n%s", env)
	}
	if env := strings.Join(actionEnv(t, "perfgate", "push", "perfgate", inputs, nil), "\n"); !strings.Contains(env, "INPUT_DB="+db) {
		t.Errorf("on a push the step lacks the database:\n%s", env)
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", actionStep(t, "perfgate"))
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "GITHUB_EVENT_NAME=pull_request"},
		actionEnv(t, "perfgate", "pull_request", filepath.Join(dir, "no-perfgate"), inputs, nil)...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "input db: command run on a pull_request event") {
		t.Errorf("command run with db on a pull request: %v\n%s", err, out)
	}
}
