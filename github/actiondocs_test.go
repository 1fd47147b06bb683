package github

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestActionDocsListEveryInput: docs/github.md's table of inputs has a row
// for every input of action.yml, the README's list of inputs names each,
// and the verdict output is documented with every value the action
// writes (pass, fail, inconclusive) in action.yml and docs/github.md.
func TestActionDocsListEveryInput(t *testing.T) {
	read := func(rel string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join("..", rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	var action struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]struct {
			Description string `yaml:"description"`
		} `yaml:"outputs"`
	}
	if err := yaml.Unmarshal([]byte(read("action.yml")), &action); err != nil {
		t.Fatal(err)
	}
	docs, readme := read("docs/github.md"), read("README.md")
	inputsLine := regexp.MustCompile("(?s)Inputs: (.*?);").FindStringSubmatch(readme)
	if inputsLine == nil {
		t.Fatal(`README.md has no "Inputs: ..." list of the action's inputs`)
	}
	var names []string
	for name := range action.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.Contains(docs, "\n| `"+name+"` |") {
			t.Errorf("docs/github.md's table of inputs has no row for input %s", name)
		}
		if !strings.Contains(inputsLine[1], "`"+name+"`") {
			t.Errorf("README.md's list of inputs lacks %s", name)
		}
	}
	row := regexp.MustCompile("\n\\| `verdict` \\|([^\n]*)").FindStringSubmatch(docs)
	for _, v := range []string{"pass", "fail", "inconclusive"} {
		if !strings.Contains(action.Outputs["verdict"].Description, v) {
			t.Errorf("action.yml's verdict output does not name %s", v)
		}
		if row == nil || !strings.Contains(row[1], "`"+v+"`") {
			t.Errorf("docs/github.md's verdict output does not name %s", v)
		}
	}
}
