package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// optimisationLog is an optimisation log as users keep them (issue 26,
// item 15): one markdown section per change, each with the same
// benchmark's block. The block is testdata's unclosed_complete.txt up to
// its last line; the second section's run is faster.
func optimisationLog(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "ingest", "testdata", "vllm", "unclosed_complete.txt"))
	if err != nil {
		t.Fatal(err)
	}
	block := string(data[:strings.Index(string(data), "42.96")+len("42.96")]) + "\n" + strings.Repeat("=", 50) + "\n"
	faster := regexp.MustCompile(`Mean TTFT \(ms\):\s+[\d.]+`).ReplaceAllString(block, "Mean TTFT (ms):                          80.00")
	if faster == block {
		t.Fatal("the block has no Mean TTFT line")
	}
	return "---\nsidebar_position: 2\n---\n# Optimisation log\n\n## Baseline\n\n```\n" + block + "```\n\n## Merge rope q/k\n\n```\n" + faster + "```\n"
}

func TestSectionLabelIngestAndCompare(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"engine.txt": "v1"})
	doc := filepath.Join(t.TempDir(), "log.md")
	if err := os.WriteFile(doc, []byte(optimisationLog(t)), 0o644); err != nil {
		t.Fatal(err)
	}

	// Without --section-label: a warning naming both headings.
	_, stderr, code := runCLI(t, "", "--repo", repo, "parse", doc)
	if code != 0 || !strings.Contains(stderr, `under another heading ("Merge rope q/k", that one under "Baseline")`) || !strings.Contains(stderr, "--section-label NAME") {
		t.Fatalf("parse: exit %d\n%s", code, stderr)
	}

	// With it: each block carries its heading, no warning.
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "parse", "--section-label", "section", "-o", "json", doc)
	if code != 0 || strings.Contains(stderr, "under another heading") {
		t.Fatalf("parse --section-label: exit %d\n%s", code, stderr)
	}
	var parsed struct {
		Results []struct {
			Labels  map[string]string  `json:"labels"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &parsed); err != nil {
		t.Fatal(err)
	}
	if len(parsed.Results) != 2 || parsed.Results[0].Labels["section"] != "Baseline" || parsed.Results[1].Labels["section"] != "Merge rope q/k" {
		t.Fatalf("results %+v", parsed.Results)
	}

	if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--section-label", "section", doc); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "compare", "--a-label", "section=Baseline", "--b-label", "section=Merge rope q/k")
	if code != 0 || !strings.Contains(stdout, "section=Baseline") || !strings.Contains(stdout, "section=Merge rope q/k") {
		t.Fatalf("compare: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var ttft string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, "Mean TTFT") {
			ttft = l
		}
	}
	if !strings.Contains(ttft, "80") || !strings.Contains(ttft, "1/1") {
		t.Errorf("Mean TTFT row %q: want A's value, B's 80, one run each\n%s", ttft, stdout)
	}
	stdout, _, code = runCLI(t, "", "--repo", repo, "compare", "HEAD", "--a-label", "section=Baseline", "--b-label", "section=Merge rope q/k", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"a_label": "section=Baseline"`) {
		t.Errorf("compare -o json: exit %d\n%s", code, stdout)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", "--a-label", "section=Baseline", "--b-label", "section=Nope"}, 2, `no result with label section="Nope"; its values of section: "Baseline", "Merge rope q/k"`},
		{[]string{"compare", "--a-label", "section=Baseline"}, 2, "--a-label and --b-label go together"},
		{[]string{"compare", "--a-label", "section=Baseline", "--b-label", "section=Baseline"}, 2, "name two different values"},
		{[]string{"compare", "HEAD", "HEAD~1", "--a-label", "section=Baseline", "--b-label", "section=X"}, 2, "at most one revision"},
		{[]string{"parse", "--section-label", "my section", doc}, 2, `--section-label "my section" is not a label name`},
		{[]string{"ingest", "--name", "serving", "--section-label", "section", "--label", "section=x", doc}, 2, "name the same label"},
	} {
		_, stderr, code := runCLI(t, "", append([]string{"--repo", repo}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, tc.code, tc.want, stderr)
		}
	}
}
