package gate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Document is a report gate can render: check, compare and history.
type Document interface {
	WriteText(w io.Writer, color bool) error
	WriteMarkdown(w io.Writer) error
	WriteJSON(w io.Writer) error
}

// csvWriter is a Document that also renders CSV (history).
type csvWriter interface {
	WriteCSV(w io.Writer) error
}

// Formats lists the output formats a document supports, for -o.
func Formats(d Document) []string {
	f := []string{"text", "markdown", "json"}
	if _, ok := d.(csvWriter); ok {
		f = append(f, "csv")
	}
	return f
}

// Write renders d in format ("text", "markdown" or "md", "json", "csv"
// where supported); color applies to text only.
func Write(w io.Writer, d Document, format string, color bool) error {
	switch strings.ToLower(format) {
	case "", "text":
		return d.WriteText(w, color)
	case "markdown", "md":
		return d.WriteMarkdown(w)
	case "json":
		return d.WriteJSON(w)
	case "csv":
		if c, ok := d.(csvWriter); ok {
			return c.WriteCSV(w)
		}
	}
	return fmt.Errorf("-o %q is not a format of this command; use one of %s", format, strings.Join(Formats(d), ", "))
}

// fmtNum formats a value with at least two decimals' worth of precision
// and at least five significant digits, trimming trailing zeros: the
// benchmark tools print two decimals, and a reader must be able to see
// why 299.96 against 306.11 failed a 2% rule. 45.234 -> "45.234",
// 299.96, 10233.45, 1234.567 -> "1234.57", 0.012345, 1000, 1.23456 ->
// "1.2346".
func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	// A value as measured (72.0491 of a MindIE log) prints as it was
	// written: its shortest form, up to 8 significant digits. Longer ones
	// (a median of averages) are rounded to 5.
	if s := strconv.FormatFloat(v, 'f', -1, 64); sigDigits(s) <= 8 {
		return s
	}
	a := math.Abs(v)
	digits := 5 - int(math.Floor(math.Log10(a))) - 1
	digits = max(2, min(digits, 10))
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmtNum(*v)
}

// fmtChange formats a change in percent with two decimals: "+4.12%",
// "-0.30%", "-" when unknown. A change that rounds to a likely threshold
// (a multiple of 0.5%) without being exactly on it gets up to two more
// decimals, so that a check failing a 2% rule never shows "-2.00%".
func fmtChange(v *float64) string {
	if v == nil {
		return "-"
	}
	x := *v
	if math.Abs(x) < 0.005 {
		return "0.00%"
	}
	// Two decimals, more only when they would round a change to what a
	// threshold usually is, a whole percent or a half under 10% (-2.001%,
	// not -2.00%, against a 2% rule); -13.502% prints as -13.50%.
	dec := 2
	for ; dec < 4; dec++ {
		p := math.Pow(10, float64(dec))
		r := math.Round(x*p) / p
		grid := 1.0
		if math.Abs(r) < 10 {
			grid = 0.5
		}
		if math.Abs(math.Remainder(r, grid)) > 1e-9 || math.Abs(x-r) < 1e-9 {
			break
		}
	}
	return fmt.Sprintf("%+.*f%%", dec, x)
}

func fmtPct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *v)
}

// ANSI colours for the text reports on a terminal.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	ansiDim    = "\x1b[2m"
)

func paint(on bool, code, s string) string {
	if !on || code == "" {
		return s
	}
	return code + s + ansiReset
}

func verdictColor(v Verdict, missingFails bool) string {
	switch v {
	case Fail:
		return ansiBold + ansiRed
	case Pass, Improved:
		return ansiGreen
	case Inconclusive:
		return ansiYellow
	case New, Accepted:
		return ansiCyan
	case Missing:
		if missingFails {
			return ansiBold + ansiRed
		}
		return ansiYellow
	}
	return ""
}

// table renders aligned columns; cells are plain text and colour is
// applied after padding so escape codes do not upset the widths.
type table struct {
	header []string
	right  []bool // right-align column
	rows   [][]string
	colors []string // per row, for the last column; "" for none
}

func (t *table) add(color string, cells ...string) {
	t.rows = append(t.rows, cells)
	t.colors = append(t.colors, color)
}

func (t *table) write(w io.Writer, color bool) error {
	width := make([]int, len(t.header))
	for i, h := range t.header {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string, last string) string {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i == len(cells)-1 {
				b.WriteString(paint(color, last, c))
				break
			}
			if t.right != nil && t.right[i] {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteString("  ")
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	var b strings.Builder
	b.WriteString(paint(color, ansiBold, strings.TrimRight(line(t.header, ""), "\n")) + "\n")
	for i, r := range t.rows {
		b.WriteString(line(r, t.colors[i]))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidText strips what would break a quoted mermaid string or its
// fenced block, and what mermaid reads as markup in a label: HTML tags
// and its #code; entities.
func mermaidText(s string) string {
	return mermaidReplacer.Replace(s)
}

var mermaidReplacer = strings.NewReplacer(`"`, "'", "\n", " ", "\r", " ", "`", "'", "<", "‹", ">", "›", "#", "＃")

// sparkline draws values as block characters, oldest first.
func sparkline(vs []float64) string {
	const ticks = "▁▂▃▄▅▆▇█"
	tr := []rune(ticks)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var b strings.Builder
	for _, v := range vs {
		i := 0
		if hi > lo {
			i = int(math.Round((v - lo) / (hi - lo) * float64(len(tr)-1)))
		}
		b.WriteRune(tr[i])
	}
	return b.String()
}

// sigDigits counts the significant digits of a decimal number as
// strconv.FormatFloat(v, 'f', -1, 64) writes it.
func sigDigits(s string) int {
	s = strings.TrimLeft(strings.Replace(strings.TrimPrefix(s, "-"), ".", "", 1), "0")
	return len(s)
}
