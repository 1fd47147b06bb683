package ingest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
)

func TestGoBench(t *testing.T) {
	ingestPkg := map[string]string{"goos": "linux", "goarch": "amd64", "pkg": "github.com/perfgate/perfgate/ingest", "cpu": "AMD EPYC 7B13", "procs": "2"}
	tok := map[string]string{"pkg": "example.com/tok", "procs": "4", "cpu": "AMD EPYC 9654 96-Core Processor"}
	encode := func(line int, ns float64) gridWant {
		return gridWant{name: "BenchmarkEncode", line: line, metrics: map[string]float64{"ns_per_op": ns, "iterations": 1475032}, labels: tok}
	}
	decode := func(line int, ns float64) gridWant {
		return gridWant{name: "BenchmarkDecode", line: line, metrics: map[string]float64{"ns_per_op": ns, "iterations": 985120}, labels: tok}
	}
	tests := []struct {
		file    string
		want    []gridWant
		errLine int
		errText string
	}{
		// -benchmem: values stay in the units go test printed (ns/op, not
		// benchfmt's sec/op; MB/s, not B/s).
		{file: "benchmem.txt", want: []gridWant{
			{name: "BenchmarkConsoleTables/auto", line: 5, labels: ingestPkg, metrics: map[string]float64{
				"iterations": 3, "ns_per_op": 57876563, "mb_per_s": 145.66, "b_per_op": 9123456, "allocs_per_op": 120345}},
			{name: "BenchmarkConsoleTables/mindie", line: 6, labels: ingestPkg, metrics: map[string]float64{"ns_per_op": 31664568, "mb_per_s": 266.24}},
			{name: "BenchmarkParseQuantity", line: 7, labels: ingestPkg, metrics: map[string]float64{
				"iterations": 1958121, "ns_per_op": 612.3, "b_per_op": 48, "allocs_per_op": 2}, absent: []string{"mb_per_s", "sec_per_op"}},
		}},
		// b.ReportMetric units.
		{file: "custom_units.txt", want: []gridWant{
			{name: "BenchmarkDecode/batch=8", line: 5, labels: map[string]string{"goos": "darwin", "goarch": "arm64", "procs": "12", "cpu": "Apple M2 Pro"},
				metrics: map[string]float64{"ns_per_op": 5480211, "tokens_per_s": 1459, "p99_ms": 12.5, "hit_pct": 97.25, "us_per_token": 3.2}},
			{name: "BenchmarkDecode/batch=32", line: 6, metrics: map[string]float64{"ns_per_op": 19811004, "tokens_per_s": 1615, "p99_ms": 41, "hit_pct": 98.1, "us_per_token": 2.9}},
		}},
		// Several packages: each result carries its own package's configuration.
		{file: "multi_pkg.txt", want: []gridWant{
			{name: "BenchmarkMannWhitney", line: 6, metrics: map[string]float64{"ns_per_op": 24110}, labels: map[string]string{"pkg": "github.com/perfgate/perfgate/gate", "cpu": "Intel(R) Xeon(R) Platinum 8480+", "procs": "8"}},
			{name: "BenchmarkRobustZ", line: 7, metrics: map[string]float64{"ns_per_op": 2901}, labels: map[string]string{"pkg": "github.com/perfgate/perfgate/gate"}},
			{name: "BenchmarkIngest", line: 14, metrics: map[string]float64{"ns_per_op": 740115, "b_per_op": 131072, "allocs_per_op": 410}, labels: map[string]string{"pkg": "github.com/perfgate/perfgate/store"}},
		}},
		// -count 5: every repetition is its own result, in file order.
		{file: "count5.txt", want: []gridWant{
			encode(5, 812.1), encode(6, 809.4), encode(7, 815.0), encode(8, 811.7), encode(9, 808.9),
			decode(10, 1210), decode(11, 1198), decode(12, 1225), decode(13, 1204), decode(14, 1201),
		}},
		// go test -v: test lines, the bare name line and --- BENCH logs are skipped.
		{file: "verbose.txt", want: []gridWant{
			{name: "BenchmarkPut", line: 8, metrics: map[string]float64{"ns_per_op": 1043}, labels: map[string]string{"procs": "16", "pkg": "example.com/kv"}},
			{name: "BenchmarkGet/hit", line: 11, metrics: map[string]float64{"ns_per_op": 238.4}},
			{name: "BenchmarkGet/miss", line: 12, metrics: map[string]float64{"ns_per_op": 168.9}},
		}},
		// GOMAXPROCS=1 prints no -N suffix: no procs label.
		{file: "gomaxprocs1.txt", want: []gridWant{
			{name: "BenchmarkScan/lines=1000", line: 4, metrics: map[string]float64{"ns_per_op": 129012, "mb_per_s": 77.51}, labels: map[string]string{"procs": "", "cpu": ""}},
			{name: "BenchmarkScan/lines=100000", line: 5, metrics: map[string]float64{"ns_per_op": 13120344, "mb_per_s": 76.22}},
		}},
		// NaN and Inf are dropped with a warning, never stored.
		{file: "nonfinite.txt", want: []gridWant{
			{name: "BenchmarkRatio", line: 3, metrics: map[string]float64{"b_per_op": 12}, absent: []string{"ns_per_op"}, warning: "ns_per_op is NaN"},
			{name: "BenchmarkRate", line: 4, metrics: map[string]float64{"ns_per_op": 500}, absent: []string{"mb_per_s"}, warning: "mb_per_s is +Inf"},
		}},
		// A benchmark that writes to stdout splits its result line: its
		// numbers are joined back to its name (issue 26, item 6), at the
		// line of the numbers.
		{file: "stdout_interleaved.txt", want: []gridWant{
			{name: "BenchmarkChatty", line: 5, metrics: map[string]float64{"ns_per_op": 123456, "iterations": 1000},
				labels: map[string]string{"procs": "8", "pkg": "example.com/chatty"}},
		}},
		{file: "pgo_blog_stdout_between.txt", want: []gridWant{
			{name: "BenchmarkFindFactors", line: 18, metrics: map[string]float64{"ns_per_op": 32507910, "iterations": 681},
				labels: map[string]string{"pkg": "fermants-factorization", "goos": "linux", "procs": ""}},
		}},
		// Issue 26, item 6: indented by a tab, in a reStructuredText
		// literal block.
		{file: "rst_literal_block.rst", want: []gridWant{
			{name: "BenchmarkConsoleTables/auto", line: 10, labels: ingestPkg, metrics: map[string]float64{
				"iterations": 3, "ns_per_op": 57876563, "mb_per_s": 145.66, "b_per_op": 9123456, "allocs_per_op": 120345}},
			{name: "BenchmarkConsoleTables/mindie", line: 11, labels: ingestPkg, metrics: map[string]float64{"ns_per_op": 31664568}},
			{name: "BenchmarkParseQuantity", line: 12, labels: ingestPkg, metrics: map[string]float64{"ns_per_op": 612.3}},
		}},
		// Issue 12, item 7: bad lines are warnings on the next (or last)
		// result, as benchstat reports them; only input without any
		// result is an error (stdout_interleaved above).
		{file: "truncated.txt", want: []gridWant{
			{name: "BenchmarkA", line: 4, metrics: map[string]float64{"ns_per_op": 1234}, warning: "line 5: invalid Go benchmark line: missing measurements; left out"},
		}},
		{file: "bad_lines.txt", want: []gridWant{
			{name: "BenchmarkPut", line: 7, metrics: map[string]float64{"ns_per_op": 1043, "b_per_op": 128, "allocs_per_op": 2},
				labels: map[string]string{"pkg": "example.com/kv", "procs": "8"}, warning: "line 6: invalid Go benchmark line:"},
			{name: "BenchmarkGet", line: 10, metrics: map[string]float64{"ns_per_op": 238.4},
				warning: "line 8: benchmark BenchmarkFail-8 failed (--- FAIL) and has no result; left out"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "gobench", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"", GoBenchFormat} {
				res, err := parseString(t, string(data), tt.file, format)
				if tt.errLine > 0 {
					var pe *Error
					if !errors.As(err, &pe) || pe.Line != tt.errLine || !strings.Contains(pe.Msg, tt.errText) {
						t.Fatalf("--format %q: got %v, want an error at line %d mentioning %q", format, err, tt.errLine, tt.errText)
					}
					if !strings.HasPrefix(pe.Error(), tt.file+":") {
						t.Errorf("error does not name the file: %v", pe)
					}
					continue
				}
				if err != nil {
					t.Fatalf("--format %q: %v", format, err)
				}
				if len(res) != len(tt.want) {
					t.Fatalf("--format %q: %d results, want %d", format, len(res), len(tt.want))
				}
				for i, w := range tt.want {
					if res[i].Format != GoBenchFormat {
						t.Errorf("result %d: format %q", i, res[i].Format)
					}
					checkGridWant(t, res[i], w)
				}
			}
		})
	}
}

// TestGoBenchUnitNames checks the metric names of go test units, and that
// package metric infers the direction a gate needs from them.
func TestGoBenchUnitNames(t *testing.T) {
	tests := []struct {
		unit, name string
		dir        metric.Direction
	}{
		{"ns/op", "ns_per_op", metric.LowerIsBetter},
		{"B/op", "b_per_op", metric.LowerIsBetter},
		{"allocs/op", "allocs_per_op", metric.LowerIsBetter},
		{"MB/s", "mb_per_s", metric.HigherIsBetter},
		{"tokens/s", "tokens_per_s", metric.HigherIsBetter},
		{"µs/token", "us_per_token", metric.Unknown},
		{"hit%", "hit_pct", metric.Unknown},
		{"%", "pct", metric.Unknown},
		{"p99-ms", "p99_ms", metric.LowerIsBetter},
		{"---", "value", metric.Unknown},
	}
	for _, tt := range tests {
		name := goUnitName(tt.unit)
		if name != tt.name {
			t.Errorf("goUnitName(%q) = %q, want %q", tt.unit, name, tt.name)
		}
		if d := metric.Get(name).Direction; d != tt.dir {
			t.Errorf("direction of %s = %v, want %v", name, d, tt.dir)
		}
	}
}

func FuzzGoBench(f *testing.F) {
	var seeds []string
	for _, name := range []string{"benchmem.txt", "custom_units.txt", "verbose.txt", "truncated.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", "gobench", name))
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(data))
	}
	seeds = append(seeds,
		"goos: linux\npkg: x\nBenchmarkX-8 10 1 ns/op 2 %\n",
		"BenchmarkA 1 NaN ns/op\nBenchmarkB-1 2 3e400 x/y\n",
		"Unit ns/op assume=exact\nBenchmarkA 1 2 ns/op\n")
	fuzzFormat(f, GoBenchFormat, seeds...)
}
