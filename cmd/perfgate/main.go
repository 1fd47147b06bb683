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

	"github.com/perfgate/perfgate/internal/proc"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go interrupts(sigs, cancel, func() {
		os.Stderr.WriteString("\nperfgate: interrupted again: killing the benchmark now\n")
		proc.Hurry()
	})
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}

// interrupts cancels the work at the first Ctrl-C (or SIGTERM): a running
// benchmark gets SIGTERM and its grace period. The second does not wait:
// hurry kills it at once.
func interrupts(sigs <-chan os.Signal, cancel, hurry func()) {
	<-sigs
	cancel()
	<-sigs
	hurry()
}
