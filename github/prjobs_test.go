package github

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// workflowDoc is what prJobProblems reads of a workflow.
type workflowDoc struct {
	On          any            `yaml:"on"`
	Permissions any            `yaml:"permissions"`
	Jobs        map[string]job `yaml:"jobs"`
}

type job struct {
	If          string `yaml:"if"`
	Permissions any    `yaml:"permissions"`
	Steps       []struct {
		Uses string            `yaml:"uses"`
		Run  string            `yaml:"run"`
		With map[string]string `yaml:"with"`
	} `yaml:"steps"`
}

// prJobProblems lists the jobs of a workflow that run the pull request's
// code (a run: step, or perfgate's command run) on pull_request events
// while holding a token that can write, or a checkout that persists its
// credentials.
func prJobProblems(t *testing.T, name string, data []byte) []string {
	t.Helper()
	var w workflowDoc
	if err := yaml.Unmarshal(data, &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	onPR := false
	switch on := w.On.(type) {
	case string:
		onPR = strings.HasPrefix(on, "pull_request")
	case []any:
		for _, e := range on {
			onPR = onPR || strings.HasPrefix(e.(string), "pull_request")
		}
	case map[string]any:
		for e := range on {
			onPR = onPR || strings.HasPrefix(e, "pull_request")
		}
	}
	if !onPR {
		return nil
	}
	var problems []string
	for id, j := range w.Jobs {
		if strings.Contains(j.If, "github.event_name == 'push'") {
			continue
		}
		runsCode := false
		for _, s := range j.Steps {
			if s.Run != "" || (strings.HasPrefix(s.Uses, "perfgate/perfgate@") || s.Uses == "./") && s.With["command"] == "run" {
				runsCode = true
			}
		}
		if !runsCode {
			continue
		}
		perms := j.Permissions
		if perms == nil {
			perms = w.Permissions
		}
		switch p := perms.(type) {
		case nil:
			problems = append(problems, name+": job "+id+" runs the pull request's code with the default token permissions (say permissions: { contents: read })")
		case string:
			if p != "read-all" {
				problems = append(problems, name+": job "+id+" runs the pull request's code with permissions "+p)
			}
		case map[string]any:
			for scope, level := range p {
				if level == "write" {
					problems = append(problems, name+": job "+id+" runs the pull request's code with "+scope+": write")
				}
			}
		}
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "actions/checkout@") && s.With["persist-credentials"] != "false" {
				problems = append(problems, name+": job "+id+" runs the pull request's code after a checkout that keeps its token in .git/config (persist-credentials: false)")
			}
		}
	}
	return problems
}

// TestPullRequestJobsCannotWrite: no workflow of the repository or of the
// docs runs a pull request's code in a job that holds a token that
// writes, or a checkout's persisted credentials.
func TestPullRequestJobsCannotWrite(t *testing.T) {
	var files []string
	for _, pattern := range []string{".github/workflows/*.yml", "docs/workflows/*.yml"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prJobProblems(t, f, data) {
			t.Error(p)
		}
	}
}

// recipeBlock is the fenced yaml block of a markdown file that holds a
// workflow's jobs using the action: the "shortest complete use".
var recipeBlock = regexp.MustCompile("(?s)```yaml\n(permissions:[^`]*?perfgate/perfgate@[^`]*?)```")

// TestRecipeIsTheSafeOne: the README and docs/github.md give one recipe,
// the same text, and it is a valid workflow whose pull request jobs hold
// no token that writes.
func TestRecipeIsTheSafeOne(t *testing.T) {
	var recipes []string
	for _, f := range []string{"README.md", "docs/github.md"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		m := recipeBlock.FindSubmatch(data)
		if m == nil {
			t.Errorf("%s: no recipe (a yaml block starting with permissions: and using perfgate/perfgate@)", f)
			continue
		}
		recipes = append(recipes, string(m[1]))
		if strings.Contains(string(data), "contents: write, pull-requests: write") {
			t.Errorf("%s still offers one job with contents: write and pull-requests: write", f)
		}
	}
	if len(recipes) != 2 {
		return
	}
	if recipes[0] != recipes[1] {
		t.Errorf("README.md and docs/github.md give different recipes:\n%s\n---\n%s", recipes[0], recipes[1])
	}
	workflow := "name: benchmark\non:\n  push:\n    branches: [main]\n  pull_request:\n" + recipes[0]
	for _, p := range prJobProblems(t, "the recipe", []byte(workflow)) {
		t.Error(p)
	}
	l, proj := linter(t)
	local := publishedAction.ReplaceAll([]byte(workflow), []byte("uses: ./"))
	errs, err := l.Lint("recipe.yml", local, proj)
	if err != nil {
		t.Fatal(err)
	}
	reportLint(t, errs)
}
