package journeys

import (
	"encoding/json"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The regression of every journey is made from a real file by scaling its
// Mean TTFT values by 1.10 in the file's own text, every other byte kept:
// the forms below are where the tools print it.
var ttftForms = []*regexp.Regexp{
	// vllm bench serve, benchmark_serving.py: "Mean TTFT (ms):   945.18"
	regexp.MustCompile(`(?m)^(Mean TTFT \(ms\):[ \t]+)([0-9]+(?:\.[0-9]+)?)`),
	// their JSON: "mean_ttft_ms": 50.325
	regexp.MustCompile(`("mean_ttft_ms"[ \t]*:[ \t]*)([0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)`),
	// MindIE's benchmark table: "| FirstTokenTime |  64.7768 ms |"
	regexp.MustCompile(`(\|[ \t]*FirstTokenTime[ \t]*\|[ \t]*)([0-9]+(?:\.[0-9]+)?)`),
}

// scaleTTFT returns text with every Mean TTFT value multiplied by factor,
// printed with as many decimals as it had, and how many it changed.
func scaleTTFT(text string, factor float64) (string, int) {
	n := 0
	for _, re := range ttftForms {
		text = re.ReplaceAllStringFunc(text, func(m string) string {
			sub := re.FindStringSubmatch(m)
			v, err := strconv.ParseFloat(sub[2], 64)
			if err != nil {
				return m
			}
			n++
			decimals := 0
			if _, frac, ok := strings.Cut(strings.ToLower(sub[2]), "."); ok {
				frac, _, _ = strings.Cut(frac, "e")
				decimals = len(frac)
			}
			return sub[1] + strconv.FormatFloat(v*factor, 'f', max(decimals, 2), 64)
		})
	}
	return text, n
}

// regressed writes src with its Mean TTFT 10% worse to dir, under src's
// name, and proves with perfgate parse that only Mean TTFT changed, by
// 10%, in every result.
func regressed(t *testing.T, m *machine, src, dir string) string {
	t.Helper()
	text, n := scaleTTFT(readFile(t, src), 1.10)
	if n == 0 {
		t.Fatalf("%s: no Mean TTFT to make worse", src)
	}
	dst := writeFile(t, filepath.Join(dir, filepath.Base(src)), text)
	before, after := parsed(t, m, src), parsed(t, m, dst)
	if len(before) != len(after) || len(before) == 0 {
		t.Fatalf("%s has %d results, its regression %d", src, len(before), len(after))
	}
	for i := range before {
		for k, v := range before[i] {
			w := after[i][k]
			switch {
			case k == "mean_ttft_ms" && math.Abs(w/v-1.10) > 0.001:
				t.Fatalf("%s result %d: mean_ttft_ms %v became %v, not 10%% more", src, i+1, v, w)
			case k != "mean_ttft_ms" && w != v:
				t.Fatalf("%s result %d: %s %v became %v; only Mean TTFT may change", src, i+1, k, v, w)
			}
		}
		if _, ok := before[i]["mean_ttft_ms"]; !ok {
			t.Fatalf("%s result %d has no mean_ttft_ms", src, i+1)
		}
	}
	return dst
}

// parsed is the metrics of every result perfgate parse reads in file.
func parsed(t *testing.T, m *machine, file string) []map[string]float64 {
	t.Helper()
	r := m.must(filepath.Dir(file), "parse", "-o", "json", file)
	var doc struct {
		Results []struct {
			Metrics map[string]float64 `json:"metrics"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("parse -o json %s: %v\n%s", file, err, r.stdout)
	}
	var out []map[string]float64
	for _, res := range doc.Results {
		out = append(out, res.Metrics)
	}
	return out
}

// TestScaleTTFT: the helper changes Mean TTFT alone, in each form, keeping
// the decimals and every other byte.
func TestScaleTTFT(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Mean TTFT (ms):                          945.18    \nMedian TTFT (ms):  570.38\n",
			"Mean TTFT (ms):                          1039.70    \nMedian TTFT (ms):  570.38\n"},
		{`{"median_ttft_ms": 40.1, "mean_ttft_ms": 50.32546663501307, "p99_ttft_ms": 90}`,
			`{"median_ttft_ms": 40.1, "mean_ttft_ms": 55.35801329851439, "p99_ttft_ms": 90}`},
		{"|      FirstTokenTime |      64.7768 ms |     848.3901 ms |", "|      FirstTokenTime |      71.2545 ms |     848.3901 ms |"},
		{"Mean TTFT (ms): 62\n", "Mean TTFT (ms): 68.20\n"},
	}
	for _, tt := range tests {
		got, n := scaleTTFT(tt.in, 1.10)
		if got != tt.want || n != 1 {
			t.Errorf("scaleTTFT(%q) = %q (%d changed), want %q", tt.in, got, n, tt.want)
		}
	}
	if _, n := scaleTTFT("Median TTFT (ms): 5\nmean_ttft_ms 4\n", 1.1); n != 0 {
		t.Errorf("changed %d values that are not Mean TTFT", n)
	}
}

// seedSections splits an optimisation log as scripts/demo.sh does: one
// file per "## " section, 1.md, 2.md ..., written into dir.
func seedSections(t *testing.T, log, dir string) []string {
	t.Helper()
	parts := strings.Split("\n"+readFile(t, log), "\n## ")[1:]
	if len(parts) == 0 {
		t.Fatalf("%s has no ## sections", log)
	}
	var files []string
	for i, p := range parts {
		files = append(files, writeFile(t, filepath.Join(dir, strconv.Itoa(i+1)+".md"), "## "+p+"\n"))
	}
	return files
}

// tempFile is a file in its own temporary directory.
func tempFile(t *testing.T, name, body string) string {
	t.Helper()
	return writeFile(t, filepath.Join(t.TempDir(), name), body)
}
