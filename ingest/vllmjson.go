package ingest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// The JSON results of vLLM's benchmark commands and of SGLang's
// bench_serving, which started as a copy of vLLM's benchmark_serving.py:
//
//   - vllm-json: `vllm bench serve --save-result` (benchmark_serving.py
//     --save-result), one object per run or JSONL of them. Its keys are the
//     vocabulary's canonical names (mean_ttft_ms, p99.9_itl_ms, ...).
//     Per-request arrays (ttfts, itls, e2els, output_lens, errors) are not
//     metrics: they become the result's request summary (requests.go);
//     input_lens and generated_texts are skipped. The key "request_goodput:" (with the
//     colon some vLLM versions wrote) is request_goodput. Run arguments
//     (backend, model_id, request_rate, ...) become labels, and so do the
//     string values `--metadata KEY=VALUE` adds. Other numbers of the result
//     (spec_decode_acceptance_rate, rtfx, probe_*) are kept as metrics;
//     spec_decode_per_position_acceptance_rates (fractions) become
//     spec_decode_acceptance_rate_pos<i> in percent, as the text prints. A
//     result is named after its test_name (added by the nightly scripts) or
//     its --label, and is otherwise unnamed. `vllm bench sweep serve`
//     writes these objects with run_number and the combination's server
//     and benchmark settings added (summary.json, a list of them, and
//     run=N.json): in an object with run_number, every scalar that is not
//     a measured result (isServeResult) is a label: run_number,
//     max_num_seqs, enable_prefix_caching, ...
//     The same format reads the tables vLLM's and vllm-ascend's nightly
//     scripts derive from those files: benchmark_results.json (a list of
//     rows with display columns "Test name", "Tput (req/s)", "Mean TTFT
//     (ms)", ...) and the column-oriented {"serving": {"Test name": {"0":
//     ...}}} document; each row is one result named after its test.
//   - sglang-jsonl: bench_serving --output-file, one object per line;
//     *_e2e_latency_ms become *_e2el_ms and total_throughput
//     total_token_throughput.
//   - vllm-throughput: `vllm bench throughput --output-json` (elapsed_time,
//     num_requests, total_num_tokens, requests_per_second,
//     tokens_per_second) to duration, completed, total_num_tokens,
//     request_throughput, total_token_throughput.
//   - vllm-latency: `vllm bench latency --output-json` (avg_latency,
//     std_latency and percentiles {"10": ...} in seconds) to mean_e2el_ms,
//     std_e2el_ms, p10_e2el_ms ... median_e2el_ms in milliseconds.
//
// Test-case configurations (serving-tests.json and friends) hold no
// metric and match none of these formats.

func init() {
	RegisterDoc(DocFormat{
		Name:    "vllm-json",
		Desc:    "vLLM bench serve --save-result JSON/JSONL, and the nightly benchmark_results.json tables",
		Match:   matchVLLMJSON,
		Convert: convertVLLMJSON,
	})
	RegisterDoc(DocFormat{
		Name:    "sglang-jsonl",
		Desc:    "SGLang bench_serving --output-file JSONL",
		Match:   matchSGLang,
		Convert: func(obj map[string]any) ([]Result, error) { return convertServe("sglang-jsonl", obj) },
	})
	RegisterDoc(DocFormat{
		Name:    "vllm-throughput",
		Desc:    "vLLM bench throughput --output-json",
		Match:   matchVLLMThroughput,
		Convert: func(obj map[string]any) ([]Result, error) { return convertVLLMThroughput("vllm-throughput", obj) },
	})
	RegisterDoc(DocFormat{
		Name:    "vllm-latency",
		Desc:    "vLLM bench latency --output-json",
		Match:   matchVLLMLatency,
		Convert: func(obj map[string]any) ([]Result, error) { return convertVLLMLatency("vllm-latency", obj) },
	})
}

// serveMarkers are result keys only a serving benchmark writes; one must be
// a number for an object to be a serving result.
var serveMarkers = []string{
	"request_throughput", "output_throughput", "total_token_throughput",
	"mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "mean_itl_ms",
	"median_itl_ms", "mean_e2el_ms", "mean_e2e_latency_ms", "median_e2e_latency_ms",
}

// serveContext are keys of which one accompanies the markers in every
// version of both tools.
var serveContext = []string{
	"completed", "duration", "num_prompts", "model_id", "date", "backend",
	"total_input_tokens", "total_output_tokens",
}

func looksServe(obj map[string]any) bool {
	if _, ok := obj["metrics"].(map[string]any); ok {
		return false // the generic format
	}
	marker := false
	for _, k := range serveMarkers {
		if docIsNumber(obj[k]) {
			marker = true
			break
		}
	}
	if !marker {
		return false
	}
	for _, k := range serveContext {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// isSGLangShape reports the keys only SGLang writes.
func isSGLangShape(obj map[string]any) bool {
	for k := range obj {
		if strings.HasSuffix(k, "_e2e_latency_ms") {
			return true
		}
	}
	_, ok := obj["total_output_tokens_retokenized"]
	return ok
}

func matchSGLang(obj map[string]any) bool { return looksServe(obj) && isSGLangShape(obj) }

func matchVLLMJSON(obj map[string]any) bool {
	return looksServe(obj) && !isSGLangShape(obj) || isNightlyRow(obj) || isNightlyColumns(obj)
}

func convertVLLMJSON(obj map[string]any) ([]Result, error) {
	switch {
	case isNightlyColumns(obj):
		return convertNightlyColumns(obj)
	case isNightlyRow(obj):
		return convertNightlyRow(obj)
	case looksServe(obj):
		return convertServe("vllm-json", obj)
	}
	return nil, fmt.Errorf("JSON object with keys %s is not a vLLM serving result: it has none of %s; check that the file is `vllm bench serve --save-result` output, or use --format auto",
		docKeys(obj), strings.Join(serveMarkers[:5], ", "))
}

// serveLabels maps run arguments to label names ("" skips the key).
var serveLabels = map[string]string{
	"backend": "backend", "label": "label", "tokenizer_id": "tokenizer_id",
	"request_rate": "request_rate", "burstiness": "burstiness",
	"max_concurrency": "max_concurrency", "num_prompts": "num_prompts",
	"dataset_name": "dataset", "dataset": "dataset", "date": "date", "gpu_type": "gpu",
	"ramp_up_strategy": "ramp_up_strategy", "ramp_up_start_rps": "ramp_up_start_rps",
	"ramp_up_end_rps": "ramp_up_end_rps", "best_of": "best_of", "use_beam_search": "use_beam_search",
	// SGLang's arguments.
	"sharegpt_output_len": "sharegpt_output_len", "sharegpt_context_len": "sharegpt_context_len",
	"random_input_len": "random_input_len", "random_output_len": "random_output_len",
	"random_range_ratio": "random_range_ratio", "fixed_output_len": "fixed_output_len",
	"tag": "tag", "num_gpus": "num_gpus", "window": "window", "total_requests": "num_prompts",
	"ttft_slo_ms": "ttft_slo_ms", "tpot_slo_ms": "tpot_slo_ms",
	// Handled separately or not worth a label.
	"model_id": "", "model": "", "model_name": "", "test_name": "", "Test name": "",
	"endpoint_type": "", "client_command": "", "server_command": "",
}

// serveArgPrefixes start the names of dataset and load arguments (SGLang's
// random_input_len, gsp_num_groups, ...): they are labels, not metrics.
var serveArgPrefixes = []string{"random_", "sharegpt_", "fixed_", "gsp_", "ramp_up_", "image_", "prefix_", "hf_", "sonnet_", "custom_"}

func isServeArg(key string) bool {
	switch key {
	case "seed", "num_warmups", "warmup_requests", "top_p", "top_k", "min_p", "temperature":
		return true
	}
	for _, p := range serveArgPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// isSweepSetting reports whether a key of a `vllm bench sweep serve`
// record (a --save-result object to which the sweep added run_number and
// the combination's serve and bench overrides: max_num_seqs,
// max_num_batched_tokens, enable_prefix_caching, ...) is a setting: every
// scalar that is not a result the benchmark measured. Settings are labels,
// so runs under different server settings are different series; run_number
// is a label that describes a repetition without identifying its series
// (gate.DescriptiveLabels).
func isSweepSetting(key string, v any) bool {
	switch v.(type) {
	case nil, map[string]any, []any:
		return false
	}
	return !isServeResult(serveMetricName(key))
}

// isServeResult reports whether a metric name is one vLLM's and SGLang's
// serving results hold: a vocabulary metric, a time statistic, the
// speculative-decoding, probe and diffusion groups, and a few more.
func isServeResult(name string) bool {
	if metric.Get(name).Known || strings.HasSuffix(name, "_ms") {
		return true
	}
	for _, p := range []string{"spec_decode_", "probe_", "diffusion_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "rtfx", "input_throughput", "total_input_sequences", "input_sequence_throughput",
		"total_output_tokens_retokenized", "total_input_text_tokens", "total_input_vision_tokens", "total_num_tokens":
		return true
	}
	return false
}

// serveModelKeys are the keys that name the model, in order of preference.
var serveModelKeys = []string{"model_id", "model_name", "model"}

// convertServe converts one vLLM or SGLang serving result.
func convertServe(format string, obj map[string]any) ([]Result, error) {
	if !looksServe(obj) {
		return nil, fmt.Errorf("JSON object with keys %s is not a serving benchmark result: it has none of %s as a number",
			docKeys(obj), strings.Join(serveMarkers, ", "))
	}
	res := NewResult(format, 0)
	// The nightly scripts' test name, else `vllm bench serve --label`.
	for _, k := range []string{"test_name", "Test name", "label"} {
		if s, ok := docStr(obj, k); ok {
			res.Name = s
			break
		}
	}
	for _, k := range serveModelKeys {
		if s, ok := docStr(obj, k); ok {
			res.SetLabel("model", s)
			break
		}
	}
	res.perRequest = serveRequests(obj, func(w string) { res.Warnings = append(res.Warnings, w) })
	_, sweep := obj["run_number"]
	for _, raw := range docSortedKeys(obj) {
		key := strings.TrimSuffix(strings.TrimSpace(raw), ":")
		v := obj[raw]
		lbl, ok := serveLabels[key]
		if !ok && (isServeArg(key) || sweep && isSweepSetting(key, v)) {
			lbl, ok = metric.Sanitize(key), true
		}
		if ok {
			if s, ok := docLabel(v); ok && lbl != "" {
				if lbl == "gpu" {
					s = gpuLabel(s)
				}
				res.SetLabel(lbl, s)
			}
			continue
		}
		switch x := v.(type) {
		case nil, bool:
			continue
		case map[string]any, []any:
			// Per-request arrays and nested details are not metrics;
			// percentiles_<kind>_ms holds a distribution.
			if strings.HasPrefix(key, "percentiles_") {
				if err := setServePercentiles(&res, key, v); err != nil {
					return nil, err
				}
			}
			if key == "spec_decode_per_position_acceptance_rates" {
				if err := setPerPositionRates(&res, raw, v); err != nil {
					return nil, err
				}
			}
			continue
		case string:
			if IsAbsent(x) {
				continue
			}
		}
		name := serveMetricName(key)
		if name == "" {
			continue
		}
		f, isNum := Num(v)
		_, isStr := v.(string)
		if isStr && !docIsNumber(v) && !metric.Get(name).Known {
			// A string that is not a known metric: --metadata KEY=VALUE.
			if lk := metric.Sanitize(key); lk != "" {
				res.SetLabel(lk, v.(string))
			}
			continue
		}
		if !isNum {
			return nil, docNotNumber(raw, v)
		}
		if key == "rtfx" && f == 0 {
			continue // 0 means "not an ASR benchmark", not a measurement
		}
		res.Set(name, f)
	}
	return []Result{res}, nil
}

// serveMetricName maps a result key to a metric name: SGLang's
// mean_e2e_latency_ms is mean_e2el_ms, its total_throughput is
// total_token_throughput; vLLM's keys are canonical already.
func serveMetricName(key string) string {
	if strings.HasSuffix(key, "_e2e_latency_ms") {
		key = strings.TrimSuffix(key, "_e2e_latency_ms") + "_e2el_ms"
	}
	if key == "total_throughput" {
		return "total_token_throughput"
	}
	return metric.Sanitize(key)
}

// setPerPositionRates reads vLLM's spec_decode_per_position_acceptance_rates,
// a list of fractions, as spec_decode_acceptance_rate_pos<i> in percent:
// the numbers `vllm bench serve` prints under "Per-position acceptance (%)".
func setPerPositionRates(res *Result, key string, v any) error {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	for i, e := range l {
		f, ok := Num(e)
		if !ok {
			if s, isStr := e.(string); e == nil || isStr && IsAbsent(s) {
				continue
			}
			return fmt.Errorf("%q[%d] is %s, not a number", key, i, docDescribe(e))
		}
		res.Set("spec_decode_acceptance_rate_pos"+strconv.Itoa(i), f*100)
	}
	return nil
}

// setServePercentiles reads percentiles_<kind>_ms written as a map
// {"p99": v} or as a list of [percentile, value] pairs.
func setServePercentiles(res *Result, key string, v any) error {
	kind := strings.TrimSuffix(strings.TrimPrefix(key, "percentiles_"), "_ms")
	if kind == "e2e_latency" {
		kind = "e2el"
	}
	kind = metric.Sanitize(kind)
	if kind == "" {
		return nil
	}
	name := func(stat string) string { return stat + "_" + kind + "_ms" }
	switch x := v.(type) {
	case map[string]any:
		return docSetStats(res, key, x, 1, name)
	case []any:
		for i, e := range x {
			pair, ok := e.([]any)
			if !ok || len(pair) != 2 {
				return fmt.Errorf("%q[%d] is %s, not a [percentile, value] pair", key, i, docDescribe(e))
			}
			p, okP := Num(pair[0])
			val, okV := Num(pair[1])
			if !okP || !okV || p <= 0 || p >= 100 {
				return fmt.Errorf("%q[%d] is [%s, %s], not a [percentile, value] pair of numbers", key, i, docDescribe(pair[0]), docDescribe(pair[1]))
			}
			res.Set(name(metric.Percentile(p)), val)
		}
	}
	return nil
}

// nightlyColumns maps the display columns of vLLM's and vllm-ascend's
// convert-results-json-to-markdown scripts to metric names. vLLM labels
// median_tpot_ms and p99_tpot_ms just "Median" and "P99"; vllm-ascend's
// "TTFT (ms)", "TPOT (ms)" and "ITL (ms)" are medians.
var nightlyColumns = map[string]string{
	"# of req.": "completed", "Num of reqs": "completed",
	"Tput (req/s)":        "request_throughput",
	"Output Tput (tok/s)": "output_throughput",
	"Total Tput (tok/s)":  "total_token_throughput", "Total Token Tput (tok/s)": "total_token_throughput",
	"Tput (tok/s)":       "total_token_throughput",
	"Total input tokens": "total_input_tokens", "Total output tokens": "total_output_tokens",
	"Median": "median_tpot_ms", "P99": "p99_tpot_ms",
	"Mean latency (ms)": "mean_e2el_ms", "Median latency (ms)": "median_e2el_ms", "P99 latency (ms)": "p99_e2el_ms",
	"Elapsed time (s)":  "duration",
	"Total # of tokens": "total_num_tokens", "Total num of tokens": "total_num_tokens",
	"TTFT (ms)": "median_ttft_ms", "TPOT (ms)": "median_tpot_ms", "ITL (ms)": "median_itl_ms",
}

var nightlyLabels = map[string]string{"GPU": "gpu", "Request rate (req/s)": "request_rate", "Test name": ""}

// gpuLabel writes the nightly scripts' gpu_type ("H100\nH100", one line
// per device as nvidia-smi lists them) as their tables do: "2xH100".
func gpuLabel(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) < 2 {
		return s
	}
	return strconv.Itoa(len(lines)) + "x" + strings.TrimSpace(lines[0])
}

func isNightlyRow(obj map[string]any) bool {
	if _, ok := docStr(obj, "Test name"); !ok {
		return false
	}
	for k, v := range obj {
		if _, ok := nightlyColumns[k]; ok && docIsNumber(v) {
			return true
		}
		if _, ok := metric.Lookup(k); ok && docIsNumber(v) {
			return true
		}
	}
	return false
}

func convertNightlyRow(obj map[string]any) ([]Result, error) {
	res := NewResult("vllm-json", 0)
	name, ok := docStr(obj, "Test name")
	if !ok {
		return nil, fmt.Errorf("nightly results row with keys %s has no \"Test name\"", docKeys(obj))
	}
	res.Name = name
	for _, col := range docSortedKeys(obj) {
		v, present := docField(obj, col)
		if !present {
			continue
		}
		if lbl, ok := nightlyLabels[col]; ok {
			if s, ok := Str(v); ok && lbl != "" {
				if lbl == "gpu" {
					s = gpuLabel(s)
				}
				res.SetLabel(lbl, s)
			}
			continue
		}
		mname, known := nightlyColumns[col]
		if !known {
			if in, ok := metric.Lookup(col); ok {
				mname, known = in.Name, true
			}
		}
		f, isNum := Num(v)
		if !known {
			switch {
			case docIsNumber(v):
				if n := metric.Sanitize(col); n != "" {
					res.Set(n, f)
				}
			case !isNum:
				if s, ok := Str(v); ok {
					if lk := metric.Sanitize(col); lk != "" {
						res.SetLabel(lk, s)
					}
				}
			}
			continue
		}
		if !isNum {
			return nil, docNotNumber(col, v)
		}
		res.Set(mname, f)
	}
	return []Result{res}, nil
}

var nightlyTables = []string{"latency", "throughput", "serving"}

// isNightlyColumns recognises the column-oriented document of the nightly
// converters: {"latency": {col: {row: v}}, "throughput": ..., "serving": ...}.
func isNightlyColumns(obj map[string]any) bool {
	if len(obj) == 0 {
		return false
	}
	found := false
	for k, v := range obj {
		known := false
		for _, t := range nightlyTables {
			known = known || k == t
		}
		if !known {
			return false
		}
		table, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, c := range []string{"Test name", "test_name"} {
			if _, ok := table[c].(map[string]any); ok {
				found = true
			}
		}
	}
	return found
}

func convertNightlyColumns(obj map[string]any) ([]Result, error) {
	var out []Result
	for _, t := range nightlyTables {
		table, ok := obj[t].(map[string]any)
		if !ok {
			continue
		}
		rows := map[string]map[string]any{}
		for col, cells := range table {
			cm, ok := cells.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s column %q is %s, not an object of row: value", t, col, docDescribe(cells))
			}
			for idx, v := range cm {
				if rows[idx] == nil {
					rows[idx] = map[string]any{}
				}
				rows[idx][col] = v
			}
		}
		idxs := docSortedKeys(rows)
		sort.SliceStable(idxs, func(i, j int) bool {
			a, errA := strconv.Atoi(idxs[i])
			b, errB := strconv.Atoi(idxs[j])
			if errA != nil || errB != nil {
				return idxs[i] < idxs[j]
			}
			return a < b
		})
		for _, idx := range idxs {
			row := rows[idx]
			var res []Result
			var err error
			switch {
			case isNightlyRow(row):
				res, err = convertNightlyRow(row)
			case t == "latency":
				res, err = convertVLLMLatency("vllm-json", row)
			case t == "throughput":
				res, err = convertVLLMThroughput("vllm-json", row)
			default:
				res, err = convertServe("vllm-json", row)
			}
			if err != nil {
				return nil, fmt.Errorf("%s row %s: %w", t, idx, err)
			}
			out = append(out, res...)
		}
	}
	return out, nil
}

func matchVLLMThroughput(obj map[string]any) bool {
	if _, ok := obj["Test name"]; ok {
		return false
	}
	return docIsNumber(obj["requests_per_second"]) && (docIsNumber(obj["elapsed_time"]) || docIsNumber(obj["tokens_per_second"]))
}

// vllmThroughputKeys maps `vllm bench throughput` keys to metric names.
var vllmThroughputKeys = map[string]string{
	"elapsed_time": "duration", "requests_per_second": "request_throughput",
	"tokens_per_second": "total_token_throughput", "output_tokens_per_second": "output_throughput",
	"total_num_tokens": "total_num_tokens", "num_requests": "completed",
	"total_output_tokens": "total_output_tokens", "total_prompt_tokens": "total_input_tokens",
	"total_input_tokens": "total_input_tokens",
}

// vllmDocLabels are the labels the benchmark scripts add to vLLM's result
// files (vllm-ascend's jq adds model_name; the nightly scripts merge
// gpu_type and the commands).
var vllmDocLabels = map[string]string{
	"model_name": "model", "model": "model", "model_id": "model", "gpu_type": "gpu",
	"test_name": "", "client_command": "", "server_command": "", "latencies": "",
}

func convertVLLMThroughput(format string, obj map[string]any) ([]Result, error) {
	if !docIsNumber(obj["requests_per_second"]) && !docIsNumber(obj["elapsed_time"]) {
		return nil, fmt.Errorf("JSON object with keys %s is not a `vllm bench throughput` result: it has no number \"requests_per_second\" or \"elapsed_time\"", docKeys(obj))
	}
	res := NewResult(format, 0)
	if s, ok := docStr(obj, "test_name"); ok {
		res.Name = s
	}
	for _, k := range docSortedKeys(obj) {
		v, present := docField(obj, k)
		if !present {
			continue
		}
		if k == "num_requests" {
			if s, ok := Str(v); ok {
				res.SetLabel("num_prompts", s)
			}
		}
		if err := setDocValue(&res, k, v, vllmThroughputKeys[k], 1); err != nil {
			return nil, err
		}
	}
	return []Result{res}, nil
}

func matchVLLMLatency(obj map[string]any) bool {
	if !docIsNumber(obj["avg_latency"]) {
		return false
	}
	_, pct := obj["percentiles"].(map[string]any)
	_, lat := obj["latencies"].([]any)
	return pct || lat
}

// convertVLLMLatency reads `vllm bench latency --output-json`, whose
// values are seconds. The nightly converters rewrite avg_latency in
// milliseconds and add P10..P99 in milliseconds; their P50 key tells.
func convertVLLMLatency(format string, obj map[string]any) ([]Result, error) {
	if !docIsNumber(obj["avg_latency"]) {
		return nil, fmt.Errorf("JSON object with keys %s is not a `vllm bench latency` result: it has no number \"avg_latency\"", docKeys(obj))
	}
	res := NewResult(format, 0)
	if s, ok := docStr(obj, "test_name"); ok {
		res.Name = s
	}
	_, processed := docField(obj, "P50")
	avgScale := 1e3
	if processed {
		avgScale = 1
	}
	pct, hasPct := obj["percentiles"].(map[string]any)
	for _, k := range docSortedKeys(obj) {
		v, present := docField(obj, k)
		if !present {
			continue
		}
		var err error
		switch {
		case k == "percentiles":
			if !hasPct {
				err = fmt.Errorf("%q is %s, not an object of percentile: seconds", k, docDescribe(v))
				break
			}
			stats := make(map[string]any, len(pct))
			for _, p := range docSortedKeys(pct) {
				x := pct[p]
				if _, ok := Num(x); !ok && x != nil {
					err = docNotNumber("percentiles."+p, x)
					break
				}
				stats["p"+strings.TrimPrefix(strings.ToLower(p), "p")] = x
			}
			if err != nil {
				break
			}
			err = docSetStats(&res, k, stats, 1e3, docLatencyName("e2el"))
		case k == "avg_latency":
			err = setDocValue(&res, k, v, "mean_e2el_ms", avgScale)
		case k == "std_latency":
			err = setDocValue(&res, k, v, "std_e2el_ms", 1e3)
		case processed && len(k) > 1 && k[0] == 'P' && docIsNumber(v):
			if hasPct {
				continue // the same percentiles, already read in seconds
			}
			if w, ok := docStatWord(k); ok {
				err = setDocValue(&res, k, v, metric.Latency(w, "e2el"), 1)
			}
		default:
			err = setDocValue(&res, k, v, "", 1)
		}
		if err != nil {
			return nil, err
		}
	}
	return []Result{res}, nil
}

// setDocValue stores one value of a flat result object: under name (scaled)
// when the format knows the key, as a label for known label keys and for
// strings, as a sanitized metric for other numbers. Lists and objects are
// skipped.
func setDocValue(res *Result, key string, v any, name string, scale float64) error {
	if lbl, ok := vllmDocLabels[key]; ok {
		if s, ok := docLabel(v); ok && lbl != "" {
			if lbl == "gpu" {
				s = gpuLabel(s)
			}
			if _, set := res.Labels[lbl]; !set {
				res.SetLabel(lbl, s)
			}
		}
		return nil
	}
	switch v.(type) {
	case map[string]any, []any, bool, nil:
		return nil
	}
	f, isNum := Num(v)
	if name == "" {
		if _, isStr := v.(string); isStr {
			if lk := metric.Sanitize(key); lk != "" {
				res.SetLabel(lk, v.(string))
			}
			return nil
		}
		name = metric.Sanitize(key)
		if name == "" {
			return nil
		}
	}
	if !isNum {
		return docNotNumber(key, v)
	}
	docSetScaled(res, name, f, scale)
	return nil
}
