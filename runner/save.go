package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/store"
)

// Saver writes runs to the history. It opens (and so locks) the history
// only for the write, never across benchmark time: a perfgate sync or
// check that holds it meanwhile delays nothing. When the history still
// cannot be written (locked past the timeout, read-only, damaged), the
// runs are saved as JSONL, in the format of perfgate export, with the
// benchmark's raw output beside them, and the error (*UnsavedError) says
// where and gives the exact perfgate import command that stores them:
// a finished benchmark is never thrown away.
type Saver struct {
	// Open opens the history for writing.
	Open func() (*store.Store, error)
	// DB is the history's path, for the import command: a file, or a
	// postgres:// URL without its password.
	DB string
	// Dir is where unsaved runs go; "" means an "unsaved" directory next
	// to the history, else one of the user's own (see dirs).
	Dir string
	// Program is how the import command names perfgate ("perfgate" when
	// empty).
	Program string
}

// UnsavedError is a history that could not be written, and where the
// runs were saved instead.
type UnsavedError struct {
	Err    error    // why the history could not be written
	Runs   int      // how many runs were saved
	File   string   // the runs, as JSONL
	Raw    []string // the raw output of the benchmark runs
	Import string   // the command that stores them later
}

func (e *UnsavedError) Error() string {
	raw := ""
	if len(e.Raw) > 0 {
		raw = fmt.Sprintf(" (the benchmark's output beside it: %s)", strings.Join(e.Raw, ", "))
	}
	return fmt.Sprintf("%v\nnothing is lost: the %d run(s) are saved in %s%s; once the history can be written, store them with:\n  %s",
		e.Err, e.Runs, e.File, raw, e.Import)
}

func (e *UnsavedError) Unwrap() error { return e.Err }

// Save stores runs in one transaction and returns how many were new. raw
// lists the files holding the benchmark's raw output: they are removed
// once the runs are stored, and kept beside the saved runs when the
// history cannot be written. Bad runs (store.ErrBadInput) are not saved
// anywhere: storing them later would fail the same way.
func (s *Saver) Save(runs []store.Run, raw ...string) (added int, err error) {
	added, err = s.put(runs)
	if err == nil || errors.Is(err, store.ErrBadInput) {
		for _, f := range raw {
			os.Remove(f)
		}
		return added, err
	}
	if len(runs) == 0 {
		return 0, err
	}
	if uerr := s.saveAside(runs, raw, err); uerr != nil {
		return 0, uerr
	}
	return 0, err
}

func (s *Saver) put(runs []store.Run) (int, error) {
	st, err := s.Open()
	if err != nil {
		return 0, err
	}
	added, err := st.Put(runs)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	return added, err
}

// saveAside writes the runs and raw output to the first directory that
// takes them and returns the *UnsavedError that says so; nil when no
// directory did.
func (s *Saver) saveAside(runs []store.Run, raw []string, cause error) error {
	for _, d := range s.dirs() {
		dir := d.path
		if d.private {
			if err := privateDir(dir); err != nil {
				continue
			}
		} else if err := os.MkdirAll(dir, 0o755); err != nil {
			continue
		}
		stamp := time.Now().UTC().Format("20060102T150405Z")
		f, err := os.CreateTemp(dir, "runs-"+stamp+"-*.jsonl")
		if err != nil {
			continue
		}
		var buf []byte
		for i := range runs {
			buf = store.AppendJSON(buf, &runs[i])
			buf = append(buf, '\n')
		}
		_, werr := f.Write(buf)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(f.Name())
			continue
		}
		ue := &UnsavedError{Err: cause, Runs: len(runs), File: f.Name()}
		base := strings.TrimSuffix(f.Name(), ".jsonl")
		for i, r := range raw {
			dst := fmt.Sprintf("%s.output-%d.log", base, i+1)
			if err := moveFile(r, dst); err == nil {
				ue.Raw = append(ue.Raw, dst)
			}
		}
		ue.Import = s.importCommand(f.Name())
		return ue
	}
	return nil
}

// saveDir is a directory that may take unsaved runs; a private one is
// the user's own, created 0700 and checked before use.
type saveDir struct {
	path    string
	private bool
}

// dirs are where unsaved runs may go, in order: Dir when set; else the
// "unsaved" directory next to a history file, then the user's own cache
// directory (perfgate/unsaved in os.UserCacheDir), then a directory of
// the system's temporary one named for the user (perfgate-unsaved-UID).
// A fixed name shared by every user would let another user create it
// first and read or replace the runs.
func (s *Saver) dirs() []saveDir {
	if s.Dir != "" {
		return []saveDir{{path: s.Dir}}
	}
	var out []saveDir
	if s.DB != "" && !store.IsPostgres(s.DB) {
		out = append(out, saveDir{path: filepath.Join(filepath.Dir(s.DB), "unsaved")})
	}
	if cache, err := os.UserCacheDir(); err == nil && filepath.IsAbs(cache) {
		out = append(out, saveDir{path: filepath.Join(cache, "perfgate", "unsaved"), private: true})
	}
	return append(out, saveDir{path: filepath.Join(os.TempDir(), fmt.Sprintf("perfgate-unsaved-%d", os.Getuid())), private: true})
}

// privateDir creates dir (mode 0700) unless it exists, and checks that it
// is a directory, not a symbolic link, of this user's (where the system
// says who owns a file), and that no other user may write it.
func privateDir(dir string) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s may be written by other users (mode %v)", dir, fi.Mode().Perm())
	}
	if !ownedByUs(fi) {
		return fmt.Errorf("%s belongs to another user", dir)
	}
	return nil
}

// importCommand is the command that stores the saved runs, with absolute
// paths so that it works from any directory.
func (s *Saver) importCommand(file string) string {
	prog := s.Program
	if prog == "" {
		prog = "perfgate"
	}
	cmd := prog
	if s.DB != "" {
		db, err := filepath.Abs(s.DB)
		if err != nil || store.IsPostgres(s.DB) {
			db = s.DB
		}
		cmd += " --db " + ShellQuote(db)
	}
	return cmd + " import " + ShellQuote(file)
}

// moveFile renames src to dst, copying across file systems.
func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return err
	}
	return os.Remove(src)
}

// ShellQuote quotes s for a POSIX shell when it needs it.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+@%,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
