package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/goldenfile"
)

func importFile(t *testing.T, s *Store, path string, opts ImportOptions) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts.File = path
	added, skipped, err := s.Import(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	return added, skipped
}

func export(t *testing.T, s *Store, f Filter) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Export(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestExportGolden imports testdata/runs.jsonl (hand-written: keys in any
// order, time zones, no ids) and compares the export with the golden file.
func TestExportGolden(t *testing.T) {
	s := openTest(t, Options{})
	if a, sk := importFile(t, s, filepath.Join("testdata", "runs.jsonl"), ImportOptions{}); a != 6 || sk != 0 {
		t.Fatalf("import added %d, skipped %d; want 6, 0", a, sk)
	}
	got := export(t, s, Filter{})
	goldenfile.Check(t, filepath.Join("testdata", "export.golden.jsonl"), got)
	for i, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
		if !json.Valid(line) {
			t.Errorf("export line %d is not valid JSON: %s", i+1, line)
		}
	}
}

// TestRoundTrip exports a store, imports the export into a new store and
// exports again: the same bytes, the same ids; importing again is a no-op.
func TestRoundTrip(t *testing.T) {
	src := openTest(t, Options{})
	runs := randomRuns(rand.New(rand.NewPCG(7, 7)), 300)
	if n := mustPut(t, src, runs...); n != len(runs) {
		t.Fatalf("Put added %d of %d", n, len(runs))
	}
	first := export(t, src, Filter{})
	if n := bytes.Count(first, []byte("\n")); n != len(runs) {
		t.Fatalf("export wrote %d lines, want %d", n, len(runs))
	}

	dst := openTest(t, Options{})
	for pass, want := range []struct{ added, skipped int }{{len(runs), 0}, {0, len(runs)}} {
		a, sk, err := dst.Import(bytes.NewReader(first), ImportOptions{File: "export.jsonl", BatchSize: 64})
		if err != nil || a != want.added || sk != want.skipped {
			t.Fatalf("import pass %d: added %d, skipped %d, %v; want %d, %d", pass+1, a, sk, err, want.added, want.skipped)
		}
	}
	if second := export(t, dst, Filter{}); !bytes.Equal(first, second) {
		t.Errorf("export -> import -> export changed the data")
	}
	for _, r := range runs[:20] {
		got, err := dst.ByCommit(r.Commit)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range got {
			if g.ID == r.ID {
				found = true
				want := r
				want.Time = want.Time.UTC()
				if !reflect.DeepEqual(g, want) {
					t.Errorf("imported run differs:\n got %+v\nwant %+v", g, want)
				}
			}
		}
		if !found {
			t.Errorf("run %s of commit %s is missing after the round trip", r.ID, r.Commit)
		}
	}
}

// randomRuns makes runs with awkward strings and values.
func randomRuns(rng *rand.Rand, n int) []Run {
	// (no newline or other control character: names holding one are
	// refused, TestImportBadLines)
	words := []string{"mean_ttft_ms", "p99.9_itl_ms", "a\"b", "back\\slash", "tab\t", "ünï", "日本", "<html>&", "\u2028", ""}
	word := func() string { return words[rng.IntN(len(words))] + fmt.Sprint(rng.IntN(3)) }
	var runs []Run
	for i := range n {
		r := Run{
			Commit:    fmt.Sprintf("%040x", rng.IntN(40)),
			Benchmark: word(),
			Time:      time.Unix(1.7e9+int64(rng.IntN(1e6)), int64(rng.IntN(1e9))).In(time.FixedZone("x", 3600*(rng.IntN(5)-2))),
			Metrics:   map[string]float64{},
			Labels:    map[string]string{},
			Source:    Source{Format: word(), File: word(), Line: rng.IntN(3) * i},
		}
		for range rng.IntN(8) {
			var v float64
			switch rng.IntN(3) {
			case 0:
				v = float64(rng.IntN(1e6)) / 100
			case 1:
				v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
			default:
				v = float64(rng.IntN(5000))
			}
			r.Metrics[word()] = v
		}
		for range rng.IntN(4) {
			r.Labels[word()] = word()
		}
		if rng.IntN(4) == 0 {
			r.Command = []string{word(), word()}
			r.ExitCode = rng.IntN(3) - 1
		}
		r.Dirty = rng.IntN(5) == 0
		if rng.IntN(5) == 0 {
			r.Invalid = word()
		}
		if rng.IntN(2) == 0 {
			r.Testbed = word()
			r.Env = map[string]string{"os": word(), word(): word()}
		}
		if r.Dirty && rng.IntN(2) == 0 {
			r.Tree = fmt.Sprintf("%064x", rng.Uint64())
		}
		runs = append(runs, r)
	}
	return runs
}

func TestAppendJSONIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var dec lineDecoder
	for _, r := range randomRuns(rng, 500) {
		if err := prepare(&r, time.Now()); err != nil {
			t.Fatal(err)
		}
		line := AppendJSON(nil, &r)
		got, _, err := dec.decode(line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		want := r
		want.Time = want.Time.UTC()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s decodes to\n%+v\nwant\n%+v", line, got, want)
		}
		// encoding/json agrees on every value.
		var generic map[string]any
		if err := json.Unmarshal(line, &generic); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
}

// TestImportForeignIDs imports testdata/foreign_ids.jsonl, written as a
// converter from another system writes it (issue 12, item 11): ids such as
// "run-0000001" are kept as the external_id label, the runs get content
// ids, importing the file again adds nothing, and the export imports into
// a new store unchanged.
func TestImportForeignIDs(t *testing.T) {
	path := filepath.Join("testdata", "foreign_ids.jsonl")
	s := openTest(t, Options{})
	if a, sk := importFile(t, s, path, ImportOptions{}); a != 3 || sk != 0 {
		t.Fatalf("import added %d, skipped %d; want 3, 0", a, sk)
	}
	if a, sk := importFile(t, s, path, ImportOptions{}); a != 0 || sk != 3 {
		t.Fatalf("second import added %d, skipped %d; want 0, 3", a, sk)
	}
	var got []string
	if err := s.Each(Filter{}, func(r Run) error {
		if !isRunID(r.ID) {
			t.Errorf("run id %q is not a content id", r.ID)
		}
		id := r.ID
		r.ID = ""
		if want := ContentID(r); id != want {
			t.Errorf("run %s has id %s, want its content id %s", r.Labels[ExternalIDLabel], id, want)
		}
		got = append(got, r.Labels[ExternalIDLabel])
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"run-0000001", "run-0000002", "2b7e1a90-1f0c-4c83-9d0e-6f5f3c1a2b44"}; !reflect.DeepEqual(got, want) {
		t.Errorf("external ids %q, want %q", got, want)
	}
	out := export(t, s, Filter{})
	s2 := openTest(t, Options{})
	if a, _, err := s2.Import(bytes.NewReader(out), ImportOptions{}); err != nil || a != 3 {
		t.Fatalf("import of the export: added %d, %v", a, err)
	}
	if again := export(t, s2, Filter{}); !bytes.Equal(again, out) {
		t.Errorf("export of the import of the export differs:\n%s\nwant\n%s", again, out)
	}
}

func TestImportBadLines(t *testing.T) {
	c := sha(1)
	good := `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{"x":1},"labels":{},"source":{"format":"f","file":"a.log","line":%d}}`
	tests := []struct {
		name string
		line string
		want string
	}{
		{"not JSON", `not json`, `not valid JSON at column 2 (invalid character 'o' in literal null (expecting 'u')); each line must be one JSON object`},
		{"cut off", `{"commit":"` + c, "the JSON object is cut off"},
		{"array", `[1,2]`, "a line must be a JSON object, not array"},
		{"misspelt metrics", `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metric":{}}`, `the run has no "metrics"`},
		{"missing time", `{"commit":"` + c + `","benchmark":"b","metrics":{}}`, `the run has no "time"; every line needs commit, benchmark, time and metrics`},
		{"missing metrics", `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z"}`, `the run has no "metrics"`},
		{"bad time", `{"commit":"` + c + `","benchmark":"b","time":"yesterday","metrics":{}}`, `time "yesterday" is not an RFC 3339 time such as "2024-05-01T12:00:00Z"`},
		{"string metric", `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{"x":"inf"}}`, `field "metrics" is string, want a number`},
		{"short commit", `{"commit":"abc123","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{}}`, `commit "abc123" is not a full commit id`},
		{"two objects", fmt.Sprintf(good, 1) + ` {}`, "unexpected text after the run at column"},
		{"too many metrics", `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{` + manyMetricsJSON(MaxMetrics+1) + `}}`, "the run has 100001 metrics, over perfgate's limit of 100000 a run"},
		{"a newline in a benchmark name", `{"commit":"` + c + `","benchmark":"b\n::error::x","time":"2025-01-01T00:00:00Z","metrics":{}}`, `benchmark name "b\n::error::x" holds a control character`},
		{"ESC in a label", `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{},"labels":{"model":"\u001b[2J"}}`, `label "model" "\x1b[2J" holds a control character`},
		{"exit code alone", `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{},"exit_code":2}`, "exit_code 2 without a command"},
		{"foreign id and label", `{"id":"r1","commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{},"labels":{"external_id":"r2"}}`,
			`id "r1" is not a perfgate run id, so it would be kept as label external_id, but the run has label external_id="r2" already; remove one of them`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, Options{})
			// Five good lines, committed in batches of two, then the bad one.
			var in strings.Builder
			for i := range 5 {
				fmt.Fprintf(&in, good+"\n", i+1)
			}
			in.WriteString("\n" + tt.line + "\n" + fmt.Sprintf(good, 99) + "\n")
			batches := 0
			a, sk, err := s.Import(strings.NewReader(in.String()), ImportOptions{
				File: "in.jsonl", BatchSize: 2, Progress: func(int, int) { batches++ },
			})
			want := "in.jsonl:7: " + tt.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Import error = %v\nwant it to contain %q", err, want)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != 7 || !errors.Is(err, ErrBadInput) {
				t.Errorf("error %#v is not a bad-input *LineError at line 7", err)
			}
			if a != 0 || sk != 0 {
				t.Errorf("Import reported added %d, skipped %d", a, sk)
			}
			if batches != 2 {
				t.Errorf("%d batches were committed before the bad line, want 2", batches)
			}
			if n, _ := s.Len(); n != 0 {
				t.Errorf("Len = %d: bad input stored runs", n)
			}
			if m, _ := s.Measured("", []string{c}); len(m) != 0 {
				t.Errorf("the index still lists runs: %v", m)
			}
			if out := export(t, s, Filter{}); len(out) != 0 {
				t.Errorf("export after a failed import:\n%s", out)
			}
		})
	}
}

// TestImportKeepsEarlierRuns checks that undoing a failed import removes
// only what that import added.
func TestImportKeepsEarlierRuns(t *testing.T) {
	s := openTest(t, Options{})
	before := mkRun(1, "serving", 100)
	mustPut(t, s, before)
	line := func(r Run) string {
		if err := prepare(&r, time.Now()); err != nil {
			t.Fatal(err)
		}
		return string(AppendJSON(nil, &r)) + "\n"
	}
	in := line(before) + line(mkRun(1, "serving", 101)) + line(mkRun(2, "serving", 102)) + "{}\n"
	_, _, err := s.Import(strings.NewReader(in), ImportOptions{File: "x.jsonl", BatchSize: 1})
	if err == nil || !strings.Contains(err.Error(), `x.jsonl:4: the run has no "commit"`) {
		t.Fatalf("Import = %v", err)
	}
	if n, _ := s.Len(); n != 1 {
		t.Errorf("Len = %d, want the 1 run stored before", n)
	}
	runs, err := s.ByCommit(sha(1))
	if err != nil || len(runs) != 1 || runs[0].Metrics["mean_ttft_ms"] != 100 {
		t.Errorf("ByCommit = %+v, %v", runs, err)
	}
}

func TestImportConflictingID(t *testing.T) {
	s := openTest(t, Options{})
	r := mkRun(1, "serving", 100)
	mustPut(t, s, r)
	stored, _ := s.ByCommit(sha(1))
	edited := stored[0]
	edited.Metrics = map[string]float64{"mean_ttft_ms": 90}
	in := string(AppendJSON(nil, &edited)) + "\n"
	_, _, err := s.Import(strings.NewReader(in), ImportOptions{File: "edited.jsonl"})
	want := fmt.Sprintf("edited.jsonl:1: run id %s is already stored for this commit with different content", edited.ID)
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrBadInput) {
		t.Fatalf("Import = %v\nwant %q", err, want)
	}
}

func TestExportFilter(t *testing.T) {
	s := openTest(t, Options{})
	importFile(t, s, filepath.Join("testdata", "runs.jsonl"), ImportOptions{})
	at := func(s string) time.Time {
		t0, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return t0
	}
	tests := []struct {
		name string
		f    Filter
		want int
	}{
		{"all", Filter{}, 6},
		{"since", Filter{Since: at("2025-01-11T09:30:00.123456789Z")}, 4},
		{"since and until", Filter{Since: at("2025-01-11T00:00:00Z"), Until: at("2025-01-12T00:00:00Z")}, 2},
		{"benchmark", Filter{Benchmark: "latency"}, 2},
		{"commit", Filter{Commit: strings.Repeat("a", 40)}, 2},
		{"nothing before", Filter{Until: at("2000-01-01T00:00:00Z")}, 0},
		// Bounds beyond int64 nanoseconds (years 1677-2262).
		{"since the far future", Filter{Since: at("2999-01-01T00:00:00Z")}, 0},
		{"since the far future, one commit", Filter{Since: at("2999-01-01T00:00:00Z"), Commit: strings.Repeat("a", 40)}, 0},
		{"until the far future", Filter{Until: at("2999-01-01T00:00:00Z")}, 6},
		{"since the far past", Filter{Since: at("1000-01-01T00:00:00Z")}, 6},
		{"until the far past", Filter{Until: at("1000-01-01T00:00:00Z")}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := s.Export(new(bytes.Buffer), tt.f)
			if err != nil || n != tt.want {
				t.Errorf("Export wrote %d runs, %v; want %d", n, err, tt.want)
			}
		})
	}
}

// FuzzImportLine checks that any line is either rejected with an error or
// accepted and then survives AppendJSON unchanged; nothing panics.
func FuzzImportLine(f *testing.F) {
	seeds, _ := os.ReadFile(filepath.Join("testdata", "runs.jsonl"))
	for _, line := range bytes.Split(seeds, []byte("\n")) {
		f.Add(line)
	}
	f.Add([]byte(`{"commit":"` + sha(1) + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{"x":1e400}}`))
	f.Add([]byte(`{"commit":null,"metrics":[],"labels":{"a":1}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var dec lineDecoder
		r, _, err := dec.decode(line)
		if err == nil {
			err = validate(&r)
		}
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error %v is not bad input", err)
			}
			return
		}
		out := AppendJSON(nil, &r)
		back, _, err := dec.decode(out)
		if err != nil {
			t.Fatalf("%s -> %s: %v", line, out, err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Fatalf("%s -> %s decodes to %+v, want %+v", line, out, back, r)
		}
	})
}

// TestImportNewerFields: a line with fields this version does not know (a
// newer perfgate's export or history branch) imports, the fields ignored,
// each named once with its first line.
func TestImportNewerFields(t *testing.T) {
	c := sha(1)
	line := `{"commit":"` + c + `","benchmark":"b%d","time":"2025-01-01T00:00:00Z","metrics":{"x":1},"host_info":{"gpu":["a"]},"source":{"format":"f","file":"a.log","url":"u"}}`
	in := fmt.Sprintf(line+"\n"+line+"\r\n", 1, 2)
	s := openTest(t, Options{})
	var warns []string
	a, _, err := s.Import(strings.NewReader(in), ImportOptions{File: "new.jsonl", Unknown: func(n int, f string) { warns = append(warns, fmt.Sprint(n, f)) }})
	if err != nil || a != 2 {
		t.Fatalf("Import = %d, %v; want 2 runs", a, err)
	}
	if len(warns) != 1 || warns[0] != `1"host_info"` {
		t.Errorf("warnings %q, want one naming host_info at line 1", warns)
	}
	out := export(t, s, Filter{})
	if strings.Contains(string(out), "host_info") || strings.Count(string(out), `"file":"a.log"`) != 2 {
		t.Errorf("export:\n%s", out)
	}
}

// TestTestbedFields: testbed, environment and working-tree hash survive
// export and import, and a line without them (an older export) reads as a
// run without them.
func TestTestbedFields(t *testing.T) {
	c := sha(3)
	old := `{"commit":"` + c + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{"x":1},"source":{"format":"f","file":"a.log"}}`
	s := openTest(t, Options{})
	if a, _, err := s.Import(strings.NewReader(old+"\n"), ImportOptions{File: "old.jsonl"}); err != nil || a != 1 {
		t.Fatalf("Import = %d, %v", a, err)
	}
	got, err := s.ByCommit(c)
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if r := got[0]; r.Testbed != "" || r.Env != nil || r.Tree != "" {
		t.Errorf("an older line read as %+v", r)
	}
	// The ids of runs without the new fields are pinned by
	// TestExportGolden (export.golden.jsonl predates the fields).
	withTB := got[0]
	withTB.ID = ""
	withTB.Testbed, withTB.Env = "ci:github-actions linux/amd64 ubuntu24", map[string]string{"os": "linux", "cpu": "AMD EPYC"}
	withTB.Dirty, withTB.Tree = true, strings.Repeat("ab", 32)
	if ContentID(withTB) == got[0].ID {
		t.Errorf("testbed and tree are not part of the identity")
	}
	mustPut(t, s, withTB)
	out := export(t, s, Filter{Commit: c})
	if !strings.Contains(string(out), `"testbed":"ci:github-actions linux/amd64 ubuntu24","env":{"cpu":"AMD EPYC","os":"linux"},"tree":"abab`) {
		t.Errorf("export:\n%s", out)
	}
	dst := openTest(t, Options{})
	if a, _, err := dst.Import(bytes.NewReader(out), ImportOptions{File: "x.jsonl"}); err != nil || a != 2 {
		t.Fatalf("re-import = %d, %v", a, err)
	}
	back, _ := dst.ByCommit(c)
	if len(back) != 2 || back[1].Testbed != withTB.Testbed || back[1].Env["cpu"] != "AMD EPYC" || back[1].Tree != withTB.Tree {
		t.Errorf("re-imported %+v", back)
	}
	bad := withTB
	bad.Dirty = false
	if _, err := s.Put([]Run{bad}); err == nil || !strings.Contains(err.Error(), "clean run") {
		t.Errorf("a tree on a clean run: %v", err)
	}
}

// manyMetricsJSON is the members of a metrics object with n metrics.
func manyMetricsJSON(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"m%d":1`, i)
	}
	return b.String()
}

// TestImportRecordLines: record lines are told from runs by "v" and
// "kind" at the top level (a run's label "kind" is a run), a bad record
// line stops the import like a bad run, and the records are stored.
func TestImportRecordLines(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	run := `{"commit":"` + sha + `","benchmark":"b","time":"2026-01-01T00:00:00Z","metrics":{"x":1},"labels":{"kind":"gpu"}}`
	accept := `{"v":1,"kind":"accept","commit":"` + sha + `","benchmark":"b","metric":"x","reason":"intended","by":"me","time":"2026-01-02T00:00:00Z"}`
	tests := []struct {
		name    string
		input   string
		runs    int
		records int
		err     string
	}{
		{"run with a kind label", run, 1, 0, ""},
		{"run and record", run + "\n" + accept, 1, 1, ""},
		{"record first", accept + "\n" + run, 1, 1, ""},
		{"bad record", run + "\n" + strings.Replace(accept, `"reason":"intended"`, `"reason":""`, 1), 0, 0, "<stdin>:2: "},
		{"newer record version", strings.Replace(accept, `"v":1`, `"v":2`, 1), 0, 0, "upgrade perfgate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, Options{})
			recAdded := 0
			added, _, err := s.Import(strings.NewReader(tt.input), ImportOptions{Records: func(a, _ int) { recAdded = a }})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				if n, _ := s.Len(); n != 0 {
					t.Errorf("a failed import stored %d runs", n)
				}
				return
			}
			recs, _ := s.Records()
			if err != nil || added != tt.runs || recAdded != tt.records || len(recs) != tt.records {
				t.Errorf("added %d runs, %d records (%d stored), err %v; want %d, %d", added, recAdded, len(recs), err, tt.runs, tt.records)
			}
		})
	}
}
