package github

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"
)

// The project's CI runs go test ./..., so these tests are its actionlint
// step: every workflow of the repository and of the docs, and the
// action's metadata and composite steps, are checked by actionlint (as a
// library: no binary to install). shellcheck is not run: it is not a Go
// module, and the scripts are short.

// repoRoot is the repository, relative to this package.
const repoRoot = ".."

func linter(t *testing.T) (*actionlint.Linter, *actionlint.Project) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	proj, err := actionlint.NewProject(root)
	if err != nil {
		t.Fatal(err)
	}
	l, err := actionlint.NewLinter(io.Discard, &actionlint.LinterOptions{WorkingDir: root})
	if err != nil {
		t.Fatal(err)
	}
	return l, proj
}

func reportLint(t *testing.T, errs []*actionlint.Error) {
	t.Helper()
	for _, e := range errs {
		t.Errorf("actionlint: %s", e)
	}
}

func TestActionlintWorkflows(t *testing.T) {
	l, proj := linter(t)
	var files []string
	for _, pattern := range []string{".github/workflows/*.yml", ".github/workflows/*.yaml", "docs/workflows/*.yml", "docs/workflows/*.yaml"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v; expected the CI, dogfood and docs workflows", files)
	}
	for _, want := range []string{"docs/workflows/perfgate-pr.yml", "docs/workflows/perfgate-publish.yml", "docs/workflows/perfgate-site.yml"} {
		if !slices.Contains(files, filepath.Join(repoRoot, want)) {
			t.Errorf("%s is not linted (found %v)", want, files)
		}
	}
	for _, f := range files {
		errs, err := l.LintFile(f, proj)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		reportLint(t, errs)
		// The examples use the published action (perfgate/perfgate@REF),
		// whose inputs actionlint cannot see: lint them again with the
		// reference pointed at this repository's action.yml, so that a
		// misspelt or removed input in docs/ fails too.
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		local := publishedAction.ReplaceAll(data, []byte("uses: ./"))
		if string(local) == string(data) {
			continue
		}
		errs, err = l.Lint(f, local, proj)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range errs {
			t.Errorf("actionlint, with the action's inputs: %s", e)
		}
	}
}

// publishedAction matches a step's reference to the published action.
var publishedAction = regexp.MustCompile(`uses: perfgate/perfgate@[^\s#]+`)

// TestActionlintAction checks action.yml: its metadata as actionlint reads
// it when a workflow uses the action, and its composite steps, linted as
// the steps of a workflow whose inputs are the action's inputs, so that
// expressions, step ids and shells are checked as in any workflow.
func TestActionlintAction(t *testing.T) {
	l, proj := linter(t)
	md, _, err := actionlint.NewLocalActionsCache(proj, nil).FindMetadata("./")
	if err != nil || md == nil {
		t.Fatalf("action.yml: %v (found %v)", err, md != nil)
	}
	if md.Runs.Using != "composite" {
		t.Errorf("action.yml runs.using %q, want composite", md.Runs.Using)
	}
	var inputs []string
	for _, in := range md.Inputs {
		inputs = append(inputs, in.Name)
	}
	sort.Strings(inputs)
	for _, want := range []string{"base", "command", "comment", "max-runs", "repeat", "rules", "token"} {
		if !strings.Contains(" "+strings.Join(inputs, " ")+" ", " "+want+" ") {
			t.Errorf("action.yml has no input %q (has %v)", want, inputs)
		}
	}
	for _, want := range []string{"verdict", "report"} {
		if _, ok := md.Outputs[want]; !ok {
			t.Errorf("action.yml has no output %q", want)
		}
	}

	data, err := os.ReadFile(filepath.Join(repoRoot, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]struct {
			Value string `yaml:"value"`
		} `yaml:"outputs"`
		Runs struct {
			Steps []map[string]any `yaml:"steps"`
		} `yaml:"runs"`
	}
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatal(err)
	}
	callInputs := map[string]any{}
	for name := range action.Inputs {
		callInputs[name] = map[string]any{"type": "string", "required": false}
	}
	ids := map[string]bool{}
	for _, s := range action.Runs.Steps {
		if id, ok := s["id"].(string); ok {
			ids[id] = true
		}
		if _, ok := s["run"]; ok && s["shell"] == nil {
			t.Errorf("composite step %v has no shell (composite run steps need one)", s["name"])
		}
	}
	for name, o := range action.Outputs {
		// value: ${{ steps.ID.outputs.NAME }}
		v := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(o.Value), "${{"), "}}"))
		parts := strings.Split(v, ".")
		if len(parts) != 4 || parts[0] != "steps" || !ids[parts[1]] || parts[2] != "outputs" {
			t.Errorf("output %s = %q does not name a step of the action", name, o.Value)
		}
	}
	workflow := map[string]any{
		"name": "action.yml composite steps",
		"on":   map[string]any{"workflow_call": map[string]any{"inputs": callInputs}},
		"jobs": map[string]any{"action": map[string]any{"runs-on": "ubuntu-latest", "steps": action.Runs.Steps}},
	}
	synthetic, err := yaml.Marshal(workflow)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(repoRoot, ".github", "workflows", "action-composite-steps.yml") // never written: a name for messages
	errs, err := l.Lint(path, synthetic, proj)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Logf("the composite steps, as linted:\n%s", synthetic)
	}
	reportLint(t, errs)
}

// TestActionlintCatches makes sure the lint is not vacuous: a workflow
// with known mistakes is reported.
func TestActionlintCatches(t *testing.T) {
	l, proj := linter(t)
	bad := []byte("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.nope }}\n      - uses: ./\n        with:\n          no-such-input: 1\n")
	errs, err := l.Lint(filepath.Join(repoRoot, ".github", "workflows", "bad.yml"), bad, proj)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range errs {
		kinds = append(kinds, e.Kind+": "+e.Message)
	}
	all := strings.Join(kinds, "\n")
	if !strings.Contains(all, "nope") || !strings.Contains(all, "no-such-input") {
		t.Errorf("actionlint missed the mistakes; it said:\n%s", all)
	}
}
