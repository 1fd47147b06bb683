package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestCheckPercentileCaveat: a check of P99 TTFT on runs ingested from a
// vLLM file of 200 requests says, as a warning and on the check, that the
// percentile rests on the 2 slowest requests, with its interval: the
// stored request summary reaches the gate (toSample).
func TestCheckPercentileCaveat(t *testing.T) {
	repo := gitRepo(t)
	file := filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_llm-k8s_qps16_goodput_ttft80.json")
	for _, v := range []string{"v1", "v2"} {
		commit(t, repo, "engine "+v, map[string]string{"engine.txt": v})
		if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "serving", file); code != 0 {
			t.Fatalf("ingest: exit %d\n%s", code, stderr)
		}
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check", "--rule", "p99_ttft_ms:50%", "--rule", "mean_ttft_ms:50%", "-o", "json")
	if code != 0 {
		t.Fatalf("check: exit %d\n%s%s", code, stdout, stderr)
	}
	var rep struct {
		Warnings []string
		Checks   []struct {
			Metric             string
			Verdict            string
			RequestNote        string `json:"request_note"`
			RequestPercentiles []struct {
				Side     string
				Requests int
				Tail     int
			} `json:"request_percentiles"`
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	found := 0
	for _, c := range rep.Checks {
		switch c.Metric {
		case "p99_ttft_ms":
			found++
			if len(c.RequestPercentiles) != 2 || c.RequestPercentiles[0].Requests != 200 || c.RequestPercentiles[0].Tail != 2 {
				t.Errorf("request percentiles %+v: want head's and the baseline's, 200 requests, 2 beyond", c.RequestPercentiles)
			}
			if !strings.Contains(c.RequestNote, "head's P99 TTFT of 200 requests rests on the 2 slowest; 95% interval") {
				t.Errorf("note %q", c.RequestNote)
			}
			if c.Verdict != "pass" {
				t.Errorf("verdict %s: equal runs pass", c.Verdict)
			}
		case "mean_ttft_ms":
			found++
			if c.RequestNote != "" || len(c.RequestPercentiles) > 0 {
				t.Errorf("a mean got a percentile caveat: %q", c.RequestNote)
			}
		}
	}
	if found != 2 {
		t.Fatalf("checks %+v", rep.Checks)
	}
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), "} p99_ttft_ms: head's P99 TTFT of 200 requests rests on the 2 slowest") {
		t.Errorf("warnings %q", rep.Warnings)
	}
}

// TestRunResultFile: perfgate run --result-file stores the result the
// benchmark wrote to a file (vLLM --save-result --save-detailed), not the
// summary it printed: the run keeps its request summary and, for --slo or
// the rules file's slo:, request_goodput equal to vLLM's; a file the run
// did not write is refused (exit 2) naming it.
func TestRunResultFile(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		rules string
		flags []string
	}{
		{name: "--slo", flags: []string{"--slo", "ttft:100,tpot:25,e2el:4000"}},
		{name: "rules slo", rules: "slo:\n  ttft_ms: 100\n  tpot_ms: 25\n  e2el_ms: 4000\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gitRepo(t)
			files := map[string]string{"engine.txt": "v1"}
			if tc.rules != "" {
				files[".perfgate.yml"] = tc.rules
			}
			commit(t, repo, "engine", files)
			out := filepath.Join(t.TempDir(), "results")
			bench := "mkdir -p " + out + " && cp " + src + " " + out + "/serve.json && echo 'Serving Benchmark done'"
			args := append([]string{"--repo", repo, "run", "--name", "serving", "--result-file", filepath.Join(out, "*.json")}, tc.flags...)
			if _, stderr, code := runCLI(t, "", append(args, "--", "sh", "-c", bench)...); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, stderr)
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
			if len(run.Requests) == 0 || string(run.Requests) == "null" {
				t.Fatalf("no request summary stored: %s", stdout)
			}
			if got, want := run.Metrics["request_goodput"], 32.0/7.912345678; math.Abs(got-want) > 1e-12*want {
				t.Errorf("request_goodput %v, want vLLM's %v", got, want)
			}
			if _, ok := run.Metrics["slo_attainment"]; !ok {
				t.Errorf("no slo_attainment: %v", run.Metrics)
			}
			// Run again without writing: the file there is the last run's.
			if err := os.Chtimes(filepath.Join(out, "serve.json"), time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)); err != nil {
				t.Fatal(err)
			}
			_, stderr, code = runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--result-file", filepath.Join(out, "serve.json"), "--", "sh", "-c", "echo nothing written")
			if code != 2 || !strings.Contains(stderr, "serve.json") || !strings.Contains(stderr, "is stale") {
				t.Errorf("a stale result file: exit %d\n%s", code, stderr)
			}
		})
	}
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"engine.txt": "v1"})
	if _, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--result-file", "out/[x", "--", "true"); code != 2 || !strings.Contains(stderr, "--result-file") {
		t.Errorf("a bad glob: exit %d\n%s", code, stderr)
	}
}

// TestABResultFile: ab reads --result-file relative to each temporary
// checkout, so both sides' runs keep their request summaries.
func TestABResultFile(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json"))
	if err != nil {
		t.Fatal(err)
	}
	repo := gitRepo(t)
	commit(t, repo, "base", map[string]string{"engine.txt": "v1"})
	commit(t, repo, "head", map[string]string{"engine.txt": "v2"})
	db := filepath.Join(t.TempDir(), "history.db")
	bench := "mkdir -p out && cp " + src + " out/serve.json && echo 'Serving Benchmark done'"
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "ab", "--base", "HEAD~1", "--repeat", "2", "--name", "serving",
		"--rule", "request_goodput:5%", "--slo", "ttft:100,tpot:25,e2el:4000", "--result-file", "out/serve.json", "--workdir", t.TempDir(), "-o", "json", "--", "sh", "-c", bench)
	if code != 0 && code != 1 {
		t.Fatalf("ab: exit %d\n%s\n%s", code, stderr, stdout)
	}
	exp, stderr, code := runCLI(t, "", "--repo", repo, "--db", db, "export")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(exp), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d runs stored, want 4:\n%s", len(lines), exp)
	}
	for _, l := range lines {
		var run struct {
			Metrics  map[string]float64 `json:"metrics"`
			Requests json.RawMessage    `json:"requests"`
		}
		if err := json.Unmarshal([]byte(l), &run); err != nil {
			t.Fatal(err)
		}
		if len(run.Requests) == 0 || string(run.Requests) == "null" || run.Metrics["slo_attainment"] == 0 {
			t.Errorf("run without its requests or attainment: %s", l)
		}
	}
}

// TestBisectStepResultFile: bisect-step takes --result-file and --slo as
// run does: the step's value is the attainment of the file's requests.
func TestBisectStepResultFile(t *testing.T) {
	src, err := filepath.Abs(filepath.Join("..", "..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json"))
	if err != nil {
		t.Fatal(err)
	}
	repo := gitRepo(t)
	commit(t, repo, "engine", map[string]string{"engine.txt": "v1"})
	out := filepath.Join(t.TempDir(), "serve.json")
	// 32 of 60 requests meet the SLO: 53.3%; the reference 80% makes
	// this commit bad (lower is worse), and no result means no value.
	_, stderr, code := runCLI(t, "", "--repo", repo, "bisect-step", "--name", "serving", "--metric", "slo_attainment", "--reference", "80", "--threshold", "10%",
		"--slo", "ttft:100,tpot:25,e2el:4000", "--result-file", out, "--no-store", "--", "sh", "-c", "cp "+src+" "+out+"; echo done")
	if code != 1 || !strings.Contains(stderr, "53.3") {
		t.Errorf("bisect-step: exit %d, want 1 (bad) with the attainment 53.3%%\n%s", code, stderr)
	}
}
