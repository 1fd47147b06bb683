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

// TestSiteAgreesWithWatch is the new user's case: a +8% TTFT step 13
// commits back. watch reports it as an open regression and exits 1; the
// site flags its row (the latest commit is inside the band of the new
// level, so the band alone would say ok), its JSON summary counts it, and
// its overview data carry watch's commit. Accepted, neither reports it.
func TestSiteAgreesWithWatch(t *testing.T) {
	repo := gitRepo(t)
	setUser(t, repo)
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7, -1.0, 0.5, 0.2, -0.3, 0.9}
	const n, back = 45, 13
	var shas []string
	for i := 0; i < n; i++ {
		shas = append(shas, commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)}))
		w, level := 1+wobble[i%len(wobble)]/100, 1.0
		if i >= n-back {
			level = 1.08
		}
		ingestAt(t, repo, metricsJSON(100*w*level, 300/w))
	}
	step := shas[n-back]
	for _, tt := range []struct {
		name   string
		accept bool
		open   int
	}{
		{"open", false, 1},
		{"accepted", true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.accept {
				if _, stderr, code := runCLI(t, "", "--repo", repo, "accept", "--benchmark", "serving", "--metric", "mean_ttft_ms", "--commit", step, "--reason", "new default"); code != 0 {
					t.Fatalf("accept: exit %d\n%s", code, stderr)
				}
			}
			out, stderr, code := runCLI(t, "", "--repo", repo, "watch", "-o", "json", "--github=false")
			var rep watchJSON
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			open := 0
			for _, c := range rep.Changes {
				if c.Open && c.FirstBad == step && c.Metric == "mean_ttft_ms" {
					open++
				}
			}
			if open != tt.open || code != map[bool]int{true: 1, false: 0}[tt.open > 0] {
				t.Errorf("watch: exit %d, %d open regressions at %s, want %d\n%s", code, open, step[:7], tt.open, stderr)
			}
			dir := filepath.Join(t.TempDir(), "site")
			out, stderr, code = runCLI(t, "", "--repo", repo, "site", "--out", dir, "-o", "json")
			if code != 0 {
				t.Fatalf("site: exit %d\n%s", code, stderr)
			}
			var sum struct {
				Flagged         int
				OpenRegressions int `json:"open_regressions"`
			}
			if err := json.Unmarshal([]byte(out), &sum); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if sum.Flagged != tt.open || sum.OpenRegressions != tt.open {
				t.Errorf("site summary %+v, want %d flagged and open", sum, tt.open)
			}
			index, err := os.ReadFile(filepath.Join(dir, "data", "index.js"))
			if err != nil {
				t.Fatal(err)
			}
			var row string
			for _, l := range strings.Split(string(index), "\n") {
				if strings.Contains(l, `"m":"mean_ttft_ms"`) {
					row = l
				}
			}
			flagged := strings.Contains(row, `"flag":"regression"`) && strings.Contains(row, fmt.Sprintf(`"sha":%q`, step))
			if flagged != (tt.open > 0) {
				t.Errorf("overview row %s\nflagged with watch's change at %s: %v, want %v", row, step[:7], flagged, tt.open > 0)
			}
		})
	}
}
