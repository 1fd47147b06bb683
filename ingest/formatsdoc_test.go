package ingest

import (
	"os"
	"strings"
	"testing"
)

// TestFormatsDocumented: the package documentation's format list names
// every format --format accepts.
func TestFormatsDocumented(t *testing.T) {
	src, err := os.ReadFile("ingest.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	start := strings.Index(doc, "// # Formats\n")
	end := strings.Index(doc, "// # Repeated runs")
	if start < 0 || end < start {
		t.Fatal("the package documentation has no # Formats section before # Repeated runs")
	}
	list := strings.NewReplacer("//", " ", "\n", " ", ",", " ", ".", " ", ":", " ", "(", " ", ")", " ").Replace(doc[start:end])
	words := map[string]bool{}
	for _, w := range strings.Fields(list) {
		words[w] = true
	}
	for _, f := range Formats()[1:] {
		if !words[f] {
			t.Errorf("format %s is not in the package documentation's # Formats list", f)
		}
	}
}
