// Command perfgate is a Git-integrated regression gate for benchmarks.
//
// main only wires the process to run; everything else lives in run and
// the packages of the data flow (ingest, store, gate, ...).
package main

import (
	"context"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
