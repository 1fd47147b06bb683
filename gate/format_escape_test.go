package gate

import (
	"strings"
	"testing"
)

// Names in a report can come from a fork's pull request; the markdown must
// not let them out of their table cell or code span.
func TestMarkdownEscaping(t *testing.T) {
	tests := []struct {
		name, in string
		fn       func(string) string
		want     string
	}{
		{"plain text", "serving-qps4", mdEscape, `serving-qps4`},
		{"pipe and emphasis", "a|b*c_d", mdEscape, `a\|b\*c\_d`},
		{"raw html", `<img src=x>`, mdEscape, `&lt;img src=x&gt;`},
		{"image link", `![x](http://e.example/p.png)`, mdEscape, `!\[x\](http://e.example/p.png)`},
		{"mention", "ping @octocat", mdEscape, "ping @&#8203;octocat"},
		{"newlines", "a\r\nb", mdEscape, "a  b"},
		{"code plain", "mean_ttft_ms", mdCode, "`mean_ttft_ms`"},
		{"code one backtick", "a`b", mdCode, "`` a`b ``"},
		{"code breakout", "x`` <img src=y> ``", mdCode, "``` x`` <img src=y> `` ```"},
		{"code pipe", "a|b", mdCode, "`a\\|b`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.fn(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A code span must be closed only by its own fence: no run of backticks
// inside as long as the fence.
func TestMDCodeFenceLongerThanContent(t *testing.T) {
	for _, in := range []string{"`", "``", "a```b", "````", "` `` ```"} {
		got := mdCode(in)
		fence := got[:strings.IndexFunc(got, func(r rune) bool { return r != '`' })]
		inner := got[len(fence) : len(got)-len(fence)]
		if strings.Contains(inner, fence) {
			t.Errorf("mdCode(%q) = %q: content contains the fence %q", in, got, fence)
		}
	}
}
