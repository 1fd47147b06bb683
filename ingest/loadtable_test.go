package ingest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadTable: load curves typed by hand as markdown tables, in English
// and Chinese, with CRLF, several tables a page, a comparison table that
// repeats rows, a three-run table, and tables that are not results.
func TestLoadTable(t *testing.T) {
	lt := LoadTableFormat
	runFormatCases(t, []formatCase{
		{file: "load-table/en_sweep.md", count: 4, resFormat: lt,
			metrics: map[string]float64{"mean_ttft_ms": 31.2, "p99_ttft_ms": 40.8, "mean_tpot_ms": 7.1, "p99_e2el_ms": 2010, "output_throughput": 139.5,
				"request_throughput": 0.55, "completed": 100, "failed": 0},
			labels: map[string]string{"max_concurrency": "1"}},
		{file: "load-table/en_sweep.md", count: 4, idx: 3, resFormat: lt,
			metrics: map[string]float64{"p99_ttft_ms": 1210.9, "output_throughput": 2960.1, "completed": 98, "failed": 2},
			labels:  map[string]string{"max_concurrency": "64"}},
		{file: "load-table/zh_crlf.md", count: 5, resFormat: lt,
			metrics: map[string]float64{"mean_ttft_ms": 120.5, "p99_ttft_ms": 150.2, "mean_tpot_ms": 20.1, "output_throughput": 49.5, "completed": 100},
			labels:  map[string]string{"max_concurrency": "1"}},
		{file: "load-table/zh_crlf.md", count: 5, idx: 4, resFormat: lt,
			metrics: map[string]float64{"mean_ttft_ms": 350, "mean_tpot_ms": 26.5, "total_token_throughput": 5011.8, "request_throughput": 3.9},
			labels:  map[string]string{"request_rate": "4"}, absent: []string{"output_throughput"}},
		{file: "load-table/three_runs.md", count: 3, idx: 2, resFormat: lt,
			metrics: map[string]float64{"mean_ttft_ms": 820.1, "median_tpot_ms": 31.5, "output_throughput": 1198.2}},
		{file: "load-table/unknown_columns.md", unrecognized: true, errText: `table(s) at line 3: "Concurrency", "Pods", "Cost per hour" name no metric`},
		{file: "load-table/bad_cell.md", errLine: 4, errText: `column "Mean TTFT (ms)": "fast" is not a number`},
		{file: "load-table/bad_row.md", errLine: 4, errText: "2 cells but its header (line 1) has 3"},
		{file: "load-table/en_sweep.md", format: lt, count: 4, resFormat: lt},
	})
}

// TestLoadTableRows: what a page's tables give, row by row: labels only
// from load and text columns (a run index is none), repeated rows of a
// comparison table said once, unknown columns said once per table.
func TestLoadTableRows(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "load-table", "en_sweep.md"))
	if err != nil {
		t.Fatal(err)
	}
	res := mustParse(t, string(data), "en_sweep.md", "")
	warns := 0
	for _, r := range res {
		if len(r.Labels) != 1 || r.Labels["max_concurrency"] == "" {
			t.Errorf("line %d labels %v, want max_concurrency only", r.Line, r.Labels)
		}
		warns += len(r.Warnings)
	}
	if warns != 0 {
		t.Errorf("%d warnings on a page whose comparison rows all repeat (the repeats are skipped before any is stored)", warns)
	}
	zh, err := os.ReadFile(filepath.Join("testdata", "load-table", "zh_crlf.md"))
	if err != nil {
		t.Fatal(err)
	}
	res = mustParse(t, string(zh), "zh.md", "")
	var said []string
	for _, r := range res {
		said = append(said, r.Warnings...)
	}
	if len(res) != 5 {
		t.Fatalf("%d results, want 5 (the comparison row repeats one)", len(res))
	}
	three, _ := os.ReadFile(filepath.Join("testdata", "load-table", "three_runs.md"))
	for _, r := range mustParse(t, string(three), "three.md", "") {
		if len(r.Labels) != 0 {
			t.Errorf("a run index became a label: %v", r.Labels)
		}
	}
	_ = said
}

// TestLoadTableBesideToolOutput: a page that holds a tool's own output and
// a table typed from it gives the tool's results only.
func TestLoadTableBesideToolOutput(t *testing.T) {
	block, err := os.ReadFile(filepath.Join("testdata", "vllm", "v0.7_goodput_e2el.txt"))
	if err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(filepath.Join("testdata", "load-table", "en_sweep.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(mustParse(t, string(block), "b.txt", ""))
	for _, page := range []string{string(block) + "\n" + string(table), string(table) + "\n" + string(block)} {
		res := mustParse(t, page, "page.md", "")
		if len(res) != n {
			t.Errorf("%d results, want the %d of the tool output only", len(res), n)
		}
		for _, r := range res {
			if r.Format == LoadTableFormat {
				t.Errorf("a typed table was read beside the tool's output: line %d", r.Line)
			}
		}
	}
}

func TestLoadTableHeaders(t *testing.T) {
	tests := []struct {
		header, metric, label string
		scale                 float64
	}{
		{"Mean TTFT (ms)", "mean_ttft_ms", "", 1},
		{"P99 TTFT(ms)", "p99_ttft_ms", "", 1},
		{"TTFT P90 (s)", "p90_ttft_ms", "", 1000},
		{"平均首token时延(秒)", "mean_ttft_ms", "", 1000},
		{"首字时延P99（ms）", "p99_ttft_ms", "", 1},
		{"平均非首token时延(ms)", "mean_tpot_ms", "", 1},
		{"Median ITL (ms)", "median_itl_ms", "", 1},
		{"E2E Latency (ms)", "mean_e2el_ms", "", 1},
		{"端到端时延 99分位(ms)", "p99_e2el_ms", "", 1},
		{"Output Throughput (tok/s)", "output_throughput", "", 1},
		{"吞吐(tokens/s)", "output_throughput", "", 1},
		{"总吞吐(tok/s)", "total_token_throughput", "", 1},
		{"Request Throughput (req/s)", "request_throughput", "", 1},
		{"实际QPS", "request_throughput", "", 1},
		{"Goodput (req/s)", "request_goodput", "", 1},
		{"Concurrency", "", "max_concurrency", 1},
		{"并发数", "", "max_concurrency", 1},
		{"Request rate (req/s)", "", "request_rate", 1},
		{"QPS", "", "request_rate", 1},
		{"请求速率", "", "request_rate", 1},
		{"Model", "", "model", 1},
		{"Success rate (%)", "", "", 1},
		{"vs baseline", "", "", 1},
		{"Per-user throughput (tok/s/user)", "", "", 1},
	}
	for _, tt := range tests {
		c := ltClassify(tt.header)
		if c.metric != tt.metric || c.label != tt.label || (c.metric != "" && c.scale != tt.scale) {
			t.Errorf("%q: metric %q label %q scale %v; want %q %q %v", tt.header, c.metric, c.label, c.scale, tt.metric, tt.label, tt.scale)
		}
	}
}

func FuzzLoadTable(f *testing.F) {
	for _, name := range []string{"en_sweep.md", "zh_crlf.md", "three_runs.md", "bad_row.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", "load-table", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, format := range []string{"", LoadTableFormat} {
			res, err := parseString(t, s, "f.md", format)
			if err != nil {
				if !strings.Contains(err.Error(), "f.md") {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			for _, r := range res {
				for k, v := range r.Metrics {
					if v != v {
						t.Fatalf("%s is NaN", k)
					}
				}
			}
		}
	})
}

// TestLoadTableDamagedBesideToolOutput: a damaged typed table beside a
// tool's output is no error (the tool's results are read); alone it is.
func TestLoadTableDamagedBesideToolOutput(t *testing.T) {
	block, err := os.ReadFile(filepath.Join("testdata", "vllm", "v0.7_goodput_e2el.txt"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := os.ReadFile(filepath.Join("testdata", "load-table", "bad_cell.md"))
	if err != nil {
		t.Fatal(err)
	}
	if res := mustParse(t, string(bad)+"\n"+string(block), "page.md", ""); len(res) == 0 {
		t.Error("no result")
	}
	if _, err := parseString(t, string(bad), "bad.md", ""); err == nil || !strings.Contains(err.Error(), "not a number") {
		t.Errorf("alone: %v", err)
	}
}
