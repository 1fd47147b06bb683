package ingest

import (
	"strings"
	"testing"
)

func TestGeneric(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]float64
		labels   map[string]string
		wantErr  bool
	}{
		{"canonical and label names", `{"name":"b","metrics":{"mean_ttft_ms":12.5,"Output token throughput (tok/s)":300}}`,
			map[string]float64{"mean_ttft_ms": 12.5, "output_throughput": 300}, nil, false},
		{"null is absent", `{"metrics":{"failed":null,"completed":"N/A","duration":"12"}}`,
			map[string]float64{"duration": 12}, nil, false},
		{"unknown kept sanitized", `{"metrics":{"Cache Hit Rate":0.5}}`,
			map[string]float64{"cache_hit_rate": 0.5}, nil, false},
		{"labels normalized", `{"metrics":{"x":1},"labels":{"request_rate":"10.00","model":"llama"}}`,
			map[string]float64{"x": 1}, map[string]string{"request_rate": "10", "model": "llama"}, false},
		{"bare infinity dropped", `{"metrics":{"x":Infinity,"y":2}}`, map[string]float64{"y": 2}, nil, false},
		{"non-number is an error", `{"metrics":{"x":"fast"}}`, nil, nil, true},
		{"overflow is an error", `{"metrics":{"x":1e999}}`, nil, nil, true},
		{"yaml", "metrics:\n  mean_ttft_ms: 3\nlabels:\n  model: m\n", map[string]float64{"mean_ttft_ms": 3}, map[string]string{"model": "m"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := parseString(t, tt.in, "in.json", "")
			if tt.wantErr {
				if err == nil {
					t.Fatalf("want error, got %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 {
				t.Fatalf("got %d results", len(res))
			}
			if len(res[0].Metrics) != len(tt.want) {
				t.Errorf("metrics = %v, want %v", res[0].Metrics, tt.want)
			}
			for k, v := range tt.want {
				wantMetric(t, res[0], k, v)
			}
			for k, v := range tt.labels {
				if res[0].Labels[k] != v {
					t.Errorf("label %s = %q, want %q", k, res[0].Labels[k], v)
				}
			}
		})
	}
}

// An object of only the generic format's keys is claimed by it, so a bad
// value gets a precise message instead of "matches no known format".
func TestGenericPreciseError(t *testing.T) {
	_, err := parseString(t, `{"name":"b","metrics":{"x_ms":"fast","y":2}}`, "in.json", "")
	if err == nil || !strings.Contains(err.Error(), `metric "x_ms" has value fast`) {
		t.Errorf("error = %v, want one naming metric \"x_ms\"", err)
	}
}

func TestUnrecognized(t *testing.T) {
	_, err := parseString(t, "hello\nworld\n", "notes.txt", "")
	if err == nil {
		t.Fatal("want error")
	}
	if got := err.Error(); got[:10] != "notes.txt:" {
		t.Errorf("error does not name the file: %s", got)
	}
}

func FuzzGeneric(f *testing.F) {
	fuzzFormat(f, "generic", `{"metrics":{"a":1}}`, `{"metrics":{"a":Infinity}}`, "metrics:\n  a: 1\n")
}
