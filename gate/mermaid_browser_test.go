package gate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// The PR comment's mermaid charts are parsed by mermaid's own library
// (PERFGATE_MERMAID_JS names its mermaid.min.js; .ci/run installs a pinned
// version from the npm registry) in headless Chromium. The test skips when
// either is absent unless PERFGATE_REQUIRE_BROWSER is set.
func TestMermaidChartsParse(t *testing.T) {
	js := os.Getenv("PERFGATE_MERMAID_JS")
	var exe string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if js == "" || exe == "" {
		if os.Getenv("PERFGATE_REQUIRE_BROWSER") != "" {
			t.Fatal("PERFGATE_REQUIRE_BROWSER is set but PERFGATE_MERMAID_JS or chromium is missing; run .ci/run, which installs both")
		}
		t.Skip("needs chromium on PATH and PERFGATE_MERMAID_JS naming mermaid.min.js (.ci/run installs both)")
	}
	abs, err := filepath.Abs(js)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "m.html")
	if err := os.WriteFile(page, []byte(`<!doctype html><html><body><script src="file://`+abs+`"></script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Charts of real reports: a load curve with a trade-off, and the
	// golden check reports' history charts.
	trade := standIn{slots: 48, base: 10.2, perReq: 0.45, tokens: 100}
	rep := capacityWorld(trade.sweep(nil)).checkCfg(t, sloConfig(t, sloRules))
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	// Curves of models whose names carry markdown, HTML and quotes.
	_, hostile := modelsReport(t, "m|odel **b** [l](http://e.example)", `<img src=x onerror=alert(1)> "q" #1 @a`)
	texts := []string{md.String(), hostile}
	for _, g := range []string{"check.md", "check-caveats.md", "check-load.md", "history.md", "trend-accepted.md"} {
		b, err := os.ReadFile(filepath.Join("testdata", g))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(b))
	}
	re := regexp.MustCompile("(?s)```mermaid\n(.*?)```")
	var charts []string
	for _, s := range texts {
		for _, m := range re.FindAllStringSubmatch(s, -1) {
			charts = append(charts, m[1])
		}
	}
	if len(charts) < 2 {
		t.Fatalf("found %d mermaid charts in the reports", len(charts))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Env("TMPDIR="+t.TempDir()))
	ctx, cancelB := chromedp.NewContext(actx)
	defer func() { cancelB(); cancelA() }()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	for i, ch := range charts {
		expr := `(async (src) => { try { await mermaid.parse(src); return ""; } catch (e) { return String((e && e.message) || e); } })(` + jsString(ch) + `)`
		res, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("chart %d: %v", i, err)
		}
		if res != "" {
			t.Errorf("chart %d does not parse: %s\n%s", i, res, ch)
		}
	}
}

func jsString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20:
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
