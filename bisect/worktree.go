package bisect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/internal/proc"
)

// Worktree runs a command in temporary checkouts of commits, never in the
// user's checkout: each run writes the commit's tree into a new directory
// (gitrepo.Materialize, which leaves the user's index, HEAD and files
// alone), runs the command there and removes the directory, also when the
// context is cancelled (Ctrl-C).
type Worktree struct {
	Repo *gitrepo.Repo
	// Dir is where the temporary checkouts are made; "" means the system's
	// temporary directory. A build may need a roomy disk: point it there.
	Dir string
	// Grace is how long a cancelled command has between SIGTERM and
	// SIGKILL (default 10s).
	Grace time.Duration
}

// TailSize is how much of a command's output CommandResult keeps: the
// last 64 KiB, enough for the lines a failure message shows, however much
// the command prints.
const TailSize = 64 << 10

// CommandResult is what a command did in a checkout.
type CommandResult struct {
	ExitCode int
	// Tail is the end of the output (stdout and stderr, interleaved as
	// written): all of it up to TailSize bytes, else the last TailSize
	// bytes, which may start in the middle of a line.
	Tail    []byte
	Written int64  // bytes of output in all; more than len(Tail) when Tail is cut
	Dir     string // the checkout it ran in (removed by now)
}

// Run checks rev out into a fresh temporary directory and runs cmdline
// there with `sh -c`, its output written to out as it comes (nil
// discards it; a parser reading it keeps memory bounded, as Run keeps
// only the last TailSize bytes). The environment gains PERFGATE_BISECT_COMMIT
// (the full SHA). The command runs in its own process group; whatever it
// leaves running when it exits, or when ctx is cancelled, is killed, and
// the directory is removed before Run returns. A non-zero exit is not an
// error: it is in ExitCode. err reports a checkout that failed, a shell
// that could not start, or the context's error.
func (w *Worktree) Run(ctx context.Context, rev, cmdline string, out io.Writer) (res CommandResult, err error) {
	dir, err := os.MkdirTemp(w.Dir, "perfgate-bisect-")
	if err != nil {
		return res, fmt.Errorf("cannot make a temporary checkout directory: %v; pass --workdir DIR with a writable directory", err)
	}
	res.Dir = dir
	defer func() {
		if rerr := removeAll(dir); rerr != nil && err == nil {
			err = fmt.Errorf("cannot remove the temporary checkout %s: %v; remove it by hand", dir, rerr)
		}
	}()
	sha, err := w.Repo.Materialize(ctx, rev, dir)
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, err
	}
	tail := &tailBuffer{max: TailSize}
	w2 := io.Writer(tail)
	if out != nil {
		w2 = io.MultiWriter(tail, out)
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", cmdline)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PERFGATE_BISECT_COMMIT="+sha)
	// One writer for both: exec then calls it from one goroutine at a time.
	cmd.Stdout, cmd.Stderr = w2, w2
	grace := w.Grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	proc.SetGroup(cmd, grace)
	runErr := cmd.Run()
	proc.KillGroup(cmd)
	res.Tail, res.Written = bytes.Clone(tail.Bytes()), tail.written
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if errors.Is(runErr, exec.ErrWaitDelay) {
		// The shell exited but something it started in the background
		// kept its output open; that something has just been killed.
		runErr = nil
		if st := cmd.ProcessState; st != nil && !st.Success() {
			res.ExitCode = st.ExitCode()
		}
	}
	if runErr != nil {
		var ee *exec.ExitError
		if errors.As(runErr, &ee) {
			res.ExitCode = ee.ExitCode()
			if res.ExitCode < 0 {
				res.ExitCode = 128 + proc.Signal(ee)
			}
			return res, nil
		}
		return res, fmt.Errorf("cannot run the command with sh -c: %v", runErr)
	}
	return res, nil
}

// removeAll removes dir even when the command left read-only directories
// in it (a Go module cache, a packed build), as os.RemoveAll alone cannot.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// tailBuffer keeps the last max bytes written to it, in one buffer of
// 2*max bytes that never grows.
type tailBuffer struct {
	buf     []byte
	max     int
	written int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.written += int64(n)
	if t.buf == nil {
		t.buf = make([]byte, 0, 2*t.max)
	}
	if n >= t.max {
		t.buf = append(t.buf[:0], p[n-t.max:]...)
		return n, nil
	}
	if len(t.buf)+n > 2*t.max {
		// Keep what, with p, makes the last max bytes.
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-(t.max-n):]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// Bytes returns the last max bytes written (all of them if fewer).
func (t *tailBuffer) Bytes() []byte {
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}
