package main

import (
	"encoding/json"
	"os"
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

// TestParseErrors: bad input exits 2, prints nothing on stdout, and the
// message names the file (and line), what went wrong and what to do.
func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	block := servingBlock(100, 300, 500, 0)
	lines := strings.Split(block, "\n")
	cut := strings.Join(lines[:8], "\n") + "\n"
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string
	}{
		{"unrecognised", []string{write("notes.txt", "hello\nworld\n")}, "", []string{"notes.txt", "unrecognised", "tried formats:", "vllm", "mindie", "--format"}},
		{"truncated block", []string{write("cut.txt", cut)}, "", []string{"cut.txt:8:", "cut off", "rerun the benchmark"}},
		{"unknown format", []string{"--format", "nope", write("ok.txt", block)}, "", []string{`--format "nope"`, "valid formats"}},
		{"missing file", []string{filepath.Join(dir, "absent.txt")}, "", []string{"absent.txt", "check the path"}},
		{"config JSON", []string{write("serving-tests.json", `[{"test_name":"serving_a","qps_list":[1,"inf"],"server_parameters":{},"client_parameters":{}}]`)}, "", []string{"serving-tests.json:1", "matches no known format"}},
		{"bad value on stdin", []string{"-"}, strings.Replace(block, "Mean TTFT (ms):                          100", "Mean TTFT (ms):                          fast", 1), []string{"<stdin>:", `"Mean TTFT (ms): fast"`, "write N/A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, tt.stdin, append([]string{"parse"}, tt.args...)...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// TestParseManyFiles: results of several files and formats, in order;
// warnings go to stderr, data to stdout.
func TestParseManyFiles(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	b := filepath.Join(dir, "b.json")
	// No closing line, but complete: kept with a warning.
	unclosed := strings.TrimSuffix(strings.TrimRight(servingBlock(100, 300, 500, 0), "\n"), "==================================================")
	if err := os.WriteFile(a, []byte(unclosed), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(`{"metrics":{"mean_ttft_ms":7}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "", "parse", "-o", "json", a, b)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Results []struct {
			Format string `json:"format"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 2 || doc.Results[0].Format != "vllm" || doc.Results[1].Format != "generic" {
		t.Errorf("results %+v, want vllm then generic", doc.Results)
	}
	if !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "a.txt") {
		t.Errorf("stderr %q: want the warning about the unclosed block", stderr)
	}
}

// Names and labels read from a benchmark file are printed inert: an
// escape sequence or a newline and "::error::" in a label cannot recolour
// the terminal or become a workflow command (issue 34).
func TestParseInert(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hostile.json")
	doc := `{"model_id": "m\u001b[31mred\n::error::pwned", "backend": "vllm", "max_concurrency": "1\u001b]0;t\u0007", "mean_ttft_ms": 10, "mean_tpot_ms": 2, "completed": 5, "request_throughput": 1}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "", "parse", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ContainsAny(stdout, "\x1b\x07") {
		t.Errorf("control characters printed raw:\n%q", stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "::") {
			t.Errorf("line %q starts a workflow command", line)
		}
	}
	if !strings.Contains(stdout, "pwned") {
		t.Errorf("the label's text is not shown:\n%s", stdout)
	}
}
