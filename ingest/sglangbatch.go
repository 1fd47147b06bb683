package ingest

import (
	"fmt"
	"strings"
)

// SGLang's bench_one_batch_server (python -m sglang.bench_one_batch_server
// --batch-size 1 16 --input-len 1024 --output-len 8) times one batch per
// combination against a server and appends a line to --result-filename
// (result.jsonl):
//
//	{"run_name": "default", "batch_size": 16, "input_len": 1024,
//	 "output_len": 1024, "latency": 21.3902, "output_throughput": 784.36,
//	 "overall_throughput": 1531.8, "last_gen_throughput": 868.93}
//
// Each line is one result, named after its run_name (unnamed when it is
// the default, "default"). Mapping: latency, the batch's end-to-end time
// in seconds, -> mean_e2el_ms (every request of the batch ends with it,
// as vllm bench latency's avg_latency is mean_e2el_ms); ttft (newer
// versions: the TTFT of the batch's last request, in seconds) ->
// max_ttft_ms; output_throughput -> output_throughput;
// overall_throughput -> total_token_throughput; input_throughput ->
// input_throughput; last_gen_throughput (the server's last decode
// throughput) keeps its name; acc_length ->
// spec_decode_acceptance_length. batch_size, input_len and output_len are
// labels.
func init() {
	RegisterDoc(DocFormat{
		Name:    "sglang-one-batch",
		Desc:    "SGLang bench_one_batch_server result.jsonl",
		Match:   matchSGLangOneBatch,
		Convert: convertSGLangOneBatch,
	})
}

func matchSGLangOneBatch(obj map[string]any) bool {
	for _, k := range []string{"batch_size", "input_len", "output_len", "latency", "overall_throughput"} {
		if _, ok := obj[k]; !ok {
			return false
		}
	}
	return true
}

var sglangBatchValues = []struct {
	key, name string
	scale     float64
}{
	{"latency", "mean_e2el_ms", 1e3},
	{"ttft", "max_ttft_ms", 1e3},
	{"output_throughput", "output_throughput", 1},
	{"overall_throughput", "total_token_throughput", 1},
	{"input_throughput", "input_throughput", 1},
	{"last_gen_throughput", "last_gen_throughput", 1},
	{"acc_length", "spec_decode_acceptance_length", 1},
}

func convertSGLangOneBatch(obj map[string]any) ([]Result, error) {
	res := NewResult("sglang-one-batch", 0)
	for _, v := range sglangBatchValues {
		x, ok, err := docNum(obj, v.key)
		if err != nil {
			return nil, fmt.Errorf("bench_one_batch_server result: %w", err)
		}
		if ok {
			docSetScaled(&res, v.name, x, v.scale)
		}
	}
	for _, k := range []string{"batch_size", "input_len", "output_len"} {
		if v, ok := docStr(obj, k); ok {
			res.SetLabel(k, v)
		}
	}
	if n, ok := docStr(obj, "run_name"); ok && strings.TrimSpace(n) != "default" {
		res.Name = strings.TrimSpace(n)
	}
	return []Result{res}, nil
}
