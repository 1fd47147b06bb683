package store

import (
	"fmt"
	"strings"
	"testing"
)

func TestSeqAndMarks(t *testing.T) {
	s := openTest(t, Options{})
	if n, err := s.LastSeq(); err != nil || n != 0 {
		t.Fatalf("LastSeq of a new history = %d, %v", n, err)
	}
	mustPut(t, s, mkRun(1, "a", 1), mkRun(2, "a", 2), mkRun(3, "b", 3))
	if n, _ := s.LastSeq(); n != 3 {
		t.Errorf("LastSeq = %d, want 3", n)
	}
	var got []string
	if err := s.EachSeq(2, 3, func(seq uint64, r Run) error {
		got = append(got, r.Commit[38:])
		return nil
	}); err != nil || strings.Join(got, ",") != "02,03" {
		t.Errorf("EachSeq(2, 3) = %v, %v", got, err)
	}
	if v, err := s.Mark("k"); err != nil || v != nil {
		t.Errorf("Mark of nothing = %q, %v", v, err)
	}
	if err := s.SetMark("k", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Mark("k"); string(v) != "v1" {
		t.Errorf("Mark = %q", v)
	}
	if n, _ := s.Len(); n != 3 {
		t.Errorf("a mark changed the run count: %d", n)
	}
	s.SetMark("k", nil)
	if v, _ := s.Mark("k"); v != nil {
		t.Errorf("deleted mark = %q", v)
	}
}

func TestKnownAndMerge(t *testing.T) {
	s := openTest(t, Options{})
	a := mkRun(1, "a", 1)
	a.ID = ContentID(a)
	mustPut(t, s, a)
	known, err := s.Known([]RunKey{{a.Commit, a.ID}, {a.Commit, strings.Repeat("0", 32)}, {"x", "y"}})
	if err != nil || !known[0] || known[1] || known[2] {
		t.Errorf("Known = %v, %v", known, err)
	}
	clash := mkRun(1, "a", 99)
	clash.ID = a.ID // an id stored with other content
	bad := mkRun(2, "", 1)
	runs := []Run{mkRun(3, "c", 1), clash, bad, a, mkRun(4, "c", 1)}
	var rejected []int
	added, err := s.Merge(runs, func(i int, err error) { rejected = append(rejected, i) })
	if err != nil || added != 2 || len(rejected) != 2 || rejected[0] != 2 || rejected[1] != 1 {
		t.Errorf("Merge: added %d, rejected %v, %v", added, rejected, err)
	}
	if n, _ := s.Len(); n != 3 {
		t.Errorf("%d runs stored, want 3", n)
	}
}

func TestParseLine(t *testing.T) {
	r := mkRun(1, "a", 1)
	r.ID = ContentID(r)
	got, unknown, err := ParseLine(AppendJSON(nil, &r))
	if err != nil || unknown != "" || got.ID != r.ID {
		t.Errorf("ParseLine = %+v, %q, %v", got, unknown, err)
	}
	if _, _, err := ParseLine([]byte(`{"id":"zz"}`)); err == nil {
		t.Error("a bad line parsed")
	}
}

// FuzzFastLine: the fast decoder of AppendJSON's lines agrees with the
// general one on every line it accepts.
func FuzzFastLine(f *testing.F) {
	r := mkRun(1, "a", 1.5)
	r.ID = ContentID(r)
	f.Add(string(AppendJSON(nil, &r)))
	r.Dirty, r.Source.Line, r.Labels = true, 0, nil
	f.Add(string(AppendJSON(nil, &r)))
	r.Invalid, r.Testbed, r.Env, r.Tree = "half failed", "910B3x8", map[string]string{"os": "linux", "ci": "github"}, "abc"
	f.Add(string(AppendJSON(nil, &r)))
	r.Requests = []byte(summaryJSON)
	f.Add(string(AppendJSON(nil, &r)))
	f.Add(`{"id":"run-1","commit":"` + sha(2) + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{},"labels":{},"source":{"format":"","file":""},"env":{}}`)
	f.Add(`{"id":"","commit":"` + sha(2) + `","benchmark":"b","time":"2025-01-01T00:00:00Z","metrics":{"x":-0.5e-7,"y":1E+3},"labels":{},"source":{"format":"","file":"","line":12}}`)
	names := map[string]string{} // shared across inputs, as a Parser's
	f.Fuzz(func(t *testing.T, line string) {
		fast, ok := fastLine([]byte(line), nil)
		if !ok || validate(&fast) != nil {
			return
		}
		if named, _ := fastLine([]byte(line), names); fmt.Sprint(named) != fmt.Sprint(fast) {
			t.Fatalf("with names %v\nwithout %v", named, fast)
		}
		var d lineDecoder
		slow, _, err := d.decode([]byte(line))
		if err != nil {
			t.Fatalf("fast accepted, general refused (%v): %s", err, line)
		}
		if fmt.Sprint(fast) != fmt.Sprint(slow) {
			t.Fatalf("fast %v\ngeneral %v", fast, slow)
		}
	})
}
