package site

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/perfgate/perfgate/gate"
)

// The site is tested in a real browser: headless Chromium (Debian's
// chromium package) driven through the DevTools protocol by chromedp.
// The tests skip when no Chromium is installed, unless
// PERFGATE_REQUIRE_BROWSER is set (.ci/run sets it and installs chromium).

// findChromium returns the browser to run, or skips the test.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("PERFGATE_REQUIRE_BROWSER") != "" {
		t.Fatal("PERFGATE_REQUIRE_BROWSER is set but no chromium is on PATH; install it (apt-get install -y chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install -y chromium); set PERFGATE_REQUIRE_BROWSER to make this a failure")
	return ""
}

// browser starts a fresh headless Chromium and returns a tab's context
// and the console errors and exceptions it collects.
func browser(t *testing.T, width, height int) (context.Context, func() []string) {
	t.Helper()
	exe := findChromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		// Its org.chromium.Chromium.* singleton directory, which a killed
		// browser leaves behind, in the test's directory, not the system's.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	var mu sync.Mutex
	var errs []string
	add := func(s string) { mu.Lock(); errs = append(errs, s); mu.Unlock() }
	// The first Run starts the browser; Listen needs it running.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "assert" {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				add("console.error: " + strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			add(fmt.Sprintf("exception: %s at %s:%d", msg, d.URL, d.LineNumber+1))
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == "error" {
				add("log: " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(errs) }
}

func fileURL(dir, frag string) string {
	abs, _ := filepath.Abs(filepath.Join(dir, "index.html"))
	return "file://" + abs + frag
}

// runsOf counts the stored runs of a benchmark that carry a metric.
func runsOf(h fakeHistory, bench, m string) int {
	n := 0
	for _, ss := range h {
		for _, s := range ss {
			if _, ok := s.Metrics[m]; ok && s.Benchmark == bench {
				n++
			}
		}
	}
	return n
}

func TestBrowserOverviewAndChart(t *testing.T) {
	sh := shape{commits: 150, benches: 3, metrics: 4, reps: 3}
	commits, h := genHistory(sh)
	dir := t.TempDir()
	// bench-0's mean TTFT steps up at three quarters (accepted there, with
	// a reason that is markup), and again at the last commit.
	step := len(commits) * 3 / 4
	acc := []gate.Acceptance{{Commit: commits[step].SHA, Benchmark: "bench-0", Metric: "mean_ttft_ms", By: "ana", Reason: `new default <img src=x onerror="document.title='owned'">`}}
	sum, err := Generate(context.Background(), commits, h, dir, Options{Ref: "main", Title: "perfgate demo: main", Forge: ParseRemote("https://github.com/perfgate/demo.git"), Accepted: acc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, errs := browser(t, 1280, 800)

	// The overview lists every series and metric of the history.
	must(t, ctx, "overview", chromedp.Navigate(fileURL(dir, "")), chromedp.WaitVisible(chromedp.CSS(`#table tbody tr`)))
	var rows int
	var series, flagged []string
	eval(t, ctx, `document.querySelectorAll("#table tbody tr").length`, &rows)
	eval(t, ctx, `[...new Set([...document.querySelectorAll("#table tbody tr")].map(r => r.dataset.series))].sort()`, &series)
	wantSeries := []string{"bench-0", "bench-1.910b.qwen2.5-7b.ci-910b", "bench-1.h100.qwen2.5-7b.ci-h100", "bench-2"}
	if rows != sum.Charts || rows != 4*sh.metrics || fmt.Sprint(series) != fmt.Sprint(wantSeries) {
		t.Errorf("overview: %d rows of series %v, want %d rows of %v", rows, series, 4*sh.metrics, wantSeries)
	}
	eval(t, ctx, `[...document.querySelectorAll("#table tbody td.flag-regression")].map(td => td.parentElement.dataset.series + "/" + td.parentElement.dataset.metric)`, &flagged)
	if fmt.Sprint(flagged) != "[bench-0/mean_ttft_ms]" {
		t.Errorf("regressions flagged: %v, want [bench-0/mean_ttft_ms]", flagged)
	}
	if dst := os.Getenv("PERFGATE_SITE_SCREENSHOTS"); dst != "" {
		screenshot(t, ctx, filepath.Join(dst, "site-overview.png"))
	}

	// A filter by label hides every other series.
	must(t, ctx, "filter", chromedp.SendKeys(chromedp.ID("filter"), "hardware=910B"))
	var visible []string
	var hidden int
	eval(t, ctx, `[...new Set([...document.querySelectorAll("#table tbody tr:not([hidden])")].map(r => r.dataset.series))]`, &visible)
	eval(t, ctx, `document.querySelectorAll("#table tbody tr[hidden]").length`, &hidden)
	if fmt.Sprint(visible) != "[bench-1.910b.qwen2.5-7b.ci-910b]" || hidden != rows-sh.metrics {
		t.Errorf("filter hardware=910B shows %v and hides %d rows, want only the 910B series and %d hidden", visible, hidden, rows-sh.metrics)
	}

	// A deep link opens the chart, with a point per stored run.
	must(t, ctx, "deep link", chromedp.Navigate("about:blank"), chromedp.Navigate(fileURL(dir, "#bench-0/mean_ttft_ms")), chromedp.WaitVisible(chromedp.CSS(`#canvas[data-points]`)))
	var points string
	eval(t, ctx, `document.getElementById("canvas").dataset.points`, &points)
	if title := text(t, ctx, "ctitle"); title != "bench-0: Mean TTFT (ms)" {
		t.Errorf("deep link #bench-0/mean_ttft_ms opened %q", title)
	}
	if want := runsOf(h, "bench-0", "mean_ttft_ms"); points != fmt.Sprint(want) {
		t.Errorf("chart draws %s points, want %d (every stored run)", points, want)
	}

	// Hovering a commit shows its subject.
	last := len(commits) - 1
	var at struct{ X, Y, Left, Top float64 }
	eval(t, ctx, fmt.Sprintf(`(() => { const p = perfgateChart.xy(%d), r = document.getElementById("canvas").getBoundingClientRect(); return {X: p.x, Y: p.y, Left: r.left, Top: r.top}; })()`, last), &at)
	must(t, ctx, "hover", chromedp.MouseEvent("mouseMoved", at.Left+at.X, at.Top+at.Y), chromedp.WaitVisible(chromedp.ID("tip")))
	tip := text(t, ctx, "tip")
	if !strings.Contains(tip, commits[last].Subject) || !strings.Contains(tip, commits[last].SHA[:7]) || !strings.Contains(tip, "N=3") {
		t.Errorf("hover on the last commit shows %q, want its subject %q, short SHA and N=3", tip, commits[last].Subject)
	}
	if dst := os.Getenv("PERFGATE_SITE_SCREENSHOTS"); dst != "" {
		screenshot(t, ctx, filepath.Join(dst, "site-chart.png"))
	}

	// Hovering the accepted commit says who accepted it and why, as text.
	eval(t, ctx, fmt.Sprintf(`(() => { const p = perfgateChart.xy(%d), r = document.getElementById("canvas").getBoundingClientRect(); return {X: p.x, Y: p.y, Left: r.left, Top: r.top}; })()`, step), &at)
	must(t, ctx, "hover accepted", chromedp.MouseEvent("mouseMoved", at.Left+at.X, at.Top+at.Y), chromedp.Sleep(100*time.Millisecond))
	var imgs int
	eval(t, ctx, `document.querySelectorAll("#tip img").length`, &imgs)
	if tip := text(t, ctx, "tip"); !strings.Contains(tip, "accepted by ana: "+acc[0].Reason) || imgs != 0 {
		t.Errorf("hover on the accepted commit shows %q (%d img elements), want %q as text", tip, imgs, acc[0].Text())
	}

	// Zooming redraws a narrower view.
	var view0, view1 string
	eval(t, ctx, `document.getElementById("canvas").dataset.view`, &view0)
	must(t, ctx, "zoom", chromedp.Click(chromedp.ID("zin")), chromedp.Sleep(150*time.Millisecond))
	eval(t, ctx, `document.getElementById("canvas").dataset.view`, &view1)
	if view0 == view1 {
		t.Errorf("zoom in left the view at %s", view0)
	}

	// A hand-written #benchmark/metric link by label finds its chart.
	must(t, ctx, "alias", chromedp.Navigate(fileURL(dir, "#bench-2/Mean%20TTFT%20(ms)")), chromedp.Sleep(300*time.Millisecond))
	var hash string
	eval(t, ctx, `location.hash`, &hash)
	if title := text(t, ctx, "ctitle"); title != "bench-2: Mean TTFT (ms)" || hash != "#bench-2/mean_ttft_ms" {
		t.Errorf("#bench-2/Mean TTFT (ms) opened %q at %s, want bench-2's Mean TTFT at #bench-2/mean_ttft_ms", title, hash)
	}

	// Nothing was fetched from anywhere but the site's own files.
	var foreign []string
	eval(t, ctx, `performance.getEntriesByType("resource").map(e => e.name).filter(n => !n.startsWith("file://"))`, &foreign)
	if len(foreign) > 0 {
		t.Errorf("the page loaded %v", foreign)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestBrowserDark draws a chart in the dark colour scheme: the page and the
// chart take the dark palette, without console errors.
func TestBrowserDark(t *testing.T) {
	commits, h := genHistory(shape{commits: 80, benches: 1, metrics: 2, reps: 3})
	dir := t.TempDir()
	if _, err := Generate(context.Background(), commits, h, dir, Options{Ref: "main"}); err != nil {
		t.Fatal(err)
	}
	ctx, errs := browser(t, 1280, 800)
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
	}); err != nil {
		t.Fatal(err)
	}
	must(t, ctx, "dark chart", chromedp.Navigate(fileURL(dir, "#bench-0/mean_ttft_ms")), chromedp.WaitVisible(chromedp.CSS(`#canvas[data-points]`)))
	var bg string
	var run string
	eval(t, ctx, `getComputedStyle(document.body).backgroundColor`, &bg)
	eval(t, ctx, `getComputedStyle(document.documentElement).getPropertyValue("--run").trim()`, &run)
	if bg != "rgb(18, 18, 18)" || run != "#56B4E9" {
		t.Errorf("dark scheme: page background %s, runs drawn in %s; want rgb(18, 18, 18) and #56B4E9", bg, run)
	}
	if dst := os.Getenv("PERFGATE_SITE_SCREENSHOTS"); dst != "" {
		screenshot(t, ctx, filepath.Join(dst, "site-chart-dark.png"))
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestBrowserScale opens an overview of 330 charts and a chart of 10,000
// commits with 3 runs each: every row and every point is there. How long
// the overview and a redraw after zooming take is logged (-v), not
// asserted: a wall time fails on a loaded machine, not on slow code.
func TestBrowserScale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	commits, h := genHistory(shape{commits: 60, benches: 10, metrics: 30, reps: 1})
	if _, err := Generate(context.Background(), commits, h, dir, Options{Ref: "main"}); err != nil {
		t.Fatal(err)
	}
	big := t.TempDir()
	commits, h = genHistory(shape{commits: 10000, benches: 1, metrics: 1, reps: 3})
	if _, err := Generate(context.Background(), commits, h, big, Options{Ref: "main"}); err != nil {
		t.Fatal(err)
	}
	ctx, errs := browser(t, 1280, 800)
	must(t, ctx, "overview", chromedp.Navigate(fileURL(dir, "")), chromedp.WaitVisible(chromedp.CSS(`body[data-overview-ms]`)))
	var rows int
	var ms string
	eval(t, ctx, `document.querySelectorAll("#table tbody tr").length`, &rows)
	eval(t, ctx, `document.body.dataset.overviewMs`, &ms)
	t.Logf("overview of %d charts ready %s ms after navigation", rows, ms)
	if rows != 330 {
		t.Errorf("overview of %d rows took %s ms", rows, ms)
	}
	must(t, ctx, "big chart", chromedp.Navigate(fileURL(big, "#bench-0/mean_ttft_ms")), chromedp.WaitVisible(chromedp.CSS(`#canvas[data-points]`)))
	var full, zoomed, points string
	eval(t, ctx, `document.getElementById("canvas").dataset.renderMs`, &full)
	eval(t, ctx, `document.getElementById("canvas").dataset.points`, &points)
	must(t, ctx, "zoom", chromedp.Click(chromedp.ID("zin")), chromedp.Sleep(200*time.Millisecond))
	eval(t, ctx, `document.getElementById("canvas").dataset.renderMs`, &zoomed)
	t.Logf("chart of %s points: drawn in %s ms, after a zoom in %s ms", points, full, zoomed)
	if want := runsOf(h, "bench-0", "mean_ttft_ms"); points != fmt.Sprint(want) {
		t.Errorf("chart of %s points, want %d", points, want)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestBrowserPhoneWidth checks that nothing overflows a phone's width.
func TestBrowserPhoneWidth(t *testing.T) {
	commits, h := genHistory(shape{commits: 60, benches: 2, metrics: 3, reps: 2})
	dir := t.TempDir()
	if _, err := Generate(context.Background(), commits, h, dir, Options{Ref: "main"}); err != nil {
		t.Fatal(err)
	}
	ctx, errs := browser(t, 390, 844)
	// A headless window is at least 500 px wide: emulate the phone's screen.
	must(t, ctx, "viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, frag := range []string{"", "#bench-0/mean_ttft_ms"} {
		var overflow bool
		must(t, ctx, "phone "+frag, chromedp.Navigate(fileURL(dir, frag)), chromedp.WaitReady(chromedp.CSS(`body`)), chromedp.Sleep(300*time.Millisecond))
		eval(t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow)
		if overflow {
			t.Errorf("%q overflows a 390 px wide screen", frag)
		}
		if dst := os.Getenv("PERFGATE_SITE_SCREENSHOTS"); dst != "" {
			screenshot(t, ctx, filepath.Join(dst, fmt.Sprintf("site-phone-%d.png", len(frag))))
		}
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

func must(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression into out.
func eval[T any](t *testing.T, ctx context.Context, expr string, out *T) {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	*out = v
}

func text(t *testing.T, ctx context.Context, id string) string {
	t.Helper()
	var s string
	eval(t, ctx, fmt.Sprintf("document.getElementById(%q).textContent", id), &s)
	return s
}

func screenshot(t *testing.T, ctx context.Context, file string) {
	t.Helper()
	must(t, ctx, "settle", chromedp.Sleep(200*time.Millisecond))
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserRegressionsOnlyShowsWatch: the new user's case in the
// browser. A +8% TTFT step 13 commits back is inside the latest band but
// open for perfgate watch: its row's status is a regression that names
// the change and its commit, "regressions only" keeps exactly that row,
// and the header counts watch's open regression.
func TestBrowserRegressionsOnlyShowsWatch(t *testing.T) {
	const n, back = 60, 13
	commits, h := stepHistory(n, back, 8)
	dir := t.TempDir()
	if _, err := Generate(context.Background(), commits, h, dir, Options{Ref: "main"}); err != nil {
		t.Fatal(err)
	}
	ctx, errs := browser(t, 1280, 800)
	must(t, ctx, "overview", chromedp.Navigate(fileURL(dir, "")), chromedp.WaitVisible(chromedp.CSS(`#table tbody tr`)))
	must(t, ctx, "regressions only", chromedp.Click(chromedp.ID("onlyflag")), chromedp.Sleep(100*time.Millisecond))
	var shown []string
	eval(t, ctx, `[...document.querySelectorAll("#table tbody tr:not([hidden])")].map(r => r.dataset.series + "/" + r.dataset.metric + ": " + r.lastElementChild.textContent)`, &shown)
	const want = "serving/mean_ttft_ms: \u25b2 regression+7" // +7.7%: the medians of noisy runs
	if len(shown) != 1 || !strings.HasPrefix(shown[0], want) || !strings.HasSuffix(shown[0], " at "+commits[n-back].SHA[:7]) {
		t.Errorf("regressions only shows %q, want one row %q... at %s", shown, want, commits[n-back].SHA[:7])
	}
	if meta := text(t, ctx, "meta"); !strings.Contains(meta, "1 open regression (perfgate watch)") {
		t.Errorf("header %q does not count watch's open regression", meta)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestBrowserRepositories: the index of several repositories lists each
// with its status and opens its site; a repository ordered by first run
// says so in its header and under its chart, and links back to the index.
func TestBrowserRepositories(t *testing.T) {
	dir := t.TempDir()
	names := []string{"github.com/org/engine", "github.com/org/fork"}
	dirs, err := PrepareIndex(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	var repos []RepoSite
	for i, order := range []string{OrderBranch, OrderMeasured} {
		commits, h := stepHistory(60, 13, float64(8*(1-i))) // the engine steps up 8%, the fork is steady
		sum, err := Generate(context.Background(), commits, h, filepath.Join(dir, dirs[i]), Options{Ref: "main", Order: order, Up: "../../index.html"})
		if err != nil {
			t.Fatal(err)
		}
		repos = append(repos, RepoSite{Name: names[i], Dir: dirs[i], Order: order, Ref: "main", Summary: sum})
	}
	if _, err := WriteIndex(dir, "perfgate: org", repos); err != nil {
		t.Fatal(err)
	}
	ctx, errs := browser(t, 1280, 800)
	must(t, ctx, "index", chromedp.Navigate(fileURL(dir, "")), chromedp.WaitVisible(chromedp.CSS(`tr[data-repository]`)))
	var rows []string
	eval(t, ctx, `[...document.querySelectorAll("tr[data-repository]")].map(r => r.dataset.repository + ": " + r.dataset.status)`, &rows)
	if strings.Join(rows, ", ") != "github.com/org/engine: regression, github.com/org/fork: ok" {
		t.Errorf("index rows %q", rows)
	}
	must(t, ctx, "open the fork", chromedp.Click(chromedp.CSS(`tr[data-repository="github.com/org/fork"] a`)), chromedp.WaitVisible(chromedp.CSS(`#table tbody tr`)))
	if meta := text(t, ctx, "meta"); !strings.Contains(meta, "in order of their first run") {
		t.Errorf("the fork's header %q does not say how its commits are ordered", meta)
	}
	var up string
	eval(t, ctx, `document.getElementById("up").href`, &up)
	if !strings.HasSuffix(up, "/index.html") || strings.Contains(up, "/r/") {
		t.Errorf("link up %q: want the index", up)
	}
	must(t, ctx, "fork chart", chromedp.Click(chromedp.CSS(`#table tbody tr a`)), chromedp.WaitVisible(chromedp.CSS(`#canvas[data-points]`)))
	must(t, ctx, "back up", chromedp.Click(chromedp.ID("up")), chromedp.WaitVisible(chromedp.CSS(`tr[data-repository]`)))
	// A chart opened by its link, without the overview, links up too.
	must(t, ctx, "deep link", chromedp.Navigate("about:blank"), chromedp.Navigate(fileURL(filepath.Join(dir, dirs[1]), "#serving/mean_ttft_ms")), chromedp.WaitVisible(chromedp.CSS(`#canvas[data-points]`)))
	eval(t, ctx, `document.getElementById("up") ? document.getElementById("up").getAttribute("href") : ""`, &up)
	if up != "../../index.html" {
		t.Errorf("a chart opened by its link links up to %q, want ../../index.html", up)
	}
	if e := errs(); len(e) > 0 {
		t.Errorf("console errors: %q", e)
	}
}

// TestBrowserLoadCurve opens a load curve (a 5-load sweep on two
// commits, an SLO of p99 TTFT 200 ms and p99 TPOT 50 ms): the overview
// lists it; its page draws the latest commit's 5 points beside the
// previous commit's 5, the SLO's bound as a line and both capacities at
// the SLO as gate computes them; the previous commit and another latency
// are selectable; a label and subjects with markup are shown as text;
// clicking a commit on a chart of the sweep opens its curve; and the
// dark scheme draws it in the dark palette.
func TestBrowserLoadCurve(t *testing.T) {
	commits, h := sweepHistory(6)
	dir := t.TempDir()
	rules := sweepRules()
	if _, err := Generate(context.Background(), commits, gate.WithCapacity(h, rules.SLOs, nil), dir, Options{Ref: "main", Rules: rules, Forge: ParseRemote("https://github.com/perfgate/demo.git")}); err != nil {
		t.Fatal(err)
	}
	slo, _ := gate.SLOFor(rules.SLOs, "serving")
	capOf := func(sha string) float64 {
		c, ok := gate.Curves(h[sha], nil)[0].Capacity(slo)
		if !ok {
			t.Fatalf("no capacity at %s", sha)
		}
		return c.Requests
	}
	const id = "serving.qwen2.5-7b-b.by.max_concurrency.ci"
	for _, dark := range []bool{false, true} {
		ctx, errs := browser(t, 1280, 900)
		if dark {
			if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}},
			}); err != nil {
				t.Fatal(err)
			}
		}
		must(t, ctx, "overview", chromedp.Navigate(fileURL(dir, "")), chromedp.WaitVisible(chromedp.CSS(`#ctable tbody tr`)))
		var listed []string
		eval(t, ctx, `[...document.querySelectorAll("#ctable tbody tr")].map(r => r.dataset.curve)`, &listed)
		if fmt.Sprint(listed) != "["+id+"]" {
			t.Errorf("overview lists load curves %v, want [%s]", listed, id)
		}
		must(t, ctx, "curve", chromedp.Click(chromedp.CSS(`#ctable tbody a`)), chromedp.WaitVisible(chromedp.CSS(`#ksvg`)))
		var got struct {
			Head, Prev, Series int
			SLO                string
			HeadCap, PrevCap   float64
			Bold, Imgs         int
			Hash, Sub, Cap     string
			Stroke, Bg         string
		}
		state := `(() => ({
			Head: document.querySelectorAll("#ksvg circle.pt.head").length,
			Prev: document.querySelectorAll("#ksvg circle.pt.prev").length,
			Series: +document.getElementById("ksvg").dataset.series,
			SLO: (document.querySelector("#ksvg line.slo") || {dataset: {}}).dataset.limit || "",
			HeadCap: +((document.querySelector("#ksvg g.headcap") || {dataset: {}}).dataset.req || 0),
			PrevCap: +((document.querySelector("#ksvg g.prevcap") || {dataset: {}}).dataset.req || 0),
			Bold: document.querySelectorAll("#curve b").length,
			Imgs: document.querySelectorAll("#curve img").length,
			Hash: location.hash, Sub: document.getElementById("ksub").textContent, Cap: document.getElementById("kcap").textContent,
			Stroke: getComputedStyle(document.querySelector("#ksvg polyline.head")).stroke,
			Bg: getComputedStyle(document.body).backgroundColor,
		}))()`
		eval(t, ctx, state, &got)
		if got.Head != 5 || got.Prev != 5 || got.Series != 2 {
			t.Errorf("curve draws %d points of the latest commit and %d of the previous (%d series), want 5 and 5 (2 series)", got.Head, got.Prev, got.Series)
		}
		if got.SLO != "200" {
			t.Errorf("SLO line at %q, want p99_ttft_ms's 200", got.SLO)
		}
		if want := capOf(commits[5].SHA); math.Abs(got.HeadCap-want) > 1e-9 || math.Abs(got.PrevCap-capOf(commits[4].SHA)) > 1e-9 {
			t.Errorf("capacity marks at %v and %v req/s, want gate's %v and %v", got.HeadCap, got.PrevCap, want, capOf(commits[4].SHA))
		}
		if got.Bold != 0 || got.Imgs != 0 || !strings.Contains(got.Sub, "model=qwen2.5-7b <b>") || !strings.Contains(got.Cap, "<img src=x onerror=alert(1)>") {
			t.Errorf("markup from the history: %d b and %d img elements, subtitle %q, commit line %q; want it as text", got.Bold, got.Imgs, got.Sub, got.Cap)
		}
		if got.Hash != "#~curve/"+id+"/"+commits[5].SHA {
			t.Errorf("hash %s, want the latest commit's curve", got.Hash)
		}
		wantStroke := "rgb(0, 114, 178)"
		if dark {
			wantStroke = "rgb(86, 180, 233)"
		}
		if got.Stroke != wantStroke || dark != (got.Bg == "rgb(18, 18, 18)") {
			t.Errorf("dark=%v: curve drawn in %s on %s, want %s", dark, got.Stroke, got.Bg, wantStroke)
		}
		if dst := os.Getenv("PERFGATE_SITE_SCREENSHOTS"); dst != "" {
			name := "site-curve.png"
			if dark {
				name = "site-curve-dark.png"
			}
			screenshot(t, ctx, filepath.Join(dst, name))
		}
		if dark {
			if e := errs(); len(e) > 0 {
				t.Errorf("console errors: %q", e)
			}
			continue
		}

		// The previous commit: its curve alone, no earlier one beside it.
		must(t, ctx, "previous commit", chromedp.Click(chromedp.ID("kprev")), chromedp.Sleep(100*time.Millisecond))
		eval(t, ctx, state, &got)
		if got.Head != 5 || got.Prev != 0 || got.Series != 1 || got.Hash != "#~curve/"+id+"/"+commits[4].SHA {
			t.Errorf("previous commit: %d and %d points (%d series) at %s, want its 5 alone at %s", got.Head, got.Prev, got.Series, got.Hash, commits[4].SHA)
		}
		// Another latency: TPOT, with its own bound.
		var changed bool
		eval(t, ctx, `(() => { const s = document.getElementById("kmetric"); s.value = "p99_tpot_ms"; return s.dispatchEvent(new Event("change")); })()`, &changed)
		eval(t, ctx, state, &got)
		if got.SLO != "50" {
			t.Errorf("p99_tpot_ms: SLO line at %q, want 50", got.SLO)
		}

		// A chart of one of the sweep's loads links to the curve, and a
		// click on a commit opens that commit's curve.
		must(t, ctx, "chart", chromedp.Navigate("about:blank"), chromedp.Navigate(fileURL(dir, "#serving.8.qwen2.5-7b-b-.ci/p99_ttft_ms")), chromedp.WaitVisible(chromedp.ID("curvelink")))
		var at struct{ X, Y, Left, Top float64 }
		eval(t, ctx, `(() => { const c = perfgateChart.commits(), p = perfgateChart.xy(c[c.length - 1]), r = document.getElementById("canvas").getBoundingClientRect(); return {X: p.x, Y: p.y, Left: r.left, Top: r.top}; })()`, &at)
		must(t, ctx, "click a commit", chromedp.MouseClickXY(at.Left+at.X, at.Top+at.Y), chromedp.WaitVisible(chromedp.CSS(`#ksvg`)))
		eval(t, ctx, state, &got)
		if got.Hash != "#~curve/"+id+"/"+commits[5].SHA || got.Series != 2 {
			t.Errorf("click on the latest commit of a sweep's chart opened %s (%d series), want its load curve", got.Hash, got.Series)
		}

		// The capacity chart links to the curve it was derived from.
		var href string
		must(t, ctx, "capacity chart", chromedp.Navigate("about:blank"), chromedp.Navigate(fileURL(dir, "#serving.max_concurrency.qwen2.5-7b-b-.ci/capacity")), chromedp.WaitVisible(chromedp.ID("curvelink")))
		eval(t, ctx, `document.getElementById("curvelink").getAttribute("href")`, &href)
		if href != "#~curve/"+id {
			t.Errorf("the capacity chart links to %q, want #~curve/%s", href, id)
		}

		// A chart of a benchmark not swept has no curve link.
		var linked bool
		must(t, ctx, "unit chart", chromedp.Navigate("about:blank"), chromedp.Navigate(fileURL(dir, "#unit/mean_ttft_ms")), chromedp.WaitVisible(chromedp.CSS(`#canvas[data-points]`)), chromedp.Sleep(200*time.Millisecond))
		eval(t, ctx, `!document.getElementById("chartcurve").hidden`, &linked)
		if linked {
			t.Errorf("the chart of unit, never swept, links to a load curve")
		}

		// On a phone's screen the curve's page does not overflow.
		var overflow bool
		must(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)), chromedp.Navigate("about:blank"),
			chromedp.Navigate(fileURL(dir, "#~curve/"+id)), chromedp.WaitVisible(chromedp.CSS(`#ksvg`)))
		eval(t, ctx, `document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow)
		if overflow {
			t.Errorf("the load curve overflows a 390 px wide screen")
		}
		if e := errs(); len(e) > 0 {
			t.Errorf("console errors: %q", e)
		}
	}
}
