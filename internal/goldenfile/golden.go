// Package goldenfile compares what a test produced with a golden file in the
// package's testdata, and rewrites the file when the test binary runs with
// -update (go test ./PKG -update, after reviewing the difference). Every
// report format of perfgate (gate, bisect, the export, the CLI) is held to
// golden files through it. It is imported by tests only.
package goldenfile

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Check compares got with the file at path, or writes got there with
// -update. A difference names the first differing line and how to accept
// the new output.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run '%s' -update creates it)", err, t.Name())
		return
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(end of file)"
	}
	t.Errorf("%s differs from line %d (review, then go test -run '%s' -update to accept):\n got: %s\nwant: %s\n--- got in full:\n%s",
		path, i+1, t.Name(), line(g), line(w), got)
}
