package main

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
)

// TestRuleMatchesNoBenchmark: a rule whose benchmark glob matches no
// stored benchmark is refused (exit 2) at its line, with a did-you-mean,
// rather than warned about and passed; a check that applied no rule is not
// a green pass.
func TestRuleMatchesNoBenchmark(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 3)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "change", map[string]string{"f.txt": "x"})
	ingestAt(t, repo, metricsJSON(100, 300))
	tests := []struct {
		name  string
		rules string
		args  []string
		code  int
		out   []string // in stdout
		err   []string // in stderr
	}{
		{
			name:  "typo in the glob",
			rules: "rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n    benchmark: servng\n",
			code:  2,
			err:   []string{`.perfgate.yml:3: benchmark "servng" matches no stored benchmark`, `did you mean "serving"?`, `The stored benchmarks are "serving"`, "fix the glob"},
		},
		{
			name:  "glob that matches",
			rules: "rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n    benchmark: serv*\n",
			out:   []string{"PASS  1 check, none failed"},
		},
		{
			name:  "no rule applies: not a pass",
			rules: "rules:\n  - metric: p99_ttft_ms\n    max_regression: 3%\n",
			out:   []string{"INCONCLUSIVE  no check applied: not a pass", "no rule applies to these results"},
		},
		{
			name:  "no rule applies: the PR comment",
			rules: "rules:\n  - metric: p99_ttft_ms\n    max_regression: 3%\n",
			args:  []string{"-o", "markdown"},
			out:   []string{"### ⚠️ perfgate: inconclusive — no check applied: not a pass"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeFile(t, repo, ".perfgate.yml", tt.rules)
			stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "check"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.out {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.err {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stdout, "✅") {
				t.Errorf("a green pass:\n%s", stdout)
			}
		})
	}
}

// TestRuleSources: a rule given in .perfgate.yml and again with --rule is
// checked once, and the report counts the rules of each source.
func TestRuleSources(t *testing.T) {
	repo := gitRepo(t)
	mainHistory(t, repo, 3)
	writeFile(t, repo, ".perfgate.yml", "rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n  - metric: output_throughput\n    max_regression: 3%\n")
	tests := []struct {
		name  string
		rules []string
		want  []string
		count int
	}{
		{"the file alone", nil, []string{"rules     2 from ", ".perfgate.yml; noise"}, 2},
		{"a --rule the file has", []string{"mean_ttft_ms:3%"}, []string{"rules     2 from ", ".perfgate.yml; noise"}, 2},
		{"the same --rule by its label, twice", []string{"Mean TTFT:3%", "mean_ttft_ms:3%"}, []string{"rules     2 from ", ".perfgate.yml; noise"}, 2},
		{"a --rule of its own", []string{"mean_ttft_ms:3%", "failed<=0"}, []string{"rules     3: 2 from ", ".perfgate.yml, 1 from --rule; noise"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--repo", repo, "check"}
			for _, r := range tt.rules {
				args = append(args, "--rule", r)
			}
			stdout, stderr, code := runCLI(t, "", args...)
			if code != 0 || !strings.Contains(stdout, tt.want[0]) || !strings.Contains(stdout, tt.want[1]) {
				t.Errorf("exit %d, want a rules line with %q:\n%s%s", code, tt.want, stdout, stderr)
			}
			cj, _, _ := checkOut(t, repo, args[3:]...)
			if len(cj.Checks) != tt.count {
				t.Errorf("%d checks, want %d (one per rule, none twice)", len(cj.Checks), tt.count)
			}
		})
	}
}

// TestStatusTitle: the commit status of a gate that applied no rule says
// so, and is not a pass.
func TestStatusTitle(t *testing.T) {
	sha := "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		name string
		rep  gate.Report
		want string
	}{
		{"no check applied", gate.Report{Verdict: gate.Inconclusive, Baseline: gate.BaselineRef{Commit: sha}},
			"no check applied: no rule matched the results, not a pass against 0123456"},
		{"inconclusive", gate.Report{Verdict: gate.Inconclusive, Summary: gate.Summary{Checks: 3, Inconclusive: 1, Pass: 2}},
			"inconclusive: 1 of 3 checks undecided, none failed, no measured baseline"},
		{"pass", gate.Report{Verdict: gate.Pass, Summary: gate.Summary{Checks: 2, Pass: 2}, Baseline: gate.BaselineRef{Commit: sha}},
			"2 checks passed against 0123456"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := statusTitle(&tt.rep); got != tt.want {
				t.Errorf("statusTitle = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRulesFromBase: a pull request that widens its own gate in the rules
// file passes as checked out, and fails with --rules-from base, which
// reads the rules as committed at the merge-base.
func TestRulesFromBase(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	commit(t, repo, "rules", map[string]string{".perfgate.yml": "rules:\n  - metric: mean_ttft_ms\n    max_regression: 3%\n"})
	mainHistory(t, repo, 6)
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "wider", map[string]string{".perfgate.yml": "rules:\n  - metric: mean_ttft_ms\n    max_regression: 50%\n"})
	ingestAt(t, repo, metricsJSON(115, 300))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 0, "50%"},
		{[]string{"--rules-from", "base"}, 1, "3%"},
		{[]string{"--rules-from", "head"}, 2, `--rules-from "head": use worktree`},
	} {
		stdout, stderr, code := runCLI(t, "", append([]string{"--repo", repo, "check"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("check %v: exit %d, want %d with %q\n%s\n%s", tc.args, code, tc.code, tc.want, stdout, stderr)
		}
	}
}
