package watch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aclements/go-moremath/stats"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/metric"
)

// Accepted tells which changes were recorded as intended (perfgate
// accept): a change is accepted when an acceptance for its series'
// benchmark and metric is recorded at a commit of its range (after the
// last commit at the old level, up to the first at the new one). It is
// then reported as accepted, never as an open regression, and its issue
// is closed. Nil means none is.
type Accepted interface {
	// Accepted returns the text of the acceptance recorded for the
	// series' metric at commit ("accepted by WHO: reason"), and whether
	// there is one.
	Accepted(s Series, commit string) (text string, ok bool)
}

// Options say what to watch.
type Options struct {
	From   string // tip of the base branch (commit id), newest first from here
	Ref    string // the base branch as the user named it, for reports
	Stop   string // --since REV: stop before this commit ("" none)
	Since  time.Time
	Until  time.Time // commit time bounds (zero: none); need commit times from the Graph
	Limit  int       // at most this many first-parent commits (0: all)
	Bench  string    // glob over benchmark names ("" all)
	Metric string    // canonical metric name ("" every metric)
	Config *gate.Config
	Params Params
	// Accepted is consulted for every change (nil: none accepted), from
	// several goroutines at once.
	Accepted Accepted
}

// batch is how many commits' results are read at once: the values are
// kept, the results dropped, so memory follows the values.
const batch = 250

// Report is what watch found.
type Report struct {
	Ref       string    `json:"ref"`
	Tip       string    `json:"tip"`
	Commits   int       `json:"commits"`  // first-parent commits walked
	Measured  int       `json:"measured"` // of them with results
	Series    int       `json:"series"`   // series x metric watched
	Method    string    `json:"method"`
	Changes   []Change  `json:"changes"`
	Missing   []Missing `json:"missing"`
	Warnings  []string  `json:"warnings,omitempty"`
	Generated time.Time `json:"-"`
}

// Series names one series and metric.
type Series struct {
	Key       string            `json:"-"`
	Benchmark string            `json:"benchmark"`
	Labels    map[string]string `json:"labels,omitempty"`
	Testbed   string            `json:"testbed,omitempty"`
	Metric    string            `json:"metric"`
}

// Name renders the series for reports: benchmark [k=v,...] @testbed metric.
func (s Series) Name() string {
	var b strings.Builder
	b.WriteString(s.Benchmark)
	if len(s.Labels) > 0 {
		keys := make([]string, 0, len(s.Labels))
		for k := range s.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(" [")
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(k + "=" + s.Labels[k])
		}
		b.WriteByte(']')
	}
	if s.Testbed != "" {
		b.WriteString(" @" + s.Testbed)
	}
	return b.String()
}

// AlertKey is a stable id of the series and metric (and kind), for the
// hidden marker of its issue.
func AlertKey(kind, seriesKey, metricName string) string {
	h := sha256.Sum256([]byte(kind + "\x00" + seriesKey + "\x00" + metricName))
	return kind + "-" + hex.EncodeToString(h[:8])
}

// The kinds of a change.
const (
	Regression  = "regression"
	Improvement = "improvement"
	Shift       = "change" // the metric's direction is unknown
)

// Change is one change of level on the base branch.
type Change struct {
	Series
	Kind string `json:"kind"`
	// LastGood is the last measured commit at the old level, FirstBad the
	// first at the new one; Unmeasured counts the commits between them
	// that the series did not measure. For a drift, FirstBad is the first
	// commit off the old level (where the level began to move) and
	// DriftEnd the first at the new one, and Unmeasured counts the
	// commits from LastGood to DriftEnd the series did not measure.
	LastGood   string  `json:"last_good"`
	FirstBad   string  `json:"first_bad"`
	DriftEnd   string  `json:"drift_end,omitempty"`
	Unmeasured int     `json:"unmeasured"`
	Before     float64 `json:"before"`
	After      float64 `json:"after"`
	ChangePct  float64 `json:"change_pct"`
	NoiseUnits float64 `json:"noise_units"` // |after-before| over the noise of one point
	// Confidence is 1 - p of a two-sided Mann-Whitney test of the (up to
	// 30) points either side of the change.
	Confidence float64 `json:"confidence"`
	NBefore    int     `json:"points_before"`
	NAfter     int     `json:"points_after"`
	Drift      bool    `json:"drift,omitempty"`
	// For a drift: Moving when it is still under way at the last measured
	// commit (DriftEnd is then that commit, After the level there: the
	// size so far), and PerHundred its change in percent per 100
	// first-parent commits.
	Moving     bool    `json:"moving,omitempty"`
	PerHundred float64 `json:"drift_pct_per_100_commits,omitempty"`
	Threshold  float64 `json:"threshold_pct"` // smallest change worth reporting
	Rule       string  `json:"rule"`          // where the threshold came from
	Open       bool    `json:"open"`          // a regression the series has not recovered from
	Accepted   string  `json:"accepted,omitempty"`
	Bisect     string  `json:"bisect,omitempty"`
	Current    float64 `json:"current"` // the series' level now
	seriesKey  string

	// Suspected: fewer than MinSegment points, or weak evidence, hold the
	// new level (a change in the last points); never open.
	Suspected bool `json:"suspected,omitempty"`
	// BelowThreshold: beyond the noise but smaller than Threshold; listed,
	// never open, never an alert.
	BelowThreshold bool `json:"below_threshold,omitempty"`
	// lo and hi are the positions of LastGood and FirstBad on the walked
	// chain (0 = oldest), for grouping the metrics of one change.
	lo, hi int32
}

// SeriesKey is the change's series key (gate's identity).
func (c *Change) SeriesKey() string { return c.seriesKey }

// Missing is a series that stopped reporting.
type Missing struct {
	Series
	LastCommit string `json:"last_commit"`
	Reported   int    `json:"reported"` // consecutive measured commits it reported on before it stopped
	Since      int    `json:"missed"`   // measured commits since without it
	seriesKey  string
}

// SeriesKey is the missing series' key.
func (m *Missing) SeriesKey() string { return m.seriesKey }

// point is one commit's value of a series: its position on the walked
// chain (0 = oldest) and the median of its valid results there.
type track struct {
	Series
	key  string
	idx  []int32
	vals []float64

	curPos int32     // the commit cur holds values of
	cur    []float64 // the values of one commit, for their median
}

// push appends a commit's value. A track never holds more values than the
// chain has commits, so its capacity grows no further than that: the
// doubling of append would hold up to twice the history in memory.
func (t *track) push(pos int32, v float64, n int) {
	if len(t.idx) == cap(t.idx) {
		room := min(max(2*cap(t.idx), 16), cap(t.idx)+n-int(pos))
		t.idx = slices.Grow(t.idx, room-len(t.idx))
		t.vals = slices.Grow(t.vals, room-len(t.vals))
	}
	t.idx = append(t.idx, pos)
	t.vals = append(t.vals, v)
}

type collector struct {
	id       gate.SeriesIdentity
	opts     Options
	tracks   map[string]map[string]*track // series key -> metric -> track (nil: not watched)
	seriesAt map[string][]int32
	legacy   map[string]map[string]bool // legacy key -> testbeds
	measured []bool
	n        int
	neutrals map[string]bool
	touched  []*track // add's buffer
	filtered bool     // a clean, valid result --benchmark left out
}

// neutral reports whether a metric is descriptive (metric.Neutral).
func (c *collector) neutral(name string) bool {
	v, ok := c.neutrals[name]
	if !ok {
		if c.neutrals == nil {
			c.neutrals = map[string]bool{}
		}
		v = metric.Get(name).Direction == metric.Neutral
		c.neutrals[name] = v
	}
	return v
}

// Watch walks the first-parent history from opts.From and reports its
// changes of level and the series that stopped reporting.
func Watch(ctx context.Context, g gate.Graph, h gate.History, opts Options) (*Report, error) {
	if opts.Config == nil {
		opts.Config = gate.DefaultConfig()
	}
	if opts.Params == (Params{}) {
		opts.Params = DefaultParams()
	}
	chain, err := walk(g, opts)
	if err != nil {
		return nil, err
	}
	// Capacity at the rules file's SLO is a series like any other.
	h = gate.WithCapacity(h, opts.Config.SLOs, opts.Config.IgnoreLabels)
	c := &collector{id: gate.NewSeriesIdentity(opts.Config.IgnoreLabels), opts: opts,
		tracks: map[string]map[string]*track{}, seriesAt: map[string][]int32{}, legacy: map[string]map[string]bool{},
		measured: make([]bool, len(chain)), n: len(chain)}
	if err := c.read(ctx, h, chain); err != nil {
		return nil, err
	}
	rep := &Report{Ref: opts.Ref, Tip: opts.From, Commits: len(chain), Method: MethodSummary}
	for _, m := range c.measured {
		if m {
			rep.Measured++
		}
	}
	sha := func(i int32) string { return chain[len(chain)-1-int(i)].SHA }
	tracks := c.sortedTracks()
	found := make([][]Change, len(tracks))
	// The tracks are independent: detected on every processor, reported
	// in order.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(tracks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(tracks); i = int(next.Add(1)) - 1 {
				found[i] = c.changes(tracks[i], sha)
				tracks[i].idx, tracks[i].vals = nil, nil // done with it
			}
		}()
	}
	wg.Wait()
	for _, f := range found {
		rep.Series++
		rep.Changes = append(rep.Changes, f...)
	}
	rep.Missing = c.missing(sha)
	switch {
	case len(chain) == 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no first-parent commits in the range from %s (--since, --until and --limit left none): widen it", shortSHA(opts.From)))
	case rep.Measured == 0 && c.filtered:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no benchmark matches --benchmark %q on the %d first-parent commits walked from %s; perfgate runs lists the stored benchmarks", opts.Bench, len(chain), shortSHA(opts.From)))
	case rep.Measured == 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no stored results on the %d first-parent commits walked from %s; store results of the base branch (perfgate ingest/run on each commit, or perfgate sync)", len(chain), shortSHA(opts.From)))
	}
	return rep, nil
}

// read adds the results of chain's commits, oldest first (position i is
// chain[len-1-i]), in batches: one goroutine reads the next batch from
// the history while this one adds the last.
func (c *collector) read(ctx context.Context, h gate.History, chain []gate.Commit) error {
	type result struct {
		lo      int
		shas    []string
		samples map[string][]gate.Sample
		err     error
	}
	rctx, cancel := context.WithCancel(ctx)
	results := make(chan result)
	go func() {
		defer close(results)
		for lo := 0; lo < len(chain); lo += batch {
			if rctx.Err() != nil {
				return
			}
			hi := min(len(chain), lo+batch)
			shas := make([]string, hi-lo)
			for i := range shas {
				shas[i] = chain[len(chain)-1-(lo+i)].SHA
			}
			samples, err := h.Samples(shas)
			select {
			case results <- result{lo, shas, samples, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	defer func() {
		cancel()
		for range results { // the reader is done with the history on return
		}
	}()
	for r := range results {
		if err := ctx.Err(); err != nil {
			return err
		}
		if r.err != nil {
			return r.err
		}
		for i, sha := range r.shas {
			c.add(int32(r.lo+i), r.samples[sha])
		}
	}
	return ctx.Err()
}

// walk returns the first-parent chain from opts.From, newest first, cut at
// opts.Stop and the time bounds.
func walk(g gate.Graph, opts Options) ([]gate.Commit, error) {
	n := opts.Limit
	if n <= 0 {
		n = math.MaxInt32
	}
	all, err := g.FirstParents(opts.From, n)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, cm := range all {
		if opts.Stop != "" && cm.SHA == opts.Stop {
			break
		}
		if !opts.Until.IsZero() && cm.Time.After(opts.Until) {
			continue
		}
		if !opts.Since.IsZero() && cm.Time.Before(opts.Since) {
			break
		}
		out = append(out, cm)
	}
	return out, nil
}

// add records one commit's results: per track, the median of the
// commit's values.
func (c *collector) add(pos int32, samples []gate.Sample) {
	touched := c.touched[:0]
	for i := range samples {
		s := &samples[i]
		if s.Dirty || gate.SelfInvalid(s) != "" {
			continue
		}
		if c.opts.Bench != "" {
			if ok, _ := path.Match(c.opts.Bench, s.Benchmark); !ok {
				c.filtered = true
				continue
			}
		}
		c.measured[pos] = true
		key := c.seriesKey(s)
		if at := c.seriesAt[key]; len(at) == 0 || at[len(at)-1] != pos {
			c.seriesAt[key] = append(at, pos)
		}
		byName := c.tracks[key]
		if byName == nil {
			byName = map[string]*track{}
			c.tracks[key] = byName
		}
		for name, v := range s.Metrics {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			tr, seen := byName[name]
			if !seen {
				if (c.opts.Metric != "" && name != c.opts.Metric) || (c.opts.Metric == "" && c.neutral(name)) {
					// Not watched (token counts and the like are
					// described, not judged): remembered as nil, so
					// the next result costs one lookup.
					byName[name] = nil
					continue
				}
				tr = &track{key: key, Series: Series{Benchmark: s.Benchmark, Labels: c.id.IdentityLabels(s), Testbed: c.id.Testbed(s), Metric: name}, curPos: -1}
				byName[name] = tr
			}
			if tr == nil {
				continue
			}
			if tr.curPos != pos {
				tr.curPos = pos
				tr.cur = tr.cur[:0]
				touched = append(touched, tr)
			}
			tr.cur = append(tr.cur, v)
		}
	}
	for _, tr := range touched {
		v := tr.cur[0]
		if len(tr.cur) > 1 {
			v = medianOf(tr.cur)
		}
		tr.push(pos, v, c.n)
	}
	c.touched = touched[:0]
}

// seriesKey is gate's series key; a result stored before perfgate recorded
// testbeds joins the series of its benchmark and labels when that series
// was measured on one testbed so far.
func (c *collector) seriesKey(s *gate.Sample) string {
	tb := c.id.Testbed(s)
	lk := c.id.LegacyKey(s)
	if tb != "" {
		if c.legacy[lk] == nil {
			c.legacy[lk] = map[string]bool{}
		}
		c.legacy[lk][tb] = true
		return c.id.Key(s)
	}
	if beds := c.legacy[lk]; len(beds) == 1 {
		for b := range beds {
			cp := *s
			cp.Testbed = b
			return c.id.Key(&cp)
		}
	}
	return c.id.Key(s)
}

// threshold is the smallest change worth reporting for a series' metric,
// in percent, with its origin, and the metric's direction.
func (c *collector) threshold(s Series) (pct float64, origin string, dir metric.Direction) {
	dir = metric.Get(s.Metric).Direction
	rules := c.opts.Config.Rules
	if len(rules) == 0 {
		rules = gate.DefaultRules()
	}
	for _, r := range rules {
		if r.Metric == s.Metric && r.Bound == gate.Regression && r.Matches(s.Benchmark) {
			return r.Limit, r.Origin, r.Direction
		}
	}
	for _, r := range rules {
		if r.Metric == s.Metric && r.Direction != metric.Unknown {
			dir = r.Direction
			break
		}
	}
	return c.opts.Config.Watch.MinChange, "watch min_change", dir
}

// changes runs the detector on one track and describes its changes.
func (c *collector) changes(tr *track, sha func(int32) string) []Change {
	pct, origin, dir := c.threshold(tr.Series)
	p := c.opts.Params
	p.MinMagnitude = pct / 100
	steps := Detect(tr.vals, p)
	if len(steps) == 0 {
		return nil
	}
	current := steps[len(steps)-1].After
	var out []Change
	for k, st := range steps {
		from := st.From
		ch := Change{
			Series: tr.Series, seriesKey: tr.key,
			LastGood: sha(tr.idx[from-1]), FirstBad: sha(tr.idx[st.At]),
			// Commits between the two ends that the series did not
			// measure (a drift's range holds measured ones too).
			Unmeasured: int(tr.idx[st.At]-tr.idx[from-1]) - 1 - (st.At - from),
			Before:     st.Before, After: st.After,
			ChangePct:  100 * (st.After/st.Before - 1),
			NoiseUnits: st.NoiseUnits,
			Confidence: confidence(tr.vals, from, st.At),
			NBefore:    st.NBefore, NAfter: st.NAfter, Drift: st.Drift,
			Suspected: st.Suspected, BelowThreshold: st.Minor,
			Threshold: pct, Rule: origin, Current: current,
			lo: tr.idx[from-1], hi: tr.idx[st.At],
		}
		if st.Before == 0 {
			ch.ChangePct = 0 // no relative change from zero; the levels say it
		}
		worse := (dir == metric.LowerIsBetter && st.After > st.Before) || (dir == metric.HigherIsBetter && st.After < st.Before)
		switch {
		case dir != metric.LowerIsBetter && dir != metric.HigherIsBetter:
			ch.Kind = Shift
		case worse:
			ch.Kind = Regression
		default:
			ch.Kind = Improvement
		}
		if c.opts.Accepted != nil {
			a, b := acceptSpan(steps, k, len(tr.idx))
			for i := tr.idx[a] + 1; i <= tr.idx[b]; i++ {
				if text, ok := c.opts.Accepted.Accepted(tr.Series, sha(i)); ok {
					ch.Accepted = text
				}
			}
		}
		if st.Drift {
			ch.FirstBad, ch.DriftEnd = sha(tr.idx[from]), ch.FirstBad
			into := k+1 < len(steps) && steps[k+1].From <= st.At
			ch.Confidence = driftConfidence(tr.vals, from, st.At, st.Moving || into)
			ch.NBefore, ch.NAfter = driftPoints(steps, k, len(tr.vals))
			ch.Moving = st.Moving
			if span := tr.idx[st.At] - tr.idx[from-1]; span > 0 && st.Before != 0 {
				ch.PerHundred = 100 * ch.ChangePct / float64(span)
			}
		}
		if ch.Kind == Regression && ch.Accepted == "" && !ch.Suspected && !ch.BelowThreshold {
			// Open while the level now is still worse than before the
			// change by the threshold.
			rel := 100 * (current/st.Before - 1)
			if dir == metric.HigherIsBetter {
				rel = -rel
			}
			ch.Open = rel >= pct
		}
		if ch.Unmeasured > 0 && !ch.Drift {
			// A drift has no one commit to find.
			ch.Bisect = bisectCommand(ch, pct)
		}
		out = append(out, ch)
	}
	return out
}

// AcceptSlack is how many measured points beyond either end of a change's
// range an acceptance still covers it: on noisy values the detector can
// place a step a point or two off the commit that made it, and the
// acceptance recorded at that commit must still silence it.
const AcceptSlack = 2

// acceptSpan is the stretch of a track's points (indexes a < b) whose
// commits after a's, up to b's, accept steps[k]: its range widened by
// AcceptSlack points either side, never past the neighbouring changes.
func acceptSpan(steps []Step, k, n int) (a, b int) {
	st := steps[k]
	a, b = max(0, st.From-1-AcceptSlack), min(n-1, st.At+AcceptSlack)
	if k > 0 {
		a = max(a, steps[k-1].At)
	}
	if k+1 < len(steps) {
		b = min(b, steps[k+1].From-1)
	}
	return a, b
}

// confidence is 1 - p of a two-sided Mann-Whitney U test between up to 30
// points before from and 30 from at on.
func confidence(x []float64, from, at int) float64 {
	const w = 30
	a := x[max(0, from-w):from]
	b := x[at:min(len(x), at+w)]
	r, err := stats.MannWhitneyUTest(a, b, stats.LocationDiffers)
	if err != nil {
		return 0
	}
	return 1 - r.P
}

// driftPoints is how many measured points hold the levels either side of
// the drift steps[k]: before, from the previous change's end (or the
// first point) up to the drift's start; after, from its end up to the
// next change's start (or the last point), 1 for a drift still moving
// (its after is the line at the last point). The detector's counts can
// describe the segments it fitted before a drift's ends were placed.
func driftPoints(steps []Step, k, n int) (before, after int) {
	st, prev, next := steps[k], 0, n
	if k > 0 {
		prev = steps[k-1].At
	}
	if k+1 < len(steps) {
		next = steps[k+1].From
	}
	switch {
	case st.Moving:
		return max(0, st.From-prev), 1
	case next <= st.At:
		// It runs into the next step (a creep ended by a fix): its new
		// level is the stretch up to that step, as the detector counted.
		return max(0, st.From-prev), st.NAfter
	}
	return max(0, st.From-prev), max(0, next-st.At)
}

// driftConfidence is a drift's confidence: 1 - p of a two-sided
// Mann-Whitney test of the level before it began against the level it
// reached. Before: the (up to 30) points before its start, filled up to
// 30 from the drift's first points (at most a quarter of them) when the
// drift begins near the first commit. Reached: the (up to 30) points
// from its end on, or, for a drift still moving (whose end is the last
// point) or one that runs into the next step (a creep ended by a fix),
// the last (up to 30) points before that end. Tested on one point a
// side, a 30% creep from the first commit or up to the tip printed
// "confidence 0.000".
func driftConfidence(x []float64, from, at int, moving bool) float64 {
	// moving: the level reached is the stretch up to at (at itself when
	// it is the last point).
	const w = 30
	lo := max(0, from-w)
	aEnd := max(from, min(lo+w, from+(at-from)/4))
	a := x[lo:aEnd]
	b := x[at:min(len(x), at+w)]
	switch {
	case moving && at == len(x)-1:
		b = x[max(aEnd, at+1-w) : at+1]
	case moving:
		b = x[max(aEnd, at-w):at]
	}
	r, err := stats.MannWhitneyUTest(a, b, stats.LocationDiffers)
	if err != nil {
		return 0
	}
	return 1 - r.P
}

// bisectCommand is the perfgate bisect command line that narrows a change
// whose range spans unmeasured commits: the series' benchmark, metric,
// labels and testbed, half the threshold as the smallest change that
// counts, and a placeholder for the command that runs the benchmark
// (stored results do not say it). Every value is shell-quoted: the names
// come from stored results.
func bisectCommand(ch Change, pct float64) string {
	args := []string{"perfgate", "bisect", "--good", ch.LastGood, "--bad", ch.FirstBad,
		"--name", shellQuote(ch.Benchmark), "--metric", shellQuote(ch.Metric),
		"--threshold", shellQuote(fmt.Sprintf("%g%%", roundTo(pct/2, 2)))}
	keys := make([]string, 0, len(ch.Labels))
	for k := range ch.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--label", shellQuote(k+"="+ch.Labels[k]))
	}
	if ch.Testbed != "" {
		// bisect reuses only the stored runs of its testbed.
		args = append(args, "--testbed", shellQuote(ch.Testbed))
	}
	args = append(args, "--run", shellQuote("YOUR BENCHMARK COMMAND"))
	return strings.Join(args, " ")
}

func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe
// characters.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:%+,@", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// missing finds the series that reported on each of the last
// MissingAfter measured commits before their last result and on none of
// the measured commits since (at least one).
func (c *collector) missing(sha func(int32) string) []Missing {
	n := c.opts.Config.Watch.MissingAfter
	if n <= 0 {
		n = gate.DefaultMissingAfter
	}
	// rank[i]: how many measured commits come before position i.
	rank := make([]int, c.n+1)
	for i, m := range c.measured {
		rank[i+1] = rank[i]
		if m {
			rank[i+1]++
		}
	}
	total := rank[c.n]
	var out []Missing
	keys := make([]string, 0, len(c.seriesAt))
	for k := range c.seriesAt {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		at := c.seriesAt[k]
		last := at[len(at)-1]
		since := total - rank[last+1]
		if since == 0 || len(at) < n {
			continue
		}
		// The last n reports fall on n consecutive measured commits.
		first := at[len(at)-n]
		if rank[last+1]-rank[first] != n {
			continue
		}
		m := Missing{LastCommit: sha(last), Reported: n, Since: since, seriesKey: k}
		m.Series = c.describe(k)
		out = append(out, m)
	}
	return out
}

// sortedTracks are the tracks by series key and metric.
func (c *collector) sortedTracks() []*track {
	var out []*track
	for _, byName := range c.tracks {
		for _, tr := range byName {
			if tr != nil { // nil: a metric not watched
				out = append(out, tr)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].key != out[j].key {
			return out[i].key < out[j].key
		}
		return out[i].Metric < out[j].Metric
	})
	return out
}

// describe names a series by its key from any of its tracks.
func (c *collector) describe(key string) Series {
	var s Series
	names := []string{}
	for _, tr := range c.tracks[key] {
		if tr == nil {
			continue
		}
		s = tr.Series
		names = append(names, tr.Metric)
	}
	sort.Strings(names)
	s.Metric = strings.Join(names, ",")
	if len(names) == 0 {
		s.Benchmark = strings.SplitN(key, "\x00", 2)[0]
	}
	return s
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}

// Acceptances adapts recorded acceptances (perfgate accept) to Accepted:
// the newest decision at the commit that covers the series' benchmark and
// metric wins.
func Acceptances(a []gate.Acceptance) Accepted {
	if len(a) == 0 {
		return nil
	}
	return acceptances(a)
}

type acceptances []gate.Acceptance

func (a acceptances) Accepted(s Series, commit string) (string, bool) {
	for i := len(a) - 1; i >= 0; i-- {
		x := &a[i]
		if x.Commit == commit && x.Covers(s.Benchmark, s.Metric) {
			return x.Text(), true
		}
	}
	return "", false
}
