package ingest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// vLLM's nightly and per-PR benchmark jobs (.buildkite/nightly-benchmarks,
// convert-results-json-to-markdown.py) and vllm-ascend's CI
// (benchmarks/scripts/convert_json_to_markdown.py) turn their JSON results
// into markdown tables, one row per test, which is what gets pasted into
// issues, PR comments and release notes:
//
//	| Test name                      |   Request rate (req/s) |   Tput (req/s) |   TTFT (ms) | ...
//	|:-------------------------------|-----------------------:|---------------:|------------:| ...
//	| serving_qwen2_5vl_7B_tp1_qps_1 |                      1 |       0.997964 |    374.364  | ...
//
// Format "vllm-table": every row of a pipe table whose first column is
// "Test name" is one result named after the test, mapped like the JSON
// the tables are made from (format vllm-json, nightlyColumns): "# of
// req." -> completed, "Tput (req/s)" -> request_throughput, "Output Tput
// (tok/s)" -> output_throughput, "Total Tput (tok/s)" -> total_token_
// throughput, "Mean TTFT (ms)" -> mean_ttft_ms (and every "<Stat> <Kind>
// (ms)" column the vocabulary knows), vllm-ascend's bare "TTFT (ms)",
// "TPOT (ms)" and "ITL (ms)" -> the medians its converter puts there,
// "Mean/Median/P99 latency (ms)" -> *_e2el_ms, "Elapsed time (s)" ->
// duration. "GPU" and "Request rate (req/s)" are labels gpu and
// request_rate; other text columns become labels, other numeric ones
// metrics under their sanitized names. Empty, N/A and "-" cells are
// absent; "inf" in a metric column is left out with a warning.
//
// The table is read with or without a markdown quote ("> ") or list
// indentation before it. A row cut short or with another number of cells
// than the header is an error naming the line.

func init() {
	RegisterText(TextFormat{
		Name: "vllm-table",
		Desc: "vLLM / vllm-ascend benchmark results markdown table (| Test name | ... |)",
		New:  func(file string) LineParser { return &vllmTableParser{file: file} },
	})
}

type vllmTableParser struct {
	file      string
	header    []string
	headerAt  int
	delimiter bool // the |---| row after the header was read
}

func (p *vllmTableParser) Line(n int, line string, emit Emit) error {
	if p.header == nil {
		if !strings.Contains(line, "Test name") && !strings.Contains(line, "test name") && !strings.Contains(line, "Test Name") {
			return nil
		}
		row, ok := vtRow(line)
		if !ok || len(row) < 2 || !strings.EqualFold(row[0], "test name") {
			return nil
		}
		known := false
		for _, c := range row[1:] {
			if _, ok := nightlyColumns[c]; ok {
				known = true
			}
		}
		if !known {
			return nil
		}
		p.header, p.headerAt, p.delimiter = row, n, false
		return nil
	}
	s := vtTrim(line)
	if !p.delimiter {
		if strings.HasPrefix(s, "|") && gridMarkdownRule(strings.TrimRight(s, " \t")) {
			p.delimiter = true
			return nil
		}
		p.header = nil // a line that only looked like a header
		return nil
	}
	if !strings.HasPrefix(s, "|") {
		p.header = nil
		return nil
	}
	cells, ok := vtRow(line)
	if !ok {
		p.header = nil
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("vLLM results table row is cut off (no closing \"|\"): %s; copy the complete table", Quote(strings.TrimSpace(line)))}
	}
	if len(cells) != len(p.header) {
		want := len(p.header)
		p.header = nil
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("vLLM results table row has %d cells but its header (line %d) has %d: %s; the table is damaged, copy it whole", len(cells), p.headerAt, want, Quote(strings.TrimSpace(line)))}
	}
	obj := map[string]any{}
	for j, c := range cells {
		col := p.header[j]
		if IsAbsent(c) || col == "" {
			continue
		}
		if _, isLabel := nightlyLabels[col]; !isLabel {
			if _, err := strconv.ParseFloat(strings.ReplaceAll(c, ",", ""), 64); err == nil {
				obj[col] = json.Number(strings.ReplaceAll(c, ",", ""))
				continue
			}
			_, known := nightlyColumns[col]
			if _, ok := metric.Lookup(col); known || ok {
				p.header = nil
				return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("vLLM results table row %s, column %s: %s is not a number; fix the cell or write N/A", Quote(cells[0]), Quote(col), Quote(c))}
			}
		}
		obj[col] = c
	}
	obj["Test name"] = cells[0]
	if IsAbsent(cells[0]) {
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("vLLM results table row has no test name: %s; fill in the Test name cell", Quote(strings.TrimSpace(line)))}
	}
	res, err := convertNightlyRow(obj)
	if err != nil {
		p.header = nil
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("vLLM results table row %s: %v", Quote(cells[0]), err)}
	}
	for _, r := range res {
		r.Format = "vllm-table"
		r.Line = n
		if len(r.Metrics) == 0 {
			continue
		}
		emit(r)
	}
	return nil
}

func (p *vllmTableParser) End(n int, emit Emit) error {
	if p.header != nil && !p.delimiter {
		p.header = nil
	}
	return nil
}

// vtTrim drops a markdown quote or list marker and indentation.
func vtTrim(line string) string {
	s := strings.TrimLeft(line, " \t")
	for strings.HasPrefix(s, ">") {
		s = strings.TrimLeft(s[1:], " \t")
	}
	return s
}

// vtRow splits a pipe-table row into trimmed cells; ok is false when the
// line is not a row or lacks its closing pipe.
func vtRow(line string) ([]string, bool) {
	s := strings.TrimRight(vtTrim(line), " \t")
	if len(s) < 2 || s[0] != '|' || s[len(s)-1] != '|' {
		return nil, false
	}
	cells := strings.Split(s[1:len(s)-1], "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(c)
	}
	return cells, true
}
