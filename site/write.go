package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/metric"
)

// Overview flags.
const (
	flagRegression  = "regression"
	flagImprovement = "improvement"
	flagShift       = "shift" // off the band, for a metric of unknown direction
)

// summary is what one chart shows in the overview.
type summary struct {
	row  []byte // the overview row, JSON
	flag string
	open int // watch's open regressions
}

// write writes the viewer, the data files and the marker.
func write(dir string, m *model, opts Options) (*Summary, error) {
	sum := &Summary{Commits: len(m.commits), Measured: m.measured, Runs: m.runs, Series: len(m.series), Latest: latestDrawn(m)}
	if err := writeAssets(dir, sum); err != nil {
		return nil, err
	}
	rows, err := writeCharts(dir, m, acceptMarks(m.commits, opts.Accepted), opts, sum)
	if err != nil {
		return nil, err
	}
	if err := writeCurves(dir, m.sweeps, sum); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	indexFile(&buf, rows, m, sum.OpenRegressions, opts)
	if err := writeData(filepath.Join(dir, "data", "index.js"), "index", buf.Bytes(), sum); err != nil {
		return nil, err
	}
	buf.Reset()
	commitsFile(&buf, m.commits, opts)
	if err := writeData(filepath.Join(dir, "data", "commits.js"), "commits", buf.Bytes(), sum); err != nil {
		return nil, err
	}
	sum.Files++ // the marker
	marker, _ := json.MarshalIndent(struct {
		Generator string `json:"generator"`
		Ref       string `json:"ref"`
		*Summary
	}{"perfgate site", opts.Ref, sum}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, Marker), append(marker, '\n'), 0o644); err != nil {
		return nil, err
	}
	return sum, nil
}

// latestDrawn is the newest commit with a result on a chart.
func latestDrawn(m *model) *Commit {
	last := int32(-1)
	for _, s := range m.series {
		for _, c := range s.charts {
			if n := len(c.x); n > 0 && c.x[n-1] > last {
				last = c.x[n-1]
			}
		}
	}
	if last < 0 {
		return nil
	}
	c := m.commits[last]
	return &Commit{SHA: c.SHA, Subject: c.Subject, Time: c.Time.UTC()}
}

// writeCurves writes each load curve's file, data/c/ID.js.
func writeCurves(dir string, sweeps []*sweep, sum *Summary) error {
	var buf []byte
	for _, sw := range sweeps {
		buf = dataHead(buf[:0], "c/"+sw.id)
		buf = curveFile(buf, sw)
		buf = append(buf, dataTail...)
		if err := os.MkdirAll(filepath.Join(dir, "data", "c"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "data", "c", sw.id+".js"), buf, 0o644); err != nil {
			return err
		}
		sum.Files++
		sum.Curves++
	}
	return nil
}

// job is one chart to write.
type job struct {
	s    *series
	c    *chart
	file string
}

// writeCharts writes every chart's file, on as many goroutines as there
// are processors, and returns the overview rows in series and metric order.
func writeCharts(dir string, m *model, acc []accMark, opts Options, sum *Summary) ([][]byte, error) {
	var jobs []job
	for _, s := range m.series {
		if err := os.MkdirAll(filepath.Join(dir, "data", "s", s.id), 0o755); err != nil {
			return nil, err
		}
		used := map[string]bool{}
		for _, name := range sortedKeys(s.charts) {
			file := slug(name)
			for n := 2; used[file]; n++ {
				file = fmt.Sprintf("%s-%d", slug(name), n)
			}
			used[file] = true
			jobs = append(jobs, job{s: s, c: s.charts[name], file: file})
		}
	}
	out := make([]summary, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(1, len(jobs))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte // one file at a time, reused
			for i := range next {
				j := jobs[i]
				buf = dataHead(buf[:0], "s/"+j.s.id+"/"+j.file)
				buf, out[i] = chartFile(buf, j.s, j.c, j.file, acc, m.alerts[alertKey{j.s.key, j.c.metric}], opts)
				buf = append(buf, dataTail...)
				errs[i] = os.WriteFile(filepath.Join(dir, "data", "s", j.s.id, j.file+".js"), buf, 0o644)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	rows := make([][]byte, len(jobs))
	for i, cs := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		rows[i] = cs.row
		sum.Files++
		sum.Charts++
		if cs.flag == flagRegression {
			sum.Flagged++
		}
		sum.OpenRegressions += cs.open
	}
	return rows, nil
}

func writeAssets(dir string, sum *Summary) error {
	return fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum.Files++
		return os.WriteFile(filepath.Join(dir, filepath.Base(p)), data, 0o644)
	})
}

// writeData writes a data file: JSON wrapped in a call the viewer defines.
func writeData(file, key string, data []byte, sum *Summary) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b := dataHead(make([]byte, 0, len(data)+len(key)+32), key)
	b = append(append(b, data...), dataTail...)
	sum.Files++
	return os.WriteFile(file, b, 0o644)
}

// dataHead and dataTail wrap a data file's JSON.
func dataHead(b []byte, key string) []byte {
	b = append(b, "perfgateData("...)
	b = append(b, jstr(key)...)
	return append(b, ',')
}

const dataTail = ");\n"

// jstr is a JSON string, safe inside a script (encoding/json escapes <, >,
// & and the line separators JavaScript does not allow in strings).
func jstr(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

func jval(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// num appends a finite float in its shortest form, null otherwise.
func num(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// medians are the per-commit medians of a chart's valid runs.
type medians struct {
	x []int32
	y []float64
	n []int32
}

func medianLine(c *chart) medians {
	commits := 0 // runs are in commit order
	for i := range c.x {
		if i == 0 || c.x[i] != c.x[i-1] {
			commits++
		}
	}
	m := medians{x: make([]int32, 0, commits), y: make([]float64, 0, commits), n: make([]int32, 0, commits)}
	var scratch []float64
	for i := 0; i < len(c.x); {
		j := i
		scratch = scratch[:0]
		for ; j < len(c.x) && c.x[j] == c.x[i]; j++ {
			if c.f[j] == flagValid {
				scratch = append(scratch, c.y[j])
			}
		}
		if len(scratch) > 0 {
			slices.Sort(scratch)
			k := len(scratch)
			med := scratch[k/2]
			if k%2 == 0 {
				med = (scratch[k/2-1] + scratch[k/2]) / 2
			}
			m.x = append(m.x, c.x[i])
			m.y = append(m.y, med)
			m.n = append(m.n, int32(k))
		}
		i = j
	}
	return m
}

// band is the noise band drawn on a chart: gate.NoiseBand of the medians
// before the latest one, over the commits of its last segment.
type band struct {
	from, to      int32
	ref, lo, hi   float64
	ok            bool
	latestOutside int // -1 below, +1 above, 0 inside
}

func latestBand(m medians, window int, cut int32) band {
	n := len(m.y)
	if n < gate.MinBandWindow+1 {
		return band{}
	}
	start := max(0, n-1-window)
	for start < n && m.x[start] < cut {
		start++ // the window starts at the newest accepted change
	}
	if n-1-start < gate.MinBandWindow {
		return band{}
	}
	b, ok := gate.NoiseBand(m.y[start : n-1])
	if !ok {
		return band{}
	}
	out := band{from: m.x[start+b.Start], to: m.x[n-1], ref: b.Ref, lo: b.Lo, hi: b.Hi, ok: true}
	switch v := m.y[n-1]; {
	case v > b.Hi:
		out.latestOutside = 1
	case v < b.Lo:
		out.latestOutside = -1
	}
	return out
}

// changePoints runs the gate's change-point search on windows of
// 2×window medians that overlap by a quarter, and returns the commit
// indexes where a new level starts.
func changePoints(m medians, window int) []int32 {
	var out []int32
	seen := map[int32]bool{}
	w, step := 2*window, 3*window/2
	for a := 0; a < len(m.y); a += step {
		b := min(a+w, len(m.y))
		if b-a < 2*gate.MinBandWindow {
			if a > 0 {
				break
			}
		}
		for _, i := range gate.ChangePoints(m.y[a:b]) {
			x := m.x[a+i]
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
		if b == len(m.y) {
			break
		}
	}
	slices.Sort(out)
	return out
}

func flagOf(bd band, dir metric.Direction) string {
	switch {
	case !bd.ok || bd.latestOutside == 0:
		return ""
	case dir == metric.LowerIsBetter && bd.latestOutside > 0, dir == metric.HigherIsBetter && bd.latestOutside < 0:
		return flagRegression
	case dir == metric.LowerIsBetter, dir == metric.HigherIsBetter:
		return flagImprovement
	}
	return flagShift
}

func change(now, then float64) float64 {
	if then == 0 {
		return math.NaN()
	}
	return 100 * (now/then - 1)
}

// chartFile appends one chart's data to buf and returns its overview row.
func chartFile(buf []byte, s *series, c *chart, file string, acc []accMark, open []openAlert, opts Options) ([]byte, summary) {
	info := metric.Get(c.metric)
	med := medianLine(c)
	marks, cut := chartMarks(acc, s.bench, c.metric)
	bd := latestBand(med, opts.Window, cut)
	cps := outsideDrifts(changePoints(med, opts.Window), open)
	flag := flagOf(bd, info.Direction)
	if len(open) > 0 {
		flag = flagRegression // watch's open regression, whatever the band says
	}

	buf = slices.Grow(buf, 64+len(c.y)*24)
	buf = append(buf, `{"series":`...)
	buf = append(buf, jstr(s.id)...)
	buf = append(buf, `,"file":`...)
	buf = append(buf, jstr(file)...)
	buf = append(buf, `,"bench":`...)
	buf = append(buf, jstr(s.bench)...)
	buf = append(buf, `,"labels":`...)
	buf = append(buf, jval(nonNil(s.labels))...)
	buf = append(buf, `,"metric":`...)
	buf = append(buf, jstr(c.metric)...)
	buf = append(buf, `,"label":`...)
	buf = append(buf, jstr(info.Label)...)
	buf = append(buf, `,"unit":`...)
	buf = append(buf, jstr(info.Unit)...)
	buf = append(buf, `,"dir":`...)
	buf = append(buf, jstr(info.Direction.String())...)
	buf = append(buf, `,"flag":`...)
	buf = append(buf, jstr(flag)...)
	buf = append(buf, `,"watch":`...)
	buf = alertsJSON(buf, open)
	buf = append(buf, "\n,\"runs\":{\"x\":"...)
	buf = ints(buf, c.x)
	buf = append(buf, ",\"y\":"...)
	buf = floats(buf, c.y)
	buf = append(buf, ",\"f\":["...)
	for i, f := range c.f {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '0'+f)
	}
	buf = append(buf, "],\"why\":{"...)
	for i, k := range sortedInts(c.why) {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = strconv.AppendInt(buf, int64(k), 10)
		buf = append(buf, `":`...)
		buf = append(buf, jstr(c.why[k])...)
	}
	buf = append(buf, "}}\n,\"med\":{\"x\":"...)
	buf = ints(buf, med.x)
	buf = append(buf, ",\"y\":"...)
	buf = floats(buf, med.y)
	buf = append(buf, ",\"n\":"...)
	buf = ints(buf, med.n)
	buf = append(buf, "}\n,\"band\":"...)
	buf = bandJSON(buf, bd)
	buf = append(buf, ",\"cps\":"...)
	buf = ints(buf, cps)
	buf = append(buf, ",\"acc\":["...)
	for i, a := range marks {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"x":`...)
		buf = strconv.AppendInt(buf, int64(a.x), 10)
		buf = append(buf, `,"text":`...)
		buf = append(buf, jstr(a.text)...)
		buf = append(buf, '}')
	}
	buf = append(buf, "]}"...)
	return buf, summary{row: overviewRow(s, c, file, info, med, flag, open, opts), flag: flag, open: len(open)}
}

func bandJSON(buf []byte, bd band) []byte {
	if !bd.ok {
		return append(buf, "null"...)
	}
	buf = append(buf, `{"from":`...)
	buf = strconv.AppendInt(buf, int64(bd.from), 10)
	buf = append(buf, `,"to":`...)
	buf = strconv.AppendInt(buf, int64(bd.to), 10)
	buf = append(buf, `,"ref":`...)
	buf = num(buf, bd.ref)
	buf = append(buf, `,"lo":`...)
	buf = num(buf, bd.lo)
	buf = append(buf, `,"hi":`...)
	buf = num(buf, bd.hi)
	return append(buf, '}')
}

// overviewRow is one row of the overview: latest median, its changes and
// a sparkline of the last medians.
func overviewRow(s *series, c *chart, file string, info metric.Info, med medians, flag string, open []openAlert, opts Options) []byte {
	buf := make([]byte, 0, 512)
	buf = append(buf, `{"s":`...)
	buf = append(buf, jstr(s.id)...)
	buf = append(buf, `,"file":`...)
	buf = append(buf, jstr(file)...)
	buf = append(buf, `,"b":`...)
	buf = append(buf, jstr(s.bench)...)
	buf = append(buf, `,"l":`...)
	buf = append(buf, jval(nonNil(s.labels))...)
	buf = append(buf, `,"m":`...)
	buf = append(buf, jstr(c.metric)...)
	buf = append(buf, `,"ml":`...)
	buf = append(buf, jstr(info.Label)...)
	buf = append(buf, `,"u":`...)
	buf = append(buf, jstr(info.Unit)...)
	buf = append(buf, `,"d":`...)
	buf = append(buf, jstr(info.Direction.String())...)
	buf = append(buf, `,"flag":`...)
	buf = append(buf, jstr(flag)...)
	if len(open) > 0 {
		buf = append(buf, `,"w":`...)
		buf = alertsJSON(buf, open)
	}
	n := len(med.y)
	latest, prev, ago := math.NaN(), math.NaN(), math.NaN()
	at := int32(-1)
	if n > 0 {
		latest, at = med.y[n-1], med.x[n-1]
	}
	if n > 1 {
		prev = change(latest, med.y[n-2])
	}
	if n > opts.Ago {
		ago = change(latest, med.y[n-1-opts.Ago])
	}
	buf = append(buf, `,"at":`...)
	buf = strconv.AppendInt(buf, int64(at), 10)
	buf = append(buf, `,"v":`...)
	buf = num(buf, latest)
	buf = append(buf, `,"c1":`...)
	buf = num(buf, prev)
	buf = append(buf, `,"cn":`...)
	buf = num(buf, ago)
	buf = append(buf, `,"runs":`...)
	buf = strconv.AppendInt(buf, int64(len(c.y)), 10)
	buf = append(buf, `,"sp":`...)
	buf = floats(buf, med.y[max(0, n-DefaultSpark):])
	return append(buf, '}')
}

// indexFile is the overview's data.
func indexFile(b *bytes.Buffer, rows [][]byte, m *model, open int, opts Options) {
	b.WriteString(`{"title":`)
	b.Write(jstr(opts.Title))
	b.WriteString(`,"ref":`)
	b.Write(jstr(opts.Ref))
	b.WriteString(`,"forge":`)
	b.Write(jval(opts.Forge))
	fmt.Fprintf(b, `,"ago":%d,"window":%d,"commits":%d,"series":%d,"open":%d`, opts.Ago, opts.Window, len(m.commits), len(m.series), open)
	if opts.Order != OrderBranch {
		b.WriteString(`,"order":`)
		b.Write(jstr(opts.Order))
	}
	if opts.Up != "" {
		b.WriteString(`,"up":`)
		b.Write(jstr(opts.Up))
	}
	if n := len(m.commits); n > 0 {
		b.WriteString(`,"head":`)
		b.Write(jstr(m.commits[n-1].SHA))
	}
	if len(m.sweeps) > 0 {
		b.WriteString(",\"curves\":[")
		for i, sw := range m.sweeps {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("\n")
			b.Write(curveRow(sw))
		}
		b.WriteString("]")
	}
	b.WriteString(",\"rows\":[")
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n")
		b.Write(r)
	}
	b.WriteString("\n]}")
}

// commitsFile lists the walked commits, oldest first: what a chart's x
// indexes point at.
func commitsFile(b *bytes.Buffer, cs []gate.Commit, opts Options) {
	buf := make([]byte, 0, 64+len(cs)*100)
	buf = append(buf, `{"title":`...)
	buf = append(buf, jstr(opts.Title)...)
	buf = append(buf, `,"ref":`...)
	buf = append(buf, jstr(opts.Ref)...)
	buf = append(buf, `,"forge":`...)
	buf = append(buf, jval(opts.Forge)...)
	if opts.Order != OrderBranch {
		buf = append(buf, `,"order":`...)
		buf = append(buf, jstr(opts.Order)...)
	}
	if opts.Up != "" {
		buf = append(buf, `,"up":`...)
		buf = append(buf, jstr(opts.Up)...)
	}
	buf = append(buf, "\n,\"sha\":["...)
	for i, c := range cs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, '"')
		buf = append(buf, c.SHA...) // hex: needs no escaping
		buf = append(buf, '"')
	}
	buf = append(buf, "]\n,\"subject\":["...)
	for i, c := range cs {
		if i > 0 {
			buf = append(buf, ",\n"...)
		}
		buf = append(buf, jstr(c.Subject)...)
	}
	buf = append(buf, "]\n,\"time\":["...)
	for i, c := range cs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, c.Time.Unix(), 10)
	}
	buf = append(buf, "]}"...)
	b.Write(buf)
}

func ints[T int32 | int](buf []byte, xs []T) []byte {
	buf = append(buf, '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, int64(x), 10)
	}
	return append(buf, ']')
}

func floats(buf []byte, xs []float64) []byte {
	buf = append(buf, '[')
	for i, x := range xs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = num(buf, x)
	}
	return append(buf, ']')
}

func sortedInts(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// accMark is an acceptance at a walked commit.
type accMark struct {
	x    int32 // commit index
	acc  *gate.Acceptance
	text string
}

// acceptMarks places the acceptances on the walked commits, oldest first;
// one at a commit off the walked history is not drawn.
func acceptMarks(commits []gate.Commit, accepted []gate.Acceptance) []accMark {
	if len(accepted) == 0 {
		return nil
	}
	at := make(map[string]int32, len(commits))
	for i, c := range commits {
		at[c.SHA] = int32(i)
	}
	var out []accMark
	for i := range accepted {
		a := &accepted[i]
		if x, ok := at[a.Commit]; ok {
			out = append(out, accMark{x: x, acc: a, text: a.Text()})
		}
	}
	slices.SortStableFunc(out, func(a, b accMark) int { return int(a.x - b.x) })
	return out
}

// chartMarks returns the acceptances that cover a chart and the commit
// index of the newest (-1 when none).
func chartMarks(acc []accMark, bench, metricName string) ([]accMark, int32) {
	var out []accMark
	cut := int32(-1)
	for _, a := range acc {
		if a.acc.Covers(bench, metricName) {
			out = append(out, a)
			cut = a.x
		}
	}
	return out, cut
}
