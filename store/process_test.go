package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// helperEnv makes the test binary act as a helper process (see TestMain):
// its value is the mode, the arguments follow on the command line.
const helperEnv = "PERFGATE_STORE_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := helper(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	removeBenchDir()
	os.Exit(code)
}

// helperCmd returns a command that runs this test binary as a helper.
func helperCmd(mode string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	return cmd
}

func helper(mode string, args []string) error {
	switch mode {
	case "put":
		// put DB WORKER RUNS PER_PUT: store RUNS runs, PER_PUT per Open/Put/Close.
		db, w, n, per := args[0], atoi(args[1]), atoi(args[2]), atoi(args[3])
		for i := 0; i < n; i += per {
			s, err := Open(db, Options{Timeout: 2 * time.Minute})
			if err != nil {
				return err
			}
			var runs []Run
			for j := i; j < min(i+per, n); j++ {
				runs = append(runs, workerRun(w, j))
			}
			added, err := s.Put(runs)
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if added != len(runs) {
				return fmt.Errorf("worker %d: Put added %d of %d", w, added, len(runs))
			}
		}
		return nil
	case "import":
		// import DB FILE BATCH: import slowly, reporting each committed batch.
		db, file, batch := args[0], args[1], atoi(args[2])
		s, err := Open(db, Options{Timeout: time.Minute})
		if err != nil {
			return err
		}
		defer s.Close()
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		_, _, err = s.Import(&slowReader{r: bufio.NewReader(f)}, ImportOptions{
			File: file, BatchSize: batch,
			Progress: func(added, skipped int) { fmt.Printf("committed %d %d\n", added, skipped) },
		})
		return err
	case "hold":
		// hold DB: open the history for writing, say so, and keep it open
		// until stdin closes.
		s, err := Open(args[0], Options{Timeout: time.Minute})
		if err != nil {
			return err
		}
		fmt.Println("held")
		io.Copy(io.Discard, os.Stdin)
		return s.Close()
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

// workerRun is run j of concurrent worker w: distinct for every (w, j).
func workerRun(w, j int) Run {
	r := mkRun(w*100000+j/5, fmt.Sprintf("worker-%d", w), float64(j))
	r.Source.Line = j + 1
	return r
}

// slowReader pauses after every line, so an import takes long enough to
// be killed in the middle.
type slowReader struct{ r *bufio.Reader }

func (s *slowReader) Read(p []byte) (int, error) {
	line, err := s.r.ReadSlice('\n')
	n := copy(p, line)
	if n < len(line) {
		return n, fmt.Errorf("slowReader: buffer of %d bytes is too small", len(p))
	}
	time.Sleep(200 * time.Microsecond)
	if err == bufio.ErrBufferFull {
		err = nil
	}
	return n, err
}

// TestConcurrentWriters runs four processes that write to one history at
// once, each opening it for every Put: no run is lost.
func TestConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	db := filepath.Join(t.TempDir(), ".perfgate", "history.db")
	const workers, runs, per = 4, 120, 8
	var wg sync.WaitGroup
	errs := make([]error, workers)
	out := make([]bytes.Buffer, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := helperCmd("put", db, strconv.Itoa(w), strconv.Itoa(runs), strconv.Itoa(per))
			cmd.Stdout, cmd.Stderr = &out[w], &out[w]
			errs[w] = cmd.Run()
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v\n%s", w, err, out[w].String())
		}
	}
	s, err := Open(db, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.Len(); err != nil || n != workers*runs {
		t.Errorf("Len = %d, %v; want %d", n, err, workers*runs)
	}
	for w := range workers {
		want := map[string]bool{}
		var commits []string
		for j := range runs {
			r := workerRun(w, j)
			want[ContentID(r)] = true
			commits = append(commits, r.Commit)
		}
		got, err := s.ByCommits(commits)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, rs := range got {
			for _, r := range rs {
				if !want[r.ID] {
					t.Errorf("worker %d: unexpected run %s", w, r.ID)
				}
				n++
			}
		}
		if n != runs {
			t.Errorf("worker %d: %d of its %d runs are stored", w, n, runs)
		}
	}
}

// TestKillDuringImport kills an importing process with SIGKILL, three
// times at different points, re-importing the same file each time: the
// history opens, passes bbolt's consistency check and holds exactly the
// runs of the batches committed before each kill.
func TestKillDuringImport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	file := filepath.Join(dir, "runs.jsonl")
	const n, batch = 6000, 100
	var ids []string
	var buf []byte
	for i := range n {
		r := mkRun(i/10, "serving", float64(i)+0.5)
		r.Source.Line = i + 1
		if err := prepare(&r, time.Now()); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		buf = append(AppendJSON(buf, &r), '\n')
	}
	if err := os.WriteFile(file, buf, 0o644); err != nil {
		t.Fatal(err)
	}

	stored := 0
	for round, after := range []int{1, 4, 9} {
		cmd := helperCmd("import", db, file, strconv.Itoa(batch))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for `after` batches beyond those already stored, then kill.
		sc := bufio.NewScanner(stdout)
		reported, seen, prev := 0, 0, 0
		for sc.Scan() {
			var added, skipped int
			if _, err := fmt.Sscanf(sc.Text(), "committed %d %d", &added, &skipped); err != nil {
				t.Fatalf("helper printed %q", sc.Text())
			}
			reported = added + skipped
			if added > prev {
				seen++
			}
			prev = added
			if seen == after {
				break
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		go io.Copy(io.Discard, stdout)
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: the import was not killed (%v): it finished first?\n%s", round, err, stderr.String())
		}

		s, err := Open(db, Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("round %d: after SIGKILL: %v", round, err)
		}
		s.bolt().db.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				t.Errorf("round %d: bbolt check: %v", round, err)
			}
			return nil
		})
		got := map[string]bool{}
		err = s.Each(Filter{}, func(r Run) error {
			got[r.ID] = true
			return nil
		})
		s.Close()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		k := len(got)
		t.Logf("round %d: killed after %d reported runs; %d stored", round, reported, k)
		if k < reported || k < stored {
			t.Errorf("round %d: %d runs stored, but %d were reported committed", round, k, max(reported, stored))
		}
		if k%batch != 0 && k != n {
			t.Errorf("round %d: %d runs stored: not whole batches of %d", round, k, batch)
		}
		for i, id := range ids[:min(k, n)] {
			if !got[id] {
				t.Fatalf("round %d: run of line %d is missing though %d runs are stored", round, i+1, k)
			}
		}
		stored = k
	}
}

// TestLockHeldByAnotherProcess: while another process holds the history,
// a writer and a reader each give up after their timeout with an error
// that names that process (pid and command line) and says what to do; once
// it exits, the history opens.
func TestLockHeldByAnotherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	db := filepath.Join(t.TempDir(), "history.db")
	cmd := helperCmd("hold", db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("helper said %q, %v\n%s", line, err, stderr.String())
	}
	pid := cmd.Process.Pid
	for _, opts := range []Options{{Timeout: 300 * time.Millisecond}, {Timeout: 300 * time.Millisecond, ReadOnly: true}} {
		s, err := Open(db, opts)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%+v) succeeded while pid %d holds the history", opts, pid)
		}
		var le *LockedError
		if !errors.As(err, &le) {
			t.Fatalf("Open(%+v) = %v, want a *LockedError", opts, err)
		}
		msg := err.Error()
		for _, want := range []string{db, "gave up waiting for it after 300ms", "wait until that perfgate command finishes and retry", "--db"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if runtime.GOOS == "linux" {
			if le.PID != pid || !strings.Contains(msg, fmt.Sprintf("(pid %d: %s", pid, os.Args[0])) {
				t.Errorf("message %q does not name the holder, pid %d running %s", msg, pid, os.Args[0])
			}
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, stderr.String())
	}
	s, err := Open(db, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("Open after the holder exited: %v", err)
	}
	s.Close()
}
