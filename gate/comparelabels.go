package gate

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// LabelSide picks the results of one side of a comparison within one
// commit: those whose label Key is Value.
type LabelSide struct {
	Key, Value string
}

func (s LabelSide) String() string { return s.Key + "=" + s.Value }

// CompareLabelsOptions lays two label values of one commit side by side:
// the sections of an optimisation log ingested with --section-label, the
// engine configurations of a tuning table.
type CompareLabelsOptions struct {
	Commit       string // full commit id
	A, B         LabelSide
	IgnoreLabels []string // beyond DescriptiveLabels
}

// CompareLabels reads the results of one commit and compares those
// labelled A.Key=A.Value (side A) with those labelled B.Key=B.Value (side
// B). The two labels are left out of the series' identity, so a series
// of side A meets its counterpart of side B; the other labels still
// identify series. A value no result of the commit has is an error
// (ErrNoSuchSeries) listing the values it has.
func CompareLabels(ctx context.Context, h History, opts CompareLabelsOptions) (*Comparison, error) {
	got, err := h.Samples([]string{opts.Commit})
	if err != nil {
		return nil, fmt.Errorf("reading stored results: %w", err)
	}
	all := preferClean(got[opts.Commit])
	if len(all) == 0 {
		return nil, noResultsf("commit %s has no stored results; measure it first (perfgate run or perfgate ingest --commit %s)",
			shortSHA(opts.Commit), shortSHA(opts.Commit))
	}
	var sides [2][]Sample
	for i, side := range []LabelSide{opts.A, opts.B} {
		for _, s := range all {
			if v, ok := s.Labels[side.Key]; ok && v == side.Value {
				s.Labels = withoutLabels(s.Labels, opts.A.Key, opts.B.Key)
				sides[i] = append(sides[i], s)
			}
		}
		if len(sides[i]) == 0 {
			return nil, noSuchf("commit %s has no result with label %s; its values of %s: %s", shortSHA(opts.Commit),
				quoteLabel(side), side.Key, labelValues(all, side.Key))
		}
	}
	cmp := CompareSamples(opts.Commit, opts.Commit, sides[0], sides[1], opts.IgnoreLabels)
	cmp.ALabel, cmp.BLabel = opts.A.String(), opts.B.String()
	return cmp, nil
}

// withoutLabels returns a copy of l without the keys given.
func withoutLabels(l map[string]string, keys ...string) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func quoteLabel(s LabelSide) string { return fmt.Sprintf("%s=%q", s.Key, s.Value) }

// labelValues lists the values of key among ss, quoted, or says there
// are none.
func labelValues(ss []Sample, key string) string {
	seen := map[string]bool{}
	for _, s := range ss {
		if v, ok := s.Labels[key]; ok {
			seen[v] = true
		}
	}
	if len(seen) == 0 {
		return "none (no result has the label; ingest with --section-label " + key + " or --label " + key + "=VALUE)"
	}
	vals := make([]string, 0, len(seen))
	for v := range seen {
		vals = append(vals, fmt.Sprintf("%q", v))
	}
	sort.Strings(vals)
	if len(vals) > 20 {
		vals = append(vals[:20], fmt.Sprintf("and %d more", len(vals)-20))
	}
	return strings.Join(vals, ", ")
}

// sideName is how a report names side A or B: the commit, and the label
// the side was picked by, if any.
func (c *Comparison) sideName(sha, label string) string {
	if label == "" {
		return shortSHA(sha)
	}
	return shortSHA(sha) + " " + label
}
