package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/slo"
)

// TestIngestSLO: `perfgate ingest --slo` of a vLLM file with per-request
// lists stores vLLM's goodput for that SLO and the request summary, which
// export writes and from which the gate computes another SLO's goodput.
func TestIngestSLO(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"engine.txt": "v1"})
	file := filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json")
	if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--slo", "ttft=x", file); code != 2 || !strings.Contains(stderr, "--slo") {
		t.Fatalf("bad --slo: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", "--slo", "ttft:100,tpot:25,e2el:4000", file); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "export")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	var run struct {
		Metrics  map[string]float64 `json:"metrics"`
		Requests json.RawMessage    `json:"requests"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &run); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	// The file's request_goodput is vLLM's for the same SLO: 32 of 58
	// completed requests in 7.912345678 s.
	good, dur := 32.0, 7.912345678
	if got := run.Metrics["request_goodput"]; got != good/dur {
		t.Errorf("request_goodput %v, vLLM's %v", got, good/dur)
	}
	a, err := slo.AttainStored(run.Requests, slo.Objective{TTFTms: 100, TPOTms: 25, E2ELms: 4000})
	if err != nil {
		t.Fatal(err)
	}
	if a.Good.Lo > 32 || a.Good.Hi < 32 || a.Requests != 58 || a.Failed != 2 {
		t.Errorf("from the stored summary: %+v", a)
	}
}
