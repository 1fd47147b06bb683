package journeys

import (
	"testing"

	"github.com/perfgate/perfgate/internal/pgtest"
)

// TestJourneyPostgres: the laptop backfill, the serving run and the
// Action (its db input, no history branch) with the history in PostgreSQL (--db postgres://..., a fresh schema of the
// server PERFGATE_TEST_POSTGRES names per journey; skipped without it
// unless PERFGATE_REQUIRE_POSTGRES=1): the regression fails naming Mean
// TTFT, the unchanged head passes.
func TestJourneyPostgres(t *testing.T) {
	laptop(t) // skips with -short
	t.Run("backfill then local check", func(t *testing.T) {
		backfillJourney(t, backfills[:1], []string{"--db", pgtest.URL(t)})
	})
	t.Run("serving run", func(t *testing.T) {
		servingJourney(t, []string{"--db", pgtest.URL(t)})
	})
	t.Run("Action", func(t *testing.T) {
		actionJourney(t, func(t *testing.T) string { return pgtest.URL(t) })
	})
}
