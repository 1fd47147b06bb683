package bisect

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/goldenfile"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

// reportFor runs the issue's scenario with a fixed seed and wraps it in a
// report over made-up commits.
func reportFor(t *testing.T, sm *simulation, known map[int][]float64, opts Options) *Report {
	t.Helper()
	var m Measurer
	if sm != nil {
		m = sm
	}
	res, err := Search(context.Background(), issueN, known, m, opts)
	if err != nil {
		t.Fatal(err)
	}
	commits := make([]Commit, issueN+1)
	for i := range commits {
		sha := fmt.Sprintf("%x", sha1.Sum([]byte{byte(i)}))
		commits[i] = Commit{SHA: sha, Short: sha[:7], Subject: fmt.Sprintf("commit %d: change the scheduler", i)}
	}
	commits[issueCulprit].Subject = "Use chunked prefill by default | faster <batches>"
	return &Report{
		Benchmark: "serving-qwen", Metric: "mean_ttft_ms", Label: "Mean TTFT (ms)", Unit: "ms", Direction: "lower",
		Commits: commits, Stored: sm == nil, Target: 0.95, Elapsed: 754 * time.Second, Result: res,
	}
}

func TestReportGolden(t *testing.T) {
	stored := map[int][]float64{0: {100.1, 99.2, 100.6}, 48: {112.4, 111.7}, 20: {100.3}, 36: {112.9}}
	tests := []struct {
		name string
		rep  func(t *testing.T) *Report
	}{
		{"found", func(t *testing.T) *Report { return reportFor(t, issueSimulation(7), nil, Options{}) }},
		{"nostep", func(t *testing.T) *Report {
			return reportFor(t, newSimulation(issueN, 10, issueSigma, 0, 8), nil, Options{})
		}},
		{"untestable", func(t *testing.T) *Report {
			sm := issueSimulation(9)
			sm.skip = map[int]bool{29: true}
			return reportFor(t, sm, nil, Options{})
		}},
		{"stored", func(t *testing.T) *Report { return reportFor(t, nil, stored, Options{}) }},
		{"budget", func(t *testing.T) *Report { return reportFor(t, issueSimulation(10), nil, Options{MaxRuns: 7}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := tt.rep(t)
			for _, f := range []struct{ format, ext string }{{"text", "txt"}, {"markdown", "md"}, {"json", "json"}} {
				var b bytes.Buffer
				if err := rep.Write(&b, f.format); err != nil {
					t.Fatal(err)
				}
				golden(t, "report-"+tt.name+"."+f.ext, b.Bytes())
			}
		})
	}
}

// TestReportJSON checks the fields the design promises:
// {"culprit":SHA,"confidence":P,"runs":N,"evaluated":[...]}.
func TestReportJSON(t *testing.T) {
	rep := reportFor(t, issueSimulation(11), nil, Options{})
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Culprit    *string          `json:"culprit"`
		Confidence float64          `json:"confidence"`
		Runs       int              `json:"runs"`
		Evaluated  []map[string]any `json:"evaluated"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Culprit == nil || *got.Culprit != rep.Commits[issueCulprit].SHA {
		t.Errorf("culprit %v, want %s", got.Culprit, rep.Commits[issueCulprit].SHA)
	}
	if got.Confidence < 0.95 || got.Runs != rep.Result.Runs || len(got.Evaluated) != len(rep.Result.Evaluated) {
		t.Errorf("confidence %v runs %d evaluated %d; result %+v", got.Confidence, got.Runs, len(got.Evaluated), rep.Result)
	}
	for _, e := range got.Evaluated {
		for _, k := range []string{"commit", "index", "values", "runs", "p_bad", "side"} {
			if _, ok := e[k]; !ok {
				t.Errorf("evaluated entry lacks %q: %v", k, e)
			}
		}
	}
	// No step: the culprit is null, not a commit.
	rep = reportFor(t, newSimulation(issueN, 10, issueSigma, 0, 8), nil, Options{})
	b.Reset()
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"culprit": null`) {
		t.Errorf("no-step JSON names a culprit:\n%s", b.String())
	}
}
