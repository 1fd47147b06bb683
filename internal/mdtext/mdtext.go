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
// comment: emphasis, code, tables, raw HTML and character references
// ("&" itself, so that "&#64;user" stays text), links and images, and what
// GitHub turns into a notification or a link after rendering: @mentions and
// #references (a zero-width space after "@" or "#" keeps GitHub from
// notifying anyone or cross-referencing an issue) and bare URLs ("://" and
// "www." get one too).
var escaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`",
	"<", "&lt;", ">", "&gt;", "&", "&amp;", "[", `\[`, "]", `\]`, "@", "@&#8203;", "#", "#&#8203;",
	"://", ":&#8203;//", "www.", "www&#8203;.", "\r", " ", "\n", " ")

// Code renders s as inline code inside a table cell. The fence is one
// backtick longer than the longest run of backticks in s, so no content can
// close the code span early and escape into markdown.
func Code(s string) string {
	return CodeSpan(strings.ReplaceAll(s, "|", `\|`))
}

// CodeSpan renders s as inline code outside a table: as Code, but a "|"
// stays as it is (GitHub drops the backslash of "\|" only in a table
// cell; in a paragraph's code span it shows).
func CodeSpan(s string) string {
	if s == "" {
		// "``" is no code span: it could pair with a later fence.
		return "` `"
	}
	s = strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
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
