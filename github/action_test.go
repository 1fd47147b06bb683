package github

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestActionScript runs the action's main step, the bash script of
// action.yml, as the runner would: with the inputs in its env, a built
// perfgate, and a repository whose origin is a bare remote. A push to main
// records the run on the history branch; a pull request pulls it, gates
// against it (failing on the regression, with the verdict in the step
// outputs) and pushes nothing.
func TestActionScript(t *testing.T) {
	w := newActionWorkspace(t, nil)
	tmp, bare, work, git, runStep := w.tmp, w.bare, w.work, w.git, w.run
	w.write("main.json", `{"metrics": {"mean_ttft_ms": 100, "completed": 500, "failed": 0}}`)
	w.write("pr.json", `{"metrics": {"mean_ttft_ms": 120, "completed": 500, "failed": 0}}`)

	// On a push to main: ingest, check, and the history goes to the remote.
	log, outputs, code := runStep("push", map[string]string{"INGEST": filepath.Join(tmp, "main*.json"), "NAME": "serving"})
	if code != 0 || outputs["verdict"] != "pass" {
		t.Fatalf("push: exit %d, outputs %v\n%s", code, outputs, log)
	}
	if n := strings.Count(git(bare, "ls-tree", "-r", "--name-only", "perfgate-history"), ".json"); n != 1 {
		t.Errorf("the remote's history has %d runs, want 1\n%s", n, log)
	}

	// A pull request in a fresh clone: the history is pulled, the
	// regression fails, args are one per line, and nothing is pushed.
	os.RemoveAll(filepath.Join(work, ".perfgate"))
	git(work, "checkout", "-q", "-b", "feature")
	git(work, "commit", "-q", "--allow-empty", "-m", "feature")
	log, outputs, code = runStep("pull_request", map[string]string{
		"INGEST": filepath.Join(tmp, "pr.json"), "NAME": "serving", "BASE": "main",
		"ARGS": "--rule\nMean TTFT:3%\n-o\njson\n--out=" + filepath.Join(tmp, "report file.json"),
	})
	if code != 1 || outputs["verdict"] != "fail" || !strings.Contains(outputs["report"], "Mean TTFT") || outputs["report-file"] == "" {
		t.Errorf("pull request: exit %d, outputs %v\n%s", code, outputs, log)
	}
	if _, err := os.Stat(filepath.Join(tmp, "report file.json")); err != nil {
		t.Errorf("--out with a space in its path: %v", err)
	}
	if n := strings.Count(git(bare, "ls-tree", "-r", "--name-only", "perfgate-history"), ".json"); n != 1 {
		t.Errorf("a pull request pushed to the history (%d runs)", n)
	}

	// command ingest with the ingest input stores the files in one call.
	git(work, "commit", "-q", "--allow-empty", "-m", "feature ingest")
	log, _, code = runStep("pull_request", map[string]string{"COMMAND": "ingest", "INGEST": filepath.Join(tmp, "pr.json"), "NAME": "serving", "SYNC": "false"})
	if code != 0 || !strings.Contains(log, "stored") {
		t.Errorf("command ingest with input ingest: exit %d\n%s", code, log)
	}

	// The pull request's next push runs the benchmark itself with repeat:
	// auto: perfgate run --repeat=auto --max-runs=3 stops once the verdict
	// is decided.
	git(work, "commit", "-q", "--allow-empty", "-m", "feature 2")
	log, _, code = runStep("pull_request", map[string]string{
		"COMMAND": "run", "REPEAT": "auto", "MAX_RUNS": "3",
		"ARGS": "--name=serving\n--rule=mean_ttft_ms:5%\n-o\njson\n--\ncat\n" + filepath.Join(tmp, "main.json"),
	})
	if code != 0 || !strings.Contains(log, `"max_runs": 3`) || !strings.Contains(log, "perfgate: run: spent 1 of at most 3 runs; check's verdict is pass") {
		t.Errorf("run with repeat auto: exit %d\n%s", code, log)
	}
}

// actionStep returns the run script of the composite step with id.
func actionStep(t testing.TB, id string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Runs struct {
			Steps []struct {
				ID  string `yaml:"id"`
				Run string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	for _, s := range action.Runs.Steps {
		if s.ID == id {
			return s.Run
		}
	}
	t.Fatalf("action.yml has no step %q", id)
	return ""
}

// TestActionScriptInputsAreInert runs the action's script with hostile
// inputs, as a workflow that passes github.head_ref or a fork's file names
// into them would, and a perfgate that records its arguments: nothing in
// an input runs, each line is one argument, a file name never becomes a
// flag, publish never syncs, and a bad input stops the step with exit 2
// before perfgate runs.
func TestActionScriptInputsAreInert(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	script := actionStep(t, "perfgate")
	if strings.Contains(script, "${{") {
		t.Errorf("the script interpolates an expression; pass it through env:\n%s", script)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "argv")
	fake := filepath.Join(dir, "perfgate")
	// Each call is a line; each argument ends with \x1f.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n{ for a in \"$@\"; do printf '%s\\037' \"$a\"; done; printf '\\n'; } >> \""+log+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"--label=owned=yes.txt", "a.txt"} {
		if err := os.WriteFile(filepath.Join(work, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(t *testing.T, event string, inputs map[string]string) (string, [][]string, int) {
		t.Helper()
		os.Remove(log)
		cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "PERFGATE=" + fake, "GITHUB_EVENT_NAME=" + event, "GITHUB_BASE_REF="}
		all := map[string]string{"COMMAND": "check", "ARGS": "", "INGEST": "", "NAME": "", "RULES": "", "BASE": "", "COMMENT": "auto", "SYNC": "true", "REPEAT": "", "MAX_RUNS": ""}
		for k, v := range inputs {
			all[k] = v
		}
		for k, v := range all {
			cmd.Env = append(cmd.Env, "INPUT_"+k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		var calls [][]string
		if data, err := os.ReadFile(log); err == nil {
			for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
				calls = append(calls, strings.Split(strings.TrimSuffix(line, "\x1f"), "\x1f"))
			}
		}
		return string(out), calls, code
	}
	owned := func(t *testing.T) {
		t.Helper()
		entries, _ := os.ReadDir(work)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "owned") {
				t.Errorf("an input ran a command: %s exists", e.Name())
			}
		}
	}
	same := func(t *testing.T, out string, got [][]string, want ...[]string) {
		t.Helper()
		if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
			t.Errorf("perfgate ran as\n%q\nwant\n%q\n%s", got, want, out)
		}
	}

	t.Run("hostile check inputs", func(t *testing.T) {
		out, calls, code := run(t, "push", map[string]string{
			"ARGS":    "--gate-id\nx$(touch owned1)\n  `touch owned2`  \n\n--rule=Mean TTFT:3%\r\n\"$(touch owned3)\"; touch owned4",
			"INGEST":  "*.txt\n--label=owned=yes.txt\n${IFS}$(touch owned5)",
			"NAME":    "serving$(touch owned6)",
			"RULES":   "rules.yml; touch owned7",
			"BASE":    "main`touch owned8`",
			"COMMENT": "auto$(touch owned9)",
		})
		owned(t)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		same(t, out, calls,
			[]string{"sync", "--pull-only"},
			[]string{"ingest", "--commit", "HEAD", "--name=serving$(touch owned6)", "--", "*.txt", "--label=owned=yes.txt", "${IFS}$(touch owned5)"},
			[]string{"check", "--rules=rules.yml; touch owned7", "--base=main`touch owned8`", "--comment=auto$(touch owned9)",
				"--gate-id", "x$(touch owned1)", "`touch owned2`", "--rule=Mean TTFT:3%", `"$(touch owned3)"; touch owned4`},
			[]string{"sync", "--push-only"})
	})
	// command ingest with input ingest: one perfgate ingest, with the
	// files (not one before it that leaves the command none).
	for _, tt := range []struct {
		name, args string
		want       []string
	}{
		{"ingest with input ingest", "--label\nmodel=llama", []string{"ingest", "--commit", "HEAD", "--name=serving", "--label", "model=llama", "--", "a.txt", "*.json"}},
		{"ingest with input ingest and its own --commit and --name", "--commit=HEAD~1\n--name\nother",
			[]string{"ingest", "--commit=HEAD~1", "--name", "other", "--", "a.txt", "*.json"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, calls, code := run(t, "pull_request", map[string]string{"COMMAND": "ingest", "INGEST": "a.txt\n*.json", "NAME": "serving", "ARGS": tt.args})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			same(t, out, calls, []string{"sync", "--pull-only"}, tt.want)
		})
	}
	t.Run("publish never syncs", func(t *testing.T) {
		out, calls, code := run(t, "push", map[string]string{"COMMAND": "publish", "SYNC": "true", "ARGS": "--report\nreport.json"})
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		same(t, out, calls, []string{"publish", "--comment=auto", "--report", "report.json"})
	})
	t.Run("site pulls and never pushes", func(t *testing.T) {
		out, calls, code := run(t, "push", map[string]string{"COMMAND": "site", "SYNC": "true", "ARGS": "--out\n_site\n--title\nServing $(touch owned10)"})
		owned(t)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		same(t, out, calls, []string{"sync", "--pull-only"}, []string{"site", "--out", "_site", "--title", "Serving $(touch owned10)"})
	})
	// repeat and max-runs become perfgate run's --repeat and --max-runs,
	// before args (whose -- starts the benchmark's command line).
	for _, tt := range []struct {
		name, repeat, maxRuns string
		want                  []string
	}{
		{"repeat auto", "auto", "", []string{"run", "--repeat=auto"}},
		{"repeat auto with max-runs", "auto", "3", []string{"run", "--repeat=auto", "--max-runs=3"}},
		{"repeat AUTO", "AUTO", "10", []string{"run", "--repeat=auto", "--max-runs=10"}},
		{"repeat 5", "5", "", []string{"run", "--repeat=5"}},
		{"repeat 1 with spaces around", " 1\n", "", []string{"run", "--repeat=1"}},
		{"no repeat", "", "", []string{"run"}},
	} {
		t.Run("run with "+tt.name, func(t *testing.T) {
			out, calls, code := run(t, "pull_request", map[string]string{"COMMAND": "run", "REPEAT": tt.repeat, "MAX_RUNS": tt.maxRuns,
				"ARGS": "--name\nserving\n--\n./bench.sh\n--repeat\n2"})
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			same(t, out, calls, []string{"sync", "--pull-only"}, append(tt.want, "--name", "serving", "--", "./bench.sh", "--repeat", "2"))
		})
	}
	for _, tt := range []struct {
		name   string
		inputs map[string]string
		want   string
	}{
		{"a flag for a command", map[string]string{"COMMAND": "--repo=/tmp/x"}, "input command: not a perfgate command"},
		{"repeat 0", map[string]string{"COMMAND": "run", "REPEAT": "0"},
			`input repeat: "0" is not a number of runs; use a whole number of runs, at least 1 (e.g. 5), or auto`},
		{"repeat -1", map[string]string{"COMMAND": "run", "REPEAT": "-1"}, `input repeat: "-1" is not a number of runs`},
		{"repeat 2.5", map[string]string{"COMMAND": "run", "REPEAT": "2.5"}, `input repeat: "2.5" is not a number of runs`},
		{"repeat adaptive", map[string]string{"COMMAND": "run", "REPEAT": "adaptive"}, `input repeat: "adaptive" is not a number of runs`},
		{"repeat with a command in it", map[string]string{"COMMAND": "run", "REPEAT": "5; touch owned11"}, `input repeat: "5; touch owned11" is not a number of runs`},
		{"repeat with a newline", map[string]string{"COMMAND": "run", "REPEAT": "auto\n::error::x %0A"}, `input repeat: "auto\n::error::x %250A" is not a number of runs`},
		{"a long repeat", map[string]string{"COMMAND": "run", "REPEAT": strings.Repeat("9", 30) + "x" + strings.Repeat("y", 30)},
			`input repeat: "` + strings.Repeat("9", 30) + "x" + strings.Repeat("y", 9) + `..." is not a number of runs`},
		{"repeat with check", map[string]string{"REPEAT": "auto"}, `input repeat: command "check" does not take it; only command run does`},
		{"max-runs 0", map[string]string{"COMMAND": "run", "REPEAT": "auto", "MAX_RUNS": "0"},
			`input max-runs: "0" is not a run budget; use a whole number of runs, at least 1`},
		{"max-runs many", map[string]string{"COMMAND": "run", "REPEAT": "auto", "MAX_RUNS": "many"}, `input max-runs: "many" is not a run budget`},
		{"max-runs with repeat 5", map[string]string{"COMMAND": "run", "REPEAT": "5", "MAX_RUNS": "3"},
			`input max-runs: "3" is the run budget of repeat: auto, and repeat is "5"; set repeat: auto, or drop max-runs`},
		{"max-runs without repeat", map[string]string{"COMMAND": "run", "MAX_RUNS": "3"}, `input max-runs: "3" is the run budget of repeat: auto, and repeat is ""`},
		{"max-runs with check", map[string]string{"MAX_RUNS": "3"}, `input max-runs: command "check" does not take it`},
		{"repeat twice", map[string]string{"COMMAND": "run", "REPEAT": "auto", "ARGS": "--name=serving\n--repeat=3\n--\n./bench.sh"},
			"input args: --repeat as well as input repeat"},
		{"a command with a newline", map[string]string{"COMMAND": "check\n::error::x"}, "input command: not a perfgate command"},
		{"shell words on one line", map[string]string{"ARGS": "--rule=x:3%\n-o json"}, "input args, line 2: a flag and more words on one line"},
		{"ingest with publish", map[string]string{"COMMAND": "publish", "INGEST": "*.txt"}, "input ingest: publish stores nothing"},
		{"ingest with files in args too", map[string]string{"COMMAND": "ingest", "INGEST": "a.txt", "ARGS": "--\nb.txt"},
			"input args: -- as well as input ingest; list the files in input ingest only, one per line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, calls, code := run(t, "pull_request", tt.inputs)
			if code != 2 || !strings.Contains(out, "::error title=perfgate action::"+tt.want) || len(calls) != 0 {
				t.Errorf("exit %d, perfgate ran %q\n%s", code, calls, out)
			}
			owned(t)
			// A refused repeat or max-runs is quoted on one line; no other
			// input is echoed.
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "::error::") {
					t.Errorf("an input started a workflow command:\n%s", out)
				}
			}
			if strings.Contains(out, "/tmp/x") {
				t.Errorf("the message echoes the input:\n%s", out)
			}
		})
	}
}

var built struct {
	once sync.Once
	dir  string
	err  error
}

// builtPerfgate checks that the action's script can run here (git, bash,
// go) and returns perfgate built once for the tests of this package.
func builtPerfgate(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds perfgate")
	}
	for _, tool := range []string{"git", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "perfgate-action-bin"); built.err != nil {
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(built.dir, "perfgate"), "./cmd/perfgate")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return filepath.Join(built.dir, "perfgate")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}
