package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseDirectoryOfRuns: a directory `vllm bench sweep serve` wrote
// parses to its runs, once each, and stderr says what was left out.
func TestParseDirectoryOfRuns(t *testing.T) {
	dir := filepath.Join("..", "..", "ingest", "testdata", "runs", "vllm-sweep")
	stdout, stderr, code := runCLI(t, "", "parse", "-o", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Results []struct {
			File   string            `json:"file"`
			Labels map[string]string `json:"labels"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 2 || !strings.HasSuffix(doc.Results[0].File, "run=0.json") || !strings.HasSuffix(doc.Results[1].File, "run=1.json") {
		t.Errorf("results %+v, want run=0.json and run=1.json", doc.Results)
	}
	for _, want := range []string{"summary.json left out: vllm bench sweep's list of the runs", "warmup.json left out: a warm-up run", "run=2.failure.json left out", "summary.csv left out"} {
		if !strings.Contains(stderr, "perfgate: note: ") || !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// A directory of no known layout is a usage error naming it.
	_, stderr, code = runCLI(t, "", "parse", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "holds no result file") {
		t.Errorf("exit %d: %s", code, stderr)
	}
	// Only the tool's aggregate: nothing read is an error, after the note.
	agg := filepath.Join("..", "..", "ingest", "testdata", "runs", "aiperf-multi", "openai-gpt-oss-20b-openai-chat-concurrency_100", "aggregate", "profile_export_aiperf_aggregate.json")
	_, stderr, code = runCLI(t, "", "parse", agg)
	if code != 2 || !strings.Contains(stderr, "perfgate: note: ") || !strings.Contains(stderr, "no benchmark result read") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestIngestMLPerfInvalid: an MLPerf summary that says "Result is :
// INVALID" is stored marked invalid, with a warning, and parse shows why.
func TestIngestMLPerfInvalid(t *testing.T) {
	file := filepath.Join("..", "..", "ingest", "testdata", "mlperf", "issue_pasted_invalid.md")
	stdout, _, code := runCLI(t, "", "parse", file)
	if code != 0 || !strings.Contains(stdout, "  invalid: MLPerf LoadGen: Result is INVALID (not satisfied: min duration)") {
		t.Errorf("parse: exit %d\n%s", code, stdout)
	}
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "mlperf", "--testbed", "lab", "-o", "json", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stdout, `"invalid": "MLPerf LoadGen: Result is INVALID`); n != 2 {
		t.Errorf("%d runs stored invalid, want 2:\n%s", n, stdout)
	}
	if !strings.Contains(stderr, "result is invalid and will not be used as a baseline: MLPerf LoadGen: Result is INVALID (not satisfied: early stopping)") {
		t.Errorf("stderr: %s", stderr)
	}
}

// TestIngestAIPerfRuns: AIPerf's --num-profile-runs directory is stored as
// three runs of one benchmark, its aggregate not at all.
func TestIngestAIPerfRuns(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "a", map[string]string{"a": "1"})
	dir := filepath.Join("..", "..", "ingest", "testdata", "runs", "aiperf-multi")
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "chat", "--testbed", "lab", "-o", "json", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Added int `json:"added"`
		Runs  []struct {
			Benchmark string `json:"benchmark"`
			File      string `json:"file"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Added != 3 || len(doc.Runs) != 3 {
		t.Fatalf("stored %d of %d runs, want 3:\n%s", doc.Added, len(doc.Runs), stdout)
	}
	for _, r := range doc.Runs {
		if r.Benchmark != "chat" || strings.Contains(r.File, "aggregate") {
			t.Errorf("run %+v", r)
		}
	}
	if !strings.Contains(stderr, "profile_export_aiperf_aggregate.json left out: AIPerf's aggregate over the runs") {
		t.Errorf("stderr: %s", stderr)
	}
}
