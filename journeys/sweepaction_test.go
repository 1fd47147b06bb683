package journeys

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/github/githubtest"
	"github.com/perfgate/perfgate/internal/pgtest"
)

// sweepModels are three models served by one benchmark, their names as a
// result file could carry them: markdown, HTML and a pipe.
var sweepModels = []string{"Qwen/Qwen2.5-1.5B-Instruct", "<img src=x onerror=alert(1)>", "m|odel **bold** [l](http://e.example)"}

// sweepFiles writes the --save-detailed result of each model at 6 loads
// under dir and returns their paths, one per line (the Action's ingest
// input): the files carry max_concurrency, which is the curve's load.
func sweepFiles(t *testing.T, dir string, s sweepServer, rng *rand.Rand) string {
	var paths []string
	for i, model := range sweepModels {
		for _, c := range []int{2, 4, 8, 16, 32, 64} {
			b := bytes.Replace(s.result(c, 5*c, rng), []byte(`"model_id":"Qwen/Qwen2.5-1.5B-Instruct"`), fmt.Appendf(nil, "%q:%q", "model_id", model), 1)
			paths = append(paths, writeFile(t, filepath.Join(dir, fmt.Sprintf("m%d-c%d.json", i, c)), string(b)))
		}
	}
	return strings.Join(paths, "\n")
}

// TestJourneyActionSweep: the README's serving flow in GitHub Actions: main
// records a sweep of 6 loads for 3 models per commit (per-request files,
// an SLO and a capacity rule); a pull request whose engine decodes 12%
// slower fails, and its sticky comment, read as a reviewer would, has the
// capacity row of each curve, one load-curve section per model with its
// own chart, the model names inert, and fits GitHub's limit; the same
// with the history in PostgreSQL (the db input; skipped without a server).
func TestJourneyActionSweep(t *testing.T) {
	t.Run("history branch", func(t *testing.T) { actionSweep(t, "") })
	t.Run("PostgreSQL", func(t *testing.T) {
		laptop(t) // skips with -short
		actionSweep(t, pgtest.URL(t))
	})
}

// actionSweep is TestJourneyActionSweep with the Action's db input.
func actionSweep(t *testing.T, db string) {
	g := newGitHub(t)
	g.db = db
	work := g.clone()
	g.m.commit(work, "sweep rules", map[string]string{".perfgate.yml": sweepRules})
	g.m.git(work, "push", "-q", "origin", "main")
	rng := rand.New(rand.NewPCG(35, 3))
	ref := sweepServer{slots: 16, prefill: 0.05, tpot: 0.02, tokens: 64, prompt: 256}
	for i := range 3 {
		sha := g.m.commit(work, "engine change", map[string]string{"engine.txt": strings.Repeat("x", i+1)})
		g.m.git(work, "push", "-q", "origin", "main")
		g.api.Expect(githubtest.Call{Method: "POST", Path: "/repos/o/r/statuses/" + sha})
		files := sweepFiles(t, filepath.Join(t.TempDir(), fmt.Sprint(i)), ref, rng)
		if log, _, code := g.run(work, "push", sha, map[string]string{"INGEST": files, "NAME": "serving"}); code != 0 {
			t.Fatalf("push %d: exit %d\n%s", i, code, log)
		}
	}
	slow := ref
	slow.tpot *= 1.12
	pr, sha := g.pullRequest("slower")
	g.expectComment(func(t testing.TB, body string) {
		if len(body) > 65536 {
			t.Errorf("the comment has %d bytes, beyond GitHub's 65,536", len(body))
		}
		if n := len(regexp.MustCompile(`(?m)^\| .* \| Capacity at SLO \(req/s\) \| .* \| ❌ fail`).FindAllString(body, -1)); n != 3 {
			t.Errorf("%d capacity rows, want one per model:\n%s", n, body)
		}
		_, load, _ := strings.Cut(body, "**Load curves**")
		titles := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^    title "(.*: p99_ttft_ms)"$`).FindAllStringSubmatch(load, -1) {
			titles[m[1]] = true
		}
		if len(titles) != 3 || strings.Count(load, "capacity at SLO: head ") != 3 {
			t.Errorf("want 3 curves, each with its capacity and a chart titled its own; titles %v:\n%s", titles, load)
		}
		if text := outsideCodeSpans(body); strings.Contains(text, "<img") || regexp.MustCompile(`[^\\]\*\*bold|[^\\]\]\(http:(&#8203;)?//e`).MatchString(text) {
			t.Errorf("a model name's markup is live in the comment:\n%s", text)
		}
	})
	g.expectStatus(sha, "failure", nil)
	files := sweepFiles(t, t.TempDir(), slow, rng)
	if log, out, code := g.run(pr, "pull_request", sha, map[string]string{"INGEST": files, "NAME": "serving"}); code != 1 || out["verdict"] != "fail" {
		t.Errorf("pull request: exit %d, verdict %q, want 1 and fail\n%s", code, out["verdict"], log)
	}
}

// outsideCodeSpans is md without its fenced blocks and one-backtick code
// spans (the names here have no backticks), which render as literal text.
func outsideCodeSpans(md string) string {
	md = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(md, "")
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(md, "")
}
