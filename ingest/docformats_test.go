package ingest

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Shared harness of the structured-document format tests (vllmjson_test.go,
// guidellm_test.go, genaiperf_test.go, aisbench_doc_test.go).

// docWant checks one result of a document case.
type docWant struct {
	i       int // result index
	name    string
	format  string // "" = the case's format
	metrics map[string]float64
	labels  map[string]string
	absent  []string // metric names that must not be there
	nMetric int      // exact number of metrics, when > 0
	warn    string   // a warning must contain it; "" = no warnings
}

// docCase parses testdata/<file> in auto mode and, when format is set and
// not autoOnly, again with --format format; both must give the same
// outcome.
type docCase struct {
	file       string
	format     string
	results    int
	want       []docWant
	err        string // substring of the expected error ("" = none)
	errLine    int    // its line, when > 0
	unrecog    bool   // the error must wrap ErrUnrecognized (auto mode)
	autoOnly   bool
	forcedOnly bool
}

func runDocCases(t *testing.T, cases []docCase) {
	t.Helper()
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		modes := []string{""}
		if c.forcedOnly {
			modes = nil
		}
		if c.format != "" && !c.autoOnly {
			modes = append(modes, c.format)
		}
		for _, mode := range modes {
			label := "auto"
			if mode != "" {
				label = "forced"
			}
			t.Run(c.file+"/"+label, func(t *testing.T) {
				res, err := parseString(t, string(data), c.file, mode)
				checkDocCase(t, c, mode, res, err)
			})
		}
	}
}

func checkDocCase(t *testing.T, c docCase, mode string, res []Result, err error) {
	t.Helper()
	if c.err != "" {
		if err == nil {
			t.Fatalf("want error %q, got %d results", c.err, len(res))
		}
		var pe *Error
		if !errors.As(err, &pe) {
			t.Fatalf("error is %T, not *ingest.Error: %v", err, err)
		}
		if pe.File != c.file {
			t.Errorf("error names file %q, want %q", pe.File, c.file)
		}
		if c.errLine > 0 && pe.Line != c.errLine {
			t.Errorf("error at line %d, want %d: %v", pe.Line, c.errLine, err)
		}
		if !strings.Contains(err.Error(), c.err) {
			t.Errorf("error %q does not contain %q", err, c.err)
		}
		if c.unrecog && mode == "" && !errors.Is(err, ErrUnrecognized) {
			t.Errorf("error does not wrap ErrUnrecognized: %v", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(res) != c.results {
		t.Fatalf("got %d results, want %d", len(res), c.results)
	}
	for _, w := range c.want {
		r := res[w.i]
		format := w.format
		if format == "" {
			format = c.format
		}
		if format != "" && r.Format != format {
			t.Errorf("result %d: format %q, want %q", w.i, r.Format, format)
		}
		if r.Name != w.name {
			t.Errorf("result %d: name %q, want %q", w.i, r.Name, w.name)
		}
		for k, v := range w.metrics {
			wantMetric(t, r, k, v)
		}
		for k, v := range w.labels {
			if r.Labels[k] != v {
				t.Errorf("result %d: label %s = %q, want %q (labels %v)", w.i, k, r.Labels[k], v, r.Labels)
			}
		}
		for _, k := range w.absent {
			if v, ok := r.Metrics[k]; ok {
				t.Errorf("result %d: metric %s = %v, want it absent", w.i, k, v)
			}
		}
		if w.nMetric > 0 && len(r.Metrics) != w.nMetric {
			ks := keys(r.Metrics)
			sort.Strings(ks)
			t.Errorf("result %d: %d metrics, want %d: %v", w.i, len(r.Metrics), w.nMetric, ks)
		}
		checkWarn(t, r, w.warn)
	}
}

// docTestdata lists this harness's testdata folders.
var docTestdata = []string{
	"vllm-json", "sglang-jsonl", "vllm-throughput", "vllm-latency", "guidellm",
	"genai-perf", "aiperf", "aisbench-csv", "aisbench-json",
}

// TestDocMatchExclusive checks that no JSON object or CSV header of the
// document testdata is claimed by two formats: Match decides
// auto-detection, so formats must not depend on registration order.
func TestDocMatchExclusive(t *testing.T) {
	for _, dir := range docTestdata {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(f, ".csv") {
				rec, err := csv.NewReader(bytes.NewReader(data)).Read()
				if err != nil {
					continue
				}
				var claim []string
				for _, cf := range csvFormats {
					if cf.Match(rec) {
						claim = append(claim, cf.Name)
					}
				}
				if len(claim) > 1 {
					t.Errorf("%s: header claimed by %v", f, claim)
				}
				continue
			}
			for _, obj := range topObjects(t, data) {
				var claim []string
				for _, df := range docFormats {
					if df.Match(obj) {
						claim = append(claim, df.Name)
					}
				}
				if len(claim) > 1 {
					t.Errorf("%s: object with keys %s claimed by %v", f, docKeys(obj), claim)
				}
			}
		}
	}
}

// topObjects decodes the top-level objects of a JSON or JSONL file (those
// of a top-level array too); files that are not JSON give none.
func topObjects(t *testing.T, data []byte) []map[string]any {
	dec := json.NewDecoder(bytes.NewReader(LooseJSON(data)))
	dec.UseNumber()
	var out []map[string]any
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if err != io.EOF && len(out) == 0 {
				return nil
			}
			return out
		}
		switch x := v.(type) {
		case map[string]any:
			out = append(out, x)
		case []any:
			for _, e := range x {
				if m, ok := e.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
	}
}

// TestDocStatWord pins the statistic spellings of the document formats.
func TestDocStatWord(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"avg", "mean", true}, {"Average", "mean", true}, {"mean", "mean", true},
		{"median", "median", true}, {"p50", "median", true}, {"P50", "median", true},
		{"std_dev", "std", true}, {"std", "std", true}, {"min", "min", true}, {"Max", "max", true},
		{"p99", "p99", true}, {"P75", "p75", true}, {"p99.9", "p99.9", true},
		{"p001", "p0.1", true}, {"p01", "p1", true}, {"p05", "p5", true}, {"p999", "p99.9", true},
		{"p1", "p1", true}, {"p100", "", false}, {"p0", "", false}, {"mode", "", false},
		{"count", "", false}, {"unit", "", false}, {"percentiles", "", false}, {"N", "", false},
	}
	for _, tt := range tests {
		got, ok := docStatWord(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("docStatWord(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestDocForcedOnOtherFormat forces each document format on another's
// file: the answer is a positioned error saying what the object is not,
// never a result invented from the wrong keys.
func TestDocForcedOnOtherFormat(t *testing.T) {
	tests := []struct{ file, format, err string }{
		{"guidellm/v0.4_report.json", "vllm-json", "not a vLLM serving result"},
		{"vllm-json/v0.8_save_result_goodput_colon.json", "guidellm", "not a guidellm report"},
		{"vllm-json/v0.8_save_result_goodput_colon.json", "genai-perf", "not a genai-perf export"},
		{"aisbench-json/gsm8k_total.json", "aiperf", "not an aiperf export"},
		{"vllm-latency/bench_latency_output.json", "vllm-throughput", "not a `vllm bench throughput` result"},
		{"vllm-throughput/bench_throughput_output.json", "vllm-latency", "not a `vllm bench latency` result"},
		{"sglang-jsonl/v0.5_full.jsonl", "aisbench-json", "not an AISBench common-metrics file"},
		{"genai-perf/profile_export_genai_perf.csv", "aisbench-csv", "not an AISBench performance table"},
		{"aisbench-csv/gsm8k_total.csv", "genai-perf", "not a genai-perf export"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.format, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := parseString(t, string(data), tt.file, tt.format)
			if err == nil {
				t.Fatalf("want error, got %d results", len(res))
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Line == 0 || pe.File != tt.file {
				t.Errorf("error is not positioned in %s: %#v", tt.file, err)
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %q does not say %q", err, tt.err)
			}
		})
	}
}

// BenchmarkDocFormats measures whole-document parsing: the 1.1 MB vLLM
// --save-result fixture (mostly per-request arrays, skipped), a guidellm
// sweep report as JSON and as YAML, and an aiperf CSV.
func BenchmarkDocFormats(b *testing.B) {
	inputs := []struct{ name, path string }{
		{"vllm-json-1.1MB", filepath.Join(fixturesDir, "vllm_serve_json", "llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json")},
		{"guidellm-json", filepath.Join("testdata", "guidellm", "v0.2_sweep.json")},
		{"guidellm-yaml", filepath.Join("testdata", "guidellm", "v0.2_sweep.yaml")},
		{"aiperf-csv", filepath.Join("testdata", "aiperf", "profile_export_aiperf.csv")},
	}
	for _, in := range inputs {
		data, err := os.ReadFile(in.path)
		if err != nil {
			b.Logf("skip %s: %v", in.name, err)
			continue
		}
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseString(b, string(data), in.name, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
