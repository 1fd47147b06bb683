// Command perfgate is a Git-integrated regression gate for benchmarks.
//
// main only wires the process to run; everything else lives in run and
// the packages of the data flow (ingest, store, gate, ...).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/proc"
)

func main() {
	// Before any child starts: a benchmark must not read perfgate's
	// environment (tokens, PGPASSWORD) through /proc.
	proc.Undumpable()
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go interrupts(sigs, cancel, func() {
		os.Stderr.WriteString("\nperfgate: interrupted again: killing the benchmark now\n")
		proc.Hurry()
	}, func() {
		os.Stderr.WriteString("perfgate: still not done after the second interrupt: exiting\n")
		os.Exit(exitEnv)
	}, exitGrace)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}

// exitGrace is how long perfgate waits, after the second interrupt, for
// its work to end before it exits on its own.
const exitGrace = 2 * time.Second

// interrupts cancels the work at the first Ctrl-C (or SIGTERM): a running
// benchmark gets SIGTERM and its grace period. The second does not wait:
// hurry kills it at once, and if the work has not ended grace later (a
// read blocked on a FIFO given as a file, which no context cancels), or
// at a third interrupt, exit ends the process.
func interrupts(sigs <-chan os.Signal, cancel, hurry, exit func(), grace time.Duration) {
	<-sigs
	cancel()
	<-sigs
	hurry()
	select {
	case <-sigs:
	case <-time.After(grace):
	}
	exit()
}
