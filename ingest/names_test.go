package ingest

import (
	"errors"
	"strings"
	"testing"
)

// Source names that normalise to one metric name are an error naming
// both (issue 11: a-b/op, a_b/op and A.B/op silently kept one value),
// and a name that normalises to nothing is a positioned error
// ({"metrics":{"":0}} failed the whole ingest in the store instead).
func TestMetricNameClashes(t *testing.T) {
	tests := []struct {
		name, in string
		line     int
		want     string // in the error; "" for success
	}{
		{"go units a-b/op and a_b/op", "goos: linux\nBenchmarkX-8 100 5 ns/op 3 a-b/op 4 a_b/op\n", 2,
			`unit "a-b/op" and unit "a_b/op" both become metric "a_b_per_op"`},
		{"go units A.B/op and a-b/op", "goos: linux\nBenchmarkOK 1 2 ns/op\nBenchmarkX 100 5 ns/op 3 A.B/op 4 a-b/op\n", 3,
			`unit "A.B/op" and unit "a-b/op" both become metric "a_b_per_op"`},
		{"go unit named iterations", "goos: linux\nBenchmarkX 100 5 ns/op 3 iterations\n", 2,
			`the iteration count and unit "iterations" both become metric "iterations"`},
		{"go units that stay distinct", "goos: linux\nBenchmarkX 100 5 ns/op 3 a-b/op 4 a-c/op\n", 0, ""},
		{"generic keys a-b and a_b", "\n" + `{"metrics":{"a-b":1,"a_b":2}}`, 2,
			`metric "a-b" and metric "a_b" both become metric "a_b"`},
		{"generic label and canonical name", `{"metrics":{"Mean TTFT (ms)":1,"mean_ttft_ms":2}}`, 1,
			`metric "Mean TTFT (ms)" and metric "mean_ttft_ms" both become metric "mean_ttft_ms"`},
		{"generic empty name", `{"metrics":{"":0}}`, 1, `metric name "" has no letter or digit`},
		{"generic name of punctuation", `{"metrics":{"a":1,"!!":0}}`, 1, `metric name "!!" has no letter or digit`},
		{"yaml empty name", "name: b\nmetrics:\n  \"\": 1\n", 1, `metric name "" has no letter or digit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := parseString(t, tt.in, "in.txt", "")
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(res) != 1 || len(res[0].Metrics) != 4 {
					t.Fatalf("got %+v, want one result of 4 metrics", res)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Line != tt.line || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "in.txt:") {
				t.Fatalf("got %v (results %+v), want an error at in.txt:%d saying %s", err, res, tt.line, tt.want)
			}
		})
	}
}
