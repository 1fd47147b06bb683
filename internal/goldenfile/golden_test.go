package goldenfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Name() string                 { return "TestX" }
func (r *recorder) Errorf(f string, args ...any) { r.msgs = append(r.msgs, "error") }
func (r *recorder) Fatalf(f string, args ...any) { r.msgs = append(r.msgs, "fatal") }
func (r *recorder) Fatal(args ...any)            { r.msgs = append(r.msgs, "fatal") }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "a.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("x\n"))
	if len(r.msgs) != 1 || r.msgs[0] != "fatal" {
		t.Errorf("missing golden file: %v, want one fatal", r.msgs)
	}
	*update = true
	Check(r, path, []byte("a\nb\n"))
	*update = false
	if b, err := os.ReadFile(path); err != nil || string(b) != "a\nb\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	r.msgs = nil
	Check(r, path, []byte("a\nb\n"))
	if len(r.msgs) != 0 {
		t.Errorf("equal output failed: %v", r.msgs)
	}
	Check(r, path, []byte("a\nc\n"))
	if strings.Join(r.msgs, ",") != "error" {
		t.Errorf("different output: %v, want one error", r.msgs)
	}
}
