package ingest

import (
	"errors"
	"fmt"
	"sort"

	"github.com/perfgate/perfgate/metric"
)

// The generic format is perfgate's own minimal shape, for tools perfgate
// does not know: {"name": "...", "metrics": {name: value}, "labels": {k: v}}.
// Metric names that the vocabulary knows (by canonical name or label) are
// mapped to their canonical names; others are kept sanitized. A name that
// sanitizes to nothing ("", "!!") and two names that become one metric
// ("a-b" and "a_b", "Mean TTFT (ms)" and "mean_ttft_ms") are errors.
func init() {
	RegisterDoc(DocFormat{
		Name: "generic",
		Desc: `generic JSON/YAML: {"metrics": {name: value}, "labels": {...}}`,
		Match: func(obj map[string]any) bool {
			ms, ok := obj["metrics"].(map[string]any)
			if !ok {
				return false
			}
			// An object of only our keys is ours, so a bad value gets
			// convertGeneric's precise error, not "no known format".
			ours := true
			for k := range obj {
				switch k {
				case "name", "benchmark", "metrics", "labels":
				default:
					ours = false
				}
			}
			if ours {
				return true
			}
			// Otherwise claim only a map of numbers (or absent values):
			// other tools' objects with a "metrics" key of records are not
			// ours.
			for _, v := range ms {
				if _, isNum := Num(v); !isNum && v != nil {
					if s, isStr := v.(string); !isStr || !IsAbsent(s) {
						return false
					}
				}
			}
			return true
		},
		Convert: convertGeneric,
	})
}

func convertGeneric(obj map[string]any) ([]Result, error) {
	ms, ok := obj["metrics"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf(`"metrics" must be an object of name: number; got %T`, obj["metrics"])
	}
	res := NewResult("generic", 0)
	if n, ok := Str(obj["name"]); ok {
		res.Name = n
	} else if n, ok := Str(obj["benchmark"]); ok {
		res.Name = n
	}
	keys := make([]string, 0, len(ms))
	for k := range ms {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	srcs := metricSources{}
	for _, k := range keys {
		v := ms[k]
		f, ok := Num(v)
		if !ok {
			if s, isStr := v.(string); isStr && IsAbsent(s) || v == nil {
				continue
			}
			return nil, fmt.Errorf("metric %q has value %v, which is not a number; use a number or null", k, v)
		}
		name := metric.Sanitize(k)
		if in, ok := metric.Lookup(k); ok {
			name = in.Name
		}
		if name == "" {
			return nil, fmt.Errorf("metric name %q has no letter or digit, so it names nothing; give the metric a name", k)
		}
		if msg := srcs.claim(name, fmt.Sprintf("metric %q", k)); msg != "" {
			return nil, errors.New(msg)
		}
		res.Set(name, f)
	}
	if ls, ok := obj["labels"].(map[string]any); ok {
		for k, v := range ls {
			if s, ok := Str(v); ok {
				res.SetLabel(k, s)
			}
		}
	}
	return []Result{res}, nil
}
