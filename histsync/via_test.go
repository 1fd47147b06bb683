package histsync

import (
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// A clone that pulls a record learns which branch commit brought it (the
// commit that added its file), with that commit's author and time; a
// record made in the clone and not pulled has none.
func TestRecordVias(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	ids := a.put(t, "serving", w.code[0], 2, false)
	a.sync(t, Options{})
	rec := store.Record{Kind: store.RecordInvalidate, Commit: w.code[0], Run: ids[0], Reason: "runner was throttled", By: "maintainer-alice", Time: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := a.st.PutRecords([]store.Record{rec}); err != nil {
		t.Fatal(err)
	}
	a.sync(t, Options{})
	pushed := runGit(t, w.bare, "rev-parse", DefaultBranch)
	// Later pushes do not move the record's via.
	a.put(t, "serving", w.code[1], 1, false)
	a.sync(t, Options{})

	b := w.clone("b")
	local := store.Record{Kind: store.RecordAccept, Commit: w.code[1], Benchmark: "serving", Metric: "mean_ttft_ms", Reason: "intended", By: "someone", Time: time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)}
	if _, err := b.st.PutRecords([]store.Record{local}); err != nil {
		t.Fatal(err)
	}
	b.sync(t, Options{NoPush: true})
	vias, err := RecordVias(b.st)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := b.st.Records()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		v, ok := vias[r.ID]
		switch r.Kind {
		case store.RecordInvalidate:
			if !ok || v.Commit != pushed || v.Branch != DefaultBranch || !strings.HasPrefix(v.File, "records/") || v.Time.IsZero() || !strings.Contains(v.Author, "<") {
				t.Errorf("via of the pulled record: %+v (found %v); want commit %s", v, ok, pushed)
			}
		case store.RecordAccept:
			if ok {
				t.Errorf("the local record has a via: %+v", v)
			}
		}
	}
	// The vias survive a reopen, and a second sync changes nothing.
	b.sync(t, Options{NoPush: true})
	again, _ := RecordVias(b.st)
	if len(again) != 1 {
		t.Errorf("vias after a second sync: %+v", again)
	}
}
