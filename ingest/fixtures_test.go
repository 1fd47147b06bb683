package ingest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notResults are fixture files that hold no benchmark result: scripts,
// benchmark configurations, command lines and provenance notes. Auto mode
// must refuse them with ErrUnrecognized rather than invent results.
var notResults = map[string]bool{
	"vllm_ascend_benchmarks/convert_json_to_markdown.py":                                                 true,
	"vllm_ascend_benchmarks/run-performance-benchmarks.sh":                                               true,
	"vllm_ascend_benchmarks/latency-tests.json":                                                          true,
	"vllm_ascend_benchmarks/serving-tests.json":                                                          true,
	"vllm_ascend_benchmarks/throughput-tests.json":                                                       true,
	"vllm_ascend_benchmarks/perf_result_template.md":                                                     true,
	"vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.commands": true,
	// aiperf's per-request records (profile_export.jsonl), not a summary.
	"genai_perf_aiperf/aiperf_profile_export_jsonl_failed_record_example.json": true,
	"genai_perf_aiperf/aiperf_profile_export_jsonl_record_example.json":        true,
}

// TestEveryFixture parses every file under ../shared/fixtures in auto mode:
// a result file must give at least one result with metrics; a file that
// holds none must fail with ErrUnrecognized, never panic or half-parse.
// Per-format tests assert counts and values; this one guards the whole.
func TestEveryFixture(t *testing.T) {
	if _, err := os.Stat(fixturesDir); err != nil {
		t.Skip("../shared/fixtures absent")
	}
	err := filepath.WalkDir(fixturesDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(fixturesDir, path)
		rel = filepath.ToSlash(rel)
		if d.Name() == "PROVENANCE.txt" || d.Name() == "INDEX.md" {
			return nil
		}
		t.Run(rel, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, perr := parseString(t, string(data), rel, "")
			if notResults[rel] {
				if perr == nil && len(res) > 0 {
					t.Errorf("holds no benchmark result, but parsed %d (first: %s %v)", len(res), res[0].Format, res[0].Metrics)
				}
				return
			}
			if perr != nil {
				if errors.Is(perr, ErrUnrecognized) && knownUnsupported(rel) {
					t.Skipf("format not supported yet: %v", perr)
				}
				t.Fatalf("parse: %v", perr)
			}
			if len(res) == 0 {
				t.Fatal("no results")
			}
			for _, r := range res {
				if len(r.Metrics) == 0 {
					t.Errorf("%s:%d: %s result without metrics", r.File, r.Line, r.Format)
				}
			}
			t.Logf("%d results, first %s with %d metrics", len(res), res[0].Format, len(res[0].Metrics))
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// knownUnsupported lists fixtures the design does not promise: tools it
// does not name (llmperf, lmdeploy, trtllm-bench), the console tables of
// tools whose files perfgate reads (genai-perf, aiperf, guidellm print a
// rich table; their JSON/CSV exports are the supported input), and
// markdown tables rendered from JSON results (the JSON is supported).
func knownUnsupported(rel string) bool {
	for _, p := range []string{"llmperf/", "lmdeploy/", "trtllm_bench/",
		"genai_perf_aiperf/aiperf_README_console_table.txt", "genai_perf_aiperf/aiperf_goodput_console_table.txt",
		"genai_perf_aiperf/genai-perf_README_console_table.txt", "guidellm/benchmarks_stripped_output.txt",
		"vllm_ascend_benchmarks/issue776_benchmark_results_excerpt.md",
		"vllm_nightly_results_table/llm-k8s_tp8_pp1_benchmark_results.md"} {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}
