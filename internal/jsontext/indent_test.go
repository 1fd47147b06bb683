package jsontext

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// indentCases are values whose encoding/json output covers every kind of
// punctuation AppendIndent handles: nested and empty objects and arrays,
// strings holding punctuation, quotes and backslashes, numbers, literals.
func indentCases() []any {
	type inner struct {
		A []int           `json:"a"`
		B map[string]any  `json:"b,omitempty"`
		C *float64        `json:"c"`
		D string          `json:"d"`
		E []struct{}      `json:"e"`
		F map[string]bool `json:"f"`
	}
	pi := math.Pi
	return []any{
		nil, true, 1.5e-300, "", `a "quoted" \ string with {[:,]} and \u2028`, []int{}, map[string]int{},
		[]any{[]any{}, map[string]any{}, []any{[]any{[]any{}}}, 1, "x,y", nil},
		inner{A: []int{1, 2, 3}, B: map[string]any{"k:}": []string{"v]", "w\"", `\`}, "n": nil}, C: &pi, D: "<&>", E: []struct{}{{}, {}}, F: map[string]bool{}},
		map[string]any{"deep": map[string]any{"er": map[string]any{"est": []any{map[string]any{"": ""}}}}},
		"\x00\x1f\t\n bad \xff utf8",
	}
}

// AppendIndent must write what an Encoder with SetIndent("", indent) and
// HTML escaping off writes.
func TestAppendIndentMatchesEncodingJSON(t *testing.T) {
	for _, v := range indentCases() {
		for _, indent := range []string{"  ", "\t"} {
			var compact, want bytes.Buffer
			enc := json.NewEncoder(&compact)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			ienc := json.NewEncoder(&want)
			ienc.SetEscapeHTML(false)
			ienc.SetIndent("", indent)
			if err := ienc.Encode(v); err != nil {
				t.Fatal(err)
			}
			if got := AppendIndent([]byte("keep:"), compact.Bytes(), indent); string(got) != "keep:"+want.String() {
				t.Errorf("AppendIndent(%s, %q):\n got %q\nwant %q", compact.Bytes(), indent, got, "keep:"+want.String())
			}
		}
	}
}

// On any valid JSON encoding/json compacts, AppendIndent agrees with
// json.Indent; on anything else it returns without panicking.
func FuzzAppendIndent(f *testing.F) {
	for _, v := range indentCases() {
		b, _ := json.Marshal(v)
		f.Add(b)
	}
	f.Add([]byte(`{"a":"unterminated`))
	f.Add([]byte(`"trailing backslash\`))
	f.Fuzz(func(t *testing.T, src []byte) {
		AppendIndent(nil, src, "  ") // must not panic
		var compact bytes.Buffer
		if json.Compact(&compact, src) != nil {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := AppendIndent(nil, compact.Bytes(), "  "); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("AppendIndent(%q):\n got %q\nwant %q", compact.Bytes(), got, want.Bytes())
		}
	})
}
