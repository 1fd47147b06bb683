package github

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// actionWorkspace is where a test runs the action's main step, the bash
// script of action.yml, as the runner would: a repository (work) whose
// origin is a bare remote (bare) holding one commit on main, git as a
// fixed author, and a built perfgate.
type actionWorkspace struct {
	t                            *testing.T
	script, bin, tmp, bare, work string
	env                          []string          // the environment, with git's fixed identity
	defaults                     map[string]string // inputs every run starts from
	extraEnv                     []string          // variables of the job's, over the runner's
}

// newActionWorkspace makes the workspace; defaults override the inputs'
// empty defaults for every run.
func newActionWorkspace(t *testing.T, defaults map[string]string) *actionWorkspace {
	t.Helper()
	tmp := t.TempDir()
	w := &actionWorkspace{t: t, script: actionStep(t, "perfgate"), bin: builtPerfgate(t), tmp: tmp,
		bare: filepath.Join(tmp, "remote.git"), work: filepath.Join(tmp, "work"),
		env: append(os.Environ(), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+tmp),
		defaults: map[string]string{"COMMAND": "check", "ARGS": "", "INGEST": "", "NAME": "", "RULES": "", "BASE": "",
			"COMMENT": "auto", "SYNC": "true", "REPEAT": "", "MAX_RUNS": ""},
	}
	for k, v := range defaults {
		w.defaults[k] = v
	}
	w.git(tmp, "init", "-q", "--bare", "-b", "main", w.bare)
	w.git(tmp, "init", "-q", "-b", "main", w.work)
	w.git(w.work, "remote", "add", "origin", "file://"+w.bare)
	w.git(w.work, "commit", "-q", "--allow-empty", "-m", "main")
	w.git(w.work, "push", "-q", "origin", "main")
	return w
}

// git runs git in dir and returns its output, trimmed.
func (w *actionWorkspace) git(dir string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// write writes a file into the workspace's temporary directory and
// returns its path.
func (w *actionWorkspace) write(name, body string) string {
	w.t.Helper()
	p := filepath.Join(w.tmp, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// run runs the step in work on event, with inputs over the defaults, no
// token and no history of the runner's own; it returns the step's log,
// its outputs and its exit code.
func (w *actionWorkspace) run(event string, inputs map[string]string) (string, map[string]string, int) {
	w.t.Helper()
	out := filepath.Join(w.t.TempDir(), "output")
	cmd := exec.Command("bash", "-e", "-c", w.script)
	cmd.Dir = w.work
	cmd.Env = append(append([]string(nil), w.env...), "PERFGATE="+w.bin, "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME="+event, "GITHUB_OUTPUT="+out,
		"GITHUB_REPOSITORY=o/r", "GITHUB_TOKEN=", "PERFGATE_GITHUB_TOKEN=", "GITHUB_STEP_SUMMARY=", "GITHUB_EVENT_PATH=",
		"GITHUB_BASE_REF=", "PERFGATE_GATE_ID=", "RUNNER_TEMP="+w.t.TempDir(), "PERFGATE_SYNC_REMOTE=", "PERFGATE_SYNC_BRANCH=", "PERFGATE_DB=")
	in := map[string]string{}
	for k, v := range w.defaults {
		in[k] = v
	}
	for k, v := range inputs {
		in[k] = v
	}
	for k, v := range in {
		cmd.Env = append(cmd.Env, "INPUT_"+k+"="+v)
	}
	cmd.Env = append(cmd.Env, w.extraEnv...)
	b, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatal(err)
	}
	return string(b), stepOutputs(out), code
}

// stepOutputs reads a GITHUB_OUTPUT file of NAME<<DELIM blocks.
func stepOutputs(path string) map[string]string {
	outputs := map[string]string{}
	data, err := os.ReadFile(path)
	if err != nil {
		return outputs
	}
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var v []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				v = append(v, lines[i])
			}
			outputs[name] = strings.Join(v, "\n")
		}
	}
	return outputs
}
