package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// damageStore returns the bytes of a real history made for the test (400
// runs of 30 metrics over 40 commits and 40 records, written in several transactions as
// CI would, so the file has branch, leaf, overflow and freed pages) and
// its meta page.
func damageStore(t testing.TB) ([]byte, boltMeta) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for c := range 40 {
		var runs []Run
		for b := range 10 {
			r := mkRun(c, fmt.Sprintf("serving-%d", b%5), 100+float64(c*10+b)/7)
			for k, name := range benchMetricNames {
				r.Metrics[name] = float64(k*1000+c) / 3
			}
			r.Source.Line = b + 1
			runs = append(runs, r)
		}
		mustPut(t, s, runs...)
	}
	// And the records of accepted changes and invalidated runs.
	var recs []Record
	for c := range 20 {
		a := acceptRec()
		a.Commit, a.Reason = sha(c), fmt.Sprintf("accepted change %d", c)
		recs = append(recs, a, Record{Kind: RecordInvalidate, Commit: sha(c), Run: fmt.Sprintf("%032x", c), Reason: "runner was throttled", By: "ci", Time: t0})
	}
	if _, err := s.PutRecords(recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := readMeta(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return data, m
}

// damageCase is one damaged copy of the history.
type damageCase struct {
	name string
	data []byte
}

// damageCases truncates the history at many offsets and flips bytes at
// many offsets of every page in use: page headers (id, flags, count,
// overflow), the first element headers (positions, sizes, child page ids)
// and the middle and end of the page.
func damageCases(data []byte, m boltMeta) []damageCase {
	ps := int(m.pageSize)
	used := int(m.pgid) * ps
	var cases []damageCase
	for _, off := range []int{0, 1, 15, 16, 100, ps - 1, ps, ps + 40, 2 * ps, 3*ps + 7} {
		cases = append(cases, damageCase{fmt.Sprintf("truncate at %d", off), bytes.Clone(data[:off])})
	}
	for off := 4 * ps; off < used; off += used / 60 {
		cases = append(cases, damageCase{fmt.Sprintf("truncate at %d", off), bytes.Clone(data[:off])})
	}
	cases = append(cases, damageCase{fmt.Sprintf("truncate at %d (the end of the pages in use)", used), bytes.Clone(data[:used])})
	for page := range int(m.pgid) {
		for _, rel := range []int{0, 8, 16, ps / 2} {
			off := page*ps + rel
			d := bytes.Clone(data)
			d[off] ^= 0xff
			cases = append(cases, damageCase{fmt.Sprintf("flip byte %d (page %d+%d)", off, page, rel), d})
		}
	}
	return cases
}

// exercise reads and writes a damaged history the way the commands do and
// returns the first error. Every error must match ErrDamaged or be one
// that Open reports for a file that is not a history.
func exercise(path string) error {
	s, err := Open(path, Options{ReadOnly: true, Timeout: -1})
	if err != nil {
		return err
	}
	_, err = s.Export(io.Discard, Filter{})
	if err == nil {
		_, err = s.Benchmarks()
	}
	if err == nil {
		_, err = s.ByBenchmark("serving-1", []string{sha(3), sha(39)})
	}
	if err == nil {
		_, err = s.Records()
	}
	// The skip-scans: a damaged page must not send them back forever.
	if err == nil {
		_, err = s.Commits("")
	}
	if err == nil {
		_, err = s.Commits("serving-1")
	}
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	w, err := Open(path, Options{Timeout: -1})
	if err != nil {
		return err
	}
	_, err = w.Put([]Run{mkRun(1000, "serving-new", 1)})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// A damaged history never crashes perfgate: truncated or with a byte
// flipped anywhere in its pages, every operation returns (an error that
// matches ErrDamaged, or success when the damage is harmless), and
// Salvage writes the runs it can read.
func TestDamagedHistory(t *testing.T) {
	data, m := damageStore(t)
	dir := t.TempDir()
	var mu sync.Mutex
	tally := map[string]int{}
	salvaged, total := 0, 0
	short := map[string]int{}
	cases := damageCases(data, m)
	// The cases wait on fsync more than they compute: run a few at once.
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				outcome, runs := runDamageCase(t, dir, i, cases[i])
				mu.Lock()
				tally[outcome]++
				salvaged += runs
				total += 400
				if runs < 400 {
					short[cases[i].name[:4]]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range cases {
		if testing.Short() && i%5 != 0 {
			continue
		}
		work <- i
	}
	close(work)
	wg.Wait()
	t.Logf("%d damaged copies: %v; salvage read %d of %d runs, fewer than 400 from %v", len(cases), tally, salvaged, total, short)
}

// runDamageCase exercises and salvages one damaged copy; it returns what
// happened and the number of runs salvaged.
func runDamageCase(t *testing.T, dir string, i int, c damageCase) (string, int) {
	path := filepath.Join(dir, fmt.Sprintf("h%d.db", i))
	if err := os.WriteFile(path, c.data, 0o644); err != nil {
		t.Error(err)
		return "", 0
	}
	done := make(chan error, 1)
	go func() { done <- exercise(path) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		t.Errorf("%s: still running after 60 s", c.name)
		return "hung", 0
	}
	outcome := ""
	switch {
	case err == nil:
		outcome = "harmless"
	case errors.Is(err, ErrDamaged):
		outcome = "damaged"
		if !strings.Contains(err.Error(), "perfgate recover") {
			t.Errorf("%s: the error does not say how to recover: %v", c.name, err)
		}
	case strings.Contains(err.Error(), "is not a perfgate history"):
		outcome = "not a history"
	default:
		t.Errorf("%s: %v (does not match ErrDamaged)", c.name, err)
	}
	// Salvage reads a fresh copy (exercise may have written to this
	// one, and a bbolt that panicked while opening it may keep its
	// lock until the process exits).
	path = filepath.Join(dir, fmt.Sprintf("s%d.db", i))
	if err := os.WriteFile(path, c.data, 0o644); err != nil {
		t.Error(err)
		return outcome, 0
	}
	var out bytes.Buffer
	rep, err := Salvage(path, &out, -1)
	if err != nil {
		if !errors.Is(err, ErrDamaged) && !strings.Contains(err.Error(), "is not a perfgate history") {
			t.Errorf("%s: salvage: %v", c.name, err)
		}
		return outcome, 0
	}
	if got := strings.Count(out.String(), "\n"); got != rep.Runs+rep.Records {
		t.Errorf("%s: salvage wrote %d lines, reported %d runs and %d records", c.name, got, rep.Runs, rep.Records)
	}
	var d lineDecoder
	for n, line := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if n >= rep.Runs { // the records follow the runs
			if _, err := ParseRecord(line); err != nil || !recordLineKind(line) {
				t.Errorf("%s: salvaged line %d is no record: %v", c.name, n+1, err)
				break
			}
			continue
		}
		r, _, err := d.decode(line)
		if err == nil {
			err = validate(&r)
		}
		if err != nil {
			t.Errorf("%s: salvaged line %d does not import: %v", c.name, n+1, err)
			break
		}
	}
	return outcome, rep.Runs
}

// Salvage reads every run of an undamaged history, and of one whose tail
// was cut off, the runs before the cut.
func TestSalvage(t *testing.T) {
	data, m := damageStore(t)
	path := filepath.Join(t.TempDir(), "history.db")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep, err := Salvage(path, &out, -1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 400 || rep.Counted != 400 || rep.Lost() {
		t.Fatalf("salvage of an undamaged history: %+v", rep)
	}
	s := openTest(t, Options{})
	if added, _, err := s.Import(&out, ImportOptions{}); err != nil || added != 400 {
		t.Fatalf("import of the salvaged runs: %d added, %v", added, err)
	}

	// Both meta pages damaged: bbolt cannot open the file, and every run
	// is found by reading the pages.
	d := bytes.Clone(data)
	d[16+40] ^= 0xff // the high water mark: the checksum fails
	d[int(m.pageSize)+16+40] ^= 0xff
	if err := os.WriteFile(path, d, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrDamaged) {
		t.Fatalf("open with both meta pages damaged: %v, want ErrDamaged", err)
	}
	out.Reset()
	rep, err = Salvage(path, &out, -1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 400 || rep.Scanned != 400 || rep.Counted != -1 || strings.Count(out.String(), "\n") != 400 {
		t.Fatalf("salvage with both meta pages damaged: %+v, want all 400 runs from the pages", rep)
	}

	// Cut short: bbolt reads what it reaches, the pages the rest. How
	// much survives depends on where bbolt put the pages.
	cut := int(m.pgid) * int(m.pageSize) * 3 / 4
	if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("open of a cut-short history: %v, want a damaged error saying it was cut short", err)
	}
	out.Reset()
	rep, err = Salvage(path, &out, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], "cut short") || strings.Count(out.String(), "\n") != rep.Runs+rep.Records {
		t.Fatalf("salvage of a history cut at 3/4 reports %+v and wrote %d lines", rep, strings.Count(out.String(), "\n"))
	}
	t.Logf("cut at %d of %d bytes: salvaged %d of %d runs; problems %q", cut, len(data), rep.Runs, rep.Counted, rep.Problems)
}

// FuzzDamagedHistory damages a real history (made once) with a patch of
// bytes at an offset and an optional cut, then opens it read-only, reads
// every run and salvages it: nothing may crash, and every error must say
// the history is damaged.
//
//	go test ./store -run '^$' -fuzz FuzzDamagedHistory -fuzztime 20000x
func FuzzDamagedHistory(f *testing.F) {
	data, m := damageStore(f)
	ps := uint64(m.pageSize)
	f.Add(uint64(0), []byte{0}, uint64(0))
	f.Add(uint64(ps+16), []byte{0xff, 0xff}, uint64(0))
	f.Add(uint64(2*ps), []byte{1, 2, 3, 4}, uint64(0))
	f.Add(uint64(0), []byte{}, uint64(m.pgid*ps/2))
	f.Add(uint64(m.root*ps+8), []byte{0x10}, uint64(0))
	f.Add(uint64(m.freelist*ps+10), []byte{0xff, 0xff}, uint64(0))
	dir := f.TempDir()
	var n int
	f.Fuzz(func(t *testing.T, off uint64, patch []byte, cut uint64) {
		d := bytes.Clone(data)
		if len(d) > 0 {
			off %= uint64(len(d))
			copy(d[off:], patch)
		}
		if cut > 0 {
			d = d[:cut%uint64(len(d)+1)]
		}
		n++
		path := filepath.Join(dir, fmt.Sprintf("h%d.db", n))
		if err := os.WriteFile(path, d, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(path)
		s, err := Open(path, Options{ReadOnly: true, Timeout: -1})
		if err == nil {
			_, err = s.Export(io.Discard, Filter{})
			if cerr := s.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && !errors.Is(err, ErrDamaged) && !strings.Contains(err.Error(), "perfgate history") {
			t.Fatalf("read: %v does not say the history is damaged", err)
		}
		if _, err := Salvage(path, io.Discard, -1); err != nil && !errors.Is(err, ErrDamaged) && !strings.Contains(err.Error(), "perfgate history") {
			t.Fatalf("salvage: %v", err)
		}
	})
}

// A panic raised outside the store (in a caller's callback) is not damage:
// guard lets it go on instead of calling the history damaged.
func TestGuardKeepsCallersPanics(t *testing.T) {
	s := openTest(t, Options{})
	mustPut(t, s, mkRun(1, "b", 1))
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "negative Repeat count") {
			t.Fatalf("recovered %v, want the callback's own panic", p)
		}
	}()
	err := s.Each(Filter{}, func(Run) error {
		_ = strings.Repeat("x", -1) // panics in package strings
		return nil
	})
	t.Fatalf("Each returned %v, want the callback's panic to go on", err)
}

// The checks before bbolt opens the file run without its lock: a history
// being written meanwhile must never look damaged to them.
func TestCheckFileWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		defer w.Close()
		for c := range 150 {
			if _, err := w.Put([]Run{mkRun(c, "b", float64(c))}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	checks := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d checks while 150 runs were stored", checks)
			return
		default:
		}
		if err := checkFile(path); err != nil {
			t.Fatalf("check %d while the history is written: %v", checks, err)
		}
		checks++
	}
}

// TestStdlibFrames: a fault in a standard-library function inlined into
// bbolt (bytes.Compare in the cursor's search) is bbolt's; the walk skips
// the standard library's frames, not a module's.
func TestStdlibFrames(t *testing.T) {
	for fn, want := range map[string]bool{
		"bytes.Compare": true, "sort.Search": true, "internal/bytealg.Compare": true, "strings.Repeat": false,
		"go.etcd.io/bbolt.(*Cursor).nsearch.func2": false, "github.com/perfgate/perfgate/store.guard": false, "main.main": false,
	} {
		if got := stdlib(fn); got != want {
			t.Errorf("stdlib(%q) = %v, want %v", fn, got, want)
		}
	}
}

type faultAt uintptr

func (f faultAt) Addr() uintptr { return uintptr(f) }

// TestMappedFault: a fault far from zero is the mapped file's; a nil
// dereference (near zero) or another panic is not.
func TestMappedFault(t *testing.T) {
	for p, want := range map[any]bool{faultAt(0x7f102002db90): true, faultAt(8): false, "boom": false} {
		if got := mappedFault(p); got != want {
			t.Errorf("mappedFault(%v) = %v, want %v", p, got, want)
		}
	}
}
