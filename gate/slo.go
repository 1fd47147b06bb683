package gate

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// SLO is a service-level objective: the latency each request kind may
// take, at a percentile of the requests. A zero objective is not set.
// Capacity at the SLO (see capacity.go) is the highest load whose
// latencies meet every objective set.
type SLO struct {
	// Benchmark is a glob over benchmark names; "" applies to all (the
	// rules file's slo:, where its benchmarks: entries name one).
	Benchmark string
	TTFTMs    float64 // time to first token, ms
	TPOTMs    float64 // time per output token, ms
	ITLMs     float64 // inter-token latency, ms
	E2ELMs    float64 // end-to-end latency, ms
	// Percentile is the statistic the objectives apply to: "p99" (the
	// default), "p90", "p99.9" ..., "median" or "mean". An attainment
	// target (attainment: 90%: 90% of requests within the objective) is
	// the percentile p90.
	Percentile string
	// Attainment is the attainment target as a fraction (0.9 for
	// attainment: 90%), 0 when the SLO names a percentile instead;
	// Percentile is then "p90".
	Attainment float64
	Origin     string // "FILE:LINE" of the slo: entry
}

// objective is one latency bound of an SLO: the stored metric it reads
// (p99_ttft_ms) and its limit.
type objective struct {
	Metric string
	Limit  float64
}

// Objective is one bound of an SLO as the site draws it: the stored
// metric it reads (p99_ttft_ms) and its limit.
type Objective = objective

// Objectives lists the SLO's bounds, in the order TTFT, TPOT, ITL, E2EL.
func (s SLO) Objectives() []Objective { return s.objectives() }

// objectives lists the SLO's bounds, in the order TTFT, TPOT, ITL, E2EL.
func (s SLO) objectives() []objective {
	p := s.Percentile
	if p == "" {
		p = "p99"
	}
	var out []objective
	for _, o := range []struct {
		kind  string
		limit float64
	}{{"ttft", s.TTFTMs}, {"tpot", s.TPOTMs}, {"itl", s.ITLMs}, {"e2el", s.E2ELMs}} {
		if o.limit > 0 {
			out = append(out, objective{Metric: p + "_" + o.kind + "_ms", Limit: o.limit})
		}
	}
	return out
}

// String renders the SLO the way reports name it:
// "p99_ttft_ms <= 200, p99_tpot_ms <= 50".
func (s SLO) String() string {
	var parts []string
	for _, o := range s.objectives() {
		parts = append(parts, o.Metric+" <= "+fmtNum(o.Limit))
	}
	return strings.Join(parts, ", ")
}

// sloFor returns the SLO that applies to a benchmark: the first
// per-benchmark one whose glob matches, else the global one; ok is false
// when none applies.
func sloFor(slos []SLO, bench string) (SLO, bool) {
	for _, s := range slos {
		if s.Benchmark == "" {
			continue
		}
		if ok, _ := path.Match(s.Benchmark, bench); ok {
			return s, true
		}
	}
	for _, s := range slos {
		if s.Benchmark == "" {
			return s, true
		}
	}
	return SLO{}, false
}

// SLOFor is sloFor for the commands that compute goodput at ingest from
// the rules file's slo: (ingest without --slo).
func SLOFor(slos []SLO, bench string) (SLO, bool) { return sloFor(slos, bench) }

var (
	sloKeys      = []string{"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "percentile", "attainment", "benchmarks"}
	sloBenchKeys = []string{"ttft_ms", "tpot_ms", "itl_ms", "e2el_ms", "percentile", "attainment"}
	percentileRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^p(\d{1,2}(?:\.\d+)?)$`) })
)

// slo parses the rules file's slo: section, a mapping of objectives with
// an optional benchmarks: mapping of globs to their own objectives (a
// per-benchmark SLO keeps the global objectives it does not set).
func (p *ruleParser) slo(n *yaml.Node) ([]SLO, error) {
	global := SLO{Origin: fmt.Sprintf("%s:%d", p.file, n.Line)}
	var benches *yaml.Node
	err := p.sloFields(n, "slo", sloKeys, &global, func(v *yaml.Node) { benches = v })
	if err != nil {
		return nil, err
	}
	out := []SLO{}
	if benches != nil {
		if benches.Kind != yaml.MappingNode {
			return nil, p.errf(benches, "slo benchmarks must be a mapping of benchmark globs to objectives, e.g. benchmarks: {\"chat-*\": {ttft_ms: 500}}")
		}
		for i := 0; i+1 < len(benches.Content); i += 2 {
			k, v := benches.Content[i], benches.Content[i+1]
			if _, err := path.Match(k.Value, ""); err != nil || strings.TrimSpace(k.Value) == "" {
				return nil, p.errf(k, "slo benchmark %q is not a valid glob; use * and ? (e.g. \"serving-*\") or a plain name", k.Value)
			}
			b := global
			b.Benchmark, b.Origin = k.Value, fmt.Sprintf("%s:%d", p.file, k.Line)
			if err := p.sloFields(v, fmt.Sprintf("slo benchmark %q", k.Value), sloBenchKeys, &b, nil); err != nil {
				return nil, err
			}
			if len(b.objectives()) == 0 {
				return nil, p.errf(k, "slo benchmark %q sets no objective; add ttft_ms, tpot_ms, itl_ms or e2el_ms", k.Value)
			}
			out = append(out, b)
		}
	}
	if len(global.objectives()) > 0 {
		out = append(out, global)
	} else if len(out) == 0 {
		return nil, p.errf(n, "slo sets no objective; add ttft_ms, tpot_ms, itl_ms or e2el_ms in milliseconds, e.g. slo: {ttft_ms: 200, tpot_ms: 50}")
	}
	return out, nil
}

// sloFields reads one SLO mapping into s; benches, when not nil, takes
// the benchmarks: node.
func (p *ruleParser) sloFields(n *yaml.Node, what string, keys []string, s *SLO, benches func(*yaml.Node)) error {
	var pct, att *yaml.Node
	err := p.mapping(n, what, keys, func(key string, k, v *yaml.Node) error {
		if key == "benchmarks" {
			benches(v)
			return nil
		}
		if v.Kind != yaml.ScalarNode {
			return p.errf(v, "%s %s must be a single value", what, key)
		}
		switch key {
		case "percentile":
			pv := strings.ToLower(strings.TrimSpace(v.Value))
			if pv != "mean" && pv != "median" && !percentileRE().MatchString(pv) {
				return p.errf(v, "%s percentile is %q; use p50, p90, p95, p99 (the default), p99.9, median or mean", what, v.Value)
			}
			s.Percentile, s.Attainment, pct = pv, 0, v
		case "attainment":
			x, err := parsePercent(v.Value)
			if err != nil || x <= 0 || x >= 100 {
				return p.errf(v, "%s attainment is %q; give the share of requests that must meet the objectives, between 0%% and 100%%, e.g. attainment: 90%%", what, v.Value)
			}
			s.Percentile, s.Attainment, att = "p"+strconv.FormatFloat(x, 'f', -1, 64), x/100, v
		default:
			x, err := parseNumber(v.Value)
			if err != nil || x <= 0 {
				return p.errf(v, "%s %s is %q; give the objective in milliseconds, a number above 0, e.g. %s: 200", what, key, v.Value, key)
			}
			switch key {
			case "ttft_ms":
				s.TTFTMs = x
			case "tpot_ms":
				s.TPOTMs = x
			case "itl_ms":
				s.ITLMs = x
			case "e2el_ms":
				s.E2ELMs = x
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if pct != nil && att != nil {
		return p.errf(att, "%s sets both percentile and attainment; keep one (attainment: 90%% is percentile: p90)", what)
	}
	return nil
}
