// Package runner owns perfgate's execution of benchmarks: everything
// between "here is a command" and "these runs are in the history", shared
// by perfgate run, ab, bisect and bisect-step.
//
//   - Exec runs one command in a process group of its own (Ctrl-C or a
//     cancelled context stops it and whatever it started: SIGTERM, then
//     SIGKILL after a grace period), with /dev/null as stdin and
//     perfgate's environment without the GitHub tokens it reads
//     (proc.Environ: a benchmark is often a pull request's code), and streams
//     its combined output to a live writer and to ingest's parser as it
//     comes, so memory stays bounded however much it prints. It keeps the
//     tail of the output for error messages and, when asked, all of it in
//     a temporary file (the raw output that Saver keeps when the history
//     cannot be written). With Command.ResultFile (perfgate run
//     --result-file), the results are those of the file(s) the command
//     wrote, read after it exits with ingest's detection and the SLO
//     (resultfile.go): a file it did not write is refused as stale.
//   - Worktree checks commits out into temporary directories
//     (gitrepo.Materialize: the user's checkout, index and HEAD are never
//     touched) and runs commands there; the directories are removed
//     afterwards, also when the context is cancelled.
//   - ToRuns turns parsed results into history runs (benchmark names,
//     labels, the dirty flag and working-tree hash, the testbed and its
//     environment, the validity of each result), as perfgate ingest
//     stores them. The CLI detects the testbed and hashes the tree; Spec
//     carries them into every run of run, ab, bisect and bisect-step.
//   - Stored reads a bisect's stored values: runs of another testbed than
//     the target's are not reused, and without a testbed (bisect
//     --stored) each testbed is a setup of its own.
//   - Repeat runs a command N times in the current checkout (perfgate
//     run) and keeps every repetition that produced a result: a failing
//     repetition is reported and does not discard the others; CommitMeasurer runs a command line at a commit in a temporary
//     checkout (perfgate bisect); Step runs it once where git bisect
//     checked out (perfgate bisect-step); AB runs it on two commits in
//     temporary checkouts, interleaved A B B A ... (perfgate ab), and
//     returns the runs in adjacent pairs for gate.CheckPaired.
//   - The flows of bisect and bisect-step that people stumble on:
//     LocalScript points a --run script that is in the working tree but
//     not committed at a commit to the working tree's copy (with a note
//     the CLI prints); MeasureBaseline measures bisect-step's --baseline
//     once in a temporary checkout and stores it, CommandLine is the
//     command line it runs and BaselineHint the command that stores a
//     result there by hand; DirtyRuns counts the stored runs left out for
//     a dirty working tree; HistoryShape reads the stored runs outside a
//     bisect's range that teach it the noise's shape
//     (bisect.Options.History).
//   - Saver writes runs to the history, opening (and locking) it only for
//     the write, never across benchmark time. When the history still
//     cannot be written (locked, read-only, damaged), the runs are saved
//     as JSONL (the format of perfgate export) with the raw output beside
//     them, and the error carries the exact perfgate import command that
//     stores them later: a finished benchmark is never thrown away.
//   - Serve is a serving benchmark's setup and server steps (serve.go):
//     the setup runs once per checkout; the server starts in a process
//     group of its own with PERFGATE_PORT set to a free port, is ready
//     when a URL answers HTTP 200 or its output matches a pattern, stays
//     up across the repeats of a commit (after warm-up runs that are not
//     stored) and is stopped, the whole group, before the next commit's
//     starts and on a cancelled context. Repeat, AB, CommitMeasurer and
//     Step take it; a server that exits before it is ready or during a
//     run is a *ServerError quoting its log, and the runs record how they
//     were served in their Env (the Fact* keys).
//   - Adaptive spends runs only while a gate verdict is undecided
//     (perfgate run --repeat auto), built on gate.Check's public results;
//     TestAdaptiveErrorRates states its error rates next to a fixed
//     --repeat 5.
//
// runner knows the store and git, but nothing of the command line: the
// CLI wires flags to it and maps its errors to exit codes.
package runner
