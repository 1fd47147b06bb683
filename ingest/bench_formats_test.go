package ingest

import (
	"strings"
	"testing"
)

// BenchmarkParseMLPerfLog reads ~8 MB of LoadGen summaries (the Server and
// Offline samples in turn, each after serving-log noise) in auto mode, so
// every text parser sees every line:
//
//	go test ./ingest -run '^$' -bench ParseMLPerfLog -count 3
func BenchmarkParseMLPerfLog(b *testing.B) {
	chunks := []string{readTestdata(b, "mlperf/v4.1_llama2-70b_server.txt"), readTestdata(b, "mlperf/v4.1_llama2-70b_offline.txt")}
	var sb strings.Builder
	want := 0
	for i := 0; sb.Len() < 8<<20; i++ {
		vsBenchNoise(&sb, 40, i)
		sb.WriteString(chunks[i%2])
		want++
	}
	data := sb.String()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(strings.NewReader(data), "mlperf.log", Options{})
		n := 0
		for r.Scan() {
			n++
		}
		if err := r.Err(); err != nil || n != want {
			b.Fatalf("%d results, want %d; err %v", n, want, err)
		}
	}
}

// BenchmarkParseNewDocs reads one document of each new document format
// (llm-d YAML and JSON, inference-perf, genai-bench, guidellm v2, SGLang
// bench_one_batch_server JSONL) per iteration, auto-detected: the cost of
// sniffing and matching them among every document format.
//
//	go test ./ingest -run '^$' -bench ParseNewDocs -count 3
func BenchmarkParseNewDocs(b *testing.B) {
	files := []string{
		"llm-d/br_v0_2_example_cut.yaml", "llm-d/br_v0_2_1_example_cut.json",
		"inference-perf/vllm-batch-size/stage_1_lifecycle_metrics.json", "genai-bench/mock_run_data.json",
		"guidellm/v0.7_report_v2.json", "sglang-one-batch/result.jsonl",
	}
	docs := make([]string, len(files))
	size := 0
	for i, f := range files {
		docs[i] = readTestdata(b, f)
		size += len(docs[i])
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, d := range docs {
			r := NewReader(strings.NewReader(d), files[j], Options{})
			n := 0
			for r.Scan() {
				n++
			}
			if err := r.Err(); err != nil || n == 0 {
				b.Fatalf("%s: %d results, err %v", files[j], n, err)
			}
		}
	}
}
