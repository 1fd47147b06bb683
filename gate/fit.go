package gate

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// FitText fits a text report to a terminal width: a table wider than
// width gets its first column (benchmark and labels, the one that grows)
// cut with "…", down to 16 characters; any other line longer than width
// wraps at spaces, continuing under its own indentation (a "warning" line
// under its text). The CLI fits what it prints to a terminal to 100
// columns; piped output keeps its full width. width <= 0 returns text
// unchanged.
func FitText(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if cols := tableColumns(lines[i]); cols != nil {
			j := i + 1
			for j < len(lines) && lines[j] != "" && !isProseAfterTable(lines[j]) {
				j++
			}
			out = append(out, fitTable(lines[i:j], cols, width)...)
			i = j - 1
			continue
		}
		out = append(out, wrapLine(lines[i], width)...)
	}
	return strings.Join(out, "\n")
}

var (
	ansiRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })
	headerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z/()%]*( {2,}[A-Z][A-Z/()%]*)+ *$`) })
)

func visible(s string) string { return ansiRE().ReplaceAllString(s, "") }

// tableColumns returns the start of each column of a table's header line
// (upper-case words two or more spaces apart), or nil.
func tableColumns(line string) []int {
	v := visible(line)
	if !headerRE().MatchString(v) {
		return nil
	}
	var cols []int
	for i := 0; i < len(v); i++ {
		if v[i] != ' ' && (i == 0 || (i >= 2 && v[i-1] == ' ' && v[i-2] == ' ')) {
			cols = append(cols, i)
		}
	}
	return cols
}

// isProseAfterTable tells a table's legend ("N: values ...") from its rows.
func isProseAfterTable(line string) bool {
	return strings.HasPrefix(line, "N: ")
}

// fitTable cuts the first column of a table's lines so the widest fits.
func fitTable(rows []string, cols []int, width int) []string {
	widest := 0
	for _, r := range rows {
		widest = max(widest, utf8.RuneCountInString(visible(r)))
	}
	if widest <= width || len(cols) < 2 {
		return rows
	}
	first := cols[1] - 2 // the first column's width, without its gap
	keep := max(16, first-(widest-width))
	if keep >= first {
		return rows
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		// The first column holds no colour codes (only the header's
		// bold wraps the whole line, and the verdict is last).
		prefix := ""
		if loc := ansiRE().FindStringIndex(r); loc != nil && loc[0] == 0 {
			prefix, r = r[:loc[1]], r[loc[1]:]
		}
		rs := []rune(r)
		if len(rs) < first {
			out[i] = prefix + r
			continue
		}
		cell := strings.TrimRight(string(rs[:first]), " ")
		if utf8.RuneCountInString(cell) > keep {
			cell = string([]rune(cell)[:keep-1]) + "…"
		}
		out[i] = prefix + cell + strings.Repeat(" ", keep-utf8.RuneCountInString(cell)) + string(rs[first:])
	}
	return out
}

// wrapLine wraps a line at spaces to width, continuing under its text.
func wrapLine(line string, width int) []string {
	if utf8.RuneCountInString(visible(line)) <= width {
		return []string{line}
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if v := visible(line); strings.HasPrefix(v, "warning   ") {
		indent = len("warning   ")
	} else if indent > 0 {
		indent += 2 // an item's continuation, set off from the next item
	}
	pad := strings.Repeat(" ", indent)
	lead := len(line) - len(strings.TrimLeft(line, " "))
	words := strings.Split(line[lead:], " ")
	var out []string
	cur := line[:lead] + words[0]
	for _, word := range words[1:] {
		if word != "" && utf8.RuneCountInString(visible(cur))+1+utf8.RuneCountInString(visible(word)) > width &&
			utf8.RuneCountInString(visible(cur)) > indent {
			out = append(out, strings.TrimRight(cur, " "))
			cur = pad + word
			continue
		}
		cur += " " + word
	}
	return append(out, cur)
}
