package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSite builds the site of a temporary repository's history: every
// stored series, commit links from the origin remote, and the errors of a
// bad --out, --benchmark or --metric.
func TestSite(t *testing.T) {
	repo := gitRepo(t)
	git(t, repo, "remote", "add", "origin", "git@github.com:acme/llm-serving.git")
	db := filepath.Join(t.TempDir(), "history.db")
	for i := range 8 {
		sha := commit(t, repo, fmt.Sprintf("change %d", i), map[string]string{"f.txt": fmt.Sprint(i)})
		for _, hw := range []string{"H100", "910B"} {
			if _, stderr, code := runCLI(t, servingBlock(500+float64(i), 300, 500, 0), "--repo", repo, "--db", db, "ingest", "--name", "serving", "--label", "hardware="+hw, "--commit", sha, "-"); code != 0 {
				t.Fatalf("ingest: %s", stderr)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "site")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "site", "--out", out, "--metric", "Mean TTFT", "-o", "json")
	if code != 0 {
		t.Fatalf("site: exit %d: %s", code, stderr)
	}
	var sum struct{ Commits, Series, Charts, Runs int }
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if sum.Commits != 8 || sum.Series != 2 || sum.Charts != 2 || sum.Runs != 16 {
		t.Errorf("summary %+v, want 8 commits, 2 series, 2 charts, 16 runs", sum)
	}
	commits, err := os.ReadFile(filepath.Join(out, "data", "commits.js"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"forge":{"kind":"github","repo":"https://github.com/acme/llm-serving"}`, `"ref":"main"`, `"change 7"`} {
		if !strings.Contains(string(commits), want) {
			t.Errorf("data/commits.js lacks %s", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "index.html")); err != nil {
		t.Error(err)
	}
	// An accepted change is marked on its chart.
	if _, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "accept", "--benchmark", "serving", "--metric", "Mean TTFT", "--commit", "HEAD~2", "--reason", "new scheduler default"); code != 0 {
		t.Fatalf("accept: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "site", "--out", out, "--metric", "Mean TTFT"); code != 0 {
		t.Fatalf("site after accept: exit %d: %s", code, stderr)
	}
	charts, err := filepath.Glob(filepath.Join(out, "data", "s", "*", "mean_ttft_ms.js"))
	if err != nil || len(charts) != 2 {
		t.Fatalf("charts %v, %v", charts, err)
	}
	for _, f := range charts {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"acc":[{"x":5,"text":"accepted by `) || !strings.Contains(string(data), `: new scheduler default"}]`) {
			t.Errorf("%s does not mark the accepted change at commit 5: %s", f, data[max(0, len(data)-200):])
		}
	}
	// Again into the same directory: the site is replaced.
	if _, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "site", "--out", out); code != 0 {
		t.Fatalf("second site: exit %d: %s", code, stderr)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"site"}, "--out is required"},
		{[]string{"site", "--out", repo}, "holds no perfgate site"},
		{[]string{"site", "--out", t.TempDir(), "--benchmark", "servng"}, `did you mean "serving"?`},
		{[]string{"site", "--out", t.TempDir(), "--metric", "mean_ttft_mss"}, `did you mean "mean_ttft_ms"?`},
		{[]string{"site", "--out", t.TempDir(), "--branch", "nope"}, "--branch"},
	} {
		_, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "--db", db}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("perfgate %v: exit %d, %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
