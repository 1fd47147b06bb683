package ingest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Serving teams keep their load curves as markdown tables typed by hand,
// one row per load point, often several tables per page, in English or
// Chinese:
//
//	| 并发数 | 平均TTFT(ms) | P99 TTFT(ms) | 平均TPOT(ms) | 输出吞吐(tok/s) | 成功/总数 |
//	|---|---|---|---|---|---|
//	| 1  | 120.5 | 150.2 | 20.1 | 49.5  | 100/100 |
//	| 16 | 310.2 | 480.9 | 31.7 | 498.0 | 100/100 |
//
// Format "load-table": every row of a pipe table (with its |---| rule)
// whose header names at least one known serving metric is one result.
// Headers are read by their words, not by an exact spelling:
//   - latencies: a kind (TTFT, "time to first token", 首token/首字/首包;
//     TPOT, "time per output token", 非首token/每token; ITL, "inter-token";
//     E2E, E2EL, "end-to-end", latency, 端到端, 时延, 延迟) and a statistic
//     (mean, avg, average, 平均, 均值; median, 中位; P50 ... P99.9, "99分位";
//     min, 最小; max, 最大; none is the mean), in the header's unit (ms,
//     毫秒; s, 秒, converted to ms; μs/us);
//   - throughputs: request throughput (req/s, 请求吞吐, achieved QPS),
//     output token throughput (output/输出 or a bare tok/s 吞吐), total
//     (total/总), input (input/输入), goodput;
//   - counts: "Success / total" and 成功/总数 cells ("98/100") give
//     completed and failed; success, completed, 成功数 give completed;
//     failed, 失败 give failed;
//   - load columns are labels: concurrency, max concurrency, 并发(数) ->
//     max_concurrency; request rate, rate, QPS, RPS, 请求速率 ->
//     request_rate; batch size, bs -> batch_size; input/output length,
//     输入/输出长度 -> input_len, output_len;
//   - other text columns are labels under their sanitized header (model,
//     模型 -> model; 配置/方案 -> config); a column numbering repetitions
//     (run, #, 次数, 轮次, 序号) is no label, so its rows are repetitions of
//     one series; any other column (a change against another row, "提升",
//     "vs baseline") is left out with one warning per table.
//
// A table whose header names no known metric is not results; when a page
// yields no result at all, the refusal names the tables' headers. A row
// with another number of cells than its header, or a metric cell that is
// not a number, is an error naming the line. A row that repeats an earlier
// row of the page exactly (the comparison table beside the curves) is not
// stored twice; the table's first result says how many were skipped.
//
// Tables typed by hand often repeat the numbers of the tool output pasted
// on the same page, so they are read only from a page where no other
// format found a result: the parser holds its results and gives them at
// the end of the input, and only when nothing else was found. Labels do
// not come from headings: several tables of one page with the same load
// points are repetitions of one series unless --section-label stores each
// table's heading as a label (see Sections).

func init() {
	RegisterText(TextFormat{
		Name: LoadTableFormat,
		Desc: "load-curve markdown table typed by hand (| concurrency | mean TTFT (ms) | ... |, English or Chinese)",
		New:  func(file string) LineParser { return &loadTableParser{file: file} },
	})
}

// LoadTableFormat is the name of the hand-typed load-curve table format.
const LoadTableFormat = "load-table"

// ltColumn is what one header cell of a load table holds.
type ltColumn struct {
	header string
	metric string  // canonical metric, or "" for a label or a skipped column
	scale  float64 // multiplies the cell (s -> ms)
	label  string  // label key, or ""
	ratio  bool    // a "success / total" cell
	skip   bool    // a repetition index, or an unknown column
}

type loadTableParser struct {
	file     string
	cols     []ltColumn
	header   []string
	headerAt int
	rule     bool // the |---| row was read
	pending  []string
	pendAt   int
	unknown  []string // columns of the current table left out
	skipped  int      // rows of the current table that repeated earlier rows
	first    int      // index in held of the current table's first result
	held     []Result
	seen     map[string]bool
	refused  []string // headers of tables with no known metric
	fallback bool     // results are held for the end (auto mode)
	err      error    // the first damaged row, held in auto mode
}

// holdsForFallback marks the parser as auto mode's: see loadTableFallback.
func (p *loadTableParser) holdsForFallback() { p.fallback = true }

func (p *loadTableParser) Line(n int, line string, emit Emit) error {
	if strings.IndexByte(line, '|') < 0 {
		p.endTable()
		return nil
	}
	s := strings.TrimRight(vtTrim(line), " \t")
	if p.cols == nil {
		return p.headerLine(n, s)
	}
	if !p.rule {
		if gridMarkdownRule(s) {
			p.rule = true
			return nil
		}
		p.cols = nil
		return p.headerLine(n, s)
	}
	if !strings.HasPrefix(s, "|") {
		p.endTable()
		return nil
	}
	err := p.row(n, s, emit)
	if err != nil && p.fallback {
		// Beside a tool's output a damaged typed table is no error: it
		// is said only when the page has no other result.
		if p.err == nil {
			p.err = err
		}
		return nil
	}
	return err
}

// headerLine notes a row that may be a table's header: the next line
// decides (its |---| rule).
func (p *loadTableParser) headerLine(n int, s string) error {
	p.endTable()
	cells, ok := vtRow(s)
	if !ok || len(cells) < 2 {
		return nil
	}
	if strings.EqualFold(cells[0], "test name") {
		return nil // vllm-table's
	}
	cols, known := ltColumns(cells)
	if !known {
		if ltHasLoad(cols) {
			p.pending, p.pendAt = cells, n
		}
		return nil
	}
	p.cols, p.header, p.headerAt, p.rule = cols, cells, n, false
	p.unknown = p.unknown[:0]
	for _, c := range cols {
		if c.skip && c.label == "" && !ltRepetition(c.header) {
			p.unknown = append(p.unknown, Quote(c.header))
		}
	}
	p.skipped, p.first = 0, len(p.held)
	return nil
}

// endTable closes the current table: a candidate header with no known
// metric that had its rule is remembered for the refusal message.
func (p *loadTableParser) endTable() {
	if p.cols != nil && p.rule && p.skipped > 0 && p.first < len(p.held) {
		p.held[p.first].Warnings = append(p.held[p.first].Warnings, fmt.Sprintf("%d row(s) of the table at line %d repeat rows stored before (a comparison table); not stored twice", p.skipped, p.headerAt))
	}
	if p.pending != nil {
		p.refused = append(p.refused, fmt.Sprintf("line %d: %s", p.pendAt, quoteCells(p.pending)))
		p.pending = nil
	}
	p.cols = nil
}

func quoteCells(cells []string) string {
	q := make([]string, len(cells))
	for i, c := range cells {
		q[i] = Quote(c)
	}
	return strings.Join(q, ", ")
}

func (p *loadTableParser) row(n int, s string, emit Emit) error {
	cells, ok := vtRow(s)
	if !ok {
		p.cols = nil
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("load table row is cut off (no closing \"|\"): %s; copy the complete table", Quote(s))}
	}
	if len(cells) != len(p.cols) {
		want := len(p.cols)
		p.cols = nil
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("load table row has %d cells but its header (line %d) has %d: %s; fix the row so each column has a cell (write - for none)", len(cells), p.headerAt, want, Quote(s))}
	}
	res := NewResult(LoadTableFormat, n)
	for i, c := range cells {
		if err := p.cell(&res, p.cols[i], c, n); err != nil {
			p.cols = nil
			return err
		}
	}
	if len(res.Metrics) == 0 {
		return nil // a row of dashes or an empty row
	}
	if len(p.unknown) > 0 && len(p.held) == p.first {
		res.Warnings = append(res.Warnings, fmt.Sprintf("columns %s of the table at line %d are not metrics perfgate knows; left out", strings.Join(p.unknown, ", "), p.headerAt))
	}
	key := ltRowKey(res)
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if p.seen[key] {
		p.skipped++
		return nil
	}
	p.seen[key] = true
	if !p.fallback {
		emit(res)
		return nil
	}
	p.held = append(p.held, res)
	return nil
}

// cell reads one cell into res.
func (p *loadTableParser) cell(res *Result, c ltColumn, cell string, n int) error {
	if c.skip || IsAbsent(cell) {
		return nil
	}
	if c.label != "" {
		v := strings.TrimSpace(cell)
		if f, err := strconv.ParseFloat(strings.ReplaceAll(v, ",", ""), 64); err == nil {
			v = strconv.FormatFloat(f, 'g', -1, 64)
		}
		res.SetLabel(c.label, v)
		return nil
	}
	if c.ratio {
		ok, total, good := ltRatio(cell)
		if !good {
			return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("load table column %s: %s is not \"succeeded/total\"; fix the cell or write -", Quote(c.header), Quote(cell))}
		}
		res.Set("completed", ok)
		res.Set("failed", total-ok)
		return nil
	}
	v, _, present, good := gridCell(strings.ReplaceAll(cell, ",", ""))
	if !present {
		return nil
	}
	if !good {
		return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("load table column %s: %s is not a number; fix the cell or write - for none", Quote(c.header), Quote(cell))}
	}
	res.Set(c.metric, v*c.scale)
	return nil
}

func (p *loadTableParser) End(n int, emit Emit) error {
	p.endTable()
	return nil
}

// flush gives the held results (auto mode, when no other format found
// any), or the first damaged row's error.
func (p *loadTableParser) flush(emit Emit) error {
	if p.err != nil {
		return p.err
	}
	for _, r := range p.held {
		emit(r)
	}
	p.held = nil
	return nil
}

// refusal says which tables were seen but not read, for the message of a
// page with no result ("" when none).
func (p *loadTableParser) refusal() string {
	if len(p.refused) == 0 {
		return ""
	}
	return fmt.Sprintf("; the markdown table(s) at %s name no metric perfgate knows (TTFT, TPOT, ITL, E2E latency, throughput, success/total: see perfgate help formats), so they were not read as results", strings.Join(p.refused, "; "))
}

// ltRowKey identifies a row's content, for rows a page repeats.
func ltRowKey(r Result) string {
	keys := make([]string, 0, len(r.Labels)+len(r.Metrics))
	for k, v := range r.Labels {
		keys = append(keys, "l:"+k+"="+v)
	}
	for k, v := range r.Metrics {
		keys = append(keys, "m:"+k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	sort.Strings(keys)
	return strings.Join(keys, "\x00")
}

// ltRatio reads "98/100", "98 / 100", "98 of 100".
func ltRatio(cell string) (ok, total float64, good bool) {
	s := strings.ReplaceAll(strings.TrimSpace(cell), ",", "")
	a, b, found := strings.Cut(s, "/")
	if !found {
		a, b, found = strings.Cut(s, " of ")
	}
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
	y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
	if err1 != nil || err2 != nil || x < 0 || y < x {
		return 0, 0, false
	}
	return x, y, true
}

// ltColumns classifies a header row; known reports whether it names at
// least one metric.
func ltColumns(cells []string) ([]ltColumn, bool) {
	cols := make([]ltColumn, len(cells))
	known := false
	used := map[string]bool{}
	for i, h := range cells {
		c := ltClassify(h)
		if c.metric != "" {
			if used[c.metric] {
				c = ltColumn{header: h, skip: true} // a second column of one metric: ambiguous
			} else {
				used[c.metric] = true
				known = true
			}
		}
		if c.ratio {
			known = true
		}
		cols[i] = c
	}
	return cols, known
}

func ltHasLoad(cols []ltColumn) bool {
	for _, c := range cols {
		if c.label == "max_concurrency" || c.label == "request_rate" {
			return true
		}
	}
	return false
}

var (
	ltPercentileRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?:^|[^a-z0-9])p(\d{2}(?:\.\d+)?)(?:$|[^0-9])|(\d{2}(?:\.\d+)?)\s*(?:分位|th\b|%\s*ile|percentile)`)
	})
	ltUnitRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`[(（\[]\s*([^()（）\[\]]*?)\s*[)）\]]`)
	})
)

// ltClassify reads one header cell.
func ltClassify(h string) ltColumn {
	c := ltColumn{header: h, scale: 1}
	low := strings.ToLower(strings.TrimSpace(h))
	unit := ""
	if m := ltUnitRE().FindStringSubmatch(low); m != nil {
		unit = strings.ReplaceAll(m[1], " ", "")
	}
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(low, w) {
				return true
			}
		}
		return false
	}
	word := func(words ...string) bool { // whole ASCII words
		for _, w := range words {
			if ltWord(low, w) {
				return true
			}
		}
		return false
	}
	switch {
	case ltRepetition(low):
		c.skip = true
		return c
	case has("成功率", "success rate", "success ratio", "失败率", "error rate", "failure rate"):
		return ltSkip(c) // a percentage, not a count
	case has("success", "成功", "succeeded") && has("/", "total", "总"):
		c.ratio = true
		return c
	case has("并发", "concurrency", "concurrent") || word("bs_concurrency"):
		c.label = "max_concurrency"
		return c
	case has("请求速率", "请求率", "发送速率", "request rate", "req rate", "arrival rate") || word("rate", "qps", "rps") && !has("achieved", "实际", "吞吐", "throughput"):
		c.label = "request_rate"
		return c
	case has("batch size", "batch_size", "批大小") || word("bs", "batch"):
		c.label = "batch_size"
		return c
	case has("输入长度", "input len", "input_len", "input length", "isl", "prompt len"):
		c.label = "input_len"
		return c
	case has("输出长度", "output len", "output_len", "output length", "osl", "max tokens"):
		c.label = "output_len"
		return c
	case has("模型") || word("model"):
		c.label = "model"
		return c
	case has("配置", "方案") || word("config", "configuration", "setting"):
		c.label = "config"
		return c
	case has("goodput"):
		c.metric = "request_goodput"
		return c
	case has("失败") || word("failed", "failures", "errors"):
		c.metric = "failed"
		return c
	case has("成功数", "成功请求") || word("success", "completed", "succeeded", "successful"):
		c.metric = "completed"
		return c
	}
	if kind := ltLatencyKind(low, word, has); kind != "" {
		stat := ltStat(low, word, has)
		if stat == "" {
			return ltSkip(c)
		}
		switch unit {
		case "ms", "毫秒", "":
		case "s", "秒", "sec":
			c.scale = 1000
		case "us", "μs", "µs", "微秒":
			c.scale = 0.001
		default:
			return ltSkip(c)
		}
		c.metric = stat + "_" + kind + "_ms"
		return c
	}
	if has("吞吐", "throughput", "tput", "tok/s", "token/s", "tokens/s", "tps") || word("qps") {
		switch {
		case has("req/s", "请求", "request") || word("qps", "rps"):
			c.metric = "request_throughput"
		case has("总", "total"):
			c.metric = "total_token_throughput"
		case has("输入", "input", "prefill"):
			c.metric = "input_throughput"
		default:
			c.metric = "output_throughput"
		}
		if has("per user", "每用户", "单用户", "per_user", "/user") {
			return ltSkip(c)
		}
		return c
	}
	if has("%", "提升", "变化", "对比", "change", "diff", "vs", "gain", "speedup", "加速") {
		return ltSkip(c)
	}
	return ltColumn{header: h, skip: true, label: ""}
}

func ltSkip(c ltColumn) ltColumn {
	return ltColumn{header: c.header, skip: true}
}

// ltRepetition reports a column that numbers repetitions.
func ltRepetition(low string) bool {
	switch strings.TrimSpace(strings.ToLower(low)) {
	case "#", "no.", "no", "run", "runs", "run #", "run#", "round", "trial", "iteration", "次数", "轮次", "序号", "第几次", "测试次数", "编号":
		return true
	}
	return false
}

// ltLatencyKind finds the latency a header names.
func ltLatencyKind(low string, word, has func(...string) bool) string {
	switch {
	case has("tpot", "time per output token", "非首token", "非首 token", "非首字", "每token", "每 token", "per output token", "decode时延", "解码时延"):
		return "tpot" // before TTFT: 非首token holds 首token
	case has("ttft", "first token", "首token", "首 token", "首字", "首包", "首词", "首个token"):
		return "ttft"
	case has("itl", "inter-token", "inter token", "token间"):
		return "itl"
	case has("e2el", "e2e", "end-to-end", "end to end", "端到端", "latency", "时延", "延迟", "响应时间"):
		return "e2el"
	}
	return ""
}

// ltStat finds the statistic a latency header names; the mean when it
// names none.
func ltStat(low string, word, has func(...string) bool) string {
	if m := ltPercentileRE().FindStringSubmatch(low); m != nil {
		p := m[1]
		if p == "" {
			p = m[2]
		}
		if p == "50" {
			return "median"
		}
		switch p {
		case "75", "90", "95", "99", "99.9":
			return "p" + p
		}
		return ""
	}
	switch {
	case has("median", "中位"):
		return "median"
	case has("最大") || word("max", "maximum"):
		return "max"
	case has("最小") || word("min", "minimum"):
		return "min"
	case has("std", "标准差"):
		return "std"
	}
	return "mean"
}

// ltWord reports whether w occurs in s as a whole ASCII word.
func ltWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !ltAlnum(s[j-1])
		after := j+len(w) == len(s) || !ltAlnum(s[j+len(w)])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func ltAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_'
}
