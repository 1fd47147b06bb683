package gate

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/perfgate/perfgate/metric"
)

// Sample is one benchmark result as gate sees it.
type Sample struct {
	// ID is the run's id in the history, for reports that name a run (""
	// when unknown).
	ID string
	// Derived marks a result perfgate computed from a commit's stored
	// runs (capacity at the SLO, see WithCapacity), not a stored run:
	// counts of runs leave it out.
	Derived   bool
	Commit    string             // full commit id the result measured
	Benchmark string             // benchmark name
	Labels    map[string]string  // labels; identity labels pick the series
	Metrics   map[string]float64 // canonical metric name -> value
	Time      time.Time          // when it was measured
	Dirty     bool               // measured on a working tree with uncommitted changes
	Invalid   string             // why the store marked it invalid; "" when valid
	// Testbed names the machine that measured it, part of its series'
	// identity; "" for results stored before perfgate recorded it, which
	// match any testbed (see the package comment).
	Testbed string
	// OnRecord: Invalid comes from an invalidation on record (perfgate
	// invalidate), not from the result itself. Such a run is left out at
	// head as in baselines: the remaining runs decide.
	OnRecord bool
	// Before is set when the result was measured on the working tree of
	// Before (the commit's first parent) holding exactly this commit's
	// changes, before they were committed: a run of this commit.
	Before string
	// Requests is the run's per-request summary (see RequestSummary), nil
	// when it stored none: a check of a latency percentile says what the
	// percentile rests on.
	Requests RequestSummary
}

// Commit is one first-parent commit.
type Commit struct {
	SHA     string
	Subject string
	Time    time.Time
}

// Graph answers the two questions gate asks of git.
type Graph interface {
	// MergeBase returns the best common ancestor of two commits.
	MergeBase(a, b string) (string, error)
	// FirstParents returns up to n commits of the first-parent chain
	// starting at from (inclusive), newest first. Fewer than n means the
	// chain ended. Check uses only the ids; ReadTrend shows Subject and
	// Time.
	FirstParents(from string, n int) ([]Commit, error)
}

// History answers which results are stored for a batch of commits.
type History interface {
	// Samples returns the stored results of each commit; commits without
	// results may be absent from the map.
	Samples(commits []string) (map[string][]Sample, error)
}

// ErrNoResults is wrapped by errors about a commit that has no results to
// check; the CLI reports it as the environment's state (exit 3: measure
// it, or sync).
var ErrNoResults = errors.New("no results")

// ErrNoSuchSeries is wrapped by errors about a benchmark, metric or labels
// the caller named that the history does not hold (a typo, most often);
// the CLI reports it as bad input (exit 2).
var ErrNoSuchSeries = errors.New("no such series")

// noSuchf formats an error that matches ErrNoSuchSeries.
func noSuchf(format string, args ...any) error {
	return fmt.Errorf("%s%w", fmt.Sprintf(format, args...), errNoSuchTail)
}

// errNoSuchTail wraps ErrNoSuchSeries without adding to the message.
var errNoSuchTail = &silentError{ErrNoSuchSeries}

type silentError struct{ err error }

func (e *silentError) Error() string { return "" }
func (e *silentError) Unwrap() error { return e.err }

// noResultsError is an error about missing results whose message stands on
// its own; errors.Is(err, ErrNoResults) is true.
type noResultsError struct{ msg string }

func (e *noResultsError) Error() string        { return e.msg }
func (e *noResultsError) Is(target error) bool { return target == ErrNoResults }

// noResultsf formats an error that matches ErrNoResults without repeating
// "no results" in its text.
func noResultsf(format string, args ...any) error {
	return &noResultsError{msg: fmt.Sprintf(format, args...)}
}

// DescriptiveLabels are labels that describe a run without identifying
// its series: two runs that differ only in these are compared.
var DescriptiveLabels = []string{
	"branch", "comment", "commit", "created_at", "data_source", "date", "datetime",
	"description", "end_time", "external_id", "file", "filename", "host", "hostname", "job_id",
	"log", "log_file", "note", "notes", "path", "result_file", "run_id", "run_number", "source",
	"start_time", "time", "timestamp",
}

// identity computes series keys from labels.
type identity struct {
	ignore map[string]bool
}

func newIdentity(extra []string) identity {
	id := identity{ignore: map[string]bool{}}
	for _, l := range DescriptiveLabels {
		id.ignore[l] = true
	}
	for _, l := range extra {
		id.ignore[l] = true
	}
	return id
}

// labels returns the identity labels of a sample (nil when none).
func (id identity) labels(l map[string]string) map[string]string {
	var out map[string]string
	for k, v := range l {
		if id.ignore[k] {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// key returns the series key of a sample: benchmark, identity labels and
// testbed.
func (id identity) key(s *Sample) string {
	// labelString(id.labels(s.Labels)) without the map: a key is made for
	// every sample a check reads.
	var buf [8]string
	keys := buf[:0]
	n := len(s.Benchmark) + 1
	for k, v := range s.Labels {
		if !id.ignore[k] {
			keys = append(keys, k)
			n += len(k) + len(v) + 2
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	tb := id.testbed(s)
	b.Grow(n + len(tb) + 1)
	b.WriteString(s.Benchmark)
	b.WriteByte(0)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(s.Labels[k])
	}
	if tb != "" {
		b.WriteByte(0)
		b.WriteString(tb)
	}
	return b.String()
}

// labelString renders labels as sorted k=v pairs joined by commas.
func labelString(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(k)
		b.WriteString("=")
		b.WriteString(l[k])
	}
	return b.String()
}

// labelDiff describes how two identity label sets differ, e.g.
// `model: "a" vs "b"; gpu: absent vs "H100"`.
func labelDiff(head, base map[string]string) string {
	keys := map[string]bool{}
	for k := range head {
		keys[k] = true
	}
	for k := range base {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		if hv, hok := head[k]; hok {
			if bv, bok := base[k]; bok && hv == bv {
				continue
			}
		}
		names = append(names, k)
	}
	sort.Strings(names)
	val := func(m map[string]string, k string) string {
		if v, ok := m[k]; ok {
			return fmt.Sprintf("%q", v)
		}
		return "absent"
	}
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s: %s (head) vs %s (baseline)", k, val(head, k), val(base, k))
	}
	return strings.Join(parts, "; ")
}

// Validity thresholds.
const (
	maxFailedFraction = 0.05 // more failed requests than this: invalid
	maxCompletedDrop  = 0.05 // completed this far below the baseline: invalid
)

// selfInvalid says why a sample is invalid on its own: the store's reason,
// a value its metric cannot take, or too many failed requests. It returns
// "" for a valid sample.
func selfInvalid(s *Sample) string {
	if s.Invalid != "" {
		return s.Invalid
	}
	if why := impossible(s); why != "" {
		return why
	}
	failed, fok := s.Metrics["failed"]
	completed, cok := s.Metrics["completed"]
	if !fok || failed <= 0 {
		return ""
	}
	if !cok {
		return ""
	}
	total := completed + failed
	if total > 0 && failed/total > maxFailedFraction {
		return fmt.Sprintf("%s of %s requests failed (%.1f%%, more than %.0f%%)",
			fmtNum(failed), fmtNum(total), 100*failed/total, 100*maxFailedFraction)
	}
	return ""
}

// fixedRequests reports whether a series' runs send a fixed number of
// requests, so that fewer completed requests mean lost requests: the run
// names its configured count (a num_prompts label, as vLLM, SGLang and
// MindIE record it), or completed+failed takes one value in most runs of
// the nearby history that report both (three or more; head's own count is
// what is judged, so it does not count). Benchmarks
// bounded by time (guidellm, AISBench, a --duration run) complete as many
// requests as the time allows: a slower build completes fewer, which is
// slower, not invalid.
func fixedRequests(head []Sample, near []*Sample) bool {
	var totals []float64
	add := func(s *Sample) bool {
		if s.Labels["num_prompts"] != "" {
			return true
		}
		c, cok := s.Metrics["completed"]
		f := s.Metrics["failed"]
		if cok {
			totals = append(totals, c+f)
		}
		return false
	}
	for i := range head {
		if head[i].Labels["num_prompts"] != "" {
			return true
		}
	}
	for _, s := range near {
		if add(s) {
			return true
		}
	}
	if len(totals) < 3 {
		return false
	}
	count := map[float64]int{}
	most := 0
	for _, t := range totals {
		count[t]++
		most = max(most, count[t])
	}
	// A count that repeats in most runs is a configured one (a run that
	// lost requests without counting them as failed differs); a
	// time-bounded benchmark rarely completes the same number twice.
	return 2*most > len(totals)
}

// completedDrop says why a sample's completed count is too far below
// ref; "" when it is not (or either is unknown).
func completedDrop(s *Sample, ref float64, what string) string {
	c, ok := s.Metrics["completed"]
	if !ok || ref <= 0 {
		return ""
	}
	if c < ref*(1-maxCompletedDrop) {
		return fmt.Sprintf("%s requests completed, %.1f%% fewer than the %s's %s (more than %.0f%% fewer)",
			fmtNum(c), 100*(1-c/ref), what, fmtNum(ref), 100*maxCompletedDrop)
	}
	return ""
}

// shortSHA abbreviates a commit id for display.
func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// impossible names a value of a known metric that its meaning rules out:
// a negative or non-finite duration, latency, throughput or count (every
// metric of perfgate's vocabulary is one of these). A history line may be
// forged: a baseline of -1000 ms would pass any head.
func impossible(s *Sample) string {
	names := make([]string, 0, len(s.Metrics))
	for name := range s.Metrics {
		names = append(names, name)
	}
	slices.Sort(names) // the same reason whatever the map's order
	for _, name := range names {
		v := s.Metrics[name]
		if !metric.Get(name).Known {
			continue
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("%s is %v, which it cannot be (a duration, rate or count is finite and not negative)", name, v)
		}
	}
	return ""
}
