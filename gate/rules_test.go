package gate

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/metric"
)

func TestParseRuleFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    Rule   // Origin is not compared
		wantErr string // substring of the error
	}{
		{in: "mean_ttft_ms:3%", want: Rule{Metric: "mean_ttft_ms", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 3}},
		{in: "Mean TTFT:3%", want: Rule{Metric: "mean_ttft_ms", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 3}},
		{in: "Mean TTFT (ms) : 2.5%", want: Rule{Metric: "mean_ttft_ms", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 2.5}},
		{in: "output_throughput:2%", want: Rule{Metric: "output_throughput", Direction: metric.HigherIsBetter, Bound: Regression, Limit: 2}},
		{in: "failed<=0", want: Rule{Metric: "failed", Direction: metric.LowerIsBetter, Bound: Max, Limit: 0}},
		{in: "p99_ttft_ms<6000", want: Rule{Metric: "p99_ttft_ms", Direction: metric.LowerIsBetter, Bound: Max, Limit: 6000, Strict: true}},
		{in: "request_throughput >= 8.5", want: Rule{Metric: "request_throughput", Direction: metric.HigherIsBetter, Bound: Min, Limit: 8.5}},
		{in: "completed>990", want: Rule{Metric: "completed", Direction: metric.HigherIsBetter, Bound: Min, Limit: 990, Strict: true}},
		{in: "P99.9 TTFT:10%", want: Rule{Metric: "p99.9_ttft_ms", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 10}},
		{in: "ns_per_op:5%", want: Rule{Metric: "ns_per_op", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 5}},
		{in: "my_latency:5%:lower", want: Rule{Metric: "my_latency", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 5}},
		{in: "Cache Hit Rate:1%:higher", want: Rule{Metric: "cache_hit_rate", Direction: metric.HigherIsBetter, Bound: Regression, Limit: 1}},
		{in: "gpu_mem_gb<=70:lower", want: Rule{Metric: "gpu_mem_gb", Direction: metric.LowerIsBetter, Bound: Max, Limit: 70}},

		{in: "mean_ttf_ms:3%", wantErr: `--rule "mean_ttf_ms:3%": unknown metric "mean_ttf_ms"; did you mean "mean_ttft_ms"?`},
		{in: "mean_ttft_ms:0.05", wantErr: `"0.05" has no % sign; write it as a percentage: "0.05%" if you meant 0.05 percent, "5%" if you meant a fraction`},
		{in: "mean_ttft_ms:3", wantErr: `"3" has no % sign; write it as a percentage, e.g. "3%"`},
		{in: "mean_ttft_ms:-3%", wantErr: `"-3%" is negative`},
		{in: "mean_ttft_ms:three%", wantErr: `"three%" is not a percentage; write it like "3%"`},
		{in: "mean_ttft_ms", wantErr: `--rule "mean_ttft_ms": not a rule; write METRIC:PERCENT (e.g. "mean_ttft_ms:3%", "Mean TTFT:3%"), METRIC<=VALUE`},
		{in: "failed<=zero", wantErr: `bound "zero" is not a number`},
		{in: "my_latency:5%", wantErr: `unknown metric "my_latency". For a metric of your own`},
		{in: "my_latency:5%", wantErr: `append ":lower" or ":higher"`},
		{in: "my_latency:5%:sideways", wantErr: `direction "sideways" is not valid`},
		{in: "output_throughput:2%:lower", wantErr: `contradicts output_throughput, where higher is better`},
		{in: "total_input_tokens:5%", wantErr: `metric total_input_tokens is descriptive`},
	}
	for _, tt := range tests {
		got, err := ParseRuleFlag(tt.in)
		if tt.wantErr != "" {
			if err == nil {
				t.Errorf("ParseRuleFlag(%q) = %+v, want error containing %q", tt.in, got, tt.wantErr)
				continue
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseRuleFlag(%q) error\n  %s\nwant it to contain\n  %s", tt.in, err, tt.wantErr)
			}
			if !errors.Is(err, ErrBadConfig) {
				t.Errorf("ParseRuleFlag(%q) error does not match ErrBadConfig", tt.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRuleFlag(%q): %v", tt.in, err)
			continue
		}
		got.Origin = ""
		if got != tt.want {
			t.Errorf("ParseRuleFlag(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseRules(t *testing.T) {
	const good = `# the design's example
baseline:
  branch: main        # PR baseline
  max_distance: 50
  window: 20
rules:
  - metric: mean_ttft_ms
    max_regression: 3%
  - metric: p99_ttft_ms
    max_regression: 10%
    benchmark: "serving-*"
  - metric: Output token throughput
    max_regression: 2%
  - metric: failed
    max: 0
  - metric: my_kv_cache_usage
    direction: lower
    max_regression: 5%
    max: 0.9
ignore_labels: [host, run_tag]
missing: warn
testbed: ci-910b
`
	cfg, err := ParseRules(".perfgate.yml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Metric: "mean_ttft_ms", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 3, Origin: ".perfgate.yml:8"},
		{Metric: "p99_ttft_ms", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 10, Benchmark: "serving-*", Origin: ".perfgate.yml:10"},
		{Metric: "output_throughput", Direction: metric.HigherIsBetter, Bound: Regression, Limit: 2, Origin: ".perfgate.yml:13"},
		{Metric: "failed", Direction: metric.LowerIsBetter, Bound: Max, Limit: 0, Origin: ".perfgate.yml:15"},
		{Metric: "my_kv_cache_usage", Direction: metric.LowerIsBetter, Bound: Regression, Limit: 5, Origin: ".perfgate.yml:18"},
		{Metric: "my_kv_cache_usage", Direction: metric.LowerIsBetter, Bound: Max, Limit: 0.9, Origin: ".perfgate.yml:19"},
	}
	if len(cfg.Rules) != len(want) {
		t.Fatalf("got %d rules, want %d: %+v", len(cfg.Rules), len(want), cfg.Rules)
	}
	for i := range want {
		if cfg.Rules[i] != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, cfg.Rules[i], want[i])
		}
	}
	if cfg.Baseline != (BaselineConfig{Branch: "main", BranchSet: true, MaxDistance: 50, Window: 20}) {
		t.Errorf("baseline = %+v", cfg.Baseline)
	}
	if cfg.MissingFails {
		t.Error("missing: warn was not read")
	}
	if cfg.Testbed != "ci-910b" {
		t.Errorf("testbed = %q", cfg.Testbed)
	}
	if strings.Join(cfg.IgnoreLabels, ",") != "host,run_tag" {
		t.Errorf("ignore_labels = %v", cfg.IgnoreLabels)
	}

	// Empty files and files without rules mean the defaults.
	for _, src := range []string{"", "# nothing yet\n", "baseline:\n  branch: develop\n", "rules:\n"} {
		cfg, err := ParseRules("f.yml", []byte(src))
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if len(cfg.Rules) != 0 || !cfg.MissingFails || cfg.Baseline.Window != DefaultWindow || cfg.Baseline.MaxDistance != DefaultMaxDistance {
			t.Errorf("%q: got %+v, want defaults", src, cfg)
		}
	}
}

func TestParseRulesErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"unknown top key", "baseline:\n  branch: main\nrule:\n  - metric: failed\n",
			`.perfgate.yml:3: unknown key "rule" in the rules file; did you mean "rules"? (valid keys: baseline, rules, ignore_labels, missing, inconclusive, testbed, require_baseline, site_url, watch, trust, db, repository, slo)`},
		{"unknown rule key", "rules:\n  - metric: mean_ttft_ms\n    max_regresion: 3%\n",
			`.perfgate.yml:3: unknown key "max_regresion" in a rule; did you mean "max_regression"?`},
		{"unknown baseline key", "baseline:\n  windows: 10\n",
			`.perfgate.yml:2: unknown key "windows" in baseline; did you mean "window"?`},
		{"unknown metric", "rules:\n  - metric: mean_ttf_ms\n    max_regression: 3%\n",
			`.perfgate.yml:2: unknown metric "mean_ttf_ms"; did you mean "mean_ttft_ms"? For a metric of your own, add "direction: lower" or "direction: higher" to the rule`},
		{"unknown label", "rules:\n  - metric: Mean TTTF\n    max_regression: 3%\n",
			`.perfgate.yml:2: unknown metric "Mean TTTF"; did you mean "mean_ttft_ms"?`},
		{"percent without sign", "rules:\n  - metric: mean_ttft_ms\n    max_regression: 3\n",
			`.perfgate.yml:3: max_regression "3" has no % sign; write it as a percentage, e.g. "3%"`},
		{"fraction", "rules:\n  - metric: mean_ttft_ms\n    max_regression: 0.03\n",
			`.perfgate.yml:3: max_regression "0.03" has no % sign; write it as a percentage: "0.03%" if you meant 0.03 percent, "3%" if you meant a fraction`},
		{"negative percent", "rules:\n  - metric: mean_ttft_ms\n    max_regression: -3%\n",
			`.perfgate.yml:3: max_regression "-3%" is negative`},
		{"word percent", "rules:\n  - metric: mean_ttft_ms\n    max_regression: lots\n",
			`.perfgate.yml:3: max_regression "lots" is not a percentage`},
		{"no bound", "rules:\n  - metric: mean_ttft_ms\n",
			`.perfgate.yml:2: rule for "mean_ttft_ms" sets no bound; add max_regression (e.g. 3%), max or min`},
		{"no metric", "rules:\n  - max: 3\n",
			`.perfgate.yml:2: a rule needs a metric`},
		{"bad max", "rules:\n  - metric: failed\n    max: none\n",
			`.perfgate.yml:3: max "none" is not a number`},
		{"bad glob", "rules:\n  - metric: failed\n    max: 0\n    benchmark: \"serving-[\"\n",
			`.perfgate.yml:4: benchmark "serving-[" is not a valid glob`},
		{"bad window", "baseline:\n  window: -1\n",
			`.perfgate.yml:2: baseline window is "-1"; it must be a whole number of commits, 0 or more (default 20)`},
		// A block given as a value is named at its key, not at the
		// first key or item inside it.
		{"rules not a list", "baseline:\n  window: 5\nrules:\n  metric: failed\n",
			`.perfgate.yml:3: rules must be a list of rules`},
		{"missing a block", "rules: []\nmissing:\n  fail: true\n",
			`.perfgate.yml:2: missing is`},
		{"branch a list", "baseline:\n  window: 5\n  branch:\n    - main\n",
			`.perfgate.yml:3: baseline branch must be a single value`},
		{"ignore_labels a mapping", "ignore_labels:\n  host: 1\n",
			`.perfgate.yml:1: ignore_labels must be a list`},
		{"rule value a list", "rules:\n  - metric: failed\n    max:\n      - 1\n",
			`.perfgate.yml:3: rule max must be a single value`},
		{"duplicate key", "rules:\n  - metric: failed\n    max: 0\n    max: 1\n",
			`.perfgate.yml:4: key "max" appears twice in a rule`},
		{"bad direction", "rules:\n  - metric: my_metric\n    direction: up-ish\n    max_regression: 3%\n",
			`.perfgate.yml:3: direction "up-ish" is not valid; use "lower" (lower is better) or "higher"`},
		{"bad missing", "missing: maybe\n",
			`.perfgate.yml:1: missing is "maybe"; use "fail"`},
		{"empty testbed", "testbed:\n",
			`.perfgate.yml:1: testbed must be a name of one line`},
		{"testbed list", "testbed: [a, b]\n",
			`.perfgate.yml:1: testbed must be a name of one line`},
		{"yaml syntax", "rules:\n  - metric: failed\n    max: 0\n  bad\n",
			`.perfgate.yml:4: not valid YAML: could not find expected ':'; fix the syntax`},
		{"not a mapping", "- metric: failed\n",
			`.perfgate.yml:1: the rules file must be a mapping`},
	}
	for _, tt := range tests {
		_, err := ParseRules(".perfgate.yml", []byte(tt.src))
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.name, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error\n  %s\nwant it to contain\n  %s", tt.name, err, tt.want)
		}
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("%s: error does not match ErrBadConfig", tt.name)
		}
	}
}

func TestLoadRules(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadRules(filepath.Join(dir, ".perfgate.yml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent file: %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(path, []byte("rules:\n  - metric: Mean TPOT\n    max_regression: 4%\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadRules(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Rules) != 1 || cfg.Rules[0].Metric != "mean_tpot_ms" || cfg.File != path {
		t.Errorf("got %+v", cfg)
	}
}

func TestDefaultRules(t *testing.T) {
	rs := DefaultRules()
	var got []string
	for _, r := range rs {
		if r.Direction != metric.LowerIsBetter && r.Direction != metric.HigherIsBetter {
			t.Errorf("default rule %s has no direction", r.Metric)
		}
		got = append(got, r.Metric+" "+r.String())
	}
	want := "mean_ttft_ms max_regression 5%,mean_tpot_ms max_regression 5%,mean_itl_ms max_regression 5%," +
		"p99_ttft_ms max_regression 10%,p99_tpot_ms max_regression 10%,p99_itl_ms max_regression 10%," +
		"request_throughput max_regression 5%,output_throughput max_regression 5%,total_token_throughput max_regression 5%,failed <= 0"
	if strings.Join(got, ",") != want {
		t.Errorf("DefaultRules:\n  %s\nwant\n  %s", strings.Join(got, ","), want)
	}
}

// FuzzParseRules: any input gives rules or a positioned ErrBadConfig,
// never a panic.
func FuzzParseRules(f *testing.F) {
	f.Add("rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n")
	f.Add("baseline:\n  branch: main\n  window: 20\nrules:\n  - metric: failed\n    max: 0\n    benchmark: \"s-*\"\n")
	f.Add("rules: [{metric: Mean TTFT, max_regression: 2.5%}, {metric: x, direction: lower, min: 1}]\nignore_labels: [a]\nmissing: warn\n")
	f.Add("- a\n- b\n")
	f.Add("rules:\n  - &a {metric: failed, max: 0}\n  - *a\n")
	f.Fuzz(func(t *testing.T, src string) {
		cfg, err := ParseRules("f.yml", []byte(src))
		if err != nil {
			if !errors.Is(err, ErrBadConfig) || !strings.HasPrefix(err.Error(), "f.yml") {
				t.Fatalf("error %q is not a positioned ErrBadConfig", err)
			}
			return
		}
		for _, r := range cfg.Rules {
			if r.Metric == "" || r.Origin == "" {
				t.Fatalf("rule without metric or origin: %+v", r)
			}
		}
	})
}

// FuzzParseRuleFlag: any --rule value gives a rule or an error naming it.
func FuzzParseRuleFlag(f *testing.F) {
	for _, s := range []string{"mean_ttft_ms:3%", "Mean TTFT:3%", "failed<=0", "p99_ttft_ms<6000", "x:5%:lower", "a>=b", ":%", "<"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRuleFlag(s)
		if err != nil {
			if !errors.Is(err, ErrBadConfig) || !strings.HasPrefix(err.Error(), "--rule ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		if r.Metric == "" {
			t.Fatalf("%q: rule without a metric", s)
		}
	})
}

// TestRulesReportEveryMistake: a rules file with three mistakes names all
// three, each at its line, in one run.
func TestRulesReportEveryMistake(t *testing.T) {
	_, err := ParseRules(".perfgate.yml", []byte("baseline:\n  windw: 10\nrules:\n  - metric: mean_tfft_ms\n    max_regression: 3%\n  - metric: p99_ttft_ms\n    max_regression: x\n"))
	var ce *ConfigError
	if err == nil || !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a ConfigError", err)
	}
	for _, want := range []string{`.perfgate.yml:2: unknown key "windw"`, `.perfgate.yml:4: unknown metric "mean_tfft_ms"; did you mean "mean_ttft_ms"?`, `.perfgate.yml:7: max_regression "x"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestRuleFlagMessages: a bound left out is said to be missing, and a word
// of a metric's name suggests the metric.
func TestRuleFlagMessages(t *testing.T) {
	for flag, want := range map[string]string{
		"mean_ttft_ms<=": `the bound after "<=" is missing; write a number, e.g. "mean_ttft_ms<=0"`,
		"failed>":        `the bound after ">" is missing`,
		"TTFT:3%":        `unknown metric "TTFT"; did you mean "mean_ttft_ms"?`,
		"tpot:5%":        `did you mean "mean_tpot_ms"?`,
	} {
		_, err := ParseRuleFlag(flag)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--rule %q: %v, want %q", flag, err, want)
		}
	}
}

func TestParseRulesWatch(t *testing.T) {
	cfg, err := ParseRules("r.yml", []byte("watch:\n  missing_after: 3\n  min_change: 2.5%\n  issue_labels: [perfgate, perf]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Watch.MissingAfter != 3 || cfg.Watch.MinChange != 2.5 || len(cfg.Watch.IssueLabels) != 2 || cfg.Watch.IssueLabels[1] != "perf" {
		t.Errorf("watch = %+v", cfg.Watch)
	}
	if d := DefaultConfig().Watch; d.MissingAfter != DefaultMissingAfter || d.MinChange != DefaultMinChange {
		t.Errorf("default watch = %+v", d)
	}
	for _, bad := range []string{"watch:\n  missing_after: 0\n", "watch:\n  min_change: 2\n", "watch:\n  issue_labels: x\n", "watch:\n  missing: 3\n"} {
		if _, err := ParseRules("r.yml", []byte(bad)); err == nil || !strings.Contains(err.Error(), "r.yml:2") {
			t.Errorf("%q: err = %v, want an error at r.yml:2", bad, err)
		}
	}
}

// TestCheckBenchmarks: a rule whose benchmark glob matches no stored
// benchmark is an error at the rule's origin, with a did-you-mean.
func TestCheckBenchmarks(t *testing.T) {
	stored := []string{"serving-llama", "multimodal", "serving-qwen", "multimodal"}
	tests := []struct {
		name  string
		rules string
		names []string
		want  []string // "" when no error
	}{
		{"typo", "rules:\n  - metric: mean_ttft_ms\n    benchmark: multimodel\n    max_regression: 3%\n", stored,
			[]string{`r.yml:4: benchmark "multimodel" matches no stored benchmark`, `did you mean "multimodal"?`, `"multimodal", "serving-llama", "serving-qwen"`, "fix the glob"}},
		{"glob matches", "rules:\n  - metric: mean_ttft_ms\n    benchmark: serving-*\n    max_regression: 3%\n", stored, nil},
		{"no benchmark key", "rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n", stored, nil},
		{"empty history", "rules:\n  - metric: mean_ttft_ms\n    benchmark: multimodel\n    max_regression: 3%\n", nil, nil},
		{"two bad rules, both said", "rules:\n  - metric: mean_ttft_ms\n    benchmark: srving-*\n    max_regression: 3%\n  - metric: failed\n    benchmark: nope\n    max: 0\n", stored,
			[]string{`r.yml:4: benchmark "srving-*"`, `r.yml:7: benchmark "nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseRules("r.yml", []byte(tt.rules))
			if err != nil {
				t.Fatal(err)
			}
			err = cfg.CheckBenchmarks(tt.names)
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrBadConfig) {
				t.Fatalf("error %v, want a rules error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestRulesYAMLErrorLine: a syntax error is reported on the line where the
// document stops parsing, not where the enclosing block starts.
func TestRulesYAMLErrorLine(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
	}{
		{"bad indentation on line 3", "rules:\n  - metric: mean_ttft_ms\n   max_regression: 5%\n", 3},
		{"tab on line 5", "rules:\n  - metric: mean_ttft_ms\n    max_regression: 5%\n  - metric: x\n\tmax_regression: 3%\n", 5},
		{"mapping value on line 7", "baseline:\n  window: 10\nrules:\n  - metric: a\n    max_regression: 5%\n  - metric: x\n    max_regression: :\n", 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRules("r.yml", []byte(tt.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Line != tt.line {
				t.Errorf("err %v, want one at line %d", err, tt.line)
			}
		})
	}
}

// TestAddRule: a --rule that repeats a rule of the file (or an earlier
// --rule) is checked once; the report counts each source.
func TestAddRule(t *testing.T) {
	cfg, err := ParseRules(".perfgate.yml", []byte("rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n  - metric: failed\n    max: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		flag  string
		added bool
	}{
		{"mean_ttft_ms:3%", false}, // the file's rule
		{"Mean TTFT:3%", false},    // the same, by its label
		{"failed<=0", false},
		{"mean_ttft_ms:5%", true}, // another limit: another rule
		{"mean_ttft_ms:5%", false},
		{"failed<0", true}, // strict: another rule
	} {
		r, err := ParseRuleFlag(tt.flag)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.AddRule(r); got != tt.added {
			t.Errorf("AddRule(%q) = %v, want %v", tt.flag, got, tt.added)
		}
	}
	if len(cfg.Rules) != 4 || flagRules(cfg.Rules) != 2 {
		t.Fatalf("%d rules, %d from flags; want 4 and 2", len(cfg.Rules), flagRules(cfg.Rules))
	}
	rep := &Report{Rules: RulesInfo{File: ".perfgate.yml", Count: 4, Flags: 2, Window: 20, MaxDistance: 50}}
	if got, want := rep.rulesLine(), "4: 2 from .perfgate.yml, 2 from --rule; noise window 20 commits, max distance 50"; got != want {
		t.Errorf("rules line %q, want %q", got, want)
	}
}

func TestParseTrust(t *testing.T) {
	cfg, err := ParseRules(".perfgate.yml", []byte("trust:\n  accept: [label, branch]\n  invalidate: []\n  invalidate_label: perf-ok\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr := cfg.Trust
	if strings.Join(tr.Accept, ",") != "label,branch" || tr.Invalidate == nil || len(tr.Invalidate) != 0 || tr.InvalidateLabel != "perf-ok" {
		t.Fatalf("trust = %+v", tr)
	}
	for _, tc := range []struct {
		source string
		labels []string
		accept bool
		inval  bool
	}{
		{SourceLabel, nil, true, false},
		{SourceBranch, nil, true, false},
		{SourceLocal, nil, false, false},
	} {
		if ok, why := tr.AcceptanceApplies(tc.source); ok != tc.accept || (!ok && !strings.Contains(why, "trust.accept is [label, branch]")) {
			t.Errorf("acceptance from %s: %v %q", tc.source, ok, why)
		}
		if ok, _ := tr.InvalidationApplies(tc.source, tc.labels); ok != tc.inval {
			t.Errorf("invalidation from %s: %v", tc.source, ok)
		}
	}
	lab := TrustConfig{InvalidateLabel: "perf-ok"}
	for _, tc := range []struct {
		labels []string
		want   bool
	}{{nil, true}, {[]string{}, false}, {[]string{"bug", "perf-ok"}, true}} {
		if ok, why := lab.InvalidationApplies(SourceBranch, tc.labels); ok != tc.want || (!ok && !strings.Contains(why, `"perf-ok"`)) {
			t.Errorf("invalidate_label with PR labels %v: %v %q", tc.labels, ok, why)
		}
	}
	if ok, _ := (TrustConfig{}).AcceptanceApplies(SourceLocal); !ok {
		t.Error("without a trust section every acceptance applies")
	}
	for src, want := range map[string]string{
		"trust:\n  accept: [labels]\n":          `.perfgate.yml:2: trust accept holds "labels"; the sources are label, branch, local`,
		"trust:\n  invalidate: [label]\n":       `trust invalidate holds "label"; the sources are branch, local`,
		"trust:\n  accept: label\n":             `trust accept must be a list of record sources, e.g. [label, branch, local]`,
		"trust:\n  invalidate_label: \"a,b\"\n": `trust invalidate_label is "a,b"`,
		"trust:\n  acept: [label]\n":            `unknown key "acept" in trust; did you mean "accept"?`,
	} {
		_, err := ParseRules(".perfgate.yml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
}
