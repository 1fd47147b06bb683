package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// detailedSweep writes, from the --save-detailed test file, a vLLM sweep
// of four concurrencies whose latencies grow with the load (scaled by
// 0.5 + c/16) and which, like vLLM's default --percentile-metrics
// (ttft,tpot,itl), has no p99_e2el_ms: only the per-request e2els.
func detailedSweep(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, c := range []int{4, 8, 16, 32} {
		var d map[string]any
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		f := 0.5 + float64(c)/16
		for _, k := range []string{"ttfts", "e2els"} {
			vs := d[k].([]any)
			for i, v := range vs {
				vs[i] = v.(float64) * f
			}
		}
		delete(d, "request_goodput")
		d["max_concurrency"] = c
		d["request_rate"] = "inf"
		d["request_throughput"] = float64(c) / (2.5 * f)
		if _, ok := d["p99_e2el_ms"]; ok {
			t.Fatal("the test file has p99_e2el_ms")
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, fmt.Sprintf("vllm-c%d.json", c))
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	return files
}

// TestCapacityFromStoredRequests: vllm bench serve --save-detailed files
// of a sweep without p99_e2el_ms, ingested at two commits, get a capacity
// at an SLO bounding e2el_ms from their stored requests, and the report
// says once where the latency came from.
func TestCapacityFromStoredRequests(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	files := detailedSweep(t, t.TempDir())
	commit(t, repo, "rules", map[string]string{".perfgate.yml": "slo:\n  e2el_ms: 6000\nrules:\n  - metric: capacity\n    max_regression: 5%\n"})
	for _, branch := range []string{"", "feature"} {
		if branch != "" {
			git(t, repo, "checkout", "-q", "-b", branch)
			commit(t, repo, branch, map[string]string{"f.txt": branch})
		}
		for _, f := range files {
			if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", f); code != 0 {
				t.Fatalf("ingest %s: exit %d\n%s", f, code, stderr)
			}
		}
	}
	cj, stderr, code := checkOut(t, repo)
	if code != 0 || cj.verdictOf("capacity") != "pass" {
		t.Fatalf("check: exit %d, capacity %s; %s\n%+v", code, cj.verdictOf("capacity"), stderr, cj)
	}
	stdout, stderr, _ := runCLI(t, "", "--repo", repo, "check")
	const note = "p99_e2el_ms of head's and the baseline's points taken from the stored requests"
	if strings.Count(stdout, note) != 1 || !strings.Contains(stdout, "capacity at SLO: head") || strings.Contains(stdout+stderr, "not computed") {
		t.Errorf("check's report does not say once %q with a capacity:\n%s\n%s", note, stdout, stderr)
	}
}
