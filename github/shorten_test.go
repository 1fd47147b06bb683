package github

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShorten(t *testing.T) {
	const note = "\n[shortened]\n"
	rows := func(n int, cell string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString("| " + cell + " |\n")
		}
		return b.String()
	}
	tests := []struct {
		name    string
		in      string
		limit   int
		cut     bool
		closing []string // what must follow the cut text
	}{
		{"fits", "short\n", 100, false, nil},
		{"exactly at the limit", strings.Repeat("a", 1000), 1000, false, nil},
		{"table", rows(200, "abc"), 1000, true, nil},
		{"inside a fence", "```text\n" + rows(400, "x"), 1000, true, []string{"```\n"}},
		// Half a mermaid chart is a syntax error on GitHub: the chart goes.
		{"inside a mermaid fence", "intro\n\n```mermaid\nxychart-beta\n" + rows(400, "x"), 1000, true, nil},
		{"inside a longer tilde fence", "~~~~\n" + rows(400, "x"), 1000, true, []string{"~~~~\n"}},
		{"after a closed fence", "```\ncode\n```\n" + rows(400, "x"), 1000, true, nil},
		{"inside details", "<details><summary>All</summary>\n\n" + rows(400, "x"), 1000, true, []string{"</details>"}},
		{"emoji count twice", rows(300, "😀"), 1000, true, nil},
		{"one long line", strings.Repeat("é", 5000), 1000, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Shorten(tt.in, tt.limit+len(note)+512, note)
			if !tt.cut {
				if got != tt.in {
					t.Errorf("a text within the limit was changed")
				}
				return
			}
			limit := tt.limit + len(note) + 512
			if Len(got) > limit {
				t.Errorf("%d characters, limit %d", Len(got), limit)
			}
			if !strings.HasSuffix(got, note) || !utf8.ValidString(got) {
				t.Errorf("no note at the end, or invalid UTF-8: %q", got[max(0, len(got)-80):])
			}
			body := strings.TrimSuffix(got, note)
			kept := body
			if len(tt.closing) > 0 {
				kept = body[:strings.LastIndex(body, tt.closing[0])]
			}
			if !strings.HasPrefix(tt.in, strings.TrimRight(kept, "\n")) {
				t.Errorf("the kept text is not a prefix of the input")
			}
			for _, c := range tt.closing {
				if !strings.Contains(body[len(body)-len(c)-2:], c) {
					t.Errorf("does not end with %q: %q", c, body[max(0, len(body)-40):])
				}
			}
			if tt.name == "inside a mermaid fence" && body != "intro\n\n" {
				t.Errorf("the cut chart was kept: %q", body[max(0, len(body)-40):])
			}
			if tt.name == "table" && !strings.HasSuffix(body, "| abc |\n") {
				t.Errorf("not cut at a line boundary: %q", body[max(0, len(body)-20):])
			}
		})
	}
}

// TestLenCountsUnitsAndBytes: Len is at least the UTF-16 length and the
// byte length of every string.
func TestLenCountsUnitsAndBytes(t *testing.T) {
	for s, want := range map[string]int{"": 0, "abc": 3, "é": 2, "✅": 3, "😀": 4, "\xff": 3} {
		if got := Len(s); got != want {
			t.Errorf("Len(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestShortenBytes(t *testing.T) {
	in := strings.Repeat("| ✅ row |\n", 200000) // 2.2 MB
	got := shortenBytes(in, MaxStepSummary, summaryNote)
	if len(got) > MaxStepSummary || !strings.HasSuffix(got, summaryNote) || len(got) < MaxStepSummary-2048 {
		t.Errorf("shortened to %d bytes (limit %d)", len(got), MaxStepSummary)
	}
}

func TestCutRunes(t *testing.T) {
	if got := cutRunes(strings.Repeat("é", 200), 140); utf8.RuneCountInString(got) != 140 || !strings.HasSuffix(got, "…") {
		t.Errorf("cutRunes: %d runes", utf8.RuneCountInString(got))
	}
	if got := cutRunes("short", 140); got != "short" {
		t.Errorf("cutRunes changed %q", got)
	}
}
