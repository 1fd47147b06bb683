package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/perfgate/perfgate/gitlab/gitlabtest"
)

var (
	builtOnce sync.Once
	builtDir  string
	builtErr  error
)

// testLdflags is what builtPerfgate stamps with -X, as the release build
// (.goreleaser.yaml) does: TestVersionLdflags reads it back.
const testLdflags = "-X main.buildVersion=v9.8.7 -X main.buildCommit=c0ffee -X main.buildDate=2026-11-03T04:05:06Z"

// builtPerfgate builds perfgate once for the tests that run it as a
// process, and returns the directory that holds it. The build shares the
// go build cache (no -trimpath, which would recompile every dependency):
// -X only changes the link.
func builtPerfgate(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds perfgate")
	}
	builtOnce.Do(func() {
		builtDir, builtErr = os.MkdirTemp("", "perfgate-bin")
		if builtErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-ldflags", testLdflags, "-o", filepath.Join(builtDir, "perfgate"), ".").CombinedOutput()
		if err != nil {
			builtErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtDir
}

// docSnippet returns the fenced block after <!-- ci-test:name --> in
// docs/ci.md.
func docSnippet(t *testing.T, name string) string {
	t.Helper()
	return docSnippetIn(t, "ci.md", name)
}

// docSnippetIn is the block after <!-- ci-test:NAME --> in docs/FILE.
func docSnippetIn(t *testing.T, file, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", file))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "<!-- ci-test:"+name+" -->\n```")
	if !ok {
		t.Fatalf("docs/%s has no <!-- ci-test:%s --> block", file, name)
	}
	_, rest, _ = strings.Cut(rest, "\n") // the info string
	body, _, ok := strings.Cut(rest, "\n```")
	if !ok {
		t.Fatalf("docs/%s: the %s block is not closed", file, name)
	}
	return body + "\n"
}

// ciFakes writes the stand-ins the snippets call: vllm prints a serving
// result whose Mean TTFT is $FAKE_TTFT; buildkite-agent and curl log their
// arguments (and what they read) to $FAKE_LOG; curl -O fetches from
// $FAKE_RELEASE by file name.
func ciFakes(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	fakes := map[string]string{
		"vllm": `#!/bin/sh
if [ "$1" = serve ]; then echo "Application startup complete"; exec sleep 300; fi
cat <<EOF
============ Serving Benchmark Result ============
Successful requests:                     500
Failed requests:                         0
Benchmark duration (s):                  20.00
Request throughput (req/s):              25.00
Output token throughput (tok/s):         2500.00
---------------Time to First Token----------------
Mean TTFT (ms):                          $FAKE_TTFT
Median TTFT (ms):                        $FAKE_TTFT
P99 TTFT (ms):                           300.00
==================================================
EOF
`,
		"buildkite-agent": `#!/bin/sh
{ echo "buildkite-agent $*"; echo "--- stdin"; cat; echo "--- end"; } >> "$FAKE_LOG"
`,
		"curl": `#!/bin/sh
for a in "$@"; do last=$a; done
case " $* " in
  *" -fsSLO "*) cp "$FAKE_RELEASE/${last##*/}" . ; exit $? ;;
esac
{ echo "curl $*"; for a in "$@"; do case "$a" in body@*) echo "--- body"; cat "${a#body@}"; echo "--- end" ;; esac; done; } >> "$FAKE_LOG"
`,
	}
	for name, body := range fakes {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ciRunner is a remote and the environment of a CI job.
type ciRunner struct {
	t      *testing.T
	tmp    string
	remote string
	env    []string
	log    string
}

func newCIRunner(t *testing.T) *ciRunner {
	t.Helper()
	for _, tool := range []string{"git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	bin := builtPerfgate(t)
	tmp := t.TempDir()
	r := &ciRunner{t: t, tmp: tmp, remote: filepath.Join(tmp, "remote.git"), log: filepath.Join(tmp, "fake.log")}
	r.env = []string{"PATH=" + ciFakes(t) + ":" + bin + ":" + os.Getenv("PATH"), "HOME=" + tmp, "MODEL=m",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_NOSYSTEM=1", "FAKE_LOG=" + r.log,
		"CI=true"} // as GitLab, Buildkite and most CI systems set it: a file ingested is measured on the runner
	r.git(tmp, "init", "-q", "--bare", "-b", "main", r.remote)
	seed := filepath.Join(tmp, "seed")
	r.git(tmp, "clone", "-q", r.remote, seed)
	r.git(seed, "commit", "-q", "--allow-empty", "-m", "main")
	r.git(seed, "push", "-q", "origin", "HEAD:main")
	r.git(seed, "commit", "-q", "--allow-empty", "-m", "feature")
	r.git(seed, "push", "-q", "origin", "HEAD:feature")
	return r
}

func (r *ciRunner) git(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), r.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkout is a fresh clone at branch, detached, as CI systems check out.
func (r *ciRunner) checkout(name, branch string) string {
	r.t.Helper()
	dir := filepath.Join(r.tmp, name)
	r.git(r.tmp, "clone", "-q", r.remote, dir)
	r.git(dir, "checkout", "-q", "--detach", "origin/"+branch)
	return dir
}

// sh runs script with bash flags in dir, with env added.
func (r *ciRunner) sh(dir, script string, flags []string, env ...string) (string, int) {
	r.t.Helper()
	cmd := exec.Command("bash", append(append([]string{"--noprofile", "--norc"}, flags...), "-c", script)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), r.env...), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return string(out), 0
}

// historyRuns counts the files of runs (one per push) on the remote's
// history branch.
func (r *ciRunner) historyRuns() int {
	r.t.Helper()
	cmd := exec.Command("git", "ls-tree", "-r", "--name-only", "perfgate-history")
	cmd.Dir = r.remote
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	return strings.Count(string(out), ".jsonl")
}

func (r *ciRunner) fakeLog() string {
	data, _ := os.ReadFile(r.log)
	return string(data)
}

// reports checks the markdown and JSON reports a gated change leaves.
func checkReports(t *testing.T, dir string) string {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(dir, "perfgate.md"))
	if err != nil || !strings.Contains(string(md), "Mean TTFT") {
		t.Errorf("perfgate.md: %v\n%s", err, md)
	}
	data, err := os.ReadFile(filepath.Join(dir, "perfgate.json"))
	var rep struct {
		Verdict string `json:"verdict"`
	}
	if err == nil {
		err = json.Unmarshal(data, &rep)
	}
	if err != nil || rep.Verdict != "fail" {
		t.Errorf("perfgate.json: %v, verdict %q", err, rep.Verdict)
	}
	return string(md)
}

// TestCIDocs runs the snippets of docs/ci.md as their CI system would:
// the default branch records a run and pushes it to the history branch of
// a bare remote; a change is measured 30% slower in a fresh clone, gated
// against the pulled history, and fails with the reports written.
func TestCIDocs(t *testing.T) {
	parallel(t) // perfgate as processes, with their own environment: beside the other such tests
	t.Run("gitlab", func(t *testing.T) {
		type job struct {
			Script    []string       `yaml:"script"`
			Variables map[string]any `yaml:"variables"`
			Artifacts struct {
				Paths   []string          `yaml:"paths"`
				Reports map[string]string `yaml:"reports"`
			} `yaml:"artifacts"`
		}
		var ci map[string]any
		snippet := docSnippetIn(t, "ci/gitlab.md", "gitlab")
		if err := yaml.Unmarshal([]byte(snippet), &ci); err != nil {
			t.Fatal(err)
		}
		get := func(name string) job {
			raw, err := yaml.Marshal(ci[name])
			var j job
			if err == nil {
				err = yaml.Unmarshal(raw, &j)
			}
			if err != nil || len(j.Script) == 0 {
				t.Fatalf("no %s job with a script: %v", name, err)
			}
			return j
		}
		bench, publish := get("perfgate"), get("perfgate-publish")
		if fmt.Sprint(bench.Variables["GIT_DEPTH"]) != "0" || bench.Artifacts.Reports["dotenv"] != "perfgate.env" || bench.Artifacts.Reports["metrics"] != "perfgate-metrics.txt" {
			t.Errorf("perfgate job: variables %v, artifacts %+v", bench.Variables, bench.Artifacts)
		}
		r := newCIRunner(t)
		const token = "glpat-docs-secret"
		headSHA := r.git(r.tmp, "--git-dir", r.remote, "rev-parse", "feature")
		notes := "/projects/42/merge_requests/7/notes"
		srv := gitlabtest.New(t, token,
			gitlabtest.User(), gitlabtest.Call{Method: "GET", Path: notes, Body: []any{}},
			gitlabtest.Call{Method: "POST", Path: notes, Body: gitlabtest.Note(9, "x", gitlabtest.BotID), Check: func(t testing.TB, _ *http.Request, body []byte) {
				if b := fmt.Sprint(gitlabtest.DecodeBody(t, body)["body"]); !strings.Contains(b, "Mean TTFT") {
					t.Errorf("note without the report:\n%s", b)
				}
			}},
			gitlabtest.Call{Method: "POST", Path: "/projects/42/statuses/" + headSHA, Check: func(t testing.TB, _ *http.Request, body []byte) {
				if m := gitlabtest.DecodeBody(t, body); m["state"] != "failed" {
					t.Errorf("status %v, want failed", m)
				}
			}},
		)
		// GitLab runs the script's lines in one shell, each stopping the
		// job on failure.
		run := func(j job, dir string, env ...string) (string, int) {
			return r.sh(dir, strings.Join(j.Script, "\n"), []string{"-e", "-o", "pipefail"}, env...)
		}
		common := []string{"GITLAB_CI=true", "CI_DEFAULT_BRANCH=main", "CI_SERVER_HOST=gitlab.example.com", "CI_PROJECT_PATH=g/p",
			"CI_API_V4_URL=" + srv.APIURL(), "CI_PROJECT_ID=42"}
		main := r.checkout("main", "main")
		if out, code := run(bench, main, append(common, "FAKE_TTFT=100.00", "CI_PIPELINE_SOURCE=push", "CI_COMMIT_BRANCH=main",
			"CI_COMMIT_SHA="+r.git(main, "rev-parse", "HEAD"), "CI_PROJECT_DIR="+main)...); code != 0 || r.historyRuns() != 1 {
			t.Fatalf("default branch: exit %d, %d pushes to the history branch\n%s", code, r.historyRuns(), out)
		}
		mr := r.checkout("mr", "feature")
		mrEnv := append(common, "CI_PIPELINE_SOURCE=merge_request_event", "CI_MERGE_REQUEST_IID=7",
			"CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main", "CI_COMMIT_SHA="+headSHA, "CI_PROJECT_DIR="+mr)
		out, code := run(bench, mr, append(mrEnv, "FAKE_TTFT=130.00")...)
		if code != 1 {
			t.Fatalf("merge request: exit %d, want 1 (the regression)\n%s", code, out)
		}
		data, err := os.ReadFile(filepath.Join(mr, "perfgate.json"))
		if err != nil || !strings.Contains(string(data), `"verdict": "fail"`) {
			t.Errorf("perfgate.json: %v\n%.300s", err, data)
		}
		if dotenv, _ := os.ReadFile(filepath.Join(mr, "perfgate.env")); !strings.HasPrefix(string(dotenv), "PERFGATE_VERDICT=fail") {
			t.Errorf("dotenv %q", dotenv)
		}
		// The publish job holds the token and runs perfgate on the report.
		out, code = run(publish, mr, append(mrEnv, "PERFGATE_GITLAB_TOKEN="+token)...)
		if strings.Contains(out, token) {
			t.Errorf("the token is in the publish job's log")
		}
		if code != 0 {
			t.Errorf("publish: exit %d\n%s", code, out)
		}
		if r.historyRuns() != 1 {
			t.Errorf("the merge request pushed to the history")
		}
	})

	t.Run("buildkite", func(t *testing.T) {
		var pipeline struct {
			Steps []struct {
				Command       string   `yaml:"command"`
				ArtifactPaths []string `yaml:"artifact_paths"`
			} `yaml:"steps"`
		}
		data, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci", "pipeline.yml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, &pipeline); err != nil {
			t.Fatal(err)
		}
		if len(pipeline.Steps) == 0 || pipeline.Steps[0].Command == "" {
			t.Fatalf("want a first step with a command: %+v", pipeline)
		}
		step := pipeline.Steps[0]
		if strings.Join(step.ArtifactPaths, " ") != "perfgate.json" {
			t.Errorf("artifact_paths %v", step.ArtifactPaths)
		}
		r := newCIRunner(t)
		// The agent runs a command with bash -e -c.
		bash := []string{"-e"}
		common := []string{"BUILDKITE=true", "BUILDKITE_PIPELINE_DEFAULT_BRANCH=main", "BUILDKITE_REPO=" + r.remote, "BUILDKITE_AGENT_NAME=gpu-1"}
		// A branch build that is not a pull request records nothing shared.
		other := r.checkout("other", "feature")
		if out, code := r.sh(other, step.Command, bash, append(common, "FAKE_TTFT=90.00", "BUILDKITE_PULL_REQUEST=false", "BUILDKITE_BRANCH=feature")...); code != 0 || r.historyRuns() != 0 {
			t.Fatalf("branch build: exit %d, %d pushes\n%s", code, r.historyRuns(), out)
		}
		main := r.checkout("main", "main")
		if out, code := r.sh(main, step.Command, bash, append(common, "FAKE_TTFT=100.00", "BUILDKITE_PULL_REQUEST=false", "BUILDKITE_BRANCH=main")...); code != 0 || r.historyRuns() != 1 {
			t.Fatalf("default branch: exit %d, %d pushes to the history branch\n%s", code, r.historyRuns(), out)
		}
		pr := r.checkout("pr", "feature")
		out, code := r.sh(pr, step.Command, bash, append(common, "FAKE_TTFT=130.00", "BUILDKITE_PULL_REQUEST=12", "BUILDKITE_BRANCH=feature", "BUILDKITE_PULL_REQUEST_BASE_BRANCH=main")...)
		if code != 1 {
			t.Fatalf("pull request: exit %d, want 1\n%s", code, out)
		}
		ann := annotations(r.fakeLog())
		if len(ann) != 1 || !strings.HasPrefix(ann[0], "annotate --context perfgate --style error\n") || !strings.Contains(ann[0], "Mean TTFT") {
			t.Errorf("annotations:\n%s", r.fakeLog())
		}
		if !strings.Contains(r.fakeLog(), "buildkite-agent artifact upload perfgate.json") {
			t.Errorf("no JSON report uploaded:\n%s", r.fakeLog())
		}
	})

	t.Run("shell", func(t *testing.T) {
		r := newCIRunner(t)
		bash := []string{"-e"}
		main := r.checkout("main", "main")
		if out, code := r.sh(main, docSnippet(t, "shell-main"), bash, "FAKE_TTFT=100.00"); code != 0 || r.historyRuns() != 1 {
			t.Fatalf("default branch: exit %d, %d runs on the history branch\n%s", code, r.historyRuns(), out)
		}
		change := r.checkout("change", "feature")
		out, code := r.sh(change, docSnippet(t, "shell-change"), bash, "FAKE_TTFT=130.00")
		if code != 1 {
			t.Fatalf("change: exit %d, want 1\n%s", code, out)
		}
		checkReports(t, change)
	})

	t.Run("install", func(t *testing.T) {
		dir := t.TempDir()
		release := t.TempDir()
		bin := filepath.Join(builtPerfgate(t), "perfgate")
		archive := tarGzFile(t, "perfgate", bin)
		name := "perfgate_1.2.3_linux_amd64.tar.gz"
		os.WriteFile(filepath.Join(release, name), archive, 0o644)
		os.WriteFile(filepath.Join(release, "perfgate_1.2.3_checksums.txt"), fmt.Appendf(nil, "%x  %s\n", sha256.Sum256(archive), name), 0o644)
		r := &ciRunner{t: t, env: []string{"PATH=" + ciFakes(t) + ":" + os.Getenv("PATH"), "FAKE_RELEASE=" + release}}
		out, code := r.sh(dir, docSnippet(t, "install"), []string{"-e"})
		if code != 0 || !strings.Contains(out, "OK") || !strings.HasPrefix(strings.SplitN(out, "\n", 2)[1], "perfgate ") {
			t.Errorf("exit %d\n%s", code, out)
		}
		// A damaged download stops the snippet before it unpacks.
		os.WriteFile(filepath.Join(release, name), append(archive, 0), 0o644)
		os.Remove(filepath.Join(dir, "perfgate"))
		out, code = r.sh(dir, docSnippet(t, "install"), []string{"-e"})
		if code == 0 || !strings.Contains(out, "FAILED") {
			t.Errorf("a bad checksum: exit %d\n%s", code, out)
		}
	})
}

// tarGzFile is a .tar.gz holding the file at path under name.
func tarGzFile(t *testing.T, name, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(data)
	tw.Close()
	gz.Close()
	return buf.Bytes()
}
