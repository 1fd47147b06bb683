package inert

import (
	"strings"
	"testing"
)

func TestWriter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"perfgate: warning: plain\n", "perfgate: warning: plain\n"},
		{"name \x1b[31mred\x1b[0m\n", `name \x1b[31mred\x1b[0m` + "\n"},
		{"a\rb\x00c\x7fd\te\n", `a\rb\x00c\x7fd` + "\te\n"},
		{"bench \"x\n::error::pwned\"\n", "bench \"x\n: :error::pwned\"\n"},
		{"::warning file=a::x\n", ": :warning file=a::x\n"},
		{"a::b\n:x\n", "a::b\n:x\n"},
		{"ünïcödé 文字\n", "ünïcödé 文字\n"},
	} {
		var b strings.Builder
		w := &Writer{W: &b}
		// byte by byte too: the state carries across writes
		for _, chunked := range []bool{false, true} {
			b.Reset()
			*w = Writer{W: &b}
			if chunked {
				for i := 0; i < len(tc.in); i++ {
					w.Write([]byte{tc.in[i]})
				}
			} else {
				w.Write([]byte(tc.in))
			}
			w.Flush()
			if b.String() != tc.want {
				t.Errorf("%q (chunked %v) -> %q, want %q", tc.in, chunked, b.String(), tc.want)
			}
		}
	}
}

func FuzzWriter(f *testing.F) {
	f.Add("a\n::error::x\x1b[2J\r")
	f.Fuzz(func(t *testing.T, s string) {
		var b strings.Builder
		w := &Writer{W: &b}
		w.Write([]byte(s))
		w.Flush()
		out := b.String()
		for i := 0; i < len(out); i++ {
			if c := out[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				t.Fatalf("control byte %#x in %q", c, out)
			}
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "::") {
				t.Fatalf("a line starts a workflow command: %q", line)
			}
		}
	})
}

func TestLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"alice <a@example.com>", 100, "alice <a@example.com>"},
		{"a\nb\x1b[31m\u2028c", 100, "a\uFFFDb\uFFFD[31m\uFFFDc"},
		{"bad \xff byte", 100, "bad \uFFFD byte"},
		{"long name here", 4, "long…"},
	} {
		if got := Line(tc.in, tc.max); got != tc.want {
			t.Errorf("Line(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
