package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/internal/goldenfile"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got)
}

// demo is a realistic history: 24 measured main commits of three serving
// benchmarks, two commits on main after the PR branched, and a PR whose
// head regressed TTFT, improved throughput, added a benchmark and dropped
// another.
type demo struct {
	repo          *fakeRepo
	main          []string
	mb, tip, head string
}

var demoLabels = map[string]string{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "H100", "backend": "vllm", "date": "20250301-120000"}

func labelsWith(kv ...string) map[string]string {
	l := map[string]string{}
	for k, v := range demoLabels {
		l[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return l
}

func servingMetrics(rng *rand.Rand, scale map[string]float64) map[string]float64 {
	noise := func() float64 { return math.Exp(0.02 * rng.NormFloat64()) }
	base := map[string]float64{
		"completed": 1000, "failed": 0, "duration": 120,
		"request_throughput": 8.3, "output_throughput": 2480, "total_token_throughput": 5120,
		"mean_ttft_ms": 118, "p99_ttft_ms": 310, "mean_tpot_ms": 21.5, "p99_tpot_ms": 38,
		"mean_itl_ms": 20.9, "p99_itl_ms": 61,
	}
	m := map[string]float64{}
	for _, k := range sortedKeys(base) { // a fixed order of draws
		v := base[k]
		switch k {
		case "completed", "failed":
			m[k] = v
		default:
			f := 1.0
			if x, ok := scale[k]; ok {
				f = x
			}
			m[k] = math.Round(v*noise()*f*100) / 100
		}
	}
	return m
}

func newDemo() *demo {
	rng := rand.New(rand.NewPCG(7, 11))
	d := &demo{repo: newFakeRepo()}
	root := d.repo.commit("", "initial import")
	d.main = d.repo.chain(root, 24, "main: change")
	for _, c := range d.main {
		d.repo.add(c, "sharegpt-rate4", labelsWith("request_rate", "4"), servingMetrics(rng, nil))
		d.repo.add(c, "sharegpt-rate16", labelsWith("request_rate", "16"), servingMetrics(rng, nil))
		d.repo.add(c, "random-1k", labelsWith("request_rate", "inf"), servingMetrics(rng, nil))
	}
	d.mb = d.main[len(d.main)-1]
	d.tip = d.mb
	for _, c := range d.repo.chain(d.mb, 2, "main: after the branch") {
		d.tip = c
	}
	d.head = d.repo.commit(d.mb, "Use the new attention kernel")
	slower := map[string]float64{"mean_ttft_ms": 1.22, "p99_ttft_ms": 1.03, "output_throughput": 1.16, "total_token_throughput": 1.1}
	d.repo.add(d.head, "sharegpt-rate4", labelsWith("request_rate", "4", "date", "20250302-080000"), servingMetrics(rng, slower))
	d.repo.add(d.head, "sharegpt-rate16", labelsWith("request_rate", "16"), servingMetrics(rng, nil))
	d.repo.add(d.head, "long-context", labelsWith("request_rate", "2"), servingMetrics(rng, nil))
	return d
}

func renderAll(t *testing.T, d Document) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, f := range Formats(d) {
		var b bytes.Buffer
		if err := Write(&b, d, f, false); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = b.Bytes()
	}
	return out
}

func TestGoldenCheck(t *testing.T) {
	d := newDemo()
	rep, err := Check(context.Background(), d.repo, d.repo, CheckOptions{Head: d.head, Base: d.tip, BaseRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range renderAll(t, rep) {
		golden(t, "check."+ext(f), b)
	}
	var colored bytes.Buffer
	if err := rep.WriteText(&colored, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(colored.Bytes(), []byte(ansiRed)) {
		t.Error("text with color: no red for the failing verdict")
	}
	var plain bytes.Buffer
	rep.WriteText(&plain, false)
	if bytes.Contains(plain.Bytes(), []byte("\x1b[")) {
		t.Error("text without color has escape codes")
	}
}

func TestGoldenCompare(t *testing.T) {
	d := newDemo()
	cmp, err := Compare(context.Background(), d.repo, CompareOptions{A: d.mb, B: d.head})
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range renderAll(t, cmp) {
		golden(t, "compare."+ext(f), b)
	}
}

func TestGoldenHistory(t *testing.T) {
	d := newDemo()
	tr, err := ReadTrend(context.Background(), d.repo, d.repo, TrendOptions{From: d.head, Ref: "HEAD", Benchmark: "sharegpt-rate4", Metric: "Mean TTFT", Limit: 12})
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range renderAll(t, tr) {
		golden(t, "history."+ext(f), b)
	}
}

func ext(format string) string {
	switch format {
	case "text":
		return "txt"
	case "markdown":
		return "md"
	}
	return format
}

// TestGoldenCheckCaveats renders a check whose verdicts carry caveats:
// unqualified (two measured commits), inconclusive (a noisy series),
// Mann-Whitney over repeated runs, an invalid head (failed requests), a
// label mismatch and a new benchmark, with a rule failing right at its
// threshold. Every format must show the warnings.
func TestGoldenCheckCaveats(t *testing.T) {
	f := newFakeRepo()
	root := f.commit("", "initial import")
	main := f.chain(root, 10, "main: change")
	mb := main[len(main)-1]
	head := f.commit(mb, "Tune the scheduler")
	res := func(ttft, tput, completed, failed float64) map[string]float64 {
		return map[string]float64{"mean_ttft_ms": ttft, "output_throughput": tput, "completed": completed, "failed": failed}
	}
	noisy := []float64{100, 108, 93, 104, 97, 110, 91, 102, 99, 106}
	for i, c := range main {
		f.add(c, "noisy", labelsWith(), res(noisy[i], 300, 1000, 0))
		f.add(c, "crashy", labelsWith(), res(100+float64(i%3), 300, 1000, 0))
		f.add(c, "hw", labelsWith(), res(100+float64(i%3), 300, 1000, 0))
		if i >= len(main)-2 {
			f.add(c, "tiny", labelsWith(), res(50, 306.11, 1000, 0))
		}
	}
	for k := 0; k < 5; k++ {
		f.add(mb, "repeated", labelsWith(), res(100+float64(k), 300-float64(k), 1000, 0))
		f.add(head, "repeated", labelsWith(), res(112+float64(k), 300-float64(k), 1000, 0))
	}
	f.add(head, "noisy", labelsWith(), res(106.5, 300, 1000, 0))
	f.add(head, "crashy", labelsWith(), res(80, 330, 800, 200))
	f.add(head, "hw", labelsWith("gpu", "H200"), res(70, 420, 1000, 0))
	f.add(head, "tiny", labelsWith(), res(50.2, 299.96, 1000, 0))
	cfg := DefaultConfig()
	for _, s := range []string{"mean_ttft_ms:3%", "output_throughput:2%", "failed<=0"} {
		r, err := ParseRuleFlag(s)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Rules = append(cfg.Rules, r)
	}
	rep, err := Check(context.Background(), f, f, CheckOptions{Head: head, Base: mb, BaseRef: "main", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Verdict{}
	for _, c := range rep.Checks {
		want[c.Benchmark+" "+c.Metric] = c.Verdict
	}
	for k, v := range map[string]Verdict{
		"repeated mean_ttft_ms": Fail, "noisy mean_ttft_ms": Inconclusive, "crashy failed": Fail,
		"hw mean_ttft_ms": Inconclusive, "tiny output_throughput": Fail, "tiny mean_ttft_ms": Pass,
	} {
		if want[k] != v {
			t.Errorf("%s: verdict %q, want %q", k, want[k], v)
		}
	}
	if len(rep.Warnings) < 3 {
		t.Errorf("warnings %q: want unqualified, inconclusive and mismatch", rep.Warnings)
	}
	for f, b := range renderAll(t, rep) {
		for _, w := range rep.Warnings {
			if f == "json" {
				q, _ := json.Marshal(w)
				w = string(q[1 : len(q)-1])
			}
			if f != "markdown" && !bytes.Contains(b, []byte(w)) {
				t.Errorf("%s does not carry the warning %q", f, w)
			}
		}
		if !bytes.Contains(b, []byte("-2.01%")) {
			t.Errorf("%s does not show the failing change at its precision (-2.01%%)", f)
		}
		golden(t, "check-caveats."+ext(f), b)
	}
}
