// Package inert makes text that came from untrusted places (benchmark
// files, the history branch, a fork's report) safe to print on a human's
// terminal or in a CI log: control characters are shown as escapes, never
// acted on, and no line can start a GitHub Actions workflow command.
package inert

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Writer passes text to W with every control character but newline and
// tab written as a visible escape (\x1b, \r, \x00: an ESC sequence cannot
// recolour or rewrite the terminal, a carriage return cannot overwrite a
// line), and "::" at the start of a line written ": :" (a value holding a
// newline and "::error::" cannot become a workflow command of its own).
// It is for perfgate's own messages; a benchmark's live output, which may
// draw progress bars, goes around it.
type Writer struct {
	W         io.Writer
	midLine   bool // some byte of the current line was written
	colonHeld bool // a ':' at the start of a line, waiting for the next byte
}

// Write writes p's inert form and reports len(p) on success.
func (w *Writer) Write(p []byte) (int, error) {
	out := make([]byte, 0, len(p)+8)
	for _, b := range p {
		if w.colonHeld {
			w.colonHeld = false
			if b == ':' {
				out = append(out, ": :"...)
				w.midLine = true
				continue
			}
			out = append(out, ':')
			w.midLine = true
		}
		switch {
		case b == '\n':
			out = append(out, b)
			w.midLine = false
		case b == ':' && !w.midLine:
			w.colonHeld = true
		case b == '\t':
			out = append(out, b)
			w.midLine = true
		case b < 0x20 || b == 0x7f:
			out = append(out, escape(b)...)
			w.midLine = true
		default:
			out = append(out, b)
			w.midLine = true
		}
	}
	if _, err := w.W.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a ':' held at the start of a line (the text ended there).
func (w *Writer) Flush() error {
	if !w.colonHeld {
		return nil
	}
	w.colonHeld = false
	_, err := w.W.Write([]byte{':'})
	return err
}

func escape(b byte) string {
	switch b {
	case '\r':
		return `\r`
	case 0x1b:
		return `\x1b`
	}
	return fmt.Sprintf(`\x%02x`, b)
}

// Line returns s as one line of plain text of at most max bytes: every
// control character (newline and tab too, C1, U+2028, U+2029) and invalid
// UTF-8 becomes U+FFFD, and a longer value is cut at a character boundary
// with "…". For values such as a git author that a report shows inside
// one line of its own text.
func Line(s string, max int) string {
	var b strings.Builder
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029 {
			c = utf8.RuneError
		}
		if b.Len()+utf8.RuneLen(c) > max {
			b.WriteString("…")
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}
