package store

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func acceptRec() Record {
	return Record{Kind: RecordAccept, Commit: sha(7), Benchmark: "serving", Metric: "mean_ttft_ms",
		Reason: "trade TTFT for throughput", By: "Ada <ada@example.com>", Time: t0}
}

func TestParseRecord(t *testing.T) {
	good := acceptRec()
	good.ID = RecordID(good)
	line := string(AppendRecordJSON(nil, &good))
	inv := Record{Kind: RecordInvalidate, Commit: sha(3), Run: strings.Repeat("ab", 16), Reason: "runner was throttled", By: "ci", Time: t0}
	invLine := string(AppendRecordJSON(nil, &inv))
	for _, tc := range []struct {
		name, line, want string // want: "" ok, else a part of the error
	}{
		{"accept", line, ""},
		{"invalidate", invLine, ""},
		{"revalidate", strings.Replace(invLine, `"invalidate"`, `"revalidate"`, 1), ""},
		{"revalidate without run", strings.Replace(strings.Replace(invLine, `"invalidate"`, `"revalidate"`, 1), strings.Repeat("ab", 16), "", 1), "not a run id"},
		{"no id", strings.Replace(line, `"id":"`+good.ID+`",`, "", 1), ""},
		{"unknown field", strings.Replace(line, `{"v":1`, `{"v":1,"future":true`, 1), ""},
		{"wrong id", strings.Replace(line, good.ID, strings.Repeat("0", 32), 1), "does not match its content"},
		{"newer version", strings.Replace(line, `"v":1`, `"v":2`, 1), "upgrade perfgate"},
		{"no version", strings.Replace(line, `"v":1,`, ``, 1), "no version"},
		{"bad kind", strings.Replace(line, `"accept"`, `"delete"`, 1), "record kind"},
		{"short commit", strings.Replace(line, sha(7), "abc123", 1), "not a full commit id"},
		{"control char", strings.Replace(line, "trade TTFT", `trade\u001b[31mTTFT`, 1), "control character"},
		{"newline", strings.Replace(line, "trade TTFT", `trade\nTTFT`, 1), "control character"},
		{"empty reason", strings.Replace(line, "trade TTFT for throughput", "  ", 1), "reason is empty"},
		{"no benchmark", strings.Replace(line, `"serving"`, `""`, 1), "benchmark is empty"},
		{"bad time", strings.Replace(line, "2025-03-01T12:00:00Z", "yesterday", 1), "RFC 3339"},
		{"bad run", strings.Replace(invLine, strings.Repeat("ab", 16), "xyz", 1), "not a run id"},
		{"trailing", line + " {}", "more data"},
		{"not json", "garbage", "not a record"},
		{"huge", `{"v":1,"reason":"` + strings.Repeat("x", maxRecordLine) + `"}`, "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRecord([]byte(tc.line))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if r.ID != RecordID(r) {
					t.Errorf("id %s, want %s", r.ID, RecordID(r))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBadInput) {
				t.Fatalf("err = %v, want one containing %q matching ErrBadInput", err, tc.want)
			}
		})
	}
}

func TestPutRecords(t *testing.T) {
	s := openTest(t, Options{})
	a := acceptRec()
	b := acceptRec()
	b.Reason = "a new default"
	b.Time = t0.Add(time.Hour)
	n, err := s.PutRecords([]Record{a, b})
	if err != nil || n != 2 {
		t.Fatalf("PutRecords = %d, %v; want 2", n, err)
	}
	if n, err := s.PutRecords([]Record{a}); err != nil || n != 0 {
		t.Fatalf("again: %d, %v; want 0 (a no-op)", n, err)
	}
	bad := acceptRec()
	bad.Reason = ""
	if _, err := s.PutRecords([]Record{acceptRec(), bad}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("bad record: %v, want ErrBadInput", err)
	}
	recs, err := s.Records()
	if err != nil || len(recs) != 2 || recs[0].Reason != a.Reason || recs[1].Reason != b.Reason {
		t.Fatalf("Records = %+v, %v", recs, err)
	}
}

func TestFindRuns(t *testing.T) {
	s := openTest(t, Options{})
	r := mkRun(1, "serving", 10)
	mustPut(t, s, r, mkRun(2, "serving", 11))
	runs, _ := s.ByCommit(sha(1))
	id := runs[0].ID
	for _, tc := range []struct {
		q    string
		want int
	}{{id, 1}, {id[:8], 1}, {strings.ToUpper(id[:8]), 1}, {strings.Repeat("f", 32), 0}} {
		got, err := s.FindRuns(tc.q)
		if err != nil || len(got) != tc.want {
			t.Errorf("FindRuns(%q) = %v, %v; want %d", tc.q, got, err, tc.want)
		}
		if tc.want == 1 && (got[0].Commit != sha(1) || got[0].ID != id) {
			t.Errorf("FindRuns(%q) = %+v", tc.q, got[0])
		}
	}
	if _, err := s.FindRuns("xyz"); !errors.Is(err, ErrBadInput) {
		t.Errorf("FindRuns(xyz): %v, want ErrBadInput", err)
	}
}

// A v1 history (before records) is upgraded on open and keeps its runs.
func TestMigrateV1ToV2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, mkRun(1, "serving", 10))
	s.Close()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketRecord); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put(metaSchema, binary.AppendUvarint(nil, 1))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Len(); n != 1 {
		t.Errorf("runs after the upgrade: %d, want 1", n)
	}
	if recs, err := s.Records(); err != nil || len(recs) != 0 {
		t.Errorf("Records after the upgrade = %v, %v", recs, err)
	}
}

// FuzzParseRecord: a record line from a shared branch never crashes the
// reader, and what it accepts writes back to a line it reads the same.
func FuzzParseRecord(f *testing.F) {
	a := acceptRec()
	f.Add(AppendRecordJSON(nil, &a))
	inv := Record{Kind: RecordInvalidate, Commit: sha(3), Run: strings.Repeat("ab", 16), Reason: "bad", By: "ci", Time: t0}
	f.Add(AppendRecordJSON(nil, &inv))
	rev := inv
	rev.Kind = RecordRevalidate
	f.Add(AppendRecordJSON(nil, &rev))
	f.Add([]byte(`{"v":1,"kind":"accept","commit":"` + sha(1) + `","benchmark":"b\u202e","metric":"m","reason":"<script>","by":"x","time":"2025-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"v":1e400}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := ParseRecord(line)
		if err != nil {
			return
		}
		if err := ValidateRecord(&r); err != nil {
			t.Fatalf("accepted an invalid record: %v", err)
		}
		again, err := ParseRecord(AppendRecordJSON(nil, &r))
		if err != nil {
			t.Fatalf("its own line does not read back: %v", err)
		}
		if again != r {
			t.Fatalf("round trip: %+v != %+v", again, r)
		}
	})
}
