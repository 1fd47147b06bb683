package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// sha returns a full SHA-1 commit id made from n.
func sha(n int) string { return fmt.Sprintf("%040x", n) }

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// mkRun returns a run ingested from a file.
func mkRun(commit int, bench string, ttft float64) Run {
	return Run{
		Commit:    sha(commit),
		Benchmark: bench,
		Time:      t0.Add(time.Duration(commit) * time.Minute),
		Metrics:   map[string]float64{"mean_ttft_ms": ttft, "completed": 1000, "output_throughput": 1234.5678},
		Labels:    map[string]string{"model": "Qwen/Qwen2.5-7B", "hardware": "910B"},
		Source:    Source{Format: "vllm-serve-text", File: "bench.log", Line: 3},
	}
}

func openTest(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), ".perfgate", "history.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustPut(t testing.TB, s *Store, runs ...Run) int {
	t.Helper()
	n, err := s.Put(runs)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func ids(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func TestPutAndLookups(t *testing.T) {
	s := openTest(t, Options{})
	runs := []Run{
		mkRun(1, "serving", 100),
		mkRun(1, "serving", 101), // a repetition
		mkRun(1, "throughput", 50),
		mkRun(2, "serving", 102),
		mkRun(3, "throughput", 51),
	}
	runs[1].Source.Line = 40
	runs[1].Time = runs[1].Time.Add(time.Second)
	runs[2].Time = runs[2].Time.Add(2 * time.Second)
	if n := mustPut(t, s, runs...); n != len(runs) {
		t.Fatalf("Put added %d, want %d", n, len(runs))
	}
	for i, r := range runs {
		if !isRunID(r.ID) {
			t.Errorf("run %d: Put left ID %q", i, r.ID)
		}
	}
	if n, err := s.Len(); err != nil || n != 5 {
		t.Errorf("Len = %d, %v; want 5", n, err)
	}

	tests := []struct {
		name string
		got  func() (any, error)
		want any
	}{
		{"ByCommit", func() (any, error) {
			r, err := s.ByCommit(sha(1))
			return ids(r), err
		}, ids(runs[:3])},
		{"ByCommit unknown", func() (any, error) {
			r, err := s.ByCommit(sha(99))
			return len(r), err
		}, 0},
		{"ByCommits", func() (any, error) {
			m, err := s.ByCommits([]string{sha(2), sha(3), sha(99), sha(2)})
			return map[string][]string{sha(2): ids(m[sha(2)]), sha(3): ids(m[sha(3)])}, err
		}, map[string][]string{sha(2): {runs[3].ID}, sha(3): {runs[4].ID}}},
		{"ByCommits omits commits without runs", func() (any, error) {
			m, err := s.ByCommits([]string{sha(99)})
			return len(m), err
		}, 0},
		{"ByBenchmark at commits", func() (any, error) {
			m, err := s.ByBenchmark("serving", []string{sha(1), sha(3)})
			return map[string][]string{sha(1): ids(m[sha(1)]), "n": {strconv.Itoa(len(m))}}, err
		}, map[string][]string{sha(1): ids(runs[:2]), "n": {"1"}}},
		{"ByBenchmark all commits", func() (any, error) {
			m, err := s.ByBenchmark("throughput", nil)
			return map[string][]string{sha(1): ids(m[sha(1)]), sha(3): ids(m[sha(3)])}, err
		}, map[string][]string{sha(1): {runs[2].ID}, sha(3): {runs[4].ID}}},
		{"ByBenchmark unknown", func() (any, error) {
			m, err := s.ByBenchmark("nope", nil)
			return len(m), err
		}, 0},
		{"Measured any benchmark", func() (any, error) {
			return s.Measured("", []string{sha(1), sha(2), sha(3), sha(4)})
		}, map[string]int{sha(1): 3, sha(2): 1, sha(3): 1}},
		{"Measured one benchmark", func() (any, error) {
			return s.Measured("serving", []string{sha(1), sha(2), sha(3), sha(4)})
		}, map[string]int{sha(1): 2, sha(2): 1}},
		{"Measured unknown benchmark", func() (any, error) {
			return s.Measured("nope", []string{sha(1)})
		}, map[string]int{}},
		{"HasCommit", func() (any, error) { return s.HasCommit(sha(3), "throughput") }, true},
		{"HasCommit other benchmark", func() (any, error) { return s.HasCommit(sha(3), "serving") }, false},
		{"Commits", func() (any, error) { return s.Commits("") }, []string{sha(1), sha(2), sha(3)}},
		{"Commits of a benchmark", func() (any, error) { return s.Commits("throughput") }, []string{sha(1), sha(3)}},
		{"Commits of unknown benchmark", func() (any, error) { return s.Commits("nope") }, []string(nil)},
		{"Benchmarks", func() (any, error) { return s.Benchmarks() }, []string{"serving", "throughput"}},
		{"Each in time order", func() (any, error) { return eachIDs(s, Filter{}) }, ids(runs)},
		{"Each since", func() (any, error) { return eachIDs(s, Filter{Since: runs[3].Time}) }, ids(runs[3:])},
		{"Each until", func() (any, error) { return eachIDs(s, Filter{Until: runs[3].Time}) }, ids(runs[:3])},
		{"Each benchmark", func() (any, error) { return eachIDs(s, Filter{Benchmark: "throughput"}) }, []string{runs[2].ID, runs[4].ID}},
		{"Each commit and benchmark", func() (any, error) {
			return eachIDs(s, Filter{Commit: sha(1), Benchmark: "serving", Since: runs[1].Time})
		}, []string{runs[1].ID}},
		{"Each unknown benchmark", func() (any, error) { return eachIDs(s, Filter{Benchmark: "nope"}) }, []string(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.got()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}

	// What comes back is what went in.
	got, err := s.ByCommit(sha(1))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, runs[:3]) {
		t.Errorf("ByCommit returned\n%+v\nwant\n%+v", got, runs[:3])
	}
}

func eachIDs(s *Store, f Filter) ([]string, error) {
	var out []string
	err := s.Each(f, func(r Run) error {
		out = append(out, r.ID)
		return nil
	})
	return out, err
}

func TestLookupRejectsShortCommits(t *testing.T) {
	s := openTest(t, Options{})
	for _, c := range []string{"HEAD", "abc123", strings.Repeat("AB", 20), sha(1)[1:], ""} {
		if _, err := s.ByCommit(c); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), strconv.Quote(c)) {
			t.Errorf("ByCommit(%q) = %v, want a bad-input error quoting it", c, err)
		}
	}
}

// TestRunRoundTrip stores runs using every field and encoding path and
// reads them back unchanged.
func TestRunRoundTrip(t *testing.T) {
	s := openTest(t, Options{})
	full := Run{
		Commit:    strings.Repeat("ab", 32), // SHA-256
		Benchmark: "serving-μ \"quoted\"",
		Time:      time.Date(2024, 12, 31, 23, 59, 59, 123456789, time.UTC),
		Metrics: map[string]float64{
			"mean_ttft_ms": 123.45, "p99_ttft_ms": 1.0 / 3, "completed": 1000, "failed": 0,
			"neg": -2.5, "negzero": math.Copysign(0, -1), "tiny": 5e-324, "huge": math.MaxFloat64,
			"big_int": 1 << 60, "sci": 6.02214076e23,
		},
		Labels:   map[string]string{"model": "deepseek-ai/DeepSeek-R1", "empty": "", "tab": "a\tb"},
		Source:   Source{Format: "vllm-serve-text", File: "logs/run 1.log", Line: 812},
		Command:  []string{"vllm", "bench", "serve", "--model", "x y"},
		ExitCode: 3,
		Dirty:    true,
		Invalid:  "514 of 1000 requests failed",
		Testbed:  "8x NVIDIA H100, linux/amd64",
		Env:      map[string]string{"accelerator": "NVIDIA H100", "accelerator_count": "8"},
		Tree:     strings.Repeat("0f", 32),
	}
	bare := Run{Commit: sha(7), Benchmark: "b", Time: t0, Metrics: map[string]float64{}, Labels: map[string]string{}}
	local := mkRun(8, "serving", 99)
	local.Time = time.Date(2025, 6, 1, 9, 30, 0, 5, time.FixedZone("CEST", 7200))
	for _, r := range []Run{full, bare, local} {
		in := []Run{r}
		mustPut(t, s, in...)
		got, err := s.ByCommit(r.Commit)
		if err != nil {
			t.Fatal(err)
		}
		want := in[0]
		want.Time = want.Time.UTC()
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("stored\n%+v\nread back\n%+v", want, got)
		}
		if math.Signbit(got[0].Metrics["negzero"]) != math.Signbit(want.Metrics["negzero"]) {
			t.Errorf("the sign of -0 was lost")
		}
	}
}

func TestPutIdempotent(t *testing.T) {
	base := mkRun(1, "serving", 100)
	later := func(r Run) Run { r.Time = r.Time.Add(time.Hour); return r }
	tests := []struct {
		name   string
		second func(Run) Run
		added  int // by the second Put
	}{
		{"identical run", func(r Run) Run { return r }, 0},
		{"same file ingested again later", later, 0},
		{"same file, labels rebuilt", func(r Run) Run {
			r.Labels = map[string]string{"hardware": "910B", "model": "Qwen/Qwen2.5-7B"}
			return r
		}, 0},
		{"another block of the file", func(r Run) Run { r.Source.Line = 99; return r }, 1},
		{"another file", func(r Run) Run { r.Source.File = "other.log"; return r }, 1},
		{"another commit", func(r Run) Run { r.Commit = sha(2); return r }, 1},
		{"a metric differs", func(r Run) Run {
			r.Metrics = map[string]float64{"mean_ttft_ms": 100.000001, "completed": 1000, "output_throughput": 1234.5678}
			return r
		}, 1},
		{"a label differs", func(r Run) Run { r.Labels = map[string]string{"model": "other"}; return r }, 1},
		{"dirty tree", func(r Run) Run { r.Dirty = true; return r }, 1},
		{"stdin read twice at different times", func(r Run) Run { return later(r) }, 1},
		{"command repeated with identical numbers", func(r Run) Run { return later(r) }, 1},
		{"command result stored twice", func(r Run) Run { return r }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, Options{})
			first := base
			switch {
			case strings.HasPrefix(tt.name, "stdin"):
				first.Source.File = "-"
			case strings.HasPrefix(tt.name, "command"):
				first.Command = []string{"vllm", "bench", "serve"}
			}
			if n := mustPut(t, s, first); n != 1 {
				t.Fatalf("first Put added %d", n)
			}
			second := tt.second(first)
			second.ID = ""
			if n := mustPut(t, s, second); n != tt.added {
				t.Errorf("second Put added %d, want %d", n, tt.added)
			}
			if n, _ := s.Len(); n != 1+tt.added {
				t.Errorf("Len = %d, want %d", n, 1+tt.added)
			}
		})
	}

	t.Run("duplicate within one Put", func(t *testing.T) {
		s := openTest(t, Options{})
		if n := mustPut(t, s, base, base, later(base)); n != 1 {
			t.Errorf("Put added %d, want 1", n)
		}
	})
}

func TestPutAllOrNothing(t *testing.T) {
	good := []Run{mkRun(1, "serving", 100), mkRun(2, "serving", 101)}
	nan := mkRun(3, "serving", math.NaN())
	tests := []struct {
		name string
		bad  func(s *Store) Run
		want string
	}{
		{"short commit", func(*Store) Run { r := mkRun(3, "s", 1); r.Commit = "abc1234"; return r },
			`run 3 of 3 (benchmark "s", commit "abc1234"): commit "abc1234" is not a full commit id (40 or 64 lowercase hex digits)`},
		{"NaN metric", func(*Store) Run { return nan }, `metric "mean_ttft_ms" is NaN; only finite values can be stored`},
		{"infinite metric", func(*Store) Run { r := mkRun(3, "s", math.Inf(1)); return r }, `metric "mean_ttft_ms" is +Inf`},
		{"empty benchmark", func(*Store) Run { return mkRun(3, "", 1) }, "the benchmark name is empty; name the benchmark (--name)"},
		{"empty metric name", func(*Store) Run { r := mkRun(3, "s", 1); r.Metrics[""] = 2; return r }, "a metric has an empty name (value 2)"},
		{"empty label key", func(*Store) Run { r := mkRun(3, "s", 1); r.Labels[""] = "x"; return r }, `a label has an empty key (value "x")`},
		{"invalid UTF-8", func(*Store) Run { r := mkRun(3, "s", 1); r.Labels["model"] = "\xff"; return r }, `label "model" "\xff" is not valid UTF-8`},
		{"huge label", func(*Store) Run { r := mkRun(3, "s", 1); r.Labels["cfg"] = strings.Repeat("x", 5000); return r }, "is 5000 bytes long; the limit is 4096"},
		{"malformed id", func(*Store) Run { r := mkRun(3, "s", 1); r.ID = "run-1"; return r }, `id "run-1" is not a perfgate run id (32 lowercase hex digits)`},
		{"negative line", func(*Store) Run { r := mkRun(3, "s", 1); r.Source.Line = -1; return r }, "source line -1 is negative"},
		{"exit code without command", func(*Store) Run { r := mkRun(3, "s", 1); r.ExitCode = 1; return r }, "exit code 1 without a command"},
		{"time out of range", func(*Store) Run {
			r := mkRun(3, "s", 1)
			r.Time = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
			return r
		}, "time 3000-01-01T00:00:00Z is out of range"},
		// Found inside the write transaction, after the good runs were put.
		{"id stored with other content", func(s *Store) Run {
			stored := mkRun(9, "serving", 1)
			stored.ID = ContentID(stored)
			mustPut(t, s, stored)
			r := mkRun(9, "serving", 2)
			r.ID = stored.ID
			return r
		}, "is already stored for this commit with different content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, Options{})
			bad := tt.bad(s)
			before, _ := s.Len()
			batch := append(slices.Clone(good), bad)
			n, err := s.Put(batch)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Put error = %v\nwant it to contain %q", err, tt.want)
			}
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("error %v does not match ErrBadInput", err)
			}
			if n != 0 {
				t.Errorf("Put reported %d added", n)
			}
			if after, _ := s.Len(); after != before {
				t.Errorf("Len went from %d to %d: a failed Put stored runs", before, after)
			}
			if m, _ := s.Measured("", []string{sha(1), sha(2)}); len(m) != 0 {
				t.Errorf("runs of the failed Put are indexed: %v", m)
			}
		})
	}
}

func TestDecimalEncoding(t *testing.T) {
	values := []float64{0, 1, -1, 0.1, 0.2, 0.3, 123.45, 1234.5678, 99.99, 1e22, 1e23, 1e-7, 5e-324,
		math.MaxFloat64, math.SmallestNonzeroFloat64, 1 << 53, 1<<53 + 2, 9007199254740993, 1.0 / 3, 2.0 / 3,
		0.000123, 4.35e-5, 6.02214076e23, -273.15, 1e300, 123456789012345678}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		switch r.IntN(4) {
		case 0:
			values = append(values, math.Float64frombits(r.Uint64()))
		case 1:
			values = append(values, float64(r.IntN(1e7))/100) // text output, 2 decimals
		case 2:
			values = append(values, r.Float64()*math.Pow(10, float64(r.IntN(40)-20)))
		default:
			values = append(values, float64(r.Int64N(1<<62)-1<<61))
		}
	}
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		b := appendMetric(nil, 5, v)
		rd := reader{b: b}
		h := rd.uvarint()
		var got float64
		if h&1 == 0 {
			got = math.Float64frombits(binary.LittleEndian.Uint64(rd.bytes(8)))
		} else {
			m := rd.varint()
			got = fromDecimal(m, int(rd.varint()))
		}
		if rd.bad || h>>1 != 5 || math.Float64bits(got) != math.Float64bits(v) {
			t.Fatalf("%v (%x) encoded as %x decodes to %v (%x)", v, math.Float64bits(v), b, got, math.Float64bits(got))
		}
		if len(b) > 10 {
			t.Fatalf("%v takes %d bytes", v, len(b))
		}
	}
	for _, tt := range []struct {
		v    float64
		size int
	}{{1000, 3}, {123.45, 5}, {0, 3}, {math.Copysign(0, -1), 9}, {1.0 / 3, 9}} {
		if got := len(appendMetric(nil, 1, tt.v)); got != tt.size {
			t.Errorf("%v takes %d bytes, want %d", tt.v, got, tt.size)
		}
	}
}

// TestFewDecimals: the fast path gives the decimal strconv's shortest
// formatting gives.
func TestFewDecimals(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		v := float64(r.Int64N(1e12)-5e11) / math.Pow(10, float64(i%6))
		if i%7 == 0 {
			v = r.NormFloat64() * 1000
		}
		m, e, ok := fewDecimals(v)
		if !ok {
			continue
		}
		if m2, e2, _ := shortestDecimal(v); m != m2 || e != e2 {
			t.Fatalf("%v: fewDecimals %de%d, strconv %de%d", v, m, e, m2, e2)
		}
	}
}

func TestDecodeDamagedRecord(t *testing.T) {
	s := openTest(t, Options{})
	in := []Run{mkRun(1, "serving", 100)}
	in[0].Command = []string{"a", "b"}
	in[0].Invalid = "x"
	mustPut(t, s, in...)
	var rec []byte
	s.bolt().db.View(func(tx *bolt.Tx) error {
		rec = slices.Clone(tx.Bucket(bucketRun).Get(appendSeq(nil, 1)))
		return nil
	})
	if rec == nil {
		t.Fatal("record 1 not found")
	}
	err := s.bolt().view(func(tx *txn) error {
		if _, err := tx.decodeRun(rec); err != nil {
			t.Errorf("intact record: %v", err)
		}
		for n := range len(rec) {
			if _, err := tx.decodeRun(rec[:n]); err == nil {
				t.Errorf("record cut to %d of %d bytes decoded without error", n, len(rec))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLockTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	w, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, opts := range []Options{{Timeout: 200 * time.Millisecond}, {Timeout: 200 * time.Millisecond, ReadOnly: true}, {Timeout: -1}} {
		_, err := Open(path, opts)
		var le *LockedError
		if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
			t.Fatalf("Open(%+v) while a writer holds the file: %v, want a *LockedError", opts, err)
		}
		msg := err.Error()
		wantWait := "did not wait for it"
		if opts.Timeout > 0 {
			wantWait = "gave up waiting for it after 200ms"
		}
		for _, want := range []string{"history " + path + " is in use by another process", wantWait, "wait until that perfgate command finishes and retry", "pass --db (or set PERFGATE_DB)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if runtime.GOOS == "linux" {
			if le.PID != os.Getpid() || !strings.Contains(msg, fmt.Sprintf("(pid %d: ", os.Getpid())) {
				t.Errorf("message %q does not name this process (pid %d) as the holder", msg, os.Getpid())
			}
		}
	}
	// Open waits for the lock rather than giving up at once: a writer
	// that closes while another Open waits (with a timeout beyond any
	// machine's delay) lets it in. No wall time is asserted.
	got := make(chan error, 1)
	go func() {
		s, err := Open(path, Options{Timeout: time.Hour})
		if err == nil {
			err = s.Close()
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond) // most likely waiting by now; if not, Open simply finds the file free
	w.Close()
	if err := <-got; err != nil {
		t.Errorf("Open waiting for a writer that closes: %v", err)
	}

	// Readers share the file.
	r1, err := Open(path, Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer r1.Close()
	r2, err := Open(path, Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("a second reader: %v", err)
	}
	r2.Close()
	if _, err := r1.Put([]Run{mkRun(1, "s", 1)}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Put on a read-only store: %v, want ErrReadOnly", err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, fill func(tx *bolt.Tx) error) string {
		path := filepath.Join(dir, name)
		db, err := bolt.Open(path, 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(fill); err != nil {
			t.Fatal(err)
		}
		db.Close()
		return path
	}
	newer := write("newer.db", func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket(bucketMeta)
		return b.Put(metaSchema, binary.AppendUvarint(nil, SchemaVersion+1))
	})
	foreign := write("foreign.db", func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("widgets"))
		return err
	})
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte(strings.Repeat("not a database\n", 1000)), 0o644)

	tests := []struct {
		name string
		path string
		opts Options
		is   error
		want string
	}{
		{"missing, read-only", filepath.Join(dir, "none.db"), Options{ReadOnly: true}, fs.ErrNotExist, "does not exist: ingest or import results first, or pass --db"},
		{"newer schema", newer, Options{}, ErrSchema, fmt.Sprintf("has schema v%d, newer than this perfgate understands (v%d): upgrade perfgate", SchemaVersion+1, SchemaVersion)},
		{"newer schema, read-only", newer, Options{ReadOnly: true}, ErrSchema, "upgrade perfgate"},
		{"foreign buckets", foreign, Options{}, nil, "holds buckets perfgate does not know (widgets): it is not a perfgate history"},
		{"not a database", text, Options{}, nil, "is not a perfgate history or is damaged"},
		{"directory in the way", filepath.Join(text, "h.db"), Options{}, nil, "cannot create its directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.path, tt.opts)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v does not match %v", err, tt.is)
			}
		})
	}
}

// TestMigrateV0 opens a history in the prototype's layout (schema v0) and
// finds it upgraded, with ids kept.
func TestMigrateV0(t *testing.T) {
	legacy := []string{
		`{"id":"0123456789abcdef0123456789abcdef","commit":"` + sha(1) + `","benchmark":"serving","time":"2024-01-02T03:04:05Z","metrics":{"mean_ttft_ms":12.5},"labels":{"model":"m"},"source":{"format":"vllm-serve-text","file":"a.log"}}`,
		`{"commit":"` + sha(2) + `","benchmark":"serving","time":"2024-01-03T03:04:05Z","metrics":{"mean_ttft_ms":13},"labels":{},"source":{"format":"vllm-serve-json","file":"b.json"}}`,
	}
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("readOnly=%v", readOnly), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.db")
			db, err := bolt.Open(path, 0o644, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket(bucketLegacyRuns)
				if err != nil {
					return err
				}
				for i, line := range legacy {
					if err := b.Put([]byte(fmt.Sprintf("legacy-%d", i)), []byte(line)); err != nil {
						return err
					}
				}
				return nil
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}

			s, err := Open(path, Options{ReadOnly: readOnly})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if n, err := s.Len(); err != nil || n != 2 {
				t.Errorf("after migration Len = %d, %v; want 2", n, err)
			}
			runs, err := s.ByCommit(sha(1))
			if err != nil || len(runs) != 1 {
				t.Fatalf("ByCommit = %v, %v", runs, err)
			}
			if runs[0].ID != "0123456789abcdef0123456789abcdef" || runs[0].Metrics["mean_ttft_ms"] != 12.5 {
				t.Errorf("migrated run = %+v", runs[0])
			}
			if b, _ := s.Benchmarks(); !slices.Equal(b, []string{"serving"}) {
				t.Errorf("Benchmarks = %v", b)
			}
			if !readOnly {
				// The migrated history takes new runs, reusing the names
				// the migration interned.
				r := mkRun(3, "serving", 14)
				r.Labels = map[string]string{"model": "m"}
				if n := mustPut(t, s, r); n != 1 {
					t.Errorf("Put after migration added %d runs", n)
				}
				got, err := s.ByBenchmark("serving", []string{sha(1), sha(3)})
				if err != nil || len(got[sha(1)]) != 1 || len(got[sha(3)]) != 1 || got[sha(3)][0].Labels["model"] != "m" {
					t.Errorf("ByBenchmark after migration and Put = %v, %v", got, err)
				}
			}
			s.bolt().db.View(func(tx *bolt.Tx) error {
				if v, _ := schemaOf(tx); v != SchemaVersion {
					t.Errorf("schema after migration = %d", v)
				}
				if tx.Bucket(bucketLegacyRuns) != nil {
					t.Errorf("the v0 bucket is still there")
				}
				return nil
			})
		})
	}
}

// TestMigrateV0Bad checks that a failed migration changes nothing.
func TestMigrateV0Bad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket(bucketLegacyRuns)
		return b.Put([]byte("r1"), []byte(`{"commit":"HEAD","benchmark":"b","time":"2024-01-02T03:04:05Z","metrics":{}}`))
	})
	db.Close()
	_, err = Open(path, Options{})
	if err == nil || !strings.Contains(err.Error(), `upgrade history `+path+` from schema v0 to v1: run "r1": commit "HEAD" is not a full commit id`) {
		t.Fatalf("Open = %v", err)
	}
	db, err = bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) != nil || tx.Bucket(bucketLegacyRuns) == nil {
			t.Errorf("a failed migration changed the file")
		}
		return nil
	})
}

// FuzzDecodeRecord feeds damaged records to the decoder: errors, never
// panics.
func FuzzDecodeRecord(f *testing.F) {
	s, err := Open(filepath.Join(f.TempDir(), "h.db"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	full := mkRun(1, "serving", 1.5)
	full.Command, full.Invalid, full.Dirty = []string{"a", strings.Repeat("x", 300)}, "why", true
	full.Testbed, full.Env, full.Tree = "tb", map[string]string{"os": "linux"}, "abcd"
	full.Requests = []byte(summaryJSON)
	mustPut(f, s, full, mkRun(2, "b", 1.0/3))
	s.bolt().db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRun).ForEach(func(_, v []byte) error {
			f.Add(slices.Clone(v))
			return nil
		})
	})
	f.Fuzz(func(t *testing.T, rec []byte) {
		s.bolt().view(func(tx *txn) error {
			tx.decodeRun(rec)
			benchOf(rec)
			return nil
		})
	})
}
