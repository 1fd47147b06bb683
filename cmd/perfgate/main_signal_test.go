package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestInterrupts: the first interrupt cancels (the benchmark gets its
// grace period), the second hurries (kill at once) and, when the work
// still has not ended after the grace, exits.
func TestInterrupts(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	cancelled, hurried, exited := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go interrupts(sigs, func() { close(cancelled) }, func() { close(hurried) }, func() { close(exited) }, 10*time.Millisecond)
	sigs <- os.Interrupt
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the first interrupt did not cancel")
	}
	select {
	case <-hurried:
		t.Fatal("one interrupt hurried")
	case <-time.After(50 * time.Millisecond):
	}
	sigs <- os.Interrupt
	select {
	case <-hurried:
	case <-time.After(5 * time.Second):
		t.Fatal("the second interrupt did not hurry")
	}
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the second interrupt did not exit after the grace")
	}
}

// mainArgsEnv makes the test binary run main with these arguments (JSON).
const mainArgsEnv = "PERFGATE_TEST_MAIN_ARGS"

// TestSecondSignalExits: perfgate blocked where no context reaches (opening
// a FIFO given as a file, which waits for a writer) exits after two
// SIGTERMs, with the environment's exit code.
func TestSecondSignalExits(t *testing.T) {
	parallel(t) // mostly waiting for its child
	fifo := filepath.Join(t.TempDir(), "report.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	args, _ := json.Marshal([]string{"perfgate", "parse", fifo})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(args))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(300 * time.Millisecond) // let it block on the FIFO
	for range 2 {
		cmd.Process.Signal(syscall.SIGTERM)
		time.Sleep(100 * time.Millisecond)
	}
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitEnv {
			t.Errorf("exit: %v, want exit code %d; stderr:\n%s", err, exitEnv, stderr.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("perfgate survived two SIGTERMs; stderr:\n%s", stderr.String())
	}
}
