// Package mdtext makes untrusted text safe inside GitHub-flavoured markdown:
// a benchmark or metric name from a fork's pull request must not escape its
// table cell or code span, nor mention anyone. Reports of the gate and of
// bisect use it.
package mdtext

import "strings"

// Escape makes text safe inside a markdown table cell.
func Escape(s string) string {
	return escaper.Replace(s)
}

// escaper neutralises what a benchmark or metric name from an untrusted
// report (a fork's pull request) could use to inject markup into the bot's
// comment: emphasis, code, tables, raw HTML, links and images, and @mentions
// (a zero-width space after "@" keeps GitHub from notifying anyone).
var escaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`",
	"<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "@", "@&#8203;", "\r", " ", "\n", " ")

// Code renders s as inline code inside a table cell. The fence is one
// backtick longer than the longest run of backticks in s, so no content can
// close the code span early and escape into markdown.
func Code(s string) string {
	s = strings.NewReplacer("|", `\|`, "\r", " ", "\n", " ").Replace(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	if longest == 0 {
		return "`" + s + "`"
	}
	fence := strings.Repeat("`", longest+1)
	return fence + " " + s + " " + fence
}
