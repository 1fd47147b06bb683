package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
)

// AppendString must write what an encoding/json Encoder with HTML
// escaping off writes for every string, valid UTF-8 or not.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		"", "plain", `quote " and \ backslash`, "tab\tnew\nline\rcr", "\b\f\x00\x01\x1f\x7f",
		"<html> & </html>", "μs ✓ 多模态", "\u2028\u2029", "bad \xff utf8 \xc3", "\xed\xa0\x80",
	}
	for _, s := range cases {
		var want strings.Builder
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(AppendString(nil, s)) + "\n"; got != want.String() {
			t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got, want.String())
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a\"b\\c\n\xff\u2028")
	f.Fuzz(func(t *testing.T, s string) {
		var want strings.Builder
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(AppendString(nil, s)) + "\n"; got != want.String() {
			t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got, want.String())
		}
	})
}
