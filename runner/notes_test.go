package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/ingest"
)

// TestStreamParserOnlySkipped: output that holds only a document perfgate
// leaves out (AIPerf's aggregate of runs) is an error saying so, not an
// empty success.
func TestStreamParserOnlySkipped(t *testing.T) {
	p := NewStreamParser("output of aiperf", "")
	p.Write([]byte(`{"metadata": {"aggregation_type": "confidence", "num_profile_runs": 3}, "metrics": {"ttft_p99_ms": {"mean": 1}}}` + "\n"))
	res, err := p.Finish()
	if len(res) != 0 || !errors.Is(err, ingest.ErrUnrecognized) || !strings.Contains(err.Error(), "no benchmark result in the output: output of aiperf:1: AIPerf's \"confidence\" aggregate of 3 runs") {
		t.Errorf("results %d, err %v", len(res), err)
	}
}
