package site

import (
	"context"
	"testing"

	"github.com/perfgate/perfgate/gate"
)

// TestRunsCountStored: the summary's runs are stored runs, never the
// capacity results gate derives per swept commit (as perfgate site reads
// the history, gate.WithCapacity): a 5-load sweep at two commits beside
// one run per commit is 16 runs, not 18.
func TestRunsCountStored(t *testing.T) {
	commits, h := sweepHistory(6)
	stored := 0
	for _, ss := range h {
		stored += len(ss)
	}
	for _, tc := range []struct {
		name string
		h    gate.History
	}{
		{"stored", h},
		{"with capacity", gate.WithCapacity(h, sweepRules().SLOs, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, err := Generate(context.Background(), commits, tc.h, t.TempDir(), Options{Ref: "main", Rules: sweepRules()})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Runs != stored || sum.Measured != len(commits) {
				t.Errorf("%d runs at %d commits, want the %d stored at %d", sum.Runs, sum.Measured, stored, len(commits))
			}
		})
	}
}
