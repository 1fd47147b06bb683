package gate

import (
	"strings"
	"testing"
)

// TestRequireBaseline: a history that could not be loaded (here: none at
// all) passes a 100,000x regression as "new" unless require_baseline is
// set, and then that check fails and says why.
func TestRequireBaseline(t *testing.T) {
	w := newWorld(5, func(int) []Sample { return nil }, []Sample{srv(map[string]float64{"mean_ttft_ms": 1e7})})
	cfg := cfgWith(t, "mean_ttft_ms:3%")
	rep := w.checkCfg(t, cfg)
	if c := find(t, rep, "serving", "mean_ttft_ms"); c.Verdict != New || rep.Verdict != Pass {
		t.Fatalf("without require_baseline: %s, overall %s; want new and pass", c.Verdict, rep.Verdict)
	}
	cfg.RequireBaseline = true
	rep = w.checkCfg(t, cfg)
	c := find(t, rep, "serving", "mean_ttft_ms")
	if c.Verdict != Fail || rep.Verdict != Fail {
		t.Errorf("with require_baseline: %s, overall %s; want fail", c.Verdict, rep.Verdict)
	}
	if !strings.Contains(c.Reason, "require_baseline is set") {
		t.Errorf("reason %q does not say why", c.Reason)
	}
}

func TestParseRequireBaseline(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want bool
		err  string
	}{
		{"", false, ""},
		{"require_baseline: true\n", true, ""},
		{"require_baseline: false\n", false, ""},
		{"require_baseline: yes please\n", false, `.perfgate.yml:1: require_baseline is "yes please"; use true`},
		{"require_basline: true\n", false, `did you mean "require_baseline"?`},
	} {
		cfg, err := ParseRules(".perfgate.yml", []byte(tt.yaml))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.yaml, err, tt.err)
			}
			continue
		}
		if err != nil || cfg.RequireBaseline != tt.want {
			t.Errorf("%q: RequireBaseline %v, %v; want %v", tt.yaml, cfg != nil && cfg.RequireBaseline, err, tt.want)
		}
	}
}
