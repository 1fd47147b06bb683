package runner

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/slo"
	"github.com/perfgate/perfgate/store"
)

// vllmDetailed is a vLLM --save-result --save-detailed file with
// per-request lists, whose request_goodput vLLM computed for
// ttft:100 tpot:25 e2el:4000: 32 of 58 completed requests in 7.912345678 s.
func vllmDetailed(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "ingest", "testdata", "requests", "vllm_constructed_goodput_ttft100_tpot25_e2el4000.json"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeBench is a benchmark command that prints a line no parser reads and
// runs script (sh -c) in dir, with $SRC the vLLM file.
func fakeBench(t *testing.T, dir, script string) Command {
	env := append(os.Environ(), "SRC="+vllmDetailed(t))
	return Command{Argv: []string{"sh", "-c", "echo 'benchmark done'; " + script}, Dir: dir, Env: env}
}

// TestResultFile: with --result-file, the runs are the file's results, the
// request summary and request_goodput for the SLO included, whatever the
// command printed; a file the run did not write is refused as stale, a
// missing one is named, and a glob takes each repetition's new files only.
func TestResultFile(t *testing.T) {
	obj := &slo.Objective{TTFTms: 100, TPOTms: 25, E2ELms: 4000}
	wantGoodput := 32 / 7.912345678
	tests := []struct {
		name    string
		script  string
		file    string
		n       int
		prepare func(t *testing.T, dir string)
		runs    int
		wantErr []string
	}{
		{name: "path", script: "mkdir -p out && cp \"$SRC\" out/serve.json", file: "out/serve.json", n: 1, runs: 1},
		{name: "path overwritten each repetition", script: "mkdir -p out && cp \"$SRC\" out/serve.json", file: "out/serve.json", n: 2, runs: 2,
			prepare: func(t *testing.T, dir string) { writeOld(t, filepath.Join(dir, "out", "serve.json"), "{}") }},
		{name: "glob, a new file per repetition", script: "mkdir -p out && cp \"$SRC\" out/serve-$$.json", file: "out/serve-*.json", n: 3, runs: 3,
			prepare: func(t *testing.T, dir string) { writeOld(t, filepath.Join(dir, "out", "serve-old.json"), "{}") }},
		{name: "stale", script: "true", file: "out/serve.json", n: 1,
			prepare: func(t *testing.T, dir string) { writeOld(t, filepath.Join(dir, "out", "serve.json"), "{}") },
			wantErr: []string{`--result-file "out/serve.json": "out/serve.json" is stale`, "before this run started", "--save-result"}},
		{name: "stale glob", script: "true", file: "out/*.json", n: 1,
			prepare: func(t *testing.T, dir string) { writeOld(t, filepath.Join(dir, "out", "a.json"), "{}") },
			wantErr: []string{`"out/a.json" is stale`}},
		{name: "missing", script: "true", file: "out/serve.json", n: 1,
			wantErr: []string{`--result-file "out/serve.json": no file matches it in the benchmark's working directory after the run`}},
		{name: "a directory", script: "mkdir -p out/sweep", file: "out/sweep", n: 1,
			wantErr: []string{`"out/sweep" is a directory; give the files in it, e.g. --result-file 'out/sweep/*.json'`}},
		{name: "not a result", script: "mkdir -p out && echo '{\"x\": 1}' > out/serve.json", file: "out/serve.json", n: 1,
			wantErr: []string{"out/serve.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.prepare != nil {
				tc.prepare(t, dir)
			}
			c := fakeBench(t, dir, tc.script)
			c.ResultFile, c.SLO = tc.file, obj
			rep := &Repeat{Command: c, Spec: Spec{Name: "serving"}, N: tc.n}
			got, err := rep.Run(context.Background())
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; runs %d", len(got.Runs))
				}
				if !errors.Is(err, store.ErrBadInput) {
					t.Errorf("error %v is not bad input", err)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Runs) != tc.runs {
				t.Fatalf("%d runs, want %d (one per repetition, from its own file)", len(got.Runs), tc.runs)
			}
			for _, r := range got.Runs {
				if len(r.Requests) == 0 {
					t.Fatalf("run %s has no request summary", r.Benchmark)
				}
				if g := r.Metrics["request_goodput"]; math.Abs(g-wantGoodput) > 1e-12*wantGoodput {
					t.Errorf("request_goodput %v, vLLM's %v", g, wantGoodput)
				}
				if _, ok := r.Metrics["slo_attainment"]; !ok {
					t.Errorf("no slo_attainment: the SLO was not applied to the file's requests (%v)", r.Metrics)
				}
				s, err := slo.Unmarshal(r.Requests)
				if err != nil || s.Requests != 58 || s.Failed != 2 {
					t.Errorf("summary %+v, %v: want 58 completed and 2 failed requests", s, err)
				}
			}
		})
	}
}

// TestResultFileNotWithoutIt: without ResultFile the same command's output
// is all there is, and it holds no result.
func TestResultFileNotWithoutIt(t *testing.T) {
	c := fakeBench(t, t.TempDir(), "mkdir -p out && cp \"$SRC\" out/serve.json")
	_, err := (&Repeat{Command: c, Spec: Spec{Name: "serving"}, N: 1}).Run(context.Background())
	if err == nil {
		t.Fatal("the output 'benchmark done' parsed as a result")
	}
}

// writeOld writes a file last modified an hour ago.
func writeOld(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestStepResultFile: bisect-step (and bisect, through Target) reads the
// target's result file: goodput, a metric only the file's requests give
// for the SLO, is the step's value.
func TestStepResultFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "serve.json")
	tg := Target{Name: "serving", Metric: metric.Get("slo_attainment"), Typed: "slo_attainment", ResultFile: out,
		SLO: &slo.Objective{TTFTms: 100, TPOTms: 25, E2ELms: 4000}}
	argv := []string{"sh", "-c", "cp \"" + vllmDetailed(t) + "\" " + out + "; echo done"}
	res, err := Step(context.Background(), argv, tg, Spec{Commit: "abc"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Values) != 1 || len(res.Runs) != 1 || len(res.Runs[0].Requests) == 0 {
		t.Fatalf("step %+v: want one run with its requests and its attainment", res)
	}
	if want := 100 * 32.0 / 60; math.Abs(res.Values[0]-want) > 1e-9 {
		t.Errorf("slo_attainment %v, want %v (32 of 60 requests)", res.Values[0], want)
	}
}

// TestResultFileRecorded: a run read from a result file records it, and
// the command that measures the tree again reads it too.
func TestResultFileRecorded(t *testing.T) {
	dir := t.TempDir()
	c := fakeBench(t, dir, "mkdir -p out && cp \"$SRC\" out/serve.json")
	c.ResultFile = "out/serve.json"
	got, err := (&Repeat{Command: c, Spec: Spec{Name: "serving", Dirty: true}, N: 1}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if f := got.Runs[0].Env[FactResultFile]; f != "out/serve.json" {
		t.Fatalf("the run records result file %q", f)
	}
	got.Runs[0].Command = []string{"./bench.sh"}
	if mc := MeasureCommand(got.Runs, ""); mc != "perfgate run --name serving --result-file out/serve.json -- ./bench.sh" {
		t.Errorf("MeasureCommand = %s", mc)
	}
}
