package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sweepJSON is a generic result of a stand-in server at concurrency c:
// one token step takes base + perReq*c ms, a request decodes 100 tokens,
// and wobble (percent) scales its latency up and throughput down.
func sweepJSON(c int, base, perReq, wobble float64) string {
	tpot := (base + perReq*float64(c)) * (1 + wobble/100)
	rate := float64(c) / (100 * tpot / 1000)
	return fmt.Sprintf(`{"labels": {"max_concurrency": "%d"}, "metrics": {"request_throughput": %g, "output_throughput": %g, "mean_tpot_ms": %g, "p99_tpot_ms": %g, "completed": %d, "failed": 0}}`,
		c, rate, 100*rate, tpot, tpot, 20*c)
}

// ingestSweep stores a sweep of five loads for the current HEAD.
func ingestSweep(t *testing.T, repo string, base, perReq, wobble float64) {
	t.Helper()
	for _, c := range []int{4, 8, 16, 24, 32} {
		ingestAt(t, repo, sweepJSON(c, base, perReq, wobble))
	}
}

const capacityRules = `slo:
  tpot_ms: 20
rules:
  - metric: capacity
    max_regression: 5%
`

// TestCheckCapacityEndToEnd: load sweeps ingested per commit, checked
// with an slo: rules file: an unchanged head passes, one serving 10% less
// within the SLO fails the capacity rule, and the report shows the curves.
func TestCheckCapacityEndToEnd(t *testing.T) {
	parallel(t)
	repo := gitRepo(t)
	commit(t, repo, "rules", map[string]string{".perfgate.yml": capacityRules})
	wobble := []float64{0, 0.8, -0.6, 1.1, -0.9, 0.3, -0.4, 0.7}
	for i, w := range wobble {
		commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)})
		ingestSweep(t, repo, 10, 0.5, w)
	}
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "same", map[string]string{"f.txt": "1"})
	ingestSweep(t, repo, 10, 0.5, 0.2)
	cj, stderr, code := checkOut(t, repo)
	if code != 0 || cj.verdictOf("capacity") != "pass" {
		t.Fatalf("unchanged: exit %d, capacity %s; %s\n%+v", code, cj.verdictOf("capacity"), stderr, cj)
	}

	commit(t, repo, "slower", map[string]string{"f.txt": "2"})
	ingestSweep(t, repo, 10, 0.5/0.9, 0)
	cj, stderr, code = checkOut(t, repo)
	if code != 1 || cj.verdictOf("capacity") != "fail" {
		t.Fatalf("capacity -10%%: exit %d, capacity %s; %s\n%+v", code, cj.verdictOf("capacity"), stderr, cj)
	}
	stdout, _, _ := runCLI(t, "", "--repo", repo, "check")
	for _, want := range []string{"Capacity at SLO (req/s)", "Load curves", "serving, SLO p99_tpot_ms <= 20", "capacity at SLO: head", "under the current SLO"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("check's report lacks %q:\n%s", want, stdout)
		}
	}
	// compare, history and watch read the same derived series.
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "compare", "main", "HEAD")
	if code != 0 || !strings.Contains(stdout, "Capacity at SLO (req/s)") {
		t.Errorf("compare main HEAD: exit %d, want capacity among the rows\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "history", "--name", "serving", "--metric", "capacity", "-o", "csv")
	if code != 0 || strings.Count(stdout, "\n") != 11 || !strings.Contains(stdout, "8.92") {
		t.Errorf("history of capacity: exit %d, want a header and 10 commits, the last 8.92 req/s\n%s\n%s", code, stdout, stderr)
	}
	// The site charts capacity over time, as a series like any other.
	siteDir := filepath.Join(t.TempDir(), "site")
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "site", "--out", siteDir, "--metric", "capacity", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"charts": 1,`) {
		t.Errorf("site --metric capacity: exit %d, want one chart\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "watch", "--benchmark", "serving", "--metric", "capacity")
	if code > 1 || !strings.Contains(stdout, "8 measured, 1 series x metric") {
		t.Errorf("watch of capacity: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCapacitySGLangSweep: a real SGLang bench_serving JSONL sweep of
// request rates 1 to 16 (no request_throughput: completed over duration is
// the achieved rate) has its capacity at a median TTFT of 100 ms between
// rates 2 and 4, and its saturated rates named. Reads ../shared/fixtures;
// skipped without it.
func TestCapacitySGLangSweep(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "fixtures", "sglang_bench_serving_jsonl", "h200-benchmarks_llama_3_3_70b_online_output.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Skip("../shared/fixtures absent")
	}
	repo := gitRepo(t)
	commit(t, repo, "rules", map[string]string{".perfgate.yml": "slo: {ttft_ms: 100, e2el_ms: 12000, percentile: median}\nrules:\n  - metric: capacity\n    max_regression: 5%\n"})
	if _, stderr, code := runCLI(t, "", "--repo", repo, "ingest", "--name", "sglang-online", file); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check")
	// 1.9189 req/s at rate 2 (TTFT 87.556 ms), 4.0424 at rate 4 (106.06):
	// the objective is crossed 67% of the way.
	for _, want := range []string{"capacity at SLO: head 3.3467 req/s (interpolated between request_rate=2 and 4)", "saturated (under 90% of the configured rate achieved): head at 8, 16"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("check: exit %d, want %q\n%s\n%s", code, want, stdout, stderr)
		}
	}
}

// TestCheckTradeOffEndToEnd: the throughput-tuning page's profile at the
// top of a sweep (total TPS +15.6%, Mean TPOT +6.8% at concurrency 64),
// checked with a 3% TPOT rule and a capacity rule, passes as a trade-off
// named in the report, and fails without the capacity rule.
func TestCheckTradeOffEndToEnd(t *testing.T) {
	parallel(t)
	type pt struct {
		c         int
		tps, tpot float64
	}
	base := []pt{{16, 12000, 20}, {32, 20000, 27}, {64, 29822.16, 34.63}, {128, 31000, 52}}
	head := []pt{{16, 11900, 20.3}, {32, 21000, 27.5}, {64, 34470.14, 36.97}, {128, 38000, 47}}
	ingestPts := func(repo string, pts []pt, w float64) {
		for _, p := range pts {
			ingestAt(t, repo, fmt.Sprintf(`{"labels": {"max_concurrency": "%d"}, "metrics": {"total_token_throughput": %g, "request_throughput": %g, "mean_tpot_ms": %g}}`,
				p.c, p.tps*(1-w), p.tps/1000*(1-w), p.tpot*(1+w)))
		}
	}
	rules := "slo: {tpot_ms: 40, percentile: mean}\nrules:\n  - metric: mean_tpot_ms\n    max_regression: 3%\n"
	repo := gitRepo(t)
	commit(t, repo, "rules", map[string]string{".perfgate.yml": rules + "  - metric: capacity\n    max_regression: 5%\n"})
	for i, w := range []float64{0.003, -0.002, 0.004, -0.003, 0.001, -0.004, 0.002, 0} {
		commit(t, repo, fmt.Sprintf("main %d", i), map[string]string{"main.txt": fmt.Sprint(i)})
		ingestPts(repo, base, w)
	}
	git(t, repo, "checkout", "-q", "-b", "feature")
	commit(t, repo, "tune for throughput", map[string]string{"f.txt": "1"})
	ingestPts(repo, head, 0)
	stdout, stderr, code := runCLI(t, "", "--repo", repo, "check")
	for _, want := range []string{"TRADE-OFF", "a trade-off at max_concurrency=64: request_throughput +15.6%, mean_tpot_ms +6.8%", "passes with a raised capacity"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("check with a capacity rule: exit %d, want %q\n%s\n%s", code, want, stdout, stderr)
		}
	}
	writeFile(t, repo, "no-capacity.yml", rules)
	stdout, stderr, code = runCLI(t, "", "--repo", repo, "check", "--rules", filepath.Join(repo, "no-capacity.yml"))
	if code != 1 || !strings.Contains(stdout, "no capacity rule decides it") {
		t.Errorf("check without a capacity rule: exit %d, want 1 with the trade-off named\n%s\n%s", code, stdout, stderr)
	}
}
