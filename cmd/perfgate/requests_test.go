package main

import (
	"encoding/json"
	"math"
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

// TestIngestRulesSLO: without --slo, ingest computes goodput and
// attainment for the rules file's slo: (the benchmark's entry, else the
// global one), the SLO the gate uses.
func TestIngestRulesSLO(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"engine.txt": "v1",
		".perfgate.yml": "slo:\n  ttft_ms: 100\n  tpot_ms: 25\n  e2el_ms: 4000\n"})
	file := filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json")
	if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", file); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "export")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	var run struct {
		Metrics map[string]float64 `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), &run); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if got, want := run.Metrics["request_goodput"], 32.0/7.912345678; math.Abs(got-want) > 1e-12*want {
		t.Errorf("request_goodput %v, want vLLM's %v for the rules file's SLO", got, want)
	}
	if _, ok := run.Metrics["slo_attainment"]; !ok {
		t.Errorf("no slo_attainment: %v", run.Metrics)
	}
}
