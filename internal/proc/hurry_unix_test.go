//go:build unix

package proc

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestHurry: a command that ignores SIGTERM, stopped with a 10 s grace
// period, dies at once on the second interrupt (Hurry).
func TestHurry(t *testing.T) {
	defer func() { hurry.mu.Lock(); hurry.ch = nil; hurry.mu.Unlock() }() // other tests keep their grace
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", "trap '' TERM; echo ready; sleep 30")
	SetGroup(cmd, 10*time.Second)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cancel()
	time.Sleep(200 * time.Millisecond) // SIGTERM, ignored
	Hurry()
	_ = cmd.Wait()
	KillGroup(cmd)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the command ended %s after the second interrupt's first; want at once, not after the 10 s grace", d)
	}
}
