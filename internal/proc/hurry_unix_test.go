//go:build unix

package proc

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestHurry: a command that ignores SIGTERM, stopped with an hour's grace
// period, dies on the second interrupt (Hurry): that Wait returns at all,
// killed, is the proof (no wall-time bound).
func TestHurry(t *testing.T) {
	defer func() { hurry.mu.Lock(); hurry.ch = nil; hurry.mu.Unlock() }() // other tests keep their grace
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "sh", "-c", "trap '' TERM; echo ready; sleep 30")
	SetGroup(cmd, time.Hour)
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
	cancel()
	time.Sleep(200 * time.Millisecond) // SIGTERM, ignored
	Hurry()
	err = cmd.Wait()
	KillGroup(cmd)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Errorf("Wait = %v, want the command killed by a signal", err)
	}
}
