package ingest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// TestDirInputs lists the directories the tools write: each run once, the
// tool's aggregates, warm-ups, failures and per-request files left out
// with a reason.
func TestDirInputs(t *testing.T) {
	sweep := filepath.Join("testdata", "runs", "vllm-sweep")
	comb := filepath.Join(sweep, "20251103_101200", "SERVE-max_num_seqs=128-BENCH-max_concurrency=64")
	aip := filepath.Join("testdata", "runs", "aiperf-multi", "openai-gpt-oss-20b-openai-chat-concurrency_100")
	ip := filepath.Join("testdata", "inference-perf", "vllm-batch-size")
	cases := []struct {
		dir  string
		read []string
		skip map[string]string // file -> part of the reason
	}{
		{sweep, []string{filepath.Join(comb, "run=0.json"), filepath.Join(comb, "run=1.json")}, map[string]string{
			filepath.Join(comb, "summary.json"):                    "list of the runs, which are read from run=N.json",
			filepath.Join(comb, "warmup.json"):                     "warm-up",
			filepath.Join(comb, "run=2.failure.json"):              "a run that failed",
			filepath.Join(sweep, "20251103_101200", "summary.csv"): "table of every run",
		}},
		{filepath.Dir(aip), []string{
			filepath.Join(aip, "profile_runs", "run_0001", "profile_export_aiperf.json"),
			filepath.Join(aip, "profile_runs", "run_0002", "profile_export_aiperf.json"),
			filepath.Join(aip, "profile_runs", "run_0003", "profile_export_aiperf.json"),
		}, map[string]string{
			filepath.Join(aip, "aggregate", "profile_export_aiperf_aggregate.json"):     "AIPerf's aggregate over the runs",
			filepath.Join(aip, "aggregate", "profile_export_aiperf_aggregate.csv"):      "AIPerf's aggregate over the runs",
			filepath.Join(aip, "profile_runs", "run_0002", "profile_export_aiperf.csv"): "CSV copy",
			filepath.Join(aip, "profile_runs", "run_0003", "profile_export.jsonl"):      "per-request",
		}},
		{ip, []string{filepath.Join(ip, "stage_0_lifecycle_metrics.json"), filepath.Join(ip, "stage_1_lifecycle_metrics.json")}, map[string]string{
			filepath.Join(ip, "summary_lifecycle_metrics.json"):  "summary over all stages",
			filepath.Join(ip, "stage_0_prometheus_metrics.json"): "Prometheus",
		}},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			ins, err := DirInputs(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			var read []string
			skips := map[string]string{}
			for _, in := range ins {
				if in.Skip == "" {
					read = append(read, in.Path)
				} else {
					skips[in.Path] = in.Skip
				}
			}
			if strings.Join(read, "\n") != strings.Join(c.read, "\n") {
				t.Errorf("read\n%s\nwant\n%s", strings.Join(read, "\n"), strings.Join(c.read, "\n"))
			}
			for f, why := range c.skip {
				if !strings.Contains(skips[f], why) {
					t.Errorf("%s: skip reason %q, want one containing %q", f, skips[f], why)
				}
			}
		})
	}
}

// TestRepeatedRunsOneSeries: the runs of a directory parse to results of
// one name and one set of identity labels (run_number and date are
// descriptive), so the gate sees repetitions of one series.
func TestRepeatedRunsOneSeries(t *testing.T) {
	descriptive := map[string]bool{"run_number": true, "date": true}
	for _, dir := range []string{filepath.Join("testdata", "runs", "vllm-sweep"), filepath.Join("testdata", "runs", "aiperf-multi")} {
		ins, err := DirInputs(dir)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, in := range ins {
			if in.Skip != "" {
				continue
			}
			data, err := os.ReadFile(in.Path)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range mustParse(t, string(data), in.Path, "") {
				var parts []string
				for k, v := range r.Labels {
					if !descriptive[k] {
						parts = append(parts, k+"="+v)
					}
				}
				sort.Strings(parts)
				ids = append(ids, r.Format+" "+r.Name+" "+strings.Join(parts, ","))
			}
		}
		if len(ids) < 2 {
			t.Fatalf("%s: %d results, want the runs", dir, len(ids))
		}
		for _, id := range ids[1:] {
			if id != ids[0] {
				t.Errorf("%s: runs of two series:\n%s\n%s", dir, ids[0], id)
			}
		}
	}
}

// TestToolAggregateSkipped: AIPerf's aggregate, given by name, is left out
// with a note, not stored as a run and not refused.
func TestToolAggregateSkipped(t *testing.T) {
	agg := filepath.Join("runs", "aiperf-multi", "openai-gpt-oss-20b-openai-chat-concurrency_100", "aggregate")
	for file, want := range map[string]string{
		filepath.Join(agg, "profile_export_aiperf_aggregate.json"): `a.json:1: AIPerf's "confidence" aggregate of 3 runs (profile_export_aiperf_aggregate.json) left out`,
		filepath.Join(agg, "profile_export_aiperf_aggregate.csv"):  "a.json:1: AIPerf's confidence aggregate (profile_export_aiperf_aggregate.csv) left out",
	} {
		r := NewReader(strings.NewReader(readTestdata(t, file)), "a.json", Options{})
		for r.Scan() {
			t.Errorf("%s: unexpected result %+v", file, r.Result())
		}
		if r.Err() != nil {
			t.Fatalf("%s: %v", file, r.Err())
		}
		if n := r.Notes(); len(n) != 1 || !strings.HasPrefix(n[0], want) {
			t.Errorf("%s: notes %q, want one starting %q", file, n, want)
		}
	}
}

// TestSweepRecordsSkipped: a sweep's warm-up and a failed run's record,
// given by name or by a pattern, are left out with a note.
func TestSweepRecordsSkipped(t *testing.T) {
	comb := filepath.Join("runs", "vllm-sweep", "20251103_101200", "SERVE-max_num_seqs=128-BENCH-max_concurrency=64")
	for file, want := range map[string]string{
		"warmup.json":        "w.json:1: a vllm bench sweep warm-up run (warmup.json, run_number -1) left out",
		"run=2.failure.json": "w.json:1: the record of vllm bench sweep run 2, which failed",
	} {
		r := NewReader(strings.NewReader(readTestdata(t, filepath.Join(comb, file))), "w.json", Options{})
		for r.Scan() {
			t.Errorf("%s: unexpected result", file)
		}
		if r.Err() != nil || len(r.Notes()) != 1 || !strings.HasPrefix(r.Notes()[0], want) {
			t.Errorf("%s: err %v, notes %q, want %q", file, r.Err(), r.Notes(), want)
		}
	}
}

func TestDirInputsNone(t *testing.T) {
	fsys := fstest.MapFS{"README.md": {Data: []byte("# runs\n")}, "inputs.json": {Data: []byte("[]")}}
	_, err := dirInputs(fsys, "results")
	if err == nil || !strings.Contains(err.Error(), `directory "results" holds no result file`) {
		t.Errorf("error %v", err)
	}
	// summary.json without its run files is the runs' only copy: read.
	ins, err := dirInputs(fstest.MapFS{"c/summary.json": {Data: []byte("[]")}, "c/warmup.json": {Data: []byte("{}")}}, "x")
	if err != nil || len(ins) != 2 || ins[0].Skip != "" || ins[1].Skip == "" {
		t.Errorf("summary.json alone: %+v, %v", ins, err)
	}
}

func TestNaturalLess(t *testing.T) {
	names := []string{"run=10.json", "run=2.json", "run=1.json", "run=02.json", "b", "a", "run=9.json", "stage_11_x", "stage_2_x"}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	want := "a b run=1.json run=02.json run=2.json run=9.json run=10.json stage_2_x stage_11_x"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
