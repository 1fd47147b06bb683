// Package site owns perfgate's static site: a dashboard of the stored
// history, generated as plain files that work opened from disk (file://)
// and served from GitHub Pages, with no server, no network at view time
// and no CDN.
//
// Generate reads the results of a base branch's first-parent commits
// (through gate.History, so it knows nothing of bbolt or git) and writes:
//
//	index.html, app.js, style.css   the viewer, embedded in the binary (go:embed)
//	data/index.js                   the overview: one row per series and metric
//	data/commits.js                 the walked commits: id, subject, author date
//	data/s/SERIES/METRIC.js         one chart: every run, medians, band, change points,
//	                                accepted changes
//	data/c/CURVE.js                 one load curve (a sweep of loads) at each commit that
//	                                measured it, with its capacity at the SLO (curves.go)
//	perfgate-site.json              what was generated (and the marker that lets
//	                                a later run replace the directory's contents)
//
// A site of several repositories (PrepareIndex, WriteIndex; index.go) is
// an index page of them and, under r/NAME/, each one's site as Generate
// writes it.
//
// Data files are JavaScript that calls perfgateData(key, value), loaded by
// <script> elements: browsers refuse fetch() of file:// URLs, scripts they
// load. A page loads only what it shows: the overview data/index.js, a
// chart data/commits.js, its own file and data/index.js (to link the load
// curve its series belongs to, whose file it then loads), a load curve
// data/commits.js and its own file.
//
// A series is what the gate compares: a benchmark, its identity labels and
// its testbed (gate.SeriesIdentity). Per commit the chart's line is the
// median of the commit's valid clean runs; invalid runs (gate.InvalidReason)
// and dirty runs are drawn apart and left out of medians, changes and
// bands. The band is the gate's noise band (gate.NoiseBand) of the
// Window medians before the latest commit: the band the latest commit was
// judged against; a latest median beyond it in the worse direction flags
// the row as a regression, as does an open regression of perfgate watch's
// (Generate runs watch over the same commits, rules and acceptances, so
// the overview agrees with it; see watch.go). Accepted changes (Options.Accepted) are marked
// at their commit with who accepted them and why, and the band starts
// there, so an accepted step is not flagged. Change points are the gate's (gate.ChangePoints)
// over windows of 2×Window medians overlapping by a quarter, so the cost grows
// linearly with the history.
//
// The charts are this package's own canvas and SVG code (assets/app.js, no
// library): a site must load nothing from the network, and a chart of
// 10,000 commits with every repetition is a few hundred lines of canvas;
// a charting library would add a pinned dependency and its licence for
// features the site does not use. The palette is Okabe and Ito's, safe
// for colour-blind readers, in light and dark schemes.
package site

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/gate"
)

//go:embed assets/index.html assets/app.js assets/style.css
var assets embed.FS

// Marker is the file that says a directory holds a generated site.
const Marker = "perfgate-site.json"

// Defaults.
const (
	DefaultAgo   = 10 // the overview's "N commits ago" column
	DefaultSpark = 30 // medians in an overview sparkline
	batchSize    = 512
)

// ErrBadInput is matched by errors about the options or the output
// directory (the CLI's exit 2).
var ErrBadInput = errors.New("bad input")

type inputError struct{ msg string }

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == ErrBadInput }

func badf(format string, args ...any) error { return &inputError{fmt.Sprintf(format, args...)} }

// Options configure Generate.
type Options struct {
	Title     string   // page title; default "perfgate: REF"
	Ref       string   // the branch shown, e.g. "main"
	Benchmark string   // only benchmarks matching this glob (path.Match); "" all
	Metrics   []string // only these canonical metric names; empty all
	// IgnoreLabels are the configuration's ignore_labels.
	IgnoreLabels []string
	Window       int   // the gate's baseline window; default gate's 20
	Ago          int   // "N commits ago"; default DefaultAgo
	Forge        Forge // where commits link to
	// Accepted are the recorded acceptances (perfgate accept): each is
	// marked on the charts of the benchmark and metric it covers, and the
	// band of the latest commit starts at the newest of them, as the
	// gate's window does.
	Accepted []gate.Acceptance
	// Rules are the rules watch judges changes by (thresholds,
	// directions, watch settings): the overview flags a chart with an
	// open regression of perfgate watch's. Nil: the defaults.
	Rules *gate.Config
	// Order is how the commits are ordered: OrderBranch (the first-parent
	// history of Ref) or OrderMeasured (by first run, without git).
	Order string
	// Up links the site's header to a page above it (the index of a site
	// of several repositories), relative to the site; "" none.
	Up string
}

// Summary says what Generate wrote.
type Summary struct {
	Commits int `json:"commits"` // commits listed: the first-parent commits walked, from the first measured one
	// Measured is how many of them have a run drawn.
	Measured int `json:"measured_commits"`
	Series   int `json:"series"` // benchmark + identity labels + testbed
	Charts   int `json:"charts"` // series × metric
	// Runs is how many stored runs are drawn, each counted once however
	// many metrics (charts) it has.
	Runs int `json:"runs"`
	// Curves are the load curves drawn per commit (data/c/): a
	// benchmark's results at several loads in one commit.
	Curves  int `json:"load_curves,omitempty"`
	Flagged int `json:"flagged"` // charts flagged as a regression: an open regression of watch's, or the latest commit beyond the band
	// OpenRegressions are perfgate watch's open regressions on the
	// charts shown (a chart may have more than one).
	OpenRegressions int `json:"open_regressions"`
	Files           int `json:"files"`
	// Latest is the newest commit drawn (with a result shown); nil when
	// none is.
	Latest *Commit `json:"latest,omitempty"`
}

// Commit is a commit as the summaries name it.
type Commit struct {
	SHA     string    `json:"sha"`
	Subject string    `json:"subject,omitempty"`
	Time    time.Time `json:"time"` // author time, or the first run's (OrderMeasured)
}

// Generate writes the site of commits (oldest first, the first-parent
// history of the branch) and their stored results into dir, replacing a
// site generated there before. dir must be empty, absent, or hold a site.
func Generate(ctx context.Context, commits []gate.Commit, h gate.History, dir string, opts Options) (*Summary, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	// Watch reads the history on its own, before collect: one after the
	// other, so that the peak memory is the larger of the two, not their
	// sum (10,000 commits x 10 benchmarks x 30 metrics: 292 MiB side by
	// side, 180 MiB one after the other, for 3.6 s against 4.9 s;
	// BenchmarkSite10kProcess in cmd/perfgate).
	alerts, _, err := watchOpen(ctx, commits, h, opts)
	if err != nil {
		return nil, err
	}
	m, err := collect(ctx, commits, h, opts)
	if err != nil {
		return nil, err
	}
	m.alerts = alerts
	placeAlerts(m.alerts, m.commits)
	return write(dir, m, opts)
}

func (o *Options) check() error {
	if o.Benchmark != "" {
		if _, err := path.Match(o.Benchmark, ""); err != nil {
			return badf("--benchmark %q: not a valid glob (%v); use * and ? as in a shell, e.g. --benchmark 'serving-*'", o.Benchmark, err)
		}
	}
	if o.Window == 0 {
		o.Window = gate.DefaultWindow
	}
	if o.Window < gate.MinBandWindow {
		return badf("window %d: the noise band needs at least %d commits", o.Window, gate.MinBandWindow)
	}
	if o.Ago == 0 {
		o.Ago = DefaultAgo
	}
	if o.Order != OrderBranch && o.Order != OrderMeasured {
		return badf("order %q: want %q (first-parent history) or %q (first measured)", o.Order, OrderBranch, OrderMeasured)
	}
	if o.Ago < 1 {
		return badf("ago %d: must be at least 1", o.Ago)
	}
	if o.Title == "" {
		o.Title = "perfgate"
		if o.Ref != "" {
			o.Title += ": " + o.Ref
		}
	}
	return nil
}

// prepareDir makes dir, or empties the data of a site generated there
// before; any other non-empty directory is refused.
func prepareDir(dir string) error {
	if dir == "" {
		return badf("--out: give the directory to write the site to, e.g. --out _site")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return badf("--out %q: %v; give a directory", dir, err)
	case len(entries) == 0:
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, Marker)); err != nil {
		return badf("--out %q is not empty and holds no perfgate site (no %s); give a new or empty directory", dir, Marker)
	}
	for _, d := range []string{"data", repoDir} { // a site's data, or an index's sub-sites
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return err
		}
	}
	return nil
}

// matchBenchmark applies --benchmark.
func (o *Options) matchBenchmark(name string) bool {
	if o.Benchmark == "" {
		return true
	}
	ok, _ := path.Match(o.Benchmark, name)
	return ok
}

// slug makes a file-name-safe, readable id.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.' {
			if r == '.' && b.Len() == 0 {
				continue
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimRight(b.String(), "-.")
	if len(out) > 80 {
		out = out[:80]
	}
	if out == "" {
		out = "x"
	}
	return out
}
