package github

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits GitHub puts on text, in characters.
const (
	MaxCommentLen   = 65536   // an issue or pull request comment body
	MaxCheckRunText = 65535   // a check run's output summary
	MaxStepSummary  = 1 << 20 // a step's job summary, in bytes
)

// shortenedNote ends a body that Shorten cut.
const shortenedNote = "\n> [!NOTE]\n> This report was shortened to fit GitHub's limit. The full report is in the job summary " +
	"of the workflow run, and `perfgate check -o markdown` prints it.\n"

// Len is the length of s as GitHub may count it for its limits: each
// character weighs the larger of its UTF-16 code units and its UTF-8
// bytes, so a body within Len is within the limit whether it is counted
// in characters, UTF-16 units (GitHub's API) or bytes (a proxy or a
// GitHub Enterprise stand-in: 100k checks made a comment of 66,130 bytes
// that fit in UTF-16 units).
func Len(s string) int {
	n := 0
	for _, r := range s {
		n += units(r)
	}
	return n
}

// units is the larger of the UTF-16 and UTF-8 lengths of r; an invalid
// byte counts three, the bytes of the replacement character it becomes.
func units(r rune) int {
	if r == utf8.RuneError {
		return 3
	}
	return max(utf16.RuneLen(r), utf8.RuneLen(r))
}

// Shorten returns s when it fits in limit (as Len counts), else a prefix
// cut at a line boundary, with open code fences and <details> blocks
// closed so the rest renders, followed by note. A mermaid chart the cut
// falls in is left out whole: half a chart is a syntax error where the
// chart was. The result always fits.
func Shorten(s string, limit int, note string) string {
	return shorten(s, limit, note, units)
}

// shortenBytes is Shorten with the limit in bytes.
func shortenBytes(s string, limit int, note string) string {
	return shorten(s, limit, note, func(r rune) int {
		if r == utf8.RuneError {
			return 3
		}
		return utf8.RuneLen(r)
	})
}

func shorten(s string, limit int, note string, width func(rune) int) string {
	length := func(s string) int {
		n := 0
		for _, r := range s {
			n += width(r)
		}
		return n
	}
	if length(s) <= limit {
		return s
	}
	const closersRoom = 512 // room for the closing fence and </details> tags
	budget := max(limit-length(note)-closersRoom, 0)
	// The longest prefix within budget, then back to the last newline.
	n, cut := 0, 0
	for i, r := range s {
		w := width(r)
		if n+w > budget {
			break
		}
		n += w
		_, size := utf8.DecodeRuneInString(s[i:])
		cut = i + size
	}
	prefix := s[:cut]
	if i := strings.LastIndexByte(prefix, '\n'); i >= 0 {
		prefix = prefix[:i+1]
	}
	if at := openMermaid(prefix); at >= 0 {
		prefix = prefix[:at]
	}
	var b strings.Builder
	b.WriteString(prefix)
	if !strings.HasSuffix(prefix, "\n") && prefix != "" {
		b.WriteByte('\n')
	}
	b.WriteString(closers(prefix))
	b.WriteString(note)
	out := b.String()
	if length(out) > limit { // closers beyond their room: drop them rather than exceed
		out = prefix + note
		if length(out) > limit {
			out = ""
		}
	}
	return out
}

// openMermaid returns the offset of the line opening a mermaid code
// fence left open at the end of md, or -1.
func openMermaid(md string) int {
	var fence string // the open fence, "" outside one
	open := -1
	for off, line := range lineOffsets(md) {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence, open = "", -1
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			ch := t[:1]
			n := len(t) - len(strings.TrimLeft(t, ch))
			fence = strings.Repeat(ch, n)
			if strings.EqualFold(strings.TrimSpace(t[n:]), "mermaid") {
				open = off
			}
		}
	}
	if fence == "" {
		return -1
	}
	return open
}

// lineOffsets maps the offset of each line of md to the line.
func lineOffsets(md string) func(func(int, string) bool) {
	return func(yield func(int, string) bool) {
		off := 0
		for _, line := range strings.SplitAfter(md, "\n") {
			if !yield(off, strings.TrimSuffix(line, "\n")) {
				return
			}
			off += len(line)
		}
	}
}

// closers returns what closes the code fence and <details> blocks left
// open at the end of md.
func closers(md string) string {
	var fence string // the open fence, "" outside one
	details := 0
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			ch := t[:1]
			n := len(t) - len(strings.TrimLeft(t, ch))
			fence = strings.Repeat(ch, n)
			continue
		}
		lt := strings.ToLower(t)
		details += strings.Count(lt, "<details")
		details -= strings.Count(lt, "</details>")
	}
	var b strings.Builder
	if fence != "" {
		b.WriteString(fence + "\n")
	}
	for ; details > 0; details-- {
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// cutRunes cuts s to at most n characters, ending with "…" when cut.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
