package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

type longDoc struct{}

func (longDoc) WriteText(w io.Writer, color bool) error {
	_, err := io.WriteString(w, "warning   "+strings.Repeat("word ", 60)+"\n")
	return err
}
func (longDoc) WriteMarkdown(io.Writer) error { return nil }
func (longDoc) WriteJSON(io.Writer) error     { return nil }

// TestTextWidth: text reports fit 100 columns (or $COLUMNS) on a terminal
// and keep their full width when piped.
func TestTextWidth(t *testing.T) {
	for _, tt := range []struct {
		tty     bool
		columns string
		widest  int
	}{{true, "", 100}, {true, "80", 80}, {false, "", 10 + 5*60}} {
		var out bytes.Buffer
		e := &env{stdout: &out, isTTY: tt.tty, getenv: func(k string) string {
			if k == "COLUMNS" {
				return tt.columns
			}
			return ""
		}}
		if err := writeText(e, longDoc{}, false); err != nil {
			t.Fatal(err)
		}
		widest := 0
		for _, l := range strings.Split(out.String(), "\n") {
			widest = max(widest, len(l))
		}
		if widest > tt.widest || (!tt.tty && widest < tt.widest-1) {
			t.Errorf("tty %v COLUMNS %q: widest line %d, want at most %d", tt.tty, tt.columns, widest, tt.widest)
		}
	}
}
