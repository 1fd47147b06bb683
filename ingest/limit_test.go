package ingest

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// countingReader yields a document of size bytes (head, then padding, then
// tail) and counts what was read from it.
type countingReader struct {
	head, tail string
	size, read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= c.size {
		return 0, io.EOF
	}
	n := int64(len(p))
	if left := c.size - c.read; n > left {
		n = left
	}
	for i := range n {
		at := c.read + i
		switch {
		case at < int64(len(c.head)):
			p[i] = c.head[at]
		case at >= c.size-int64(len(c.tail)):
			p[i] = c.tail[at-(c.size-int64(len(c.tail)))]
		default:
			p[i] = 'x'
		}
	}
	c.read += n
	return int(n), nil
}

// A structured document is read whole, so it is bounded (issue 11: a
// 1 GiB JSON file took 5.3 GB of memory): past Options.MaxDocBytes the
// reader stops with an error naming the limit and how to raise it, having
// read no more than the limit and its buffer.
func TestDocumentSizeLimit(t *testing.T) {
	const limit = 1 << 20
	tests := []struct {
		name, head, tail string
	}{
		{"json", `{"metrics":{"a":1},"pad":"`, `"}`},
		{"yaml", "name: b\nmetrics:\n  a: 1\npad: ", "\n"},
		{"csv", "Performance Parameters,Stage,Average,Min,Max,Median,P75,P90,P99,N\nE2EL,total,", "\n"},
		{"gobench", "goos: linux\nBenchmarkA 1 2 ns/op\n#", "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Under the limit: parsed (or refused for its content, not
			// its size).
			small := &countingReader{head: tt.head, tail: tt.tail, size: limit / 2}
			r := NewReader(small, "small."+tt.name, Options{MaxDocBytes: limit})
			for r.Scan() {
			}
			var tooLarge *DocTooLargeError
			if errors.As(r.Err(), &tooLarge) {
				t.Fatalf("a document of half the limit: %v", r.Err())
			}

			big := &countingReader{head: tt.head, tail: tt.tail, size: 64 << 20}
			r = NewReader(big, "big."+tt.name, Options{MaxDocBytes: limit})
			if r.Scan() {
				t.Fatalf("a 64 MiB document under a 1 MiB limit gave a result")
			}
			err := r.Err()
			var pe *Error
			if !errors.As(err, &pe) || !errors.As(err, &tooLarge) || tooLarge.Family != tt.name {
				t.Fatalf("got %v, want an *Error caused by a %s DocTooLargeError", err, tt.name)
			}
			for _, want := range []string{"big." + tt.name + ": ", "larger than 1MiB", "--max-doc-size", "PERFGATE_MAX_DOC_SIZE"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if big.read > limit+2<<16 {
				t.Errorf("read %d bytes of the document, want at most the limit and the reader's buffer", big.read)
			}
		})
	}
}

// Without a limit set, DefaultMaxDocBytes applies.
func TestDefaultDocumentSizeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 256 MiB")
	}
	big := &countingReader{head: `{"metrics":{"a":1},"pad":"`, tail: `"}`, size: DefaultMaxDocBytes + 1<<20}
	r := NewReader(big, "big.json", Options{})
	for r.Scan() {
	}
	var tooLarge *DocTooLargeError
	if !errors.As(r.Err(), &tooLarge) || tooLarge.Limit != DefaultMaxDocBytes {
		t.Fatalf("got %v, want the default limit", r.Err())
	}
}
