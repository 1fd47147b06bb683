package histsync

import (
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// TestSyncCarriesTestbed: the testbed and environment a run recorded reach
// the other clone unchanged, so its checks keep laptop and CI apart.
func TestSyncCarriesTestbed(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	b := w.clone("b")
	env := map[string]string{"ci": "github-actions", "os": "linux", "arch": "amd64", "runner_name": "GitHub Actions 3"}
	run := store.Run{
		Commit: w.code[1], Benchmark: "serving", Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Metrics: map[string]float64{"mean_ttft_ms": 150}, Labels: map[string]string{},
		Source:  store.Source{Format: "generic", File: "r.json"},
		Testbed: "ci:github-actions linux/amd64 ubuntu24", Env: env,
	}
	if _, err := a.st.Put([]store.Run{run}); err != nil {
		t.Fatal(err)
	}
	a.sync(t, Options{})
	if res := b.sync(t, Options{}); res.Pulled != 1 {
		t.Fatalf("b pulled %+v", res)
	}
	got, err := b.st.ByCommit(w.code[1])
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if got[0].Testbed != run.Testbed || !reflect.DeepEqual(got[0].Env, env) {
		t.Errorf("pulled run has testbed %q env %v", got[0].Testbed, got[0].Env)
	}
}
