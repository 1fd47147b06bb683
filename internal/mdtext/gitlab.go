package mdtext

import (
	"regexp"
	"strings"
	"sync"
)

// zwsp is the zero-width space GitLab's reference filters stop at.
const zwsp = "\u200b"

// GitLab makes a report written for GitHub (whose untrusted text went
// through Escape and Code) inert in a GitLab merge request note too.
// GitLab Flavored Markdown finds references in the rendered text, where a
// backslash escape no longer shows: @user, #123 and !45 (issues, merge
// requests), ~label, %milestone, $snippet, &epic, :emoji:, and runs a
// line that starts with "/" as a quick action (/merge, /approve). A
// zero-width space after each such sigil (and before a leading "/") keeps
// it text. Code spans, fenced code, HTML comments, character references
// and link destinations are left as they are: GitLab finds no reference
// there, and a zero-width space would show or break them. A line that is
// only a table-of-contents tag ([[_TOC_]], [TOC]) gets a backslash.
func GitLab(md string) string {
	var b strings.Builder
	b.Grow(len(md) + len(md)/16)
	fence := ""
	lines := strings.SplitAfter(md, "\n")
	for _, line := range lines {
		body := strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(body, " ")
		if fence != "" {
			b.WriteString(line)
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpen(trimmed, len(body)-len(trimmed)); f != "" {
			fence = f
			b.WriteString(line)
			continue
		}
		switch trimmed {
		case "[[_TOC_]]", "[TOC]":
			b.WriteString(`\`)
		}
		if strings.HasPrefix(trimmed, "/") {
			b.WriteString(body[:len(body)-len(trimmed)])
			b.WriteString(zwsp)
			body = trimmed
		}
		gitlabLine(&b, body)
		b.WriteString(line[len(strings.TrimRight(line, "\r\n")):])
	}
	return b.String()
}

// fenceOpen returns the fence a line opens ("```", "~~~~"), or "".
func fenceOpen(trimmed string, indent int) string {
	if indent > 3 {
		return ""
	}
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == c {
			n++
		}
		if n >= 3 && (c == '~' || !strings.Contains(trimmed[n:], "`")) {
			return trimmed[:n]
		}
	}
	return ""
}

var entityRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});`)
})

// gitlabLine writes one line outside fenced code with its references
// broken.
func gitlabLine(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '`':
			n := run(s[i:], '`')
			if end := closingRun(s, i+n, n); end >= 0 {
				b.WriteString(s[i:end])
				i = end
				continue
			}
			b.WriteString(s[i : i+n])
			i += n
			continue
		case strings.HasPrefix(s[i:], "<!--"):
			if end := strings.Index(s[i:], "-->"); end >= 0 {
				b.WriteString(s[i : i+end+3])
				i += end + 3
				continue
			}
		case strings.HasPrefix(s[i:], "]("):
			if end := strings.IndexByte(s[i:], ')'); end >= 0 {
				b.WriteString(s[i : i+end+1])
				i += end + 1
				continue
			}
		case c == '\\' && i+1 < len(s):
			// An escaped character is still text GitLab scans: keep the
			// pair together and look at the character after it.
			b.WriteString(s[i : i+2])
			i += 2
			if sigil(s[i-1]) && i < len(s) && refChar(s[i], s[i-1]) {
				b.WriteString(zwsp)
			}
			continue
		case c == '&':
			if m := entityRE().FindString(s[i:]); m != "" {
				b.WriteString(m)
				i += len(m)
				if (m == "&amp;" || m == "&#38;") && i < len(s) && refChar(s[i], '&') {
					b.WriteString(zwsp) // "&123" would name an epic
				}
				continue
			}
		}
		b.WriteByte(c)
		i++
		if sigil(c) && i < len(s) && refChar(s[i], c) {
			b.WriteString(zwsp)
		}
	}
}

// sigil reports whether c starts a GitLab reference or emoji.
func sigil(c byte) bool { return strings.IndexByte("@#!~%$&:", c) >= 0 }

// refChar reports whether c after the sigil s makes a reference.
func refChar(c, s byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		return true
	case c == '"':
		return s == '~' || s == '%'
	case c == '+' || c == '-':
		return s == ':'
	}
	return false
}

// run counts the leading bytes of s equal to c.
func run(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingRun finds the end of the first run of exactly n backticks at or
// after from, or -1.
func closingRun(s string, from, n int) int {
	for i := from; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		m := run(s[i:], '`')
		if m == n {
			return i + m
		}
		i += m
	}
	return -1
}
