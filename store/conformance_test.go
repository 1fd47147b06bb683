package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// A backendUnderTest opens stores on one fresh history: a bbolt file in
// a temporary directory, or a fresh schema of the PostgreSQL test server.
type backendUnderTest struct {
	name string
	// open opens the test's history (the same one each call) with opts.
	open func(t *testing.T, opts Options) *Store
	url  string // the history's path or URL
}

// backendsUnderTest returns the implementations to run a case on: bbolt
// always, PostgreSQL when PERFGATE_TEST_POSTGRES names a server (see
// package pgtest).
func backendsUnderTest() []string { return []string{"bbolt", "postgres"} }

func newBackend(t *testing.T, name string) backendUnderTest {
	t.Helper()
	var path string
	switch name {
	case "bbolt":
		path = filepath.Join(t.TempDir(), ".perfgate", "history.db")
	case "postgres":
		path = pgtest.URL(t)
	}
	return backendUnderTest{name: name, url: path, open: func(t *testing.T, opts Options) *Store {
		t.Helper()
		s, err := Open(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}}
}

// conformanceCases is the table every implementation must pass.
var conformanceCases = []struct {
	name string
	test func(t *testing.T, b backendUnderTest)
}{
	{"PutDedupe", confPutDedupe},
	{"Queries", confQueries},
	{"Records", confRecords},
	{"SyncSeqMarks", confSyncSeqMarks},
	{"ExportImportRoundTrip", confRoundTrip},
	{"ImportAllOrNothing", confImportAllOrNothing},
	{"ImportRepeatedLines", confImportRepeated},
	{"OneTransactionPerIngest", confOneTransaction},
	{"ConcurrentWriters", confConcurrentWriters},
	{"ReadOnly", confReadOnly},
	{"FirstMeasured", confFirstMeasured},
	{"Requests", confRequests},
}

func TestConformance(t *testing.T) {
	for _, name := range backendsUnderTest() {
		t.Run(name, func(t *testing.T) {
			for _, c := range conformanceCases {
				t.Run(c.name, func(t *testing.T) {
					if name == "postgres" {
						t.Parallel()
					}
					c.test(t, newBackend(t, name))
				})
			}
		})
	}
}

func confPutDedupe(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "github.com/o/r"})
	runs := withIDs(mkRun(1, "a", 10), mkRun(1, "b", 11), mkRun(2, "a", 12))
	if n := mustPut(t, s, slices.Clone(runs)...); n != 3 {
		t.Errorf("first Put added %d, want 3", n)
	}
	if n := mustPut(t, s, slices.Clone(runs)...); n != 0 {
		t.Errorf("re-ingesting the same results added %d, want 0", n)
	}
	// Re-reading the same file later is a no-op (a file's run is
	// identified without its time).
	later := mkRun(1, "a", 10)
	later.Time = later.Time.Add(time.Hour)
	if n := mustPut(t, s, later); n != 0 {
		t.Errorf("re-reading a file later added %d, want 0", n)
	}
	// Two events (commands run) with the same numbers are two runs.
	ev1, ev2 := mkRun(3, "a", 10), mkRun(3, "a", 10)
	ev1.Command, ev2.Command = []string{"bench"}, []string{"bench"}
	ev2.Time = ev1.Time.Add(time.Second)
	if n := mustPut(t, s, ev1, ev2); n != 2 {
		t.Errorf("two repetitions added %d, want 2", n)
	}
	if n, err := s.Len(); err != nil || n != 5 {
		t.Errorf("Len = %d, %v; want 5", n, err)
	}
	// An id stored with different content is bad input.
	edited := mkRun(1, "a", 99)
	edited.ID = runs[0].ID
	if _, err := s.Put([]Run{edited}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Put of an edited run with a stored id: %v, want ErrBadInput", err)
	}
	got, err := s.ByCommit(sha(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.ContainsFunc(got, func(g Run) bool { return runsEqual(g, runs[0]) }) {
		t.Errorf("ByCommit after dedupe = %v", got)
	}
}

// withIDs returns runs with the ids Put gives them.
func withIDs(runs ...Run) []Run {
	for i := range runs {
		runs[i].ID = ContentID(runs[i])
	}
	return runs
}

// runsEqual compares two runs as JSONL lines (every field).
func runsEqual(a, b Run) bool {
	return string(AppendJSON(nil, &a)) == string(AppendJSON(nil, &b))
}

func confQueries(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	var all []Run
	for c := 1; c <= 4; c++ {
		for _, bench := range []string{"b", "a"} {
			all = append(all, mkRun(c, bench, float64(c)))
		}
	}
	mustPut(t, s, all...)
	if got, err := s.Benchmarks(); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Benchmarks = %v, %v", got, err)
	}
	if got, err := s.Commits("a"); err != nil || !slices.Equal(got, []string{sha(1), sha(2), sha(3), sha(4)}) {
		t.Errorf("Commits(a) = %v, %v", got, err)
	}
	if got, err := s.Commits(""); err != nil || len(got) != 4 {
		t.Errorf("Commits() = %v, %v", got, err)
	}
	if got, err := s.Commits("nope"); err != nil || len(got) != 0 {
		t.Errorf("Commits(nope) = %v, %v", got, err)
	}
	byc, err := s.ByCommits([]string{sha(2), sha(9), sha(2)})
	if err != nil || len(byc) != 1 || len(byc[sha(2)]) != 2 {
		t.Errorf("ByCommits = %v, %v", byc, err)
	}
	byb, err := s.ByBenchmark("a", []string{sha(1), sha(3)})
	if err != nil || len(byb) != 2 || byb[sha(3)][0].Metrics["mean_ttft_ms"] != 3 {
		t.Errorf("ByBenchmark = %v, %v", byb, err)
	}
	if byb, err := s.ByBenchmark("a", nil); err != nil || len(byb) != 4 {
		t.Errorf("ByBenchmark(a, nil) = %v, %v", byb, err)
	}
	if m, err := s.Measured("", []string{sha(1), sha(5)}); err != nil || m[sha(1)] != 2 || len(m) != 1 {
		t.Errorf("Measured = %v, %v", m, err)
	}
	if m, err := s.Measured("b", []string{sha(1)}); err != nil || m[sha(1)] != 1 {
		t.Errorf("Measured(b) = %v, %v", m, err)
	}
	if ok, err := s.HasCommit(sha(4), "a"); err != nil || !ok {
		t.Errorf("HasCommit = %v, %v", ok, err)
	}
	if _, err := s.ByCommit("abc"); !errors.Is(err, ErrBadInput) {
		t.Errorf("ByCommit(abc): %v, want ErrBadInput", err)
	}
	for _, tt := range []struct {
		f    Filter
		want int
	}{
		{Filter{}, 8},
		{Filter{Benchmark: "a"}, 4},
		{Filter{Commit: sha(2)}, 2},
		{Filter{Since: t0.Add(2 * time.Minute)}, 6},
		{Filter{Until: t0.Add(2 * time.Minute)}, 2},
		{Filter{Since: t0.Add(2 * time.Minute), Until: t0.Add(3 * time.Minute), Benchmark: "b"}, 1},
	} {
		var got []Run
		if err := s.Each(tt.f, func(r Run) error { got = append(got, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != tt.want {
			t.Errorf("Each(%+v) = %d runs, want %d", tt.f, len(got), tt.want)
		}
		if !slices.IsSortedFunc(got, func(a, b Run) int { return a.Time.Compare(b.Time) }) {
			t.Errorf("Each(%+v) is not in time order", tt.f)
		}
	}
	keys, err := s.FindRuns(all[0].ID[:8])
	if err != nil || len(keys) != 1 || keys[0] != (RunKey{all[0].Commit, all[0].ID}) {
		t.Errorf("FindRuns = %v, %v", keys, err)
	}
	known, err := s.Known([]RunKey{{all[0].Commit, all[0].ID}, {sha(7), all[0].ID}, {"x", "y"}})
	if err != nil || !slices.Equal(known, []bool{true, false, false}) {
		t.Errorf("Known = %v, %v", known, err)
	}
	// The round trip keeps every field.
	rng := rand.New(rand.NewPCG(5, 6))
	odd := randomRuns(rng, 40)
	mustPut(t, s, odd...)
	for _, r := range odd {
		got, err := s.ByCommit(r.Commit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(got, func(g Run) bool { return g.ID == r.ID && runsEqual(g, normalized(r)) }) {
			t.Errorf("run %s does not read back as stored:\n%s", r.ID, AppendJSON(nil, &r))
		}
	}
}

// normalized is a run as the store returns it (UTC time).
func normalized(r Run) Run {
	r.Time = r.Time.UTC()
	return r
}

func confRecords(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	run := withIDs(mkRun(1, "a", 10))[0]
	mustPut(t, s, run)
	recs := []Record{
		{Kind: RecordAccept, Commit: sha(1), Benchmark: "a", Metric: "mean_ttft_ms", Reason: "bigger model", By: "alice", Time: t0},
		{Kind: RecordInvalidate, Commit: run.Commit, Run: run.ID, Reason: "noisy neighbour", By: "bob", Time: t0.Add(time.Second)},
	}
	if n, err := s.PutRecords(slices.Clone(recs)); err != nil || n != 2 {
		t.Fatalf("PutRecords = %d, %v", n, err)
	}
	if n, err := s.PutRecords(slices.Clone(recs)); err != nil || n != 0 {
		t.Errorf("PutRecords again = %d, %v; want 0", n, err)
	}
	got, err := s.Records()
	if err != nil || len(got) != 2 || got[0].Kind != RecordAccept || got[1].Run != run.ID || !got[1].Time.Equal(recs[1].Time) {
		t.Errorf("Records = %+v, %v", got, err)
	}
	if _, err := s.PutRecords([]Record{{Kind: "bless"}}); !errors.Is(err, ErrBadInput) {
		t.Errorf("PutRecords of a bad kind: %v, want ErrBadInput", err)
	}
}

func confSyncSeqMarks(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	if seq, err := s.LastSeq(); err != nil || seq != 0 {
		t.Errorf("LastSeq of an empty history = %d, %v", seq, err)
	}
	mustPut(t, s, mkRun(1, "a", 1), mkRun(2, "a", 2))
	first, err := s.LastSeq()
	if err != nil || first == 0 {
		t.Fatalf("LastSeq = %d, %v", first, err)
	}
	mustPut(t, s, mkRun(3, "a", 3))
	last, _ := s.LastSeq()
	if last <= first {
		t.Errorf("LastSeq went from %d to %d", first, last)
	}
	var commits []string
	if err := s.EachSeq(first+1, last, func(_ uint64, r Run) error { commits = append(commits, r.Commit); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(commits, []string{sha(3)}) {
		t.Errorf("EachSeq after the first put = %v", commits)
	}
	// CommitSeqs gives each run of a commit with its sequence number.
	mustPut(t, s, mkRun(3, "b", 4))
	seqs, err := s.CommitSeqs(sha(3))
	if err != nil || len(seqs) != 2 {
		t.Fatalf("CommitSeqs = %v, %v; want two runs", seqs, err)
	}
	if err := s.EachSeq(1, last+1, func(seq uint64, r Run) error {
		if r.Commit == sha(3) && seqs[r.ID] != seq {
			t.Errorf("CommitSeqs[%s] = %d, EachSeq says %d", r.ID, seqs[r.ID], seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Mark("origin"); err != nil || v != nil {
		t.Errorf("Mark of nothing = %q, %v", v, err)
	}
	for _, v := range [][]byte{[]byte("one"), []byte("two")} {
		if err := s.SetMark("origin", v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Mark("origin"); err != nil || !bytes.Equal(got, v) {
			t.Errorf("Mark = %q, %v; want %q", got, err, v)
		}
	}
	if err := s.SetMark("origin", nil); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Mark("origin"); v != nil {
		t.Errorf("Mark after delete = %q", v)
	}
	var bad []int
	n, err := s.Merge([]Run{mkRun(4, "a", 4), {Commit: "zz"}, mkRun(1, "a", 1)}, func(i int, err error) { bad = append(bad, i) })
	if err != nil || n != 1 || !slices.Equal(bad, []int{1}) {
		t.Errorf("Merge = %d, %v, bad %v", n, err, bad)
	}
	if err := s.Bulk(func() error { _, err := s.Put([]Run{mkRun(5, "a", 5)}); return err }); err != nil {
		t.Error(err)
	}
}

func confRoundTrip(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	rng := rand.New(rand.NewPCG(7, 8))
	runs := randomRuns(rng, 300)
	mustPut(t, s, runs...)
	if _, err := s.PutRecords([]Record{{Kind: RecordInvalidate, Commit: runs[0].Commit, Run: runs[0].ID, Reason: "r", By: "b", Time: t0}}); err != nil {
		t.Fatal(err)
	}
	var first bytes.Buffer
	n, recs, err := s.ExportRecords(&first, Filter{})
	if err != nil || n != 300 || recs != 1 {
		t.Fatalf("ExportRecords = %d, %d, %v", n, recs, err)
	}
	other := newBackend(t, b.name).open(t, Options{Repository: "r"})
	var gotRecs [2]int
	added, skipped, err := other.Import(bytes.NewReader(first.Bytes()), ImportOptions{BatchSize: 70, Records: func(a, n int) { gotRecs = [2]int{a, n} }})
	if err != nil || added != 300 || skipped != 0 || gotRecs != [2]int{1, 1} {
		t.Fatalf("Import = %d, %d, %v, records %v", added, skipped, err, gotRecs)
	}
	var second bytes.Buffer
	if _, err := other.Export(&second, Filter{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Bytes(), second.Bytes()) {
		t.Errorf("export | import | export changed the history:\n%s\n---\n%s", head(first.String()), head(second.String()))
	}
	added, skipped, err = other.Import(bytes.NewReader(first.Bytes()), ImportOptions{})
	if err != nil || added != 0 || skipped != 300 {
		t.Errorf("re-import = %d added, %d skipped, %v; want 0, 300", added, skipped, err)
	}
}

func head(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "..."
	}
	return s
}

func confImportAllOrNothing(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	var in bytes.Buffer
	for i := range 50 {
		r := mkRun(i+1, "a", float64(i))
		in.Write(AppendJSON(nil, &r))
		in.WriteByte('\n')
	}
	in.WriteString(`{"commit":"nothex","benchmark":"a","metrics":{"x":1}}` + "\n")
	_, _, err := s.Import(&in, ImportOptions{File: "h.jsonl", BatchSize: 10})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 51 || !errors.Is(err, ErrBadInput) {
		t.Errorf("Import of a bad line 51: %v", err)
	}
	if n, _ := s.Len(); n != 0 {
		t.Errorf("a bad import stored %d runs, want 0", n)
	}
	// An id stored with different content stops the import, which
	// stores nothing.
	stored := withIDs(mkRun(1, "a", 1))[0]
	mustPut(t, s, stored)
	edited := mkRun(1, "a", 2)
	edited.ID = stored.ID
	fresh := mkRun(2, "a", 2)
	in.Reset()
	in.Write(append(AppendJSON(nil, &fresh), '\n'))
	in.Write(append(AppendJSON(nil, &edited), '\n'))
	_, _, err = s.Import(&in, ImportOptions{File: "h.jsonl"})
	if !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrBadInput) {
		t.Errorf("Import of a conflicting id on line 2: %v", err)
	}
	if n, _ := s.Len(); n != 1 {
		t.Errorf("a conflicting import left %d runs, want 1", n)
	}
}

// confImportRepeated imports into an empty history (PostgreSQL copies
// such an import straight into its table) a file that repeats a run: the
// repetition is skipped, and a line that reuses an id with different
// content stops the import, which stores nothing.
func confImportRepeated(t *testing.T, b backendUnderTest) {
	lines := func(runs ...Run) *bytes.Buffer {
		var in bytes.Buffer
		for _, r := range runs {
			in.Write(append(AppendJSON(nil, &r), '\n'))
		}
		return &in
	}
	s := b.open(t, Options{Repository: "r"})
	a, c := withIDs(mkRun(1, "a", 1))[0], withIDs(mkRun(3, "a", 3))[0]
	runs := []Run{a}
	for i := range 20 {
		runs = append(runs, withIDs(mkRun(i+4, "b", float64(i)))[0])
	}
	runs = append(runs, a, c, c)
	added, skipped, err := s.Import(lines(runs...), ImportOptions{File: "h.jsonl", BatchSize: 5})
	if err != nil || added != 22 || skipped != 2 {
		t.Errorf("Import of a file repeating two runs = %d added, %d skipped, %v; want 22, 2", added, skipped, err)
	}
	if n, _ := s.Len(); n != 22 {
		t.Errorf("Len = %d, want 22", n)
	}
	s2 := newBackend(t, b.name).open(t, Options{Repository: "r"})
	edited := mkRun(1, "a", 2)
	edited.ID = a.ID
	_, _, err = s2.Import(lines(a, c, edited), ImportOptions{File: "h.jsonl"})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 3 || !errors.Is(err, ErrBadInput) {
		t.Errorf("Import of an id repeated with different content on line 3: %v", err)
	}
	if n, _ := s2.Len(); n != 0 {
		t.Errorf("a conflicting import left %d runs, want 0", n)
	}
}

func confOneTransaction(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	stored := withIDs(mkRun(1, "a", 1))[0]
	mustPut(t, s, stored)
	edited := mkRun(1, "a", 5)
	edited.ID = stored.ID
	for _, batch := range [][]Run{
		{mkRun(2, "a", 2), mkRun(3, "a", 3), {Commit: "zz", Benchmark: "a"}}, // invalid last
		{mkRun(2, "a", 2), mkRun(3, "a", 3), edited},                         // conflict last
	} {
		if _, err := s.Put(batch); !errors.Is(err, ErrBadInput) {
			t.Errorf("Put with a bad run: %v, want ErrBadInput", err)
		}
		if n, _ := s.Len(); n != 1 {
			t.Errorf("a failed Put left %d runs, want 1", n)
		}
	}
}

func confConcurrentWriters(t *testing.T, b backendUnderTest) {
	const writers, own = 16, 10
	shared := []Run{mkRun(1000, "shared", 1), mkRun(1001, "shared", 2)}
	b.open(t, Options{Repository: "r"}).Close() // created; then 16 opens at once
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(b.url, Options{Repository: "r", Timeout: time.Minute})
			if err != nil {
				errs[w] = err
				return
			}
			defer s.Close()
			runs := slices.Clone(shared)
			for j := range own {
				runs = append(runs, mkRun(w*100+j+1, fmt.Sprintf("w%d", w), float64(j)))
			}
			_, errs[w] = s.Put(runs)
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", w, err)
		}
	}
	s := b.open(t, Options{Repository: "r", ReadOnly: true})
	n, err := s.Len()
	if want := writers*own + len(shared); err != nil || n != want {
		t.Errorf("Len after %d concurrent writers = %d, %v; want %d", writers, n, err, want)
	}
	var total int
	ids := map[string]bool{}
	s.Each(Filter{}, func(r Run) error {
		total++
		if ids[r.Commit+r.ID] {
			t.Errorf("run %s is stored twice", r.ID)
		}
		ids[r.Commit+r.ID] = true
		return nil
	})
	if total != writers*own+len(shared) {
		t.Errorf("Each saw %d runs", total)
	}
}

func confReadOnly(t *testing.T, b backendUnderTest) {
	b.open(t, Options{Repository: "r"}).Close()
	s := b.open(t, Options{Repository: "r", ReadOnly: true})
	if _, err := s.Put([]Run{mkRun(1, "a", 1)}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Put on a read-only history: %v, want ErrReadOnly", err)
	}
	if _, _, err := s.Import(strings.NewReader(""), ImportOptions{}); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Import on a read-only history: %v, want ErrReadOnly", err)
	}
}

// confFirstMeasured: commits ordered by their earliest run, newest
// limit of them; a commit measured again later keeps its first time.
func confFirstMeasured(t *testing.T, b backendUnderTest) {
	s := b.open(t, Options{Repository: "r"})
	late := mkRun(1, "a", 9)
	late.Time = t0.Add(time.Hour) // commit 1 measured again, after 3
	tie := mkRun(9, "a", 1)
	tie.Time = mkRun(3, "a", 1).Time // commit 9 first measured with 3: by id
	mustPut(t, s, mkRun(3, "a", 1), mkRun(1, "a", 1), mkRun(2, "b", 1), late, tie)
	got, err := s.FirstMeasured(0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range got {
		order = append(order, c.Commit)
	}
	if want := []string{sha(1), sha(2), sha(3), sha(9)}; !slices.Equal(order, want) {
		t.Errorf("FirstMeasured(0) = %v, want %v", order, want)
	}
	if !got[0].First.Equal(mkRun(1, "a", 1).Time) {
		t.Errorf("commit 1 first measured %v, want %v", got[0].First, mkRun(1, "a", 1).Time)
	}
	if got, err := s.FirstMeasured(2); err != nil || len(got) != 2 || got[0].Commit != sha(3) || got[1].Commit != sha(9) {
		t.Errorf("FirstMeasured(2) = %v, %v: want the newest two, oldest first", got, err)
	}
	if _, err := s.Repositories(); b.name == "bbolt" && !errors.Is(err, ErrBadInput) {
		t.Errorf("Repositories of a bbolt file: %v, want ErrBadInput", err)
	}
	if _, err := s.Scope("other"); b.name == "bbolt" && (!errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "one repository")) {
		t.Errorf("Scope of a bbolt file: %v, want ErrBadInput saying it holds one repository", err)
	}
}
