package jsontext

// AppendIndent appends src, a JSON value as encoding/json writes it
// (compact: no space outside strings, optionally followed by a newline),
// to dst indented as json.Indent(dst, src, "", indent) does: byte for
// byte the output of an Encoder with SetIndent("", indent) for a
// non-empty indent. It does not validate src; on input encoding/json did
// not write the result is unspecified (never a panic).
//
// It exists for the check report (issue 37): encoding/json indents with
// its validating scanner, one state transition a byte, which took longer
// than the encoding itself; this copies the runs between punctuation.
func AppendIndent(dst, src []byte, indent string) []byte {
	depth := 0
	open := false // after { or [: the newline waits, so that {} and [] stay empty
	for i := 0; i < len(src); {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = appendNewline(dst, indent, depth)
		}
		switch c {
		case '"':
			j := stringEnd(src, i+1)
			dst = append(dst, src[i:j]...)
			i = j
			continue
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = appendNewline(dst, indent, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = appendNewline(dst, indent, depth)
			}
			dst = append(dst, c)
		default:
			j := i + 1
			for j < len(src) && !isPunct(src[j]) {
				j++
			}
			dst = append(dst, src[i:j]...)
			i = j
			continue
		}
		i++
	}
	return dst
}

// stringEnd is the index just past the closing quote of the string whose
// contents start at src[i] (len(src) when it is not closed).
func stringEnd(src []byte, i int) int {
	for i < len(src) {
		switch src[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
		default:
			i++
		}
	}
	return len(src)
}

func isPunct(c byte) bool {
	switch c {
	case '"', '{', '[', ',', ':', '}', ']':
		return true
	}
	return false
}

func appendNewline(dst []byte, indent string, depth int) []byte {
	dst = append(dst, '\n')
	for range depth {
		dst = append(dst, indent...)
	}
	return dst
}
