package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A JSON document larger than --max-doc-size (PERFGATE_MAX_DOC_SIZE) is
// refused with an error naming the file, the limit and how to raise it,
// before it is decoded (issue 11: a 1 GiB JSON file took 5.3 GB).
func TestMaxDocSize(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "result.json")
	doc := `{"name":"b","metrics":{"mean_ttft_ms":12},"pad":"` + strings.Repeat("x", 3<<20) + `"}`
	if err := os.WriteFile(big, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{big + ": the json document is larger than 1MiB", "--max-doc-size", "PERFGATE_MAX_DOC_SIZE"}

	_, stderr, code := runCLI(t, "", "parse", "--max-doc-size", "1MiB", big)
	if code != 2 {
		t.Fatalf("parse --max-doc-size 1MiB of a 3 MiB document: exit %d, want 2; %s", code, stderr)
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}

	t.Setenv("PERFGATE_MAX_DOC_SIZE", "1MiB")
	if _, stderr, code := runCLI(t, "", "parse", big); code != 2 || !strings.Contains(stderr, want[0]) {
		t.Errorf("PERFGATE_MAX_DOC_SIZE=1MiB: exit %d, stderr %q", code, stderr)
	}
	if out, stderr, code := runCLI(t, "", "parse", "--max-doc-size", "4MiB", big); code != 0 || !strings.Contains(out, "generic") {
		t.Errorf("--max-doc-size 4MiB (over the environment's 1MiB): exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, "", "parse", "--max-doc-size", "lots", big); code != 2 || !strings.Contains(stderr, `--max-doc-size (or PERFGATE_MAX_DOC_SIZE) "lots"`) {
		t.Errorf("--max-doc-size lots: exit %d, stderr %q", code, stderr)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1024", 1024}, {"512MiB", 512 << 20}, {"2gib", 2 << 30}, {"1 GB", 1e9}, {"10KB", 10e3}, {"3B", 3},
		{"", -1}, {"0", -1}, {"-1", -1}, {"1.5GiB", -1}, {"1TiB", -1}, {"99999999999999999999", -1},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if tt.want < 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %d, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}
