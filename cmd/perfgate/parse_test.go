package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseGolden pins the text and JSON output of parse on the user's
// own documents (go test ./cmd/perfgate -run TestParseGolden -update).
func TestParseGolden(t *testing.T) {
	for _, seed := range []string{"vllm-ascend-multimodal-optimizations.md", "mindie-tuning-qwq32b.md"} {
		path := filepath.Join("..", "..", "testdata", seed)
		for _, o := range []string{"text", "json"} {
			t.Run(seed+"/"+o, func(t *testing.T) {
				stdout, stderr, code := runCLI(t, "", "parse", "-o", o, path)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				golden(t, "parse-"+strings.TrimSuffix(seed, ".md")+"."+o, stdout)
			})
		}
	}
}

func TestParseJSONShape(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "vllm-ascend-multimodal-optimizations.md")
	stdout, _, code := runCLI(t, "", "parse", "-o", "json", path)
	if code != 0 {
		t.Fatal(code)
	}
	var doc struct {
		Results []struct {
			Format  string             `json:"format"`
			Name    *string            `json:"name"`
			Metrics map[string]float64 `json:"metrics"`
			Labels  map[string]string  `json:"labels"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 10 {
		t.Fatalf("%d results, want 10", len(doc.Results))
	}
	r := doc.Results[0]
	if r.Format != "vllm" || r.Name == nil || r.Metrics["mean_ttft_ms"] != 945.18 || r.Metrics["total_token_throughput"] != 460.70 || r.Labels["max_concurrency"] != "16" {
		t.Errorf("first result = %+v", r)
	}
}

func TestParseStdinAndFormat(t *testing.T) {
	block := servingBlock(100, 300, 500, 0)
	stdout, stderr, code := runCLI(t, block, "parse", "--format", "vllm", "-o", "json", "-")
	if code != 0 || !strings.Contains(stdout, `"mean_ttft_ms": 100`) {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Forcing a format that does not fit finds nothing, and says so.
	_, stderr, code = runCLI(t, block, "parse", "--format", "mindie", "-")
	if code != 2 || !strings.Contains(stderr, "mindie") {
		t.Errorf("forced wrong format: exit %d, %q", code, stderr)
	}
}
