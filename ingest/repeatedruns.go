package ingest

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/internal/natsort"
)

// Repeated runs written by the tool. Some benchmark tools repeat a
// configuration themselves and write one file per repetition beside an
// aggregate of their own:
//
//   - `vllm bench sweep serve` (vllm/benchmarks/sweep/serve.py) writes, per
//     combination of server and benchmark settings, a directory
//     SERVE-...-BENCH-.../ with run=0.json ... run=N-1.json (a
//     --save-result object plus run_number and the settings), summary.json
//     (the list of those objects), warmup.json (run_number -1) and, for a
//     run that failed, run=N.failure.json; the experiment directory holds
//     summary.csv (every run of every combination).
//   - AIPerf's `--num-profile-runs N` writes profile_runs/run_0001/ ...
//     run_000N/, each with profile_export_aiperf.json and .csv, the
//     per-request profile_export.jsonl and inputs.json, and aggregate/ with
//     profile_export_aiperf_aggregate.json and .csv: the mean, std, cv,
//     confidence interval ... of each metric over the runs.
//   - inference-perf writes stage_N_lifecycle_metrics.json per stage,
//     summary_lifecycle_metrics.json over all stages, and
//     *_prometheus_metrics.json (server metrics).
//
// Each run file is a result like any other, and the runs of one
// configuration carry one name and the same identity labels (run_number
// is descriptive), so they are repetitions of one series and the gate's
// repeated-runs statistics apply. The tool's aggregate is never a further
// run: an AIPerf aggregate (JSON or CSV), a sweep's warm-up (run_number
// -1) and a failed run's record are recognised by their content and
// skipped with a note (Reader.Notes) wherever they are given; DirInputs
// leaves the aggregates, warm-ups, failures and per-request files of a
// directory out, with a note each.

// skippedDoc returns why a decoded document, which perfgate does not
// store, is not a result: a tool's aggregate of repeated runs, a sweep's
// warm-up or failed run, or a companion a tool writes beside its results
// (inference-perf's Prometheus report, genai-bench's experiment
// metadata); or "".
func skippedDoc(v any) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if why := sweepNotRun(obj); why != "" {
		return why
	}
	if isGenAIBenchMetadata(obj) {
		return "genai-bench's experiment metadata (experiment_metadata.json: the run's settings) left out: the run files beside it hold the results"
	}
	if isInferencePerfPrometheus(obj) {
		return "inference-perf's Prometheus report (*_prometheus_metrics.json: the server's own metrics) left out: the lifecycle reports beside it (*_lifecycle_metrics.json) hold the benchmark's results"
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return ""
	}
	kind, ok := md["aggregation_type"].(string)
	if !ok {
		return ""
	}
	if _, ok := obj["metrics"].(map[string]any); !ok {
		return ""
	}
	runs := ""
	if n, ok := Num(md["num_profile_runs"]); ok {
		runs = fmt.Sprintf(" of %s runs", formatNum(n))
	}
	return fmt.Sprintf("AIPerf's %s aggregate%s (profile_export_aiperf_aggregate.json) left out: it summarises the runs, which are stored one by one from profile_runs/run_*/profile_export_aiperf.json", Quote(kind), runs)
}

// sweepNotRun says why a vllm bench sweep record is not a measured run
// (its warm-up, run_number -1, or the record of a run that failed), or "".
func sweepNotRun(obj map[string]any) string {
	n, ok := obj["run_number"]
	if !ok || !docIsNumber(n) {
		return ""
	}
	v, _ := Num(n)
	if v < 0 {
		return "a vllm bench sweep warm-up run (warmup.json, run_number -1) left out: it is not measured"
	}
	if _, failed := obj["error_type"]; failed {
		return fmt.Sprintf("the record of vllm bench sweep run %s, which failed (run=N.failure.json), left out: it holds the error, no result", formatNum(v))
	}
	return ""
}

// isInferencePerfPrometheus recognises inference-perf's
// *_prometheus_metrics.json: {"load_summary": {}, "successes": {"count",
// "rate", "request_latency": {...}, ...}, "failures": {}}.
func isInferencePerfPrometheus(obj map[string]any) bool {
	if _, ok := obj["load_summary"].(map[string]any); !ok {
		return false
	}
	s, ok := obj["successes"].(map[string]any)
	if !ok {
		return false
	}
	if _, ok := s["latency"]; ok {
		return false
	}
	_, lat := s["request_latency"].(map[string]any)
	_, ttft := s["time_to_first_token"].(map[string]any)
	return lat || ttft
}

// aiperfAggregateHeader is the header of profile_export_aiperf_aggregate.csv.
var aiperfAggregateHeader = []string{"metric", "mean", "std", "min", "max", "cv", "se", "ci_low", "ci_high", "t_critical"}

// skippedCSV is skippedDoc for a CSV header row.
func skippedCSV(header []string) string {
	if len(header) < len(aiperfAggregateHeader) {
		return ""
	}
	for i, h := range aiperfAggregateHeader {
		if !strings.EqualFold(strings.TrimSpace(header[i]), h) {
			return ""
		}
	}
	return "AIPerf's confidence aggregate (profile_export_aiperf_aggregate.csv) left out: it summarises the runs, which are stored one by one from profile_runs/run_*/profile_export_aiperf.json"
}

// DirInput is a file of a directory given as input.
type DirInput struct {
	Path string // the file, joined to the directory as given
	// Skip, when not empty, says why the file is not read (an aggregate of
	// runs read from other files, a warm-up, a failure, per-request
	// records); the caller prints it as a note.
	Skip string
}

var (
	sweepRunRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^run=(\d+)\.json$`) })
	sweepFailRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^run=-?\d+\.failure\.json$`) })
	ipStageRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^stage_(\d+)_lifecycle_metrics\.json$`) })
	aiperfRunDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^run_(\d+)$`) })
)

// DirInputs lists the files of dir, a directory a benchmark tool wrote,
// walked in lexical order (numbers in names compared as numbers, so
// run=10.json comes after run=9.json): the result files of the layouts
// above, each run once, and every other file with the reason it is not
// read. A file of no known layout is left out too (give it by name). It
// is an error when dir holds no result file.
func DirInputs(dir string) ([]DirInput, error) {
	return dirInputs(os.DirFS(dir), dir)
}

func dirInputs(fsys fs.FS, dir string) ([]DirInput, error) {
	var out []DirInput
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		entries, err := fs.ReadDir(fsys, p)
		if err != nil {
			return err
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
		sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
		for _, n := range names {
			skip := dirSkip(p, n, names)
			out = append(out, DirInput{Path: filepath.Join(dir, filepath.FromSlash(path.Join(p, n))), Skip: skip})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", Quote(dir), err)
	}
	for _, in := range out {
		if in.Skip == "" {
			return out, nil
		}
	}
	return nil, fmt.Errorf("directory %s holds no result file perfgate reads from a directory (vllm bench sweep serve: run=N.json; AIPerf --num-profile-runs: profile_runs/run_*/profile_export_aiperf.json; inference-perf: stage_N_lifecycle_metrics.json); give the files themselves, or a pattern such as %s",
		Quote(dir), Quote(filepath.Join(dir, "*.json")))
}

// dirSkip says why file name in directory dir (slash-separated, relative
// to the walk's root) is not read, or "" for a result file; siblings are
// the regular files of the directory.
func dirSkip(dir, name string, siblings []string) string {
	hasRuns := false
	for _, s := range siblings {
		if sweepRunRE().MatchString(s) {
			hasRuns = true
			break
		}
	}
	inRunDir := aiperfRunDir().MatchString(path.Base(dir)) && path.Base(path.Dir(dir)) == "profile_runs"
	switch {
	case sweepRunRE().MatchString(name), ipStageRE().MatchString(name):
		return ""
	case name == "profile_export_aiperf.json", name == "profile_export_genai_perf.json":
		return ""
	case name == "profile_export_aiperf.csv" && contains(siblings, "profile_export_aiperf.json"),
		name == "profile_export_genai_perf.csv" && contains(siblings, "profile_export_genai_perf.json"):
		return "the CSV copy of the JSON export beside it, which is read"
	case name == "profile_export_aiperf.csv":
		return ""
	case name == "summary.json" && hasRuns:
		return "vllm bench sweep's list of the runs, which are read from run=N.json"
	case name == "summary.json":
		return "" // the runs themselves are absent: read their list
	case name == "warmup.json":
		return "a warm-up run, not measured"
	case sweepFailRE().MatchString(name):
		return "a run that failed: it holds the error, no result"
	case name == "summary.csv":
		return "vllm bench sweep's table of every run, which are read from run=N.json"
	case strings.HasPrefix(name, "profile_export_aiperf_aggregate") || strings.HasPrefix(name, "profile_export_aiperf_collated"):
		return "AIPerf's aggregate over the runs, which are read one by one"
	case name == "profile_export.jsonl" || name == "inputs.json" || inRunDir && strings.HasSuffix(name, ".jsonl"):
		return "per-request records or inputs, not a result"
	case name == "summary_lifecycle_metrics.json":
		return "inference-perf's summary over all stages, which are read one by one"
	case strings.HasSuffix(name, "_prometheus_metrics.json"):
		return "inference-perf's server-side Prometheus metrics, not a benchmark result"
	}
	return "not a result file of a layout perfgate reads from a directory; give it by name to read it"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// naturalLess orders names with their digit runs compared as numbers.
func naturalLess(a, b string) bool { return natsort.Less(a, b) }
