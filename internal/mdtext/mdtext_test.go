package mdtext

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
		{"plain text", "serving-qps4", Escape, `serving-qps4`},
		{"pipe and emphasis", "a|b*c_d", Escape, `a\|b\*c\_d`},
		{"raw html", `<img src=x>`, Escape, `&lt;img src=x&gt;`},
		{"image link", `![x](http://e.example/p.png)`, Escape, `!\[x\](http:&#8203;//e.example/p.png)`},
		{"character reference", "&#64;octocat &lt;img&gt;", Escape, "&amp;#&#8203;64;octocat &amp;lt;img&amp;gt;"},
		{"issue reference", "fixes #12 and o/r#3", Escape, "fixes #&#8203;12 and o/r#&#8203;3"},
		{"bare urls", "see https://e.example and www.e.example", Escape, "see https:&#8203;//e.example and www&#8203;.e.example"},
		{"code empty", "", Code, "` `"},
		{"mention", "ping @octocat", Escape, "ping @&#8203;octocat"},
		{"newlines", "a\r\nb", Escape, "a  b"},
		{"code plain", "mean_ttft_ms", Code, "`mean_ttft_ms`"},
		{"code one backtick", "a`b", Code, "`` a`b ``"},
		{"code breakout", "x`` <img src=y> ``", Code, "``` x`` <img src=y> `` ```"},
		{"code pipe", "a|b", Code, "`a\\|b`"},
		{"code span pipe", "a|b", CodeSpan, "`a|b`"},
		{"code span breakout", "x`` <img src=y>\n``", CodeSpan, "``` x`` <img src=y> `` ```"},
		{"code span empty", "", CodeSpan, "` `"},
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
		got := Code(in)
		fence := got[:strings.IndexFunc(got, func(r rune) bool { return r != '`' })]
		inner := got[len(fence) : len(got)-len(fence)]
		if strings.Contains(inner, fence) {
			t.Errorf("Code(%q) = %q: content contains the fence %q", in, got, fence)
		}
	}
}
