package main

import (
	"os"
	"testing"
	"time"
)

// TestInterrupts: the first interrupt cancels (the benchmark gets its
// grace period), the second hurries (kill at once).
func TestInterrupts(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	cancelled, hurried := make(chan struct{}), make(chan struct{})
	go interrupts(sigs, func() { close(cancelled) }, func() { close(hurried) })
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
}
