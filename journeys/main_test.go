package journeys

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/internal/fakeserve"
)

// perfgateBin is the perfgate built from this checkout by TestMain.
var perfgateBin string

// goVars are Go's own settings, kept from the test's environment so that a
// journey that builds (the README's demo) reuses the build cache although
// HOME is a temporary directory.
var goVars []string

// repoRoot is the root of this checkout.
var repoRoot = func() string {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	return filepath.Dir(wd)
}()

// TestMain plays the stand-in engine and benchmark client when a journey
// starts this binary as one (fakeserve's server, the client of client.go),
// else builds perfgate once, runs the journeys and removes the build.
// With -short nothing is built and the journeys skip.
func TestMain(m *testing.M) {
	fakeserve.Main()
	clientMain()
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "perfgate-journeys")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	code := build(dir)
	if code == 0 {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// build builds perfgate into dir and reads Go's settings.
func build(dir string) int {
	perfgateBin = filepath.Join(dir, "perfgate")
	cmd := exec.Command("go", "build", "-o", perfgateBin, "./cmd/perfgate")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "journeys: go build ./cmd/perfgate: %v\n%s", err, out)
		return 3
	}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "journeys: go env: %v\n", err)
		return 3
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
		if i < len(lines) && lines[i] != "" {
			goVars = append(goVars, k+"="+lines[i])
		}
	}
	return 0
}

// dropped reports whether an inherited variable is left out of a
// journey's environment: whatever says CI, GitHub, perfgate's own
// settings, git's and PostgreSQL's, so that a journey runs the same on a
// laptop and inside CI.
func dropped(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	switch k {
	case "CI", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD", "TEAMCITY_VERSION", "HOME", "XDG_CONFIG_HOME",
		"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV":
		return true
	}
	for _, p := range []string{"PERFGATE_", "GITHUB_", "RUNNER_", "GIT_", "PG", "FAKESERVE_", "JOURNEYS_"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// machine is where a journey runs commands: a laptop (CI unset) or a CI
// runner, with a home of its own and git as a fixed author.
type machine struct {
	t    *testing.T
	home string
	env  []string
}

// trackSources opens, once per test binary, every Go file perfgate is
// built from: go test caches a package's result by what the test binary
// imports and the files it opens, and the journeys import none of
// perfgate, so without this a change to perfgate would leave a cached
// pass standing.
var trackSources sync.Once

func openSources() {
	filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "journeys") && path != repoRoot {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") || d.Name() == "go.mod" || d.Name() == "go.sum") {
			if f, err := os.Open(path); err == nil {
				f.Close()
			}
		}
		return nil
	})
}

// laptop is a developer's machine: no CI variable, no perfgate setting.
func laptop(t *testing.T) *machine {
	t.Helper()
	if perfgateBin == "" {
		t.Skip("-short: perfgate is not built")
	}
	trackSources.Do(openSources)
	need(t, "git")
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !dropped(kv) {
			env = append(env, kv)
		}
	}
	env = append(env, goVars...)
	env = append(env, "HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Journey", "GIT_AUTHOR_EMAIL=journey@example.com",
		"GIT_COMMITTER_NAME=Journey", "GIT_COMMITTER_EMAIL=journey@example.com")
	return &machine{t: t, home: home, env: env}
}

// with is the machine with more variables set.
func (m *machine) with(kv ...string) *machine {
	return &machine{t: m.t, home: m.home, env: append(append([]string(nil), m.env...), kv...)}
}

// result is what a command printed and its exit code.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// exec runs name with args in dir.
func (m *machine) exec(dir, name string, args ...string) result {
	m.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = m.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// perfgate runs the built perfgate in dir.
func (m *machine) perfgate(dir string, args ...string) result {
	m.t.Helper()
	return m.exec(dir, perfgateBin, args...)
}

// must runs perfgate and fails the journey unless it exits 0.
func (m *machine) must(dir string, args ...string) result {
	m.t.Helper()
	r := m.perfgate(dir, args...)
	if r.code != 0 {
		m.t.Fatalf("perfgate %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// git runs git in dir and returns its output, trimmed.
func (m *machine) git(dir string, args ...string) string {
	m.t.Helper()
	r := m.exec(dir, "git", args...)
	if r.code != 0 {
		m.t.Fatalf("git %s: %s", strings.Join(args, " "), r)
	}
	return strings.TrimSpace(r.stdout)
}

// repo makes a git repository with a main branch in a temporary directory.
func (m *machine) repo() string {
	m.t.Helper()
	dir := filepath.Join(m.t.TempDir(), "repo")
	m.git(m.t.TempDir(), "init", "-q", "-b", "main", dir)
	return dir
}

// commit writes files into dir and commits them (an empty commit when
// there are none) and returns the commit's SHA.
func (m *machine) commit(dir, msg string, files map[string]string) string {
	m.t.Helper()
	for name, body := range files {
		writeFile(m.t, filepath.Join(dir, name), body)
	}
	m.git(dir, "add", "-A")
	m.git(dir, "commit", "-q", "--allow-empty", "-m", msg)
	return m.git(dir, "rev-parse", "HEAD")
}

// writeFile writes body to path, making its directory.
func writeFile(t *testing.T, path, body string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readFile reads a file or fails the journey.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// shared is a file of ../shared (next to the checkout), or a skip when it
// is absent: the seeds and fixtures are never committed.
func shared(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join(repoRoot, "..", "shared", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("../shared/%s is absent", rel)
	}
	return p
}

// wantFail asserts a check that failed on Mean TTFT: exit 1, a FAIL
// verdict and a failing Mean TTFT row.
func wantFail(t *testing.T, r result) {
	t.Helper()
	if r.code != 1 || !strings.HasPrefix(r.stdout, "FAIL") || !failsOn(r.stdout, "Mean TTFT") {
		t.Errorf("a 10%% worse Mean TTFT must fail the check with exit 1 naming Mean TTFT; got %s", r)
	}
}

// wantPass asserts a check that passed: exit 0 and a PASS verdict.
func wantPass(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 || !strings.HasPrefix(r.stdout, "PASS") {
		t.Errorf("an unchanged head must pass the check with exit 0; got %s", r)
	}
}

// failsOn reports whether a text report has a row of metric whose verdict
// is FAIL.
func failsOn(report, metric string) bool {
	for _, line := range strings.Split(report, "\n") {
		if strings.Contains(line, metric) && strings.Contains(line, "FAIL") && !strings.HasPrefix(line, "FAIL") {
			return true
		}
	}
	return false
}

// need skips the journey where a tool it runs is missing.
func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
}

// cmdline is a perfgate command line: global flags (a --db), then args.
func cmdline(global []string, args ...string) []string {
	return append(append([]string(nil), global...), args...)
}
