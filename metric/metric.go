// Package metric owns perfgate's metric vocabulary: one canonical,
// lower_snake_case name per quantity (vLLM --save-result keys where they
// exist), its display label, unit and direction (whether lower or higher
// is better), and the lookup users rely on when they name a metric by
// canonical name or by label, case-insensitively.
//
// Latency metrics follow the pattern {mean,median,std,min,max,pNN}_{ttft,
// tpot,itl,e2el}_ms and are always stored in milliseconds. Metrics the
// vocabulary does not know are kept under a sanitized name (see Sanitize)
// with Direction Unknown; rules must then state a direction explicitly.
//
// Where tools name one quantity differently, Canonical maps the other
// names to the vocabulary's (ingest stores only the canonical name, and
// Lookup resolves the others):
//
//	canonical                      other names (tool)
//	concurrency                    request_concurrency (guidellm; the
//	                               measured mean, as SGLang's
//	                               "Concurrency", AISBench's and
//	                               trtllm-bench's)
//	spec_decode_acceptance_length  accept_length (SGLang "Accept length";
//	                               vLLM "Acceptance length" and
//	                               trtllm-bench [AL] are canonical)
package metric

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/perfgate/perfgate/internal/suggest"
)

// Direction says which way a metric improves.
type Direction int

const (
	// Unknown: the vocabulary does not know; a rule must say.
	Unknown Direction = iota
	// LowerIsBetter: latencies, durations, failures.
	LowerIsBetter
	// HigherIsBetter: throughputs, completed requests.
	HigherIsBetter
	// Neutral: descriptive quantities (token counts) that are not gated by default.
	Neutral
)

func (d Direction) String() string {
	switch d {
	case LowerIsBetter:
		return "lower"
	case HigherIsBetter:
		return "higher"
	case Neutral:
		return "neutral"
	}
	return "unknown"
}

// ParseDirection reads "lower", "higher" (and a few synonyms).
func ParseDirection(s string) (Direction, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "lower", "lower_is_better", "down", "min", "smaller":
		return LowerIsBetter, nil
	case "higher", "higher_is_better", "up", "max", "larger", "bigger":
		return HigherIsBetter, nil
	case "neutral":
		return Neutral, nil
	}
	return Unknown, fmt.Errorf("direction %q is not valid: use \"lower\" or \"higher\"", s)
}

// Info describes one metric.
type Info struct {
	Name      string    // canonical name, e.g. "mean_ttft_ms"
	Label     string    // display label, e.g. "Mean TTFT (ms)"
	Unit      string    // "ms", "s", "req/s", "tok/s", "" for counts
	Direction Direction // which way is better
	Known     bool      // false for sanitized unknown metrics
}

type base struct {
	name, label, unit string
	dir               Direction
}

var fixed = []base{
	{"completed", "Successful requests", "", HigherIsBetter},
	{"failed", "Failed requests", "", LowerIsBetter},
	{"duration", "Benchmark duration (s)", "s", LowerIsBetter},
	{"total_input_tokens", "Total input tokens", "", Neutral},
	{"total_output_tokens", "Total generated tokens", "", Neutral},
	{"request_throughput", "Request throughput (req/s)", "req/s", HigherIsBetter},
	{"request_goodput", "Request goodput (req/s)", "req/s", HigherIsBetter},
	{"capacity", "Capacity at SLO (req/s)", "req/s", HigherIsBetter},
	{"capacity_tokens", "Capacity at SLO (tok/s)", "tok/s", HigherIsBetter},
	{"slo_attainment", "SLO attainment (%)", "%", HigherIsBetter},
	{"slo_attainment_ttft", "SLO attainment TTFT (%)", "%", HigherIsBetter},
	{"slo_attainment_tpot", "SLO attainment TPOT (%)", "%", HigherIsBetter},
	{"slo_attainment_e2el", "SLO attainment E2EL (%)", "%", HigherIsBetter},
	{"input_throughput", "Input token throughput (tok/s)", "tok/s", HigherIsBetter},
	{"output_throughput", "Output token throughput (tok/s)", "tok/s", HigherIsBetter},
	{"total_token_throughput", "Total token throughput (tok/s)", "tok/s", HigherIsBetter},
	{"max_output_tokens_per_s", "Peak output token throughput (tok/s)", "tok/s", HigherIsBetter},
	{"max_concurrent_requests", "Peak concurrent requests", "", Neutral},
	{"concurrency", "Concurrency", "", Neutral},
	{"spec_decode_acceptance_length", "Acceptance length", "", HigherIsBetter},
}

// aliases maps the other names tools give a quantity to its canonical
// name (the table in the package documentation).
var aliases = map[string]string{
	"request_concurrency": "concurrency",
	"accept_length":       "spec_decode_acceptance_length",
}

// Canonical returns the vocabulary's name for a metric name a tool uses:
// name itself, or the canonical name it is an alias of.
func Canonical(name string) string {
	if c, ok := aliases[name]; ok {
		return c
	}
	return name
}

// Aliases returns the alias -> canonical name mapping, a copy.
func Aliases() map[string]string {
	out := make(map[string]string, len(aliases))
	for a, c := range aliases {
		out[a] = c
	}
	return out
}

var latencyKinds = map[string]string{
	"ttft": "TTFT",
	"tpot": "TPOT",
	"itl":  "ITL",
	"e2el": "E2EL",
}

var statWords = map[string]string{
	"mean":   "Mean",
	"median": "Median",
	"std":    "Std",
	"min":    "Min",
	"max":    "Max",
}

var (
	byName  = map[string]Info{}
	byLabel = map[string]string{} // normalized label -> name
	latRE   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(mean|median|std|min|max|p(\d+(?:\.\d+)?))_(ttft|tpot|itl|e2el)_ms$`)
	})
)

func init() {
	for _, b := range fixed {
		add(Info{Name: b.name, Label: b.label, Unit: b.unit, Direction: b.dir, Known: true})
	}
	// latencyInfo without the regexp: the package starts in every
	// perfgate process, most of which never match a latency name.
	for k, kind := range latencyKinds {
		for s, stat := range statWords {
			add(latencyInfoOf(s+"_"+k+"_ms", stat, kind))
		}
		for _, p := range []string{"50", "75", "90", "95", "99", "99.9"} {
			add(latencyInfoOf("p"+p+"_"+k+"_ms", "P"+p, kind))
		}
	}
	// Common aliases users type for labels.
	byLabel[normLabel("Total token throughput")] = "total_token_throughput"
	byLabel[normLabel("Total throughput (tok/s)")] = "total_token_throughput"
	byLabel[normLabel("Total generated tokens")] = "total_output_tokens"
	byLabel[normLabel("Total output tokens")] = "total_output_tokens"
	byLabel[normLabel("Output token throughput")] = "output_throughput"
	byLabel[normLabel("Request throughput")] = "request_throughput"
	byLabel[normLabel("Benchmark duration")] = "duration"
	byLabel[normLabel("Accept length")] = "spec_decode_acceptance_length"
	byLabel[normLabel("Request concurrency")] = "concurrency"
}

func add(in Info) {
	byName[in.Name] = in
	byLabel[normLabel(in.Label)] = in.Name
	// Without unit: "Mean TTFT".
	if i := strings.LastIndex(in.Label, " ("); i > 0 {
		byLabel[normLabel(in.Label[:i])] = in.Name
	}
}

func latencyInfo(name string) Info {
	m := latRE().FindStringSubmatch(name)
	if m == nil {
		return Info{}
	}
	stat := statWords[m[1]]
	if m[2] != "" {
		stat = "P" + m[2]
	}
	return latencyInfoOf(name, stat, latencyKinds[m[3]])
}

// latencyInfoOf is the Info of a latency statistic: stat as labels show
// it ("Mean", "P99"), kind upper-case ("TTFT").
func latencyInfoOf(name, stat, kind string) Info {
	return Info{
		Name:      name,
		Label:     stat + " " + kind + " (ms)",
		Unit:      "ms",
		Direction: LowerIsBetter,
		Known:     true,
	}
}

func normLabel(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, ":")
	return strings.Join(strings.Fields(s), " ")
}

// Latency returns the canonical name of a latency statistic: stat is
// "mean", "median", "std", "min", "max" or a percentile such as "p99" or
// "p99.9"; kind is "ttft", "tpot", "itl" or "e2el".
func Latency(stat, kind string) string {
	return strings.ToLower(stat) + "_" + kind + "_ms"
}

// Percentile formats a percentile the way vLLM names it: 99 -> "p99",
// 99.9 -> "p99.9".
func Percentile(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

// Get returns the Info of a canonical or sanitized metric name. Unknown
// names get an Info with Known false and a direction inferred from common
// unit suffixes (_ms latencies lower, _per_s rates higher, Go's _per_op
// costs lower), or Unknown.
func Get(name string) Info {
	if in, ok := byName[name]; ok {
		return in
	}
	if latRE().MatchString(name) {
		return latencyInfo(name)
	}
	return Info{Name: name, Label: name, Direction: inferDirection(name)}
}

func inferDirection(name string) Direction {
	switch {
	case strings.HasSuffix(name, "_per_op"), strings.HasSuffix(name, "_ns"), strings.HasSuffix(name, "_ms"),
		strings.HasSuffix(name, "_latency"), strings.HasSuffix(name, "_seconds"):
		return LowerIsBetter
	case strings.HasSuffix(name, "_per_s"), strings.HasSuffix(name, "_per_second"),
		strings.HasSuffix(name, "_throughput"):
		return HigherIsBetter
	}
	return Unknown
}

// Lookup resolves what a user typed (canonical name or display label,
// case-insensitive, with or without the unit in parentheses) to a known
// metric. It reports false when the vocabulary does not know it.
func Lookup(s string) (Info, bool) {
	t := strings.TrimSpace(s)
	if in, ok := byName[Canonical(strings.ToLower(t))]; ok {
		return in, true
	}
	if latRE().MatchString(strings.ToLower(t)) {
		return latencyInfo(strings.ToLower(t)), true
	}
	if n, ok := byLabel[normLabel(t)]; ok {
		return byName[n], true
	}
	// "P99.9 TTFT (ms)" and other percentiles not pre-registered.
	if m := labelLatRE().FindStringSubmatch(normLabel(t)); m != nil {
		stat := m[1]
		if w, ok := statAliases[stat]; ok {
			stat = w
		}
		return latencyInfo(stat + "_" + latencyAliases[m[2]] + "_ms"), true
	}
	return Info{}, false
}

var (
	labelLatRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(mean|median|std|min|max|avg|average|p\d+(?:\.\d+)?) (ttft|tpot|itl|e2el|e2e latency)(?: \(ms\))?$`)
	})
	statAliases    = map[string]string{"avg": "mean", "average": "mean"}
	latencyAliases = map[string]string{"ttft": "ttft", "tpot": "tpot", "itl": "itl", "e2el": "e2el", "e2e latency": "e2el"}
)

// Names lists every canonical name registered in the vocabulary, sorted.
func Names() []string {
	out := make([]string, 0, len(byName))
	for n := range byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Sanitize turns a source's metric name into a lower_snake_case name:
// "Prefill Token Throughput" -> "prefill_token_throughput", "ns/op" ->
// "ns_per_op", "MB/s" -> "mb_per_s".
func Sanitize(s string) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	prevUnderscore := true
	lastLower := false
	for _, r := range s {
		switch {
		case r == '/':
			if !prevUnderscore {
				b.WriteByte('_')
			}
			b.WriteString("per_")
			prevUnderscore = true
			lastLower = false
		case r == '%':
			if !prevUnderscore {
				b.WriteByte('_')
			}
			b.WriteString("pct")
			prevUnderscore = false
			lastLower = false
		case r == '.' || (r >= '0' && r <= '9'):
			b.WriteRune(r)
			prevUnderscore = false
			lastLower = false
		case r >= 'a' && r <= 'z':
			b.WriteRune(r)
			prevUnderscore = false
			lastLower = true
		case r >= 'A' && r <= 'Z':
			if lastLower {
				b.WriteByte('_')
			}
			b.WriteRune(r + ('a' - 'A'))
			prevUnderscore = false
			lastLower = false
		default:
			if !prevUnderscore {
				b.WriteByte('_')
				prevUnderscore = true
			}
			lastLower = false
		}
	}
	return strings.Trim(b.String(), "_")
}

// Suggest returns the canonical name closest to s (by edit distance over
// names and labels), or "" when nothing is close. It backs the "did you
// mean" in error messages.
func Suggest(s string) string {
	t := strings.ToLower(strings.TrimSpace(s))
	best, bestD := "", math.MaxInt
	consider := func(cand, name string) {
		d := suggest.Distance(t, strings.ToLower(cand))
		if d < bestD || (d == bestD && name < best) {
			best, bestD = name, d
		}
	}
	for n := range byName {
		consider(n, n)
	}
	for l, n := range byLabel {
		consider(l, n)
	}
	if bestD > len(t)/3+2 {
		return containing(t)
	}
	return best
}

// containing suggests for a word such as "ttft" the canonical name that
// has it as one of its words, the mean's first, else the shortest
// (mean_ttft_ms), when no name is a few edits away.
func containing(t string) string {
	word := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return '_'
		}
		return r
	}, t)
	if len(word) < 3 {
		return ""
	}
	best := ""
	for n := range byName {
		if !strings.Contains("_"+n+"_", "_"+word+"_") {
			continue
		}
		mean, bestMean := strings.HasPrefix(n, "mean_"), strings.HasPrefix(best, "mean_")
		if best == "" || (mean && !bestMean) || (mean == bestMean && (len(n) < len(best) || (len(n) == len(best) && n < best))) {
			best = n
		}
	}
	return best
}
