package gate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/perfgate/perfgate/metric"

	"github.com/perfgate/perfgate/internal/suggest"
)

// Bound is the kind of limit a rule sets.
type Bound int

const (
	// Regression: worse than the baseline by more than Limit percent fails.
	Regression Bound = iota
	// Max: a value above Limit fails (at or above when Strict).
	Max
	// Min: a value below Limit fails (at or below when Strict).
	Min
)

// Rule is one threshold on one metric.
type Rule struct {
	Metric    string           // canonical (or sanitized) metric name
	Direction metric.Direction // which way the metric improves
	Bound     Bound
	Limit     float64 // percent for Regression, a value for Max and Min
	Strict    bool    // "<" or ">" rather than "<=" or ">="
	Benchmark string  // glob over benchmark names; "" matches all
	Origin    string  // where the rule came from: "FILE:LINE", `--rule "..."` or "default"
}

// String renders the bound the way reports show it: "max_regression 3%",
// "<= 0", "< 6000".
func (r Rule) String() string {
	switch r.Bound {
	case Max:
		if r.Strict {
			return "< " + fmtNum(r.Limit)
		}
		return "<= " + fmtNum(r.Limit)
	case Min:
		if r.Strict {
			return "> " + fmtNum(r.Limit)
		}
		return ">= " + fmtNum(r.Limit)
	}
	return "max_regression " + fmtNum(r.Limit) + "%"
}

// matches reports whether the rule applies to a benchmark.
func (r Rule) matches(benchmark string) bool {
	if r.Benchmark == "" {
		return true
	}
	ok, _ := path.Match(r.Benchmark, benchmark)
	return ok
}

// BaselineConfig is the baseline section of the rules file.
type BaselineConfig struct {
	Branch      string // base branch; default "main"
	BranchSet   bool   // the rules file named the branch (no fallback to master or origin/HEAD)
	MaxDistance int    // how far back from the merge-base to look for a measured ancestor; default 50
	Window      int    // earlier base-branch results used for noise; default 20
}

// Config is a parsed rules file plus --rule flags.
type Config struct {
	File         string // the rules file; "" when none was read
	Baseline     BaselineConfig
	Rules        []Rule   // empty: DefaultRules apply
	IgnoreLabels []string // labels that do not identify a series, beyond DescriptiveLabels
	MissingFails bool     // a series or metric that vanished fails the check (default true)
	// Inconclusive is what an inconclusive check makes of the report:
	// InconclusiveWarn (default: the report's verdict is inconclusive,
	// exit 0, a neutral check run), InconclusivePass or InconclusiveFail.
	Inconclusive string
	// Testbed names the machine runs are recorded on when --testbed does
	// not (the rules file's testbed:); "" means the derived default.
	Testbed string
	// RequireBaseline: a check with no baseline to compare with fails
	// instead of passing as new (require_baseline: true, or
	// --require-baseline), so a history that could not be loaded never
	// passes a regression.
	RequireBaseline bool
	// SiteURL is where perfgate site publishes the history (site_url):
	// a check report's markdown links to the charts there.
	SiteURL string
	// Watch is the watch section: how perfgate watch alerts.
	Watch WatchConfig
	// Trust is the trust section: which records (acceptances,
	// invalidations) may change a verdict.
	Trust TrustConfig
	// DB is the history when --db and PERFGATE_DB are unset (db:): a
	// file, or a postgres:// URL without a password.
	DB string
	// Repository names this repository's runs in a history shared by
	// several (repository:); "" means the origin remote's URL.
	Repository string
	// SLOs are the rules file's slo: section, per-benchmark ones first,
	// then the global one (Benchmark ""); empty when none is set. Rules
	// on capacity and capacity_tokens need one (see capacity.go).
	SLOs []SLO
}

// The choices of the rules file's inconclusive key.
const (
	InconclusivePass = "pass"
	InconclusiveWarn = "warn"
	InconclusiveFail = "fail"
)

// Defaults of the baseline section.
const (
	DefaultBranch      = "main"
	DefaultMaxDistance = 50
	DefaultWindow      = 20
)

// DefaultConfig is the configuration without a rules file.
func DefaultConfig() *Config {
	return &Config{
		Baseline:     BaselineConfig{Branch: DefaultBranch, MaxDistance: DefaultMaxDistance, Window: DefaultWindow},
		MissingFails: true,
		Inconclusive: InconclusiveWarn,
		Watch:        WatchConfig{MissingAfter: DefaultMissingAfter, MinChange: DefaultMinChange},
	}
}

// DefaultRules is the rule set that applies when none is given: means and
// p99s of TTFT, TPOT and ITL, the throughputs, and no failed requests.
func DefaultRules() []Rule {
	var rs []Rule
	rel := func(name string, pct float64) {
		rs = append(rs, Rule{Metric: name, Direction: metric.Get(name).Direction, Bound: Regression, Limit: pct, Origin: "default"})
	}
	for _, k := range []string{"ttft", "tpot", "itl"} {
		rel("mean_"+k+"_ms", 5)
	}
	for _, k := range []string{"ttft", "tpot", "itl"} {
		rel("p99_"+k+"_ms", 10)
	}
	for _, n := range []string{"request_throughput", "output_throughput", "total_token_throughput"} {
		rel(n, 5)
	}
	rs = append(rs, Rule{Metric: "failed", Direction: metric.LowerIsBetter, Bound: Max, Limit: 0, Origin: "default"})
	return rs
}

// ErrBadConfig is matched (errors.Is) by every error about the rules file
// or a --rule flag; the CLI reports them as bad input (exit 2).
var ErrBadConfig = errors.New("bad rules")

// ConfigError is a positioned error in the rules file or a --rule flag.
type ConfigError struct {
	File string // rules file, or "" for a flag
	Line int    // 1-based; 0 when unknown
	Flag string // the --rule value at fault, when File is ""
	Msg  string
}

func (e *ConfigError) Error() string {
	switch {
	case e.File == "":
		return fmt.Sprintf("--rule %q: %s", e.Flag, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Is makes errors.Is(err, ErrBadConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrBadConfig }

// LoadRules reads a rules file. A file that does not exist is an error
// matching fs.ErrNotExist, so the CLI can treat an absent default
// .perfgate.yml as "no rules" and an absent --rules FILE as a mistake.
func LoadRules(file string) (*Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return ParseRules(file, data)
}

var (
	topKeys      = []string{"baseline", "rules", "ignore_labels", "missing", "inconclusive", "testbed", "require_baseline", "site_url", "watch", "trust", "db", "repository", "slo"}
	baselineKeys = []string{"branch", "max_distance", "window"}
	ruleKeys     = []string{"metric", "max_regression", "max", "min", "benchmark", "direction"}
	yamlLineRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`) })
)

// yamlErrorLine is the first line at which the document stops parsing:
// the shortest run of its first lines that is not valid YAML (a document
// cut after a line is valid YAML as long as what it holds so far is). 0
// when it cannot tell (every prefix parses, or the file is long).
func yamlErrorLine(data []byte) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 2000 {
		return 0
	}
	var doc yaml.Node
	n := 0
	for i, l := range lines {
		n += len(l)
		if yaml.Unmarshal(data[:n], &doc) != nil {
			return i + 1
		}
	}
	return 0
}

// ParseRules parses the contents of a rules file; file names it in errors.
func ParseRules(file string, data []byte) (*Config, error) {
	cfg := DefaultConfig()
	cfg.File = file
	p := &ruleParser{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := err.Error()
		line := 0
		if m := yamlLineRE().FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		if at := yamlErrorLine(data); at > line {
			// The parser names where the enclosing block starts; the
			// mistake is where the document stops parsing.
			if line > 0 {
				msg += fmt.Sprintf(" (in the block that starts on line %d)", line)
			}
			line = at
		}
		return nil, &ConfigError{File: file, Line: line, Msg: "not valid YAML: " + msg + "; fix the syntax (a rules file is a mapping with keys baseline, rules, ignore_labels, missing, inconclusive, testbed, require_baseline, site_url, watch, trust, db and repository)"}
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty file: defaults
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return cfg, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "the rules file must be a mapping with keys %s", strings.Join(topKeys, ", "))
	}
	err := p.mapping(root, "the rules file", topKeys, func(key string, k, v *yaml.Node) error {
		switch key {
		case "baseline":
			return p.baseline(v, &cfg.Baseline)
		case "rules":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				return nil
			}
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "rules must be a list of rules, each starting with \"- metric: NAME\"")
			}
			var errs []error
			for _, item := range v.Content {
				rs, err := p.rule(item)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				cfg.Rules = append(cfg.Rules, rs...)
			}
			return errors.Join(errs...)
		case "ignore_labels":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "ignore_labels must be a list of label names, e.g. [host, date]")
			}
			for _, item := range v.Content {
				if item.Kind != yaml.ScalarNode || item.Value == "" {
					return p.errf(item, "ignore_labels must hold label names")
				}
				cfg.IgnoreLabels = append(cfg.IgnoreLabels, item.Value)
			}
		case "missing":
			switch v.Value {
			case "fail":
				cfg.MissingFails = true
			case "warn":
				cfg.MissingFails = false
			default:
				return p.errf(v, "missing is %q; use \"fail\" (a vanished benchmark or metric fails the check) or \"warn\"", v.Value)
			}
		case "inconclusive":
			switch v.Value {
			case InconclusivePass, InconclusiveWarn, InconclusiveFail:
				cfg.Inconclusive = v.Value
			default:
				return p.errf(v, "inconclusive is %q; use \"warn\" (default: the report says inconclusive and exits 0), \"pass\" or \"fail\" (an inconclusive check fails the gate)", v.Value)
			}
		case "testbed":
			name := strings.TrimSpace(v.Value)
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || name == "" || len(name) > 200 || strings.ContainsAny(name, "\r\n") {
				return p.errf(v, "testbed must be a name of one line (at most 200 bytes), e.g. testbed: ci-910b; leave it out to derive the name from the machine")
			}
			cfg.Testbed = name
		case "watch":
			return p.watch(v, &cfg.Watch)
		case "trust":
			return p.trust(v, &cfg.Trust)
		case "require_baseline":
			switch v.Value {
			case "true":
				cfg.RequireBaseline = true
			case "false":
				cfg.RequireBaseline = false
			default:
				return p.errf(v, "require_baseline is %q; use true (a check with no baseline fails) or false (it passes as new, the default)", v.Value)
			}
		case "db":
			if v.Kind != yaml.ScalarNode || strings.TrimSpace(v.Value) == "" || strings.ContainsAny(v.Value, "\r\n") {
				return p.errf(v, "db must be a history file or a postgres:// URL, e.g. db: postgres://perfgate@db.internal/perf")
			}
			if withPassword(v.Value) {
				return p.errf(v, "db holds a password, and the rules file is committed: remove it from the URL and give it in PGPASSWORD or ~/.pgpass (or the whole URL in the PERFGATE_DB secret)")
			}
			if db := strings.TrimSpace(v.Value); strings.Contains(db, "://") && !isPostgresURL(db) {
				_, rest, _ := strings.Cut(db, "://")
				return p.errf(v, "db %q is neither a file path nor a PostgreSQL URL: only postgres:// and postgresql:// name a database server (did you mean %q?)", db, "postgres://"+rest)
			}
			cfg.DB = strings.TrimSpace(v.Value)
		case "repository":
			name := strings.TrimSpace(v.Value)
			if v.Kind != yaml.ScalarNode || name == "" || len(name) > 200 || strings.ContainsAny(name, "\r\n") {
				return p.errf(v, "repository must be a name of one line (at most 200 bytes), e.g. repository: github.com/org/engine; leave it out to use the origin remote's URL")
			}
			cfg.Repository = name
		case "slo":
			slos, err := p.slo(v)
			if err != nil {
				return err
			}
			cfg.SLOs = slos
		case "site_url":
			if v.Kind != yaml.ScalarNode || !ValidSiteURL(v.Value) {
				return p.errf(v, "site_url is %q; give the https URL perfgate site is published at, e.g. https://OWNER.github.io/REPO/ (no query, fragment, quotes or spaces)", v.Value)
			}
			cfg.SiteURL = v.Value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cfg, nil
}

type ruleParser struct {
	file string
	// keyOf is the key of each value mapping has walked: a block mapping
	// or list given as a value starts on the line after its key, at a
	// key or item of its own, so an error about the value names the
	// key's line instead.
	keyOf map[*yaml.Node]*yaml.Node
}

func (p *ruleParser) errf(n *yaml.Node, format string, args ...any) error {
	line := n.Line
	if k := p.keyOf[n]; k != nil && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0 {
		line = k.Line
	}
	return &ConfigError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// mapping walks a mapping node, rejecting unknown and repeated keys.
func (p *ruleParser) mapping(n *yaml.Node, what string, keys []string, f func(key string, k, v *yaml.Node) error) error {
	if n.Kind != yaml.MappingNode {
		return p.errf(n, "%s must be a mapping with keys %s", what, strings.Join(keys, ", "))
	}
	// Every key is read, and every mistake reported: a file with two
	// mistakes is not fixed one run at a time.
	seen := map[string]bool{}
	var errs []error
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(keys, k.Value) {
			msg := fmt.Sprintf("unknown key %q in %s", k.Value, what)
			if s := suggest.Closest(k.Value, keys); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			errs = append(errs, p.errf(k, "%s (valid keys: %s)", msg, strings.Join(keys, ", ")))
			continue
		}
		if seen[k.Value] {
			errs = append(errs, p.errf(k, "key %q appears twice in %s; keep one", k.Value, what))
			continue
		}
		seen[k.Value] = true
		if p.keyOf == nil {
			p.keyOf = map[*yaml.Node]*yaml.Node{}
		}
		p.keyOf[v] = k
		if err := f(k.Value, k, v); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (p *ruleParser) baseline(n *yaml.Node, b *BaselineConfig) error {
	return p.mapping(n, "baseline", baselineKeys, func(key string, k, v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode {
			return p.errf(v, "baseline %s must be a single value", key)
		}
		switch key {
		case "branch":
			if strings.TrimSpace(v.Value) == "" {
				return p.errf(v, "baseline branch is empty; name the base branch, e.g. main")
			}
			b.Branch, b.BranchSet = v.Value, true
		case "max_distance", "window":
			x, err := strconv.Atoi(v.Value)
			if err != nil || x < 0 {
				return p.errf(v, "baseline %s is %q; it must be a whole number of commits, 0 or more (default %d)",
					key, v.Value, map[string]int{"max_distance": DefaultMaxDistance, "window": DefaultWindow}[key])
			}
			if key == "window" {
				b.Window = x
			} else {
				b.MaxDistance = x
			}
		}
		return nil
	})
}

func (p *ruleParser) rule(n *yaml.Node) ([]Rule, error) {
	fields := map[string]*yaml.Node{}
	err := p.mapping(n, "a rule", ruleKeys, func(key string, k, v *yaml.Node) error {
		if v.Kind != yaml.ScalarNode {
			return p.errf(v, "rule %s must be a single value", key)
		}
		fields[key] = v
		return nil
	})
	if err != nil {
		return nil, err
	}
	mn := fields["metric"]
	if mn == nil || strings.TrimSpace(mn.Value) == "" {
		return nil, p.errf(n, "a rule needs a metric, e.g. \"- metric: mean_ttft_ms\"")
	}
	if fields["max_regression"] == nil && fields["max"] == nil && fields["min"] == nil {
		return nil, p.errf(n, "rule for %q sets no bound; add max_regression (e.g. 3%%), max or min", mn.Value)
	}
	dirText := ""
	if d := fields["direction"]; d != nil {
		dirText = d.Value
	}
	name, dir, msg := resolveMetric(mn.Value, dirText, fields["max_regression"] != nil,
		"add \"direction: lower\" or \"direction: higher\" to the rule")
	if msg != "" {
		at := mn
		if strings.HasPrefix(msg, "direction") && fields["direction"] != nil {
			at = fields["direction"]
		}
		return nil, p.errf(at, "%s", msg)
	}
	base := Rule{Metric: name, Direction: dir}
	if b := fields["benchmark"]; b != nil {
		if _, err := path.Match(b.Value, ""); err != nil || b.Value == "" {
			return nil, p.errf(b, "benchmark %q is not a valid glob; use * and ? (e.g. \"serving-*\") or a plain name", b.Value)
		}
		base.Benchmark = b.Value
	}
	var out []Rule
	origin := func(v *yaml.Node) string { return fmt.Sprintf("%s:%d", p.file, v.Line) }
	if v := fields["max_regression"]; v != nil {
		pct, err := parsePercent(v.Value)
		if err != nil {
			return nil, p.errf(v, "max_regression %q %s", v.Value, err)
		}
		r := base
		r.Bound, r.Limit, r.Origin = Regression, pct, origin(v)
		out = append(out, r)
	}
	for _, key := range []string{"max", "min"} {
		v := fields[key]
		if v == nil {
			continue
		}
		x, err := parseNumber(v.Value)
		if err != nil {
			return nil, p.errf(v, "%s %q is not a number; write the bound in the metric's unit, e.g. %s: 0", key, v.Value, key)
		}
		r := base
		r.Bound, r.Limit, r.Origin = Max, x, origin(v)
		if key == "min" {
			r.Bound = Min
		}
		out = append(out, r)
	}
	return out, nil
}

// resolveMetric turns what the user typed into a metric name and its
// direction; msg is a user-facing complaint ("" when fine). relative says
// the rule needs a direction; hint says how to give one.
func resolveMetric(typed, dirText string, relative bool, hint string) (name string, dir metric.Direction, msg string) {
	var given metric.Direction
	if dirText != "" {
		d, err := metric.ParseDirection(dirText)
		if err != nil || d == metric.Neutral {
			return "", 0, fmt.Sprintf("direction %q is not valid; use \"lower\" (lower is better) or \"higher\"", dirText)
		}
		given = d
	}
	if in, ok := metric.Lookup(typed); ok {
		switch {
		case given != metric.Unknown && (in.Direction == metric.LowerIsBetter || in.Direction == metric.HigherIsBetter) && given != in.Direction:
			return "", 0, fmt.Sprintf("direction %q contradicts %s, where %s is better; remove direction", dirText, in.Name, in.Direction)
		case given != metric.Unknown:
			return in.Name, given, ""
		case relative && in.Direction != metric.LowerIsBetter && in.Direction != metric.HigherIsBetter:
			return "", 0, fmt.Sprintf("metric %s is descriptive (neither lower nor higher is better); give a direction or use max/min (%s)", in.Name, hint)
		}
		return in.Name, in.Direction, ""
	}
	san := metric.Sanitize(typed)
	if san == "" {
		return "", 0, fmt.Sprintf("metric %q is not a metric name", typed)
	}
	if given != metric.Unknown {
		return san, given, ""
	}
	// A unit-suffixed name (Go's ns_per_op, mb_per_s) carries its
	// direction, unless it is one typo away from a known metric.
	sug := metric.Suggest(typed)
	if d := metric.Get(san).Direction; san == strings.TrimSpace(typed) && (d == metric.LowerIsBetter || d == metric.HigherIsBetter) &&
		(strings.HasSuffix(san, "_per_op") || strings.HasSuffix(san, "_per_s")) &&
		(sug == "" || suggest.Distance(san, sug) > 2) {
		return san, d, ""
	}
	msg = fmt.Sprintf("unknown metric %q", typed)
	if sug != "" {
		msg += fmt.Sprintf("; did you mean %q?", sug)
	} else {
		msg += "."
	}
	return "", 0, msg + " For a metric of your own, " + hint + " (perfgate parse FILE lists the names a result has)"
}

var percentRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\+?([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%$`) })

func parsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	m := percentRE().FindStringSubmatch(t)
	if m == nil {
		if _, err := parseNumber(t); err == nil {
			if strings.HasPrefix(t, "-") {
				return 0, fmt.Errorf("is negative; write the allowed worsening as a positive percentage, e.g. \"3%%\"")
			}
			if x, _ := parseNumber(t); x > 0 && x < 1 {
				// 0.03 is most likely a fraction: say both readings.
				return 0, fmt.Errorf("has no %% sign; write it as a percentage: \"%s%%\" if you meant %s percent, \"%s%%\" if you meant a fraction", t, t, strconv.FormatFloat(x*100, 'g', -1, 64))
			}
			return 0, fmt.Errorf("has no %% sign; write it as a percentage, e.g. \"%s%%\"", t)
		}
		if strings.HasPrefix(t, "-") {
			return 0, fmt.Errorf("is negative; write the allowed worsening as a positive percentage, e.g. \"3%%\"")
		}
		return 0, fmt.Errorf("is not a percentage; write it like \"3%%\" or \"2.5%%\"")
	}
	x, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(x, 0) {
		return 0, fmt.Errorf("is not a percentage; write it like \"3%%\" or \"2.5%%\"")
	}
	return x, nil
}

func parseNumber(s string) (float64, error) {
	t := strings.TrimSpace(s)
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("not a number")
	}
	return x, nil
}

var (
	absRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(.+?)\s*(<=|>=|<|>)\s*([^:\s]+)(?:\s*:\s*([A-Za-z_]+))?$`)
	})
	relRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.+?)\s*:\s*([^:]+?)(?:\s*:\s*([A-Za-z_]+))?$`) })
)

const ruleForms = `write METRIC:PERCENT (e.g. "mean_ttft_ms:3%", "Mean TTFT:3%"), METRIC<=VALUE or METRIC<VALUE (e.g. "failed<=0", "p99_ttft_ms<6000"), or METRIC>=VALUE; add ":lower" or ":higher" for a metric of your own (e.g. "my_latency:5%:lower", "my_errors<=3:lower")`

// ParseRuleFlag parses one --rule value: "mean_ttft_ms:3%", "Mean TTFT:3%",
// "failed<=0", "p99_ttft_ms<6000", "output_throughput>=100", and for a
// metric perfgate does not know "my_latency:5%:lower".
func ParseRuleFlag(s string) (Rule, error) {
	bad := func(format string, args ...any) (Rule, error) {
		return Rule{}, &ConfigError{Flag: s, Msg: fmt.Sprintf(format, args...)}
	}
	t := strings.TrimSpace(s)
	origin := fmt.Sprintf("--rule %q", s)
	if m := regexp.MustCompile(`^(.+?)\s*(<=|>=|<|>|=)\s*=?\s*$`).FindStringSubmatch(t); m != nil {
		return bad("the bound after %q is missing; write a number, e.g. \"%s%s0\"", m[2], strings.TrimSpace(m[1]), m[2])
	}
	if m := absRE().FindStringSubmatch(t); m != nil {
		name, dir, msg := resolveMetric(m[1], m[4], false, "append \":lower\" or \":higher\" (e.g. \"my_metric<=90:lower\")")
		if msg != "" {
			return bad("%s", msg)
		}
		x, err := parseNumber(m[3])
		if err != nil {
			return bad("bound %q is not a number; %s", m[3], ruleForms)
		}
		r := Rule{Metric: name, Direction: dir, Limit: x, Origin: origin}
		switch m[2] {
		case "<=":
			r.Bound = Max
		case "<":
			r.Bound, r.Strict = Max, true
		case ">=":
			r.Bound = Min
		case ">":
			r.Bound, r.Strict = Min, true
		}
		return r, nil
	}
	if m := relRE().FindStringSubmatch(t); m != nil {
		name, dir, msg := resolveMetric(m[1], m[3], true, "append \":lower\" or \":higher\" (e.g. \"my_latency:5%:lower\")")
		if msg != "" {
			return bad("%s", msg)
		}
		pct, err := parsePercent(m[2])
		if err != nil {
			return bad("%q %s", m[2], err)
		}
		return Rule{Metric: name, Direction: dir, Bound: Regression, Limit: pct, Origin: origin}, nil
	}
	return bad("not a rule; %s", ruleForms)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AddRule appends r (a --rule) unless the same rule (metric, direction,
// bound, limit, strictness and benchmark) is there already, from the
// rules file or an earlier --rule: a rule given twice is checked once.
// It reports whether r was added.
func (c *Config) AddRule(r Rule) bool {
	for _, have := range c.Rules {
		o := have
		o.Origin = r.Origin
		if o == r {
			return false
		}
	}
	c.Rules = append(c.Rules, r)
	return true
}

// flagRules counts the rules that came from --rule flags.
func flagRules(rules []Rule) int {
	n := 0
	for _, r := range rules {
		if strings.HasPrefix(r.Origin, "--rule ") {
			n++
		}
	}
	return n
}

// CheckBenchmarks returns an error (a *ConfigError, exit 2) for each rule
// whose benchmark glob matches none of names, the benchmarks the history
// and the head's runs have: such a glob is a typo, and a rule that never
// applies would leave the gate checking nothing. Without any name (an
// empty history) there is nothing to check against, and nothing is said.
func (c *Config) CheckBenchmarks(names []string) error {
	if len(names) == 0 {
		return nil
	}
	names = append([]string(nil), names...)
	sort.Strings(names)
	names = slices.Compact(names)
	var errs []error
	for _, r := range c.Rules {
		if r.Benchmark == "" || slices.ContainsFunc(names, r.matches) {
			continue
		}
		msg := fmt.Sprintf("benchmark %q matches no stored benchmark, so the rule would never apply", r.Benchmark)
		if s := suggest.Closest(r.Benchmark, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		shown := make([]string, 0, min(len(names), 9))
		for i, n := range names {
			if i == 8 {
				shown = append(shown, fmt.Sprintf("... (%d in all)", len(names)))
				break
			}
			shown = append(shown, strconv.Quote(n))
		}
		msg += fmt.Sprintf(" The stored benchmarks are %s; fix the glob (path.Match syntax: *, ?, [...]; perfgate history lists the names) or remove the rule", strings.Join(shown, ", "))
		errs = append(errs, ruleError(r, msg))
	}
	return errors.Join(errs...)
}

// ruleError is a *ConfigError at the rule's origin: "FILE:LINE" or a
// --rule flag.
func ruleError(r Rule, msg string) *ConfigError {
	if flag, ok := strings.CutPrefix(r.Origin, "--rule "); ok {
		if s, err := strconv.Unquote(flag); err == nil {
			return &ConfigError{Flag: s, Msg: msg}
		}
	}
	file, line := r.Origin, 0
	if i := strings.LastIndexByte(r.Origin, ':'); i > 0 {
		if n, err := strconv.Atoi(r.Origin[i+1:]); err == nil {
			file, line = r.Origin[:i], n
		}
	}
	return &ConfigError{File: file, Line: line, Msg: msg}
}

// withPassword reports whether a URL carries a password.
// isPostgresURL reports whether db is a postgres:// or postgresql:// URL
// (store.IsPostgres, which the rules cannot import).
func isPostgresURL(db string) bool {
	l := strings.ToLower(db)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

func withPassword(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return err == nil && u.Query().Has("password")
	}
	_, ok := u.User.Password()
	return ok || u.Query().Has("password")
}
