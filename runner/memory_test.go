package runner

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestExecBoundedMemory: a command that prints 16 MB before its result
// leaves Exec holding no more than its bounded tail: the output is parsed
// as it streams and never kept whole. What is measured is the heap Exec
// retains (what the code controls), not the process's peak RSS, which
// depends on the machine's load and the garbage collector's timing
// (BenchmarkExecOutputMemory reports that figure).
func TestExecBoundedMemory(t *testing.T) {
	const junk = 16 << 20
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, err := Exec(context.Background(), Command{
		Argv:   []string{"sh", "-c", fmt.Sprintf("yes junk | head -c %d; echo 'Mean TTFT (ms): 10.5'", junk)},
		Source: "output of the junk command",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer out.Discard()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if out.Written < junk || len(out.Tail) > TailSize {
		t.Errorf("written %d, tail %d bytes; want all %d bytes counted and at most %d kept", out.Written, len(out.Tail), junk, TailSize)
	}
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > 4<<20 {
		t.Errorf("Exec retains %d MB after 16 MB of output; want the bounded tail only", kept>>20)
	}
}

// BenchmarkExecOutputMemory streams 64 MB of output through Exec and
// reports the bytes allocated per run (allocations are transient: the
// output is parsed line by line):
//
//	go test ./runner -run '^$' -bench ExecOutputMemory -benchmem
func BenchmarkExecOutputMemory(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		out, err := Exec(context.Background(), Command{
			Argv: []string{"sh", "-c", "yes junk | head -c 67108864; echo 'Mean TTFT (ms): 10.5'"},
		})
		if err != nil {
			b.Fatal(err)
		}
		out.Discard()
	}
}

// TestExecPrintedNothing: a command that prints nothing is said to have
// printed nothing, not to have printed unrecognised output.
func TestExecPrintedNothing(t *testing.T) {
	out, err := Exec(context.Background(), Command{Argv: []string{"true"}, Source: "output of true"})
	if err != nil {
		t.Fatal(err)
	}
	if out.ParseErr == nil || !strings.Contains(out.ParseErr.Error(), "output of true: the command printed nothing") {
		t.Errorf("ParseErr = %v, want the command named as printing nothing", out.ParseErr)
	}
}
