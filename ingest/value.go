package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// IsAbsent reports whether a cell or value marks a missing value:
// "", N/A, NA, /, -, --, None, null, nil, not set, unknown, NaN.
func IsAbsent(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "n/a", "na", "/", "-", "--", "none", "null", "nil", "not set", "notset", "unknown", "nan", "—":
		return true
	}
	return false
}

var quantityRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?i:inf|infinity))\s*([^\s\d(),;]*)`)
})

// ParseQuantity reads a leading number and an optional unit word from s:
// "945.18", "12.5 ms", "41.6254 token/s", "1,234", "98409.4916 ms", "inf".
// Anything after the unit (a human annotation) is ignored. ok is false
// when s does not start with a number (absent values included).
func ParseQuantity(s string) (v float64, unit string, ok bool) {
	s = strings.TrimSpace(s)
	if IsAbsent(s) {
		return 0, "", false
	}
	m := quantityRE().FindStringSubmatch(s)
	if m == nil {
		return 0, "", false
	}
	num := strings.ReplaceAll(m[1], ",", "")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, "", false
	}
	return f, m[2], true
}

// LatencyMs converts a latency in the given unit to milliseconds. An empty
// unit is taken as milliseconds. ok is false for a unit that is not a time.
func LatencyMs(v float64, unit string) (ms float64, ok bool) {
	switch strings.ToLower(strings.Trim(unit, "() ")) {
	case "", "ms", "msec", "millisecond", "milliseconds":
		return v, true
	case "s", "sec", "secs", "second", "seconds":
		return v * 1e3, true
	case "us", "μs", "µs", "usec", "microsecond", "microseconds":
		return v / 1e3, true
	case "ns", "nsec", "nanosecond", "nanoseconds":
		return v / 1e6, true
	case "min", "mins", "minute", "minutes":
		return v * 60e3, true
	}
	return 0, false
}

// Num converts a decoded JSON/YAML value to a number. Strings holding
// numbers, "inf" and "Infinity" count; absent markers, bools and nil do not.
func Num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		if IsAbsent(x) {
			return 0, false
		}
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "inf", "+inf", "infinity", "+infinity":
			return math.Inf(1), true
		case "-inf", "-infinity":
			return math.Inf(-1), true
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// Str converts a decoded scalar to a label string; ok is false for nil,
// absent markers, maps and slices.
func Str(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		if IsAbsent(x) {
			return "", false
		}
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case map[string]any, []any:
		return "", false
	}
	if f, ok := Num(v); ok {
		return formatNum(f), true
	}
	return fmt.Sprint(v), true
}

func formatNum(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// setLabel normalizes numeric label values so "10.00", "10.0" and "10"
// compare equal, and "Infinity"/"inf" become "inf".
func setLabel(labels map[string]string, key, value string) {
	value = strings.TrimSpace(value)
	value = strings.Trim(value, `'"`)
	if IsAbsent(value) {
		return
	}
	if f, ok := Num(value); ok {
		value = formatNum(f)
	}
	labels[key] = value
}

// StripANSI removes ANSI escape sequences (colours, cursor moves): CSI
// sequences (ESC [ params intermediates final), OSC strings (ESC ] ...
// up to BEL, ESC \ or the next ESC) and two-byte escapes (ESC and one of
// @-Z, \, ], ^, _). An ESC that starts none of these is kept. It scans
// bytes instead of using a regexp because the text reader calls it on
// every coloured log line; ansiRefRE in the tests is the regexp it equals.
func StripANSI(s string) string {
	i := strings.IndexByte(s, 0x1b)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i >= 0 {
		if end := ansiEnd(s, i); end > i {
			b.WriteString(s[last:i])
			last, i = end, end
		} else {
			i++
		}
		j := strings.IndexByte(s[i:], 0x1b)
		if j < 0 {
			break
		}
		i += j
	}
	b.WriteString(s[last:])
	return b.String()
}

// ansiEnd returns the end of the escape sequence that starts at s[i]
// (an ESC), or i when none does.
func ansiEnd(s string, i int) int {
	if i+1 >= len(s) {
		return i
	}
	switch c := s[i+1]; {
	case c == '[':
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';' || s[j] == '?') {
			j++
		}
		for j < len(s) && s[j] >= ' ' && s[j] <= '/' {
			j++
		}
		if j < len(s) && s[j] >= '@' && s[j] <= '~' {
			return j + 1
		}
	case c == ']':
		j := i + 2
		for j < len(s) && s[j] != 0x07 && s[j] != 0x1b {
			j++
		}
		switch {
		case j < len(s) && s[j] == 0x07:
			return j + 1
		case j+1 < len(s) && s[j] == 0x1b && s[j+1] == '\\':
			return j + 2
		}
		return j
	case c >= '@' && c <= 'Z', c >= '\\' && c <= '_':
		return i + 2
	}
	return i
}

// LooseJSON rewrites the non-standard tokens Python's json module writes
// (bare NaN, Infinity, -Infinity) into strings so encoding/json can decode
// them; Num turns them back into numbers. Newlines are preserved, so line
// numbers computed on the result match the input.
func LooseJSON(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	var out bytes.Buffer
	out.Grow(len(data) + 64)
	inStr, esc := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inStr {
			out.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
			out.WriteByte(c)
			continue
		}
		for _, tok := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				out.WriteString(`"` + tok + `"`)
				i += len(tok) - 1
				c = 0
				break
			}
		}
		if c != 0 {
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// lineAt returns the 1-based line number of byte offset off in data.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// validUTF8 replaces invalid UTF-8 so error messages quote cleanly.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Quote shortens and quotes a piece of input for an error message.
func Quote(s string) string {
	s = validUTF8(s)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strconv.Quote(s)
}
