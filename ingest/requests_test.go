package ingest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/slo"
)

// parseWith parses a file of testdata/requests with options.
func parseWith(t *testing.T, name string, opts Options) []Result {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "requests", name))
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(strings.NewReader(string(data)), name, opts)
	var out []Result
	for r.Scan() {
		out = append(out, r.Result())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 {
		t.Fatalf("%d results, want 1", len(out))
	}
	return out
}

// TestGoodputEqualsTools: perfgate's request_goodput from the requests of a
// file equals the goodput the tool computes for the same SLO (the files
// hold it; testdata/requests/PROVENANCE.md says how it was computed).
func TestGoodputEqualsTools(t *testing.T) {
	for _, tc := range []struct {
		file string
		slo  slo.Objective
		good int
	}{
		{"vllm_llm-k8s_qps16_goodput_ttft80.json", slo.Objective{TTFTms: 80}, 191},
		{"vllm_constructed_goodput_ttft100_tpot25_e2el4000.json", slo.Objective{TTFTms: 100, TPOTms: 25, E2ELms: 4000}, 32},
	} {
		t.Run(tc.file, func(t *testing.T) {
			// The tool's own value, as the file holds it.
			own := parseWith(t, tc.file, Options{})[0]
			tool, ok := own.Metrics["request_goodput"]
			if !ok || own.Requests == nil {
				t.Fatalf("no request_goodput or no request summary: %v", own.Metrics)
			}
			o := tc.slo
			res := parseWith(t, tc.file, Options{SLO: &o})[0]
			if res.Requests.SLO == nil || *res.Requests.SLO != o {
				t.Errorf("the summary records SLO %v, want %v", res.Requests.SLO, o)
			}
			if got := res.Metrics["request_goodput"]; got != tool {
				t.Errorf("perfgate's request_goodput %v, the tool's %v", got, tool)
			}
			for _, w := range res.Warnings {
				if strings.Contains(w, "request_goodput") {
					t.Errorf("warning: %s", w)
				}
			}
			n := float64(res.Requests.Requests + res.Requests.Failed)
			wantMetric(t, res, "slo_attainment", 100*float64(tc.good)/n)
			// From the stored summary alone the same SLO is bounded.
			back, err := slo.Unmarshal(res.Requests.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			a := back.Attain(o)
			if a.Good.Lo > tc.good || a.Good.Hi < tc.good {
				t.Errorf("summary bounds %+v do not hold the exact %d", a.Good, tc.good)
			}
		})
	}
}

// TestGoodputOtherSLOWarns: a file whose request_goodput was computed for
// another SLO than --slo keeps perfgate's, with a warning.
func TestGoodputOtherSLOWarns(t *testing.T) {
	o := slo.Objective{TTFTms: 40}
	res := parseWith(t, "vllm_llm-k8s_qps16_goodput_ttft80.json", Options{SLO: &o})[0]
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "ran with another SLO")
	}
	if !found {
		t.Errorf("no warning about the tool's other SLO: %q", res.Warnings)
	}
	if res.Metrics["request_goodput"] >= 6.04 {
		t.Errorf("request_goodput %v is the tool's, not perfgate's for ttft 40 ms", res.Metrics["request_goodput"])
	}
}

// TestRequestArraysLeftOut: per-request lists that disagree in length or
// hold a non-number are left out with a warning, never a partial summary;
// the result's own statistics stand.
func TestRequestArraysLeftOut(t *testing.T) {
	for _, doc := range []string{
		`{"completed": 2, "duration": 1, "request_throughput": 2, "ttfts": [0.1, 0.2], "e2els": [0.3]}`,
		`{"completed": 2, "duration": 1, "request_throughput": 2, "ttfts": [0.1, "x"]}`,
		`{"completed": 2, "duration": 1, "request_throughput": 2, "ttfts": [0.1, 0.2], "itls": [[0.1], 3]}`,
		`{"completed": 2, "duration": 1, "request_throughput": 2, "ttfts": [0.1, -1]}`,
	} {
		res := mustParse(t, doc, "r.json", "")
		if len(res) != 1 || res[0].Requests != nil || res[0].Metrics["request_throughput"] != 2 {
			t.Fatalf("%s: %+v", doc, res)
		}
		if len(res[0].Warnings) != 1 || !strings.Contains(res[0].Warnings[0], "per-request lists are left out") {
			t.Errorf("%s: warnings %q", doc, res[0].Warnings)
		}
	}
}

// TestOldVLLMFixtureSummary reads the whole public file (with itls) from
// ../shared/fixtures: it gets a summary whose P99 TTFT interval holds the
// file's own, and says that e2el is derived.
func TestOldVLLMFixtureSummary(t *testing.T) {
	data := readFixture(t, "vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json")
	res := mustParse(t, string(data), "qps_04.json", "")
	if len(res) != 1 || res[0].Requests == nil {
		t.Fatalf("results %v", res)
	}
	s := res[0].Requests
	if s.Requests != 200 || s.ITL == nil || s.E2EL == nil {
		t.Fatalf("summary %+v", s)
	}
	q, err := s.Percentile("ttft", 99, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if own := res[0].Metrics["p99_ttft_ms"]; q.Hi < own*(1-slo.Alpha) || q.Lo > own*(1+slo.Alpha) {
		t.Errorf("P99 TTFT interval [%v, %v] misses the file's %v", q.Lo, q.Hi, own)
	}
	if !strings.Contains(q.Warning, "rests on the 2 above it") {
		t.Errorf("P99 of 200 requests: warning %q", q.Warning)
	}
	if !s.E2ELDerived {
		t.Error("summary does not say e2el was derived")
	}
	if a := s.Attain(slo.Objective{TPOTms: 30}); len(a.Warnings) == 0 {
		t.Error("no warning about the derived e2el for a TPOT objective")
	}
}

// FuzzRequests parses serving results with per-request lists under an
// SLO: never a panic; a summary round-trips, attainment is a percentage
// and goodput at most the completed requests over the duration.
func FuzzRequests(f *testing.F) {
	f.Add(`{"completed": 2, "duration": 1, "request_throughput": 2, "ttfts": [0.1, 0.2], "itls": [[0.01], []], "e2els": [0.3, 0.2], "output_lens": [2, 1], "errors": ["", ""]}`)
	f.Add(`{"completed": 1, "failed": 1, "duration": 0, "request_throughput": 1, "ttfts": [0.1, 0], "itls": [[0.01, 0.02], []], "output_lens": [3, 0], "errors": ["", "Bad Request"]}`)
	f.Add(`{"completed": 1, "request_throughput": 1, "ttfts": [1e308], "itls": [[1e-300]], "output_lens": [1e300]}`)
	for _, p := range []string{"aiperf/profile_export.jsonl", "inference-perf/per_request_lifecycle_metrics.json"} {
		if data, err := os.ReadFile(filepath.Join("testdata", p)); err == nil {
			f.Add(string(data))
		}
	}
	o := slo.Objective{TTFTms: 100, TPOTms: 20, E2ELms: 1000}
	f.Fuzz(func(t *testing.T, data string) {
		r := NewReader(strings.NewReader(data), "f.json", Options{SLO: &o, MaxDocBytes: 1 << 20})
		for r.Scan() {
			res := r.Result()
			if res.Requests == nil {
				continue
			}
			if _, err := slo.Unmarshal(res.Requests.Marshal()); err != nil {
				t.Errorf("summary does not read back: %v", err)
			}
			for _, k := range []string{"slo_attainment", "slo_attainment_ttft", "slo_attainment_tpot", "slo_attainment_e2el"} {
				if v, ok := res.Metrics[k]; ok && !(v >= 0 && v <= 100) {
					t.Errorf("%s = %v", k, v)
				}
			}
			if g, ok := res.Metrics["request_goodput"]; ok {
				if d := res.Requests.Duration; d > 0 && g > float64(res.Requests.Requests)/d*(1+1e-12) {
					t.Errorf("goodput %v above %d requests in %v s", g, res.Requests.Requests, d)
				}
			}
		}
	})
}

// guidellmWithRequests returns testdata/guidellm/v0.2_sweep.json with n
// successful requests kept in its first benchmark (of 46 made): request i
// has TTFT 10+i ms, inter-token latency 5 ms and latency (i+1)/10 s.
func guidellmWithRequests(t *testing.T, n int) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "guidellm", "v0.2_sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var ok []any
	for i := range n {
		ok = append(ok, map[string]any{"request_id": fmt.Sprint(i), "time_to_first_token_ms": 10.0 + float64(i),
			"inter_token_latency_ms": 5.0, "request_latency": float64(i+1) / 10})
	}
	b := doc["benchmarks"].([]any)[0].(map[string]any)
	b["requests"] = map[string]any{"successful": ok, "errored": []any{}, "incomplete": []any{map[string]any{"request_id": "cut"}}, "total": nil}
	out, _ := json.Marshal(doc)
	return string(out)
}

// TestGuidellmRequests: a guidellm benchmark that keeps every request
// gets its summary and exact goodput; one that keeps a sample (guidellm's
// --request-samples) gets a summary that says so, and no goodput.
func TestGuidellmRequests(t *testing.T) {
	o := slo.Objective{TTFTms: 40, E2ELms: 2000}
	parse := func(doc string) Result {
		r := NewReader(strings.NewReader(doc), "g.json", Options{SLO: &o})
		var res []Result
		for r.Scan() {
			res = append(res, r.Result())
		}
		if r.Err() != nil || len(res) == 0 {
			t.Fatalf("%d results, %v", len(res), r.Err())
		}
		return res[0]
	}
	all := parse(guidellmWithRequests(t, 46))
	if all.Requests == nil || all.Requests.Requests != 46 || all.Requests.SampledFrom != 0 {
		t.Fatalf("summary %+v", all.Requests)
	}
	// TTFT <= 40: requests 0..30; E2EL <= 2000 ms: requests 0..19.
	wantMetric(t, all, "request_goodput", 20/29.9)
	wantMetric(t, all, "slo_attainment_ttft", 100*31/46.0)
	sample := parse(guidellmWithRequests(t, 20))
	if sample.Requests == nil || sample.Requests.SampledFrom != 46 {
		t.Fatalf("summary %+v", sample.Requests)
	}
	if _, ok := sample.Metrics["request_goodput"]; ok {
		t.Error("goodput computed from a sample")
	}
	checkWarn(t, sample, "keeps 20 of its 46 requests")
	if a := sample.Requests.Attain(o); a.Duration != 0 || len(a.Warnings) == 0 {
		t.Errorf("attainment of a sample: %+v", a)
	}
}

// TestGenAIBenchRequests: genai-bench's individual_request_metrics give
// the run's request summary, and attainment for --slo.
func TestGenAIBenchRequests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "genai-bench", "mock_run_data.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Agg  map[string]any   `json:"aggregated_metrics"`
		Reqs []map[string]any `json:"individual_request_metrics"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	good, failed := 0, 0
	for _, r := range doc.Reqs {
		if r["error_code"] != nil {
			failed++
			continue
		}
		if r["ttft"].(float64) <= 0.7 {
			good++
		}
	}
	o := slo.Objective{TTFTms: 700}
	res := parseWith(t, filepath.Join("..", "genai-bench", "mock_run_data.json"), Options{SLO: &o})[0]
	if res.Requests == nil || res.Requests.Requests+res.Requests.Failed != len(doc.Reqs) || res.Requests.Failed != failed {
		t.Fatalf("summary %+v of %d requests", res.Requests, len(doc.Reqs))
	}
	wantMetric(t, res, "slo_attainment_ttft", 100*float64(good)/float64(len(doc.Reqs)))
	// The mock has no run_duration: no goodput, and a warning says why.
	checkWarn(t, res, "gives no duration")
}

// TestSGLangDetails: SGLang bench_serving --output-details writes the
// per-request lists beside its statistics, as vLLM does (no e2els: e2el
// is ttft + sum(itls)).
func TestSGLangDetails(t *testing.T) {
	line := `{"backend": "sglang", "dataset_name": "random", "request_rate": 4.0, "max_concurrency": 8, "duration": 2.0, "completed": 3, "total_input_tokens": 300, "total_output_tokens": 9, "request_throughput": 1.5, "mean_e2e_latency_ms": 60.0, "mean_ttft_ms": 20.0, "input_lens": [100, 100, 100], "output_lens": [3, 3, 3], "ttfts": [0.01, 0.02, 0.03], "itls": [[0.01, 0.01], [0.02, 0.02], [0.03, 0.03]], "generated_texts": ["a", "b", "c"], "errors": ["", "", ""]}` + "\n"
	o := slo.Objective{TTFTms: 25, E2ELms: 70}
	r := NewReader(strings.NewReader(line), "sglang.jsonl", Options{SLO: &o})
	var res []Result
	for r.Scan() {
		res = append(res, r.Result())
	}
	if r.Err() != nil || len(res) != 1 || res[0].Format != "sglang-jsonl" || res[0].Requests == nil {
		t.Fatalf("%+v, %v", res, r.Err())
	}
	// e2el 30, 60, 90 ms; ttft 10, 20, 30: requests 1 and 2 meet both.
	wantMetric(t, res[0], "request_goodput", 1)
	wantMetric(t, res[0], "mean_e2el_ms", 60)
	checkWarn(t, res[0], `no per-request "e2els"`)
}

// TestSLOOnUnmeasuredLatency: an objective on a latency the file does not
// give per request is taken as met, and a warning says so.
func TestSLOOnUnmeasuredLatency(t *testing.T) {
	o := slo.Objective{TTFTms: 80, E2ELms: 1000}
	res := parseWith(t, "vllm_llm-k8s_qps16_goodput_ttft80.json", Options{SLO: &o})[0]
	checkWarn(t, res, "--slo sets e2el_ms=1000 but the file gives no e2el per request")
	wantMetric(t, res, "request_goodput", res.Metrics["slo_attainment_ttft"]/100*200/res.Metrics["duration"])
}

// TestInferencePerfRequests: inference-perf's per-request report is one
// result whose goodput for an SLO is inference-perf's: over the completed
// requests' span, with a request that streamed no tokens meeting no TTFT
// or TPOT objective.
func TestInferencePerfRequests(t *testing.T) {
	o := slo.Objective{TTFTms: 200, TPOTms: 150}
	res := parseWith(t, filepath.Join("..", "inference-perf", "per_request_lifecycle_metrics.json"), Options{SLO: &o})[0]
	if res.Format != "inference-perf" || res.Requests == nil || res.Requests.Requests != 4 || res.Requests.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	start, end := 1000.0, 1001.2
	wantMetric(t, res, "duration", end-start)
	wantMetric(t, res, "mean_ttft_ms", 1e3*(0.1+0.3+0.05)/3)
	wantMetric(t, res, "mean_e2el_ms", 600)
	// Requests 1 and 3 meet both; 2 has TTFT 300 ms; 4 streamed nothing.
	if got, want := res.Metrics["request_goodput"], 2/(end-start); got != want {
		t.Errorf("request_goodput %v, inference-perf's %v", got, want)
	}
	wantMetric(t, res, "slo_attainment_ttft", 100*2/5.0)
	checkWarn(t, res, "")
	a := res.Requests.Attain(o)
	if a.Good.Lo > 2 || a.Good.Hi < 2 {
		t.Errorf("from the summary: %+v", a.Good)
	}
}
