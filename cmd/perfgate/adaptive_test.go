package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seqBench writes a benchmark whose run k prints Mean TTFT values[k-1].
func seqBench(t *testing.T, dir string, values ...float64) string {
	t.Helper()
	var lines []string
	for _, v := range values {
		lines = append(lines, metricsJSON(v, 300))
	}
	seq := writeFile(t, dir, "seq", strings.Join(lines, "\n")+"\n")
	counter := filepath.Join(dir, "n")
	p := writeFile(t, dir, "bench.sh", fmt.Sprintf("#!/bin/sh\nn=$(cat %[1]s 2>/dev/null || echo 0)\nn=$((n+1))\necho $n > %[1]s\nsed -n ${n}p %[2]s\n", counter, seq))
	os.Chmod(p, 0o755)
	return p
}

// TestRunRepeatAuto: run --repeat auto runs again only while check's
// verdict is undecided, and reports the runs it spent (stderr and json).
func TestRunRepeatAuto(t *testing.T) {
	parallel(t)
	tests := []struct {
		name    string
		values  []float64
		max     string
		spent   int
		verdict string
		decided bool
	}{
		{"unchanged: one run decides", []float64{100.2, 100, 100, 100, 100}, "5", 1, "pass", true},
		// A regression far past the limit is clear on two runs; one near
		// the limit is confirmed on four.
		{"a clear regression fails on two runs", []float64{130, 131, 129, 130, 130}, "5", 2, "fail", true},
		{"a regression near the limit fails on four runs", []float64{105.8, 106.2, 106, 106, 106}, "5", 4, "fail", true},
		// One slow first run is not a regression: the next run clears it.
		{"one unlucky run", []float64{107, 100.1, 99.9, 100, 100}, "5", 2, "pass", true},
		{"budget", []float64{130, 131, 129}, "2", 2, "fail", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := gitRepo(t)
			mainHistory(t, repo, 10)
			git(t, repo, "checkout", "-q", "-b", "feature")
			commit(t, repo, "change", map[string]string{"f.txt": "1"})
			script := seqBench(t, t.TempDir(), tt.values...)
			stdout, stderr, code := runCLI(t, "", "--repo", repo, "run", "--name", "serving", "--repeat", "auto", "--max-runs", tt.max,
				"--rule", "mean_ttft_ms:5%", "-o", "json", "--", script)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			var got struct {
				Added     int    `json:"added"`
				RunsSpent int    `json:"runs_spent"`
				MaxRuns   int    `json:"max_runs"`
				Decided   bool   `json:"decided"`
				Verdict   string `json:"verdict"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if got.RunsSpent != tt.spent || got.Added != tt.spent || got.Verdict != tt.verdict || got.Decided != tt.decided {
				t.Errorf("got %+v, want %d runs, %s, decided %v; stderr:\n%s", got, tt.spent, tt.verdict, tt.decided, stderr)
			}
			if want := fmt.Sprintf("perfgate: run: spent %d of at most %s runs; check's verdict is %s", tt.spent, tt.max, tt.verdict); !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			// check agrees with what run reported.
			rep, _, _ := checkOut(t, repo, "--rule", "mean_ttft_ms:5%")
			if rep.Verdict != tt.verdict {
				t.Errorf("check says %s", rep.Verdict)
			}
		})
	}
}

func TestRunRepeatFlags(t *testing.T) {
	repo := gitRepo(t)
	commit(t, repo, "first", map[string]string{"a.txt": "1"})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--repeat", "0"}, `--repeat "0": must be a whole number of runs, at least 1, or auto`},
		{[]string{"--repeat", "many"}, `--repeat "many"`},
		{[]string{"--repeat", "3", "--max-runs", "4"}, "--max-runs is the budget of --repeat auto"},
		{[]string{"--repeat", "auto", "--max-runs", "0"}, "--max-runs 0"},
	} {
		_, stderr, code := runCLI(t, "", append(append([]string{"--repo", repo, "run", "--name", "s"}, tt.args...), "--", "true")...)
		if code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}
