package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/internal/proc"
)

// Worktree runs commands in temporary checkouts of commits, never in the
// user's checkout: a checkout writes the commit's tree into a new
// directory (gitrepo.Materialize, which leaves the user's index, HEAD and
// files alone), and the directory is removed afterwards, also when the
// context is cancelled (Ctrl-C).
type Worktree struct {
	Repo *gitrepo.Repo
	// Dir is where the temporary checkouts are made; "" means the system's
	// temporary directory. A build may need a roomy disk: point it there.
	Dir string
	// Grace is how long a cancelled command has between SIGTERM and
	// SIGKILL (DefaultGrace when 0).
	Grace time.Duration
}

// Checkout is one commit checked out in a temporary directory.
type Checkout struct {
	Dir string // the directory
	SHA string // the full commit id
}

// Checkout writes rev's tree into a fresh temporary directory; the
// caller removes it with Remove.
func (w *Worktree) Checkout(ctx context.Context, rev string) (*Checkout, error) {
	dir, err := os.MkdirTemp(w.Dir, "perfgate-checkout-")
	if err != nil {
		return nil, fmt.Errorf("cannot make a temporary checkout directory: %v; pass --workdir DIR with a writable directory", err)
	}
	sha, err := w.Repo.Materialize(ctx, rev, dir)
	if err != nil {
		removeAll(dir)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return &Checkout{Dir: dir, SHA: sha}, nil
}

// Remove removes the checkout, also what a command left read-only in it.
func (c *Checkout) Remove() error {
	if err := removeAll(c.Dir); err != nil {
		return fmt.Errorf("cannot remove the temporary checkout %s: %v; remove it by hand", c.Dir, err)
	}
	return nil
}

// Exec checks rev out into a fresh temporary directory, runs c there
// (c.Dir is set to it; env gains the extra variables, each KEY=VALUE with
// VALUE's "%s" replaced by the full SHA) and removes the directory before
// it returns. See Exec for the rest.
func (w *Worktree) Exec(ctx context.Context, rev string, c Command, env ...string) (o *Output, sha string, err error) {
	co, err := w.Checkout(ctx, rev)
	if err != nil {
		return nil, "", err
	}
	defer func() {
		if rerr := co.Remove(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	c.Dir = co.Dir
	if c.Grace == 0 {
		c.Grace = w.Grace
	}
	if len(env) > 0 {
		if c.Env == nil {
			c.Env = proc.Environ()
		}
		for _, kv := range env {
			c.Env = append(c.Env, strings.ReplaceAll(kv, "%s", co.SHA))
		}
	}
	o, err = Exec(ctx, c)
	return o, co.SHA, err
}

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
// only the last TailSize bytes). The environment, perfgate's without its
// tokens (proc.Environ), gains PERFGATE_BISECT_COMMIT (the full SHA). The command runs in its own process group; whatever it
// leaves running when it exits, or when ctx is cancelled, is killed, and
// the directory is removed before Run returns. A non-zero exit is not an
// error: it is in ExitCode. err reports a checkout that failed, a shell
// that could not start, or the context's error.
func (w *Worktree) Run(ctx context.Context, rev, cmdline string, out io.Writer) (res CommandResult, err error) {
	co, err := w.Checkout(ctx, rev)
	if err != nil {
		return res, err
	}
	res.Dir = co.Dir
	defer func() {
		if rerr := co.Remove(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	o, err := Exec(ctx, Command{
		Argv: []string{"sh", "-c", cmdline}, Dir: co.Dir,
		Env:  append(proc.Environ(), "PERFGATE_BISECT_COMMIT="+co.SHA),
		Live: out, Grace: w.Grace, quiet: true,
	})
	if o != nil {
		res.Tail, res.Written, res.ExitCode = o.Tail, o.Written, o.ExitCode
	}
	var se *StartError
	if errors.As(err, &se) {
		return res, fmt.Errorf("cannot run the command with sh -c: %v", se.Err)
	}
	return res, err
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
