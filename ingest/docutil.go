package ingest

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// Helpers shared by the structured-document formats (vllmjson.go,
// guidellm.go, genaiperf.go, aisbench_doc.go). Decoded documents are
// map[string]any trees whose numbers are json.Number (JSON) or
// int/float64 (YAML); every accessor here tolerates any shape, so a
// converter fed arbitrary input returns an error instead of panicking.

// docField returns obj[key] when present and not an absent marker (null,
// "N/A", "None", ...).
func docField(obj map[string]any, key string) (any, bool) {
	v, ok := obj[key]
	if !ok || v == nil {
		return nil, false
	}
	if s, isStr := v.(string); isStr && IsAbsent(s) {
		return nil, false
	}
	return v, true
}

// at walks nested objects: docAt(obj, "args", "strategy") is
// obj["args"]["strategy"].
func docAt(obj map[string]any, path ...string) (any, bool) {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = docField(m, k); !ok {
			return nil, false
		}
	}
	return cur, true
}

// docMap returns the object at path.
func docMap(obj map[string]any, path ...string) (map[string]any, bool) {
	v, ok := docAt(obj, path...)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}

// docStr returns the scalar at path as a label string.
func docStr(obj map[string]any, path ...string) (string, bool) {
	v, ok := docAt(obj, path...)
	if !ok {
		return "", false
	}
	return Str(v)
}

// docIsNumber reports whether v is a decoded number, not a string that
// holds one. Python's bare NaN, Infinity and -Infinity, which LooseJSON
// turned into strings, count as numbers.
func docIsNumber(v any) bool {
	switch x := v.(type) {
	case float64, float32, int, int64, uint64:
		return true
	case string:
		return x == "NaN" || x == "Infinity" || x == "-Infinity"
	}
	_, ok := Num(v)
	return ok
}

// docNum returns the number at path. ok is false when the value is missing
// or marked absent; err is set when a value is present but is not a number.
func docNum(obj map[string]any, path ...string) (v float64, ok bool, err error) {
	x, present := docAt(obj, path...)
	if !present {
		return 0, false, nil
	}
	f, isNum := Num(x)
	if !isNum {
		return 0, false, docNotNumber(strings.Join(path, "."), x)
	}
	return f, true, nil
}

// docNotNumber is the error for a value that should be a number.
func docNotNumber(what string, v any) error {
	return fmt.Errorf("%q is %s, not a number; fix the value (null marks a missing one)", what, docDescribe(v))
}

// docDescribe names a decoded value for an error message.
func docDescribe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return Quote(fmt.Sprint(v))
}

// docKeys lists up to 8 sorted keys of obj for an error message.
func docKeys(obj map[string]any) string {
	ks := make([]string, 0, len(obj))
	for k := range obj {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) > 8 {
		ks = append(ks[:8], "...")
	}
	return "[" + strings.Join(ks, ", ") + "]"
}

// docSortedKeys returns the keys of m in order, so results and errors do not
// depend on map iteration order.
func docSortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// docStatWord maps a statistic's key as tools spell it (avg, Average, mean,
// median, p50, P99, p999, std_dev, min, ...) to the vocabulary's word:
// mean, median, std, min, max or a percentile "pNN". p50 is the median:
// the vocabulary names the 50th percentile median_*, as vLLM does. ok is
// false for keys that are not statistics (count, mode, variance, unit).
func docStatWord(key string) (string, bool) {
	k := strings.ToLower(strings.TrimSpace(key))
	switch k {
	case "avg", "average", "mean":
		return "mean", true
	case "median":
		return "median", true
	case "min", "minimum":
		return "min", true
	case "max", "maximum":
		return "max", true
	case "std", "std_dev", "stddev", "stdev", "std dev":
		return "std", true
	}
	p, ok := docPercentile(k)
	if !ok {
		return "", false
	}
	if p == 50 {
		return "median", true
	}
	return metric.Percentile(p), true
}

// docPercentile reads p99, P75, p99.9 and guidellm's compact forms, where
// digits after the first two are decimals: p001 is the 0.1th percentile,
// p999 the 99.9th, p01 the 1st, p05 the 5th.
func docPercentile(k string) (float64, bool) {
	if len(k) < 2 || (k[0] != 'p' && k[0] != 'P') {
		return 0, false
	}
	d := k[1:]
	if d == "100" || strings.TrimLeft(d, "0123456789.") != "" {
		return 0, false
	}
	if !strings.Contains(d, ".") && len(d) >= 3 {
		d = d[:2] + "." + d[2:]
	}
	p, err := strconv.ParseFloat(d, 64)
	if err != nil || p <= 0 || p >= 100 {
		return 0, false
	}
	return p, true
}

// docSetStats stores the statistics in stats (a map of docStatWord keys to
// numbers) multiplied by scale, under the names name returns for each
// vocabulary word ("" skips it). A median key wins over p50. A statistic
// whose value is present but not a number is an error naming what.
func docSetStats(res *Result, what string, stats map[string]any, scale float64, name func(stat string) string) error {
	_, hasMedian := stats["median"]
	for _, k := range docSortedKeys(stats) {
		word, ok := docStatWord(k)
		if !ok {
			continue
		}
		if word == "median" && hasMedian && strings.ToLower(k) != "median" {
			continue
		}
		n := name(word)
		if n == "" {
			continue
		}
		v, present := docField(stats, k)
		if !present {
			continue
		}
		f, isNum := Num(v)
		if !isNum {
			return docNotNumber(what+"."+k, v)
		}
		docSetScaled(res, n, f, scale)
	}
	return nil
}

// docLatencyName returns the namer docSetStats uses for a latency kind (ttft,
// tpot, itl, e2el).
func docLatencyName(kind string) func(string) string {
	return func(stat string) string { return metric.Latency(stat, kind) }
}

// docStatName returns the namer for a distribution the vocabulary does not
// know: mean_output_sequence_length, p99_time_to_second_token_ms.
func docStatName(base, suffix string) func(string) string {
	return func(stat string) string { return stat + "_" + base + suffix }
}

// docSplitUnit splits a header such as "Time To First Token (ms)" into the
// name and the unit in its trailing parentheses.
func docSplitUnit(s string) (name, unit string) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, "("); i > 0 {
			return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1 : len(s)-1])
		}
	}
	return s, ""
}

// docTimeScale returns the factor that converts a value in unit to
// milliseconds; ok is false when unit is not a time unit. An empty unit
// is milliseconds.
func docTimeScale(unit string) (float64, bool) {
	return LatencyMs(1, unit)
}

// docLabel turns a decoded scalar or list of scalars into a label
// value ("a,b" for lists, as genai-perf stores its model names).
func docLabel(v any) (string, bool) {
	if l, ok := v.([]any); ok {
		var parts []string
		for _, e := range l {
			if s, ok := Str(e); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ","), len(parts) > 0
	}
	return Str(v)
}

// docRound rounds a unit-converted value to 12 significant digits, so
// 98409.4916 ms is stored as 98.4094916 s, not 98.40949160000001.
func docRound(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	y, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	if err != nil {
		return x
	}
	return y
}

// docSetScaled stores v*scale, rounded when a unit conversion happened.
func docSetScaled(res *Result, name string, v, scale float64) {
	if scale == 1 {
		res.Set(name, v)
		return
	}
	res.Set(name, docRound(v*scale))
}
