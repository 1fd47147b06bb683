package ingest

import (
	"encoding/json"
	"testing"
)

// TestGuidellmReportV2: guidellm 0.7+ writes report version 2, where the
// run's model and profile are config.spec.backend.model and
// config.spec.profile.kind; its results equal the v0.4 report's.
func TestGuidellmReportV2(t *testing.T) {
	want := []docWant{
		{i: 0, name: "constant@5.00", nMetric: 69, labels: map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "profile": "constant", "strategy": "constant", "rate": "5"}},
		{i: 1, name: "concurrent@8", nMetric: 69, labels: map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "profile": "concurrent", "streams": "8"}},
	}
	runDocCases(t, []docCase{{file: "guidellm/v0.7_report_v2.json", format: "guidellm", results: 2, want: want}})
	v2 := mustParse(t, readTestdata(t, "guidellm/v0.7_report_v2.json"), "v2.json", "")
	v04 := mustParse(t, readTestdata(t, "guidellm/v0.4_report.json"), "v04.json", "")
	for i := range v2 {
		a, _ := json.Marshal(v2[i].Metrics)
		b, _ := json.Marshal(v04[i].Metrics)
		if string(a) != string(b) {
			t.Errorf("benchmark %d: metrics differ from the v0.4 report's:\n%s\n%s", i, a, b)
		}
	}

	// Without a profile of its own, a benchmark takes the report's.
	var doc map[string]any
	if err := json.Unmarshal([]byte(readTestdata(t, "guidellm/v0.7_report_v2.json")), &doc); err != nil {
		t.Fatal(err)
	}
	for _, b := range doc["benchmarks"].([]any) {
		delete(b.(map[string]any)["config"].(map[string]any), "profile")
	}
	data, _ := json.Marshal(doc)
	for _, r := range mustParse(t, string(data), "v2.json", "") {
		if r.Labels["profile"] != "constant" || r.Labels["model"] != "meta-llama/Llama-3.1-8B-Instruct" {
			t.Errorf("%s: labels %v, want profile constant (config.spec.profile.kind) and the model of config.spec.backend", r.Name, r.Labels)
		}
	}
}
