package ingest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/metric"
)

// vLLM `vllm bench serve` (and benchmarks/benchmark_serving.py before it)
// and SGLang `python -m sglang.bench_serving` print one result block per
// run, in every version since early 2024:
//
//	============ Serving Benchmark Result ============
//	Backend:                                 sglang        (SGLang only)
//	Successful requests:                     500
//	Failed requests:                         0             (vLLM >= 0.11)
//	Maximum request concurrency:             16            (vLLM, when set)
//	Benchmark duration (s):                  206.06
//	...
//	Total token throughput (tok/s):          460.70
//	---------------Time to First Token----------------
//	Mean TTFT (ms):                          945.18
//	Median TTFT (ms):                        570.38
//	P99 TTFT (ms):                           5986.31
//	...
//	==================================================
//
// Formats "vllm" and "sglang" are these blocks; which one a block is
// follows from its content: a block with a "Backend:" line, SGLang's
// in-block "Traffic request rate:" or "Max request concurrency:", the
// "(retokenized)" token count, "Total throughput (tok/s)", "Concurrency:",
// "Accept length:", or "E2E Latency" statistics is SGLang's; any other is
// vLLM's (SGLang benchmarking a vLLM server prints "Backend: vllm": that
// block is format sglang, label backend=vllm).
//
// One parser, vsParser, reads these blocks and the line-oriented vLLM
// outputs of vllmbench.go (formats "vllm-throughput", "vllm-latency" and
// the 2023 serving output). In auto mode a single instance emits all four
// formats (TextFormat.Auto and Covers), so every line of a log is scanned
// once, however many of these formats it mixes; a forced format gets an
// instance that emits only that format. The auto instance also reads the
// markdown results tables of vllmtable.go (format "vllm-table"), and
// drops their rows when the input held result blocks before the table:
// benchmark scripts print the blocks of their runs, then a table of the
// same runs, and each run must be one result.
//
// Mapping (DESIGN.md "Metric vocabulary"): Successful requests ->
// completed, Failed requests -> failed, Benchmark duration (s) -> duration
// (seconds), Total input tokens -> total_input_tokens, Total generated
// tokens -> total_output_tokens, Request throughput -> request_throughput,
// Request goodput -> request_goodput, Input token throughput ->
// input_throughput, Output token throughput -> output_throughput, Total
// token throughput (any capitalisation) and SGLang's Total throughput ->
// total_token_throughput, Peak output token throughput ->
// max_output_tokens_per_s, Peak concurrent requests ->
// max_concurrent_requests. "<Stat> <Kind> (<unit>)" lines, Stat one of
// Mean, Median, Std, Min, Max, Avg or P<n> (P99.9 -> p99.9), Kind one of
// TTFT, TPOT, ITL, E2EL, SGLang's "E2E Latency" and the bare "Latency"
// of the Latency section GPUStack's benchmark report and some forks print
// ("Mean Latency(s)", unit without a space), give {stat}_{kind}_ms in
// milliseconds whatever the unit (s, ms, us, μs): Latency is *_e2el_ms.
// Other lines keep the names of vLLM's and SGLang's JSON results:
//   - Total generated tokens (retokenized) -> total_output_tokens_retokenized,
//     Total input text/vision tokens -> total_input_{text,vision}_tokens,
//     Concurrency -> concurrency, Accept length ->
//     spec_decode_acceptance_length (metric.Canonical),
//     RTFx -> rtfx, Input throughput (inputs/s) -> input_sequence_throughput;
//   - the Speculative Decoding section: Acceptance rate (%) ->
//     spec_decode_acceptance_rate (in percent), Acceptance length ->
//     spec_decode_acceptance_length, Drafts -> spec_decode_num_drafts,
//     Draft tokens -> spec_decode_draft_tokens, Accepted tokens ->
//     spec_decode_accepted_tokens, "Position <i>" under "Per-position
//     acceptance (%)" -> spec_decode_acceptance_rate_pos<i> (percent);
//   - the Diffusion Decoding section -> diffusion_committed_throughput,
//     diffusion_steps_per_canvas, diffusion_committed_per_step,
//     diffusion_committed_tokens, diffusion_denoising_steps,
//     diffusion_canvas_positions;
//   - Probe Requests: probe_completed, probe_failed, probe_{stat}_e2el_ms;
//     Client Queue Time -> {stat}_client_queue_time_ms, E2EL incl. Client
//     Queue -> {stat}_e2el_including_client_queue_ms;
//   - any other "Label: number" line under its sanitized name (a section's
//     other statistics with a time unit as {stat}_{kind}_ms).
//
// Labels: Backend -> backend, Request rate configured (RPS) and Traffic
// request rate -> request_rate, Maximum/Max request concurrency ->
// max_concurrency, Burstiness factor -> burstiness, Architecture ->
// architecture. The lines since the previous result (a Namespace(...)
// dump, the benchmark's command line, vLLM's "Traffic request rate:" and
// "Maximum request concurrency:" lines) add backend, model, dataset,
// num_prompts, request_rate, max_concurrency, burstiness, input_len,
// output_len, batch_size, tp (see benchContext); the block's own lines
// win. A result is named "<model>/<dataset>" from its labels, or after
// its format.
//
// Absent values (N/A, None, -, /, not set) are left out; odd but real
// values (ITL 0.00, TPOT -0.00, stored as 0, a peak below the mean) are
// kept. A value after which a note follows ("945.18  <- was 1020") is
// read, the note ignored.
//
// Lines are read whatever surrounds them: log prefixes ("INFO 09-02
// 13:08:10 [x.py:1] ", "(APIServer pid=158) "), "# " comments, markdown
// quotes, indentation and right padding, ANSI codes, tqdm bars joined by
// carriage returns. Blocks whose line breaks were lost (a web page copied
// as one line) are read item by item, and one line may hold several
// blocks. Lines of other output inside a block (interleaved server logs)
// are skipped; after one, only known lines are read.
//
// A block ends at its closing "=====" line. A block that ends otherwise —
// at the end of the input, at the next banner, or after vsMaxJunk lines
// of other output — is kept, with a warning, when it is complete: it has
// Successful requests, a throughput, the section printed last by default
// (Inter-token Latency; for vLLM also End-to-end Latency, which follows
// it when selected and is the only one of embedding runs), and its last
// latency section has as many statistics as the first (both tools print
// the same statistics in every section but SGLang's shorter E2E section).
// Otherwise it was cut off, and that is an error naming the line, not a
// partial result. (Optional sections after those — speculative decoding,
// client queueing — cannot be told missing.) A banner followed by no
// block line at all that ends before the input does (a document quoting
// the banner) is no block and is ignored.
//
// SGLang's diffusion/multimodal benchmark (python -m
// sglang.multimodal_gen.benchmarks.bench_serving, 2025+) prints the same
// banner over a shorter block: Task, Model, Dataset (labels task, model,
// dataset), Request rate (request_rate), "Successful requests: 14/20"
// (completed 14, failed 6), Request throughput, "Latency Mean/Median/P99
// (s)" (mean/median/p99_e2el_ms, in ms) and Peak Memory Max/Mean/Median
// (MB) (peak_memory_{stat}_mb); it is format "sglang", complete when it
// has Successful requests, the request throughput and Latency Mean and
// P99.
//
// The original 2023 benchmark_serving.py printed no banner:
//
//	Total time: 166.88 s
//	Throughput: 5.99 requests/s
//	Average latency: 67.59 s
//	Average latency per token: 0.21 s
//	Average latency per output token: 1.10 s
//
// It is format "vllm" too: duration, request_throughput, mean_e2el_ms, and
// mean_latency_per_token_ms and mean_latency_per_output_token_ms (request
// latency divided by all or by generated tokens), all converted to ms. It
// is a result when it has its throughput and average latency lines.
func init() {
	all := vsVLLM | vsSGLang | vsThroughput | vsLatency
	RegisterText(TextFormat{
		Name: "vllm",
		Desc: "vLLM bench serve / benchmark_serving.py console result blocks (every version since 2023)",
		New:  func(file string) LineParser { return newVSParser(file, vsVLLM) },
		Auto: func(file string) LineParser {
			p := newVSParser(file, all)
			p.table = &vllmTableParser{file: file}
			return p
		},
		Covers: []string{"sglang", "vllm-throughput", "vllm-latency", "vllm-table"},
	})
	RegisterText(TextFormat{
		Name: "sglang",
		Desc: "SGLang bench_serving console result blocks",
		New:  func(file string) LineParser { return newVSParser(file, vsSGLang) },
	})
	RegisterText(TextFormat{
		Name: "vllm-throughput",
		Desc: "vLLM bench throughput / benchmark_throughput.py console output",
		New:  func(file string) LineParser { return newVSParser(file, vsThroughput) },
	})
	RegisterText(TextFormat{
		Name: "vllm-latency",
		Desc: "vLLM bench latency / benchmark_latency.py console output",
		New:  func(file string) LineParser { return newVSParser(file, vsLatency) },
	})
}

// The formats one vsParser reads; it emits those in its want set. In auto
// mode one parser emits all four (so every line is scanned once); a
// forced format gets a parser that emits only that format, still reading
// the others so that context labels go to the right result.
const (
	vsVLLM = 1 << iota
	vsSGLang
	vsThroughput
	vsLatency
)

var vsFormatBits = map[string]int{"vllm": vsVLLM, "sglang": vsSGLang, "vllm-throughput": vsThroughput, "vllm-latency": vsLatency}

const (
	vsBannerTitle = "Serving Benchmark Result"
	// vsMaxJunk is how many lines of other output may follow inside a
	// block before it is taken as ended without its closing line.
	vsMaxJunk = 8
)

type vsParser struct {
	file    string
	want    int // formats to emit
	ctx     benchContext
	blk     *vsBlock // serving result block being read
	pending *Result  // 2023 serving, throughput or latency result being read
	emitted int      // results emitted so far
	// table, in auto mode, reads the markdown results tables (format
	// vllm-table) of the same input; their rows are dropped once a block
	// was read, since a benchmark script's log ends with a table of the
	// runs whose blocks it printed before.
	table *vllmTableParser
	// cut is the last line of the input when it has no line break.
	cut int
}

func (p *vsParser) lastUnterminated(n int) { p.cut = n }

func newVSParser(file string, want int) *vsParser {
	return &vsParser{file: file, want: want}
}

// vsBlock is a result block being read.
type vsBlock struct {
	res     Result
	own     map[string]string // labels stated in the block; "" = absent
	start   int               // line of the banner
	last    int               // last line that held a block item
	items   int               // lines and items read
	section string            // current section title, lower case
	sglang  bool
	// diffusion: SGLang's diffusion/multimodal bench_serving block
	// (sglang.multimodal_gen), which has a completeness rule of its own
	diffusion bool
	junk      int  // consecutive lines of other output
	sawJunk   bool // a line of other output was inside the block
	sections  []vsSection
}

// vsSection counts the latency statistics of one section.
type vsSection struct {
	title string
	stats int
}

func (p *vsParser) Line(n int, line string, emit Emit) error {
	if p.table != nil && (p.table.header != nil || strings.IndexByte(line, '|') >= 0) {
		if err := p.table.Line(n, line, func(r Result) {
			if p.emitted == 0 {
				emit(r)
			}
		}); err != nil {
			return err
		}
	}
	for {
		i := strings.IndexByte(line, '\r')
		if i < 0 {
			return p.segment(n, line, emit)
		}
		if err := p.segment(n, line[:i], emit); err != nil {
			return err
		}
		line = line[i+1:]
	}
}

func (p *vsParser) End(n int, emit Emit) error {
	p.flush(emit)
	if p.blk != nil {
		return p.finish(n, false, true, emit)
	}
	return nil
}

// segment reads one line (or one carriage-return separated part of it).
func (p *vsParser) segment(n int, s string, emit Emit) error {
	atStart := true
	for {
		if p.blk == nil {
			i := -1
			if strings.Contains(s, "===") {
				i = strings.Index(s, vsBannerTitle)
			}
			if i < 0 {
				p.idle(n, s, atStart, emit)
				return nil
			}
			k, end, ok := vsBanner(s, i)
			if !ok {
				p.idle(n, s[:i+len(vsBannerTitle)], atStart, emit)
				s = s[i+len(vsBannerTitle):]
				atStart = false
				continue
			}
			if k > 0 {
				p.idle(n, s[:k], atStart, emit)
			}
			p.flush(emit)
			p.blk = &vsBlock{res: NewResult("vllm", n), start: n, last: n}
			s = s[end:]
			atStart = false
			continue
		}
		rest, more, err := p.blockLine(n, s, atStart, emit)
		if err != nil || !more {
			return err
		}
		s = rest
		atStart = false
	}
}

// vsBanner checks that the title at i is framed by '=' runs. It returns
// where the leading run starts and where the banner ends.
func vsBanner(s string, i int) (start, end int, ok bool) {
	j := i
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	k := j
	for k > 0 && s[k-1] == '=' {
		k--
	}
	if j-k < 3 {
		return 0, 0, false
	}
	end = i + len(vsBannerTitle)
	for end < len(s) && s[end] == ' ' {
		end++
	}
	for end < len(s) && s[end] == '=' {
		end++
	}
	return k, end, true
}

// idle reads a line outside serving blocks: the line-oriented formats
// (2023 serving, throughput, latency) and context labels.
func (p *vsParser) idle(n int, s string, atStart bool, emit Emit) {
	if p.ctx.cont {
		p.ctx.flags(s)
		return
	}
	t := vsTrimLeft(s)
	if atStart {
		t = vsStrip(s)
	}
	if t == "" {
		return
	}
	if p.pending != nil {
		if p.more(t, emit) {
			return
		}
		p.flush(emit)
	}
	switch t[0] {
	case 'T':
		switch {
		case strings.HasPrefix(t, "Throughput:"):
			p.startThroughput(n, t)
		case strings.HasPrefix(t, "Total time:"):
			p.startLegacy(n, t)
		case strings.HasPrefix(t, "Traffic request rate:"):
			p.ctx.set("request_rate", vsLabelValue(t[len("Traffic request rate:"):]))
		}
	case 'M':
		for _, pre := range [...]string{"Maximum request concurrency:", "Max request concurrency:"} {
			if strings.HasPrefix(t, pre) {
				p.ctx.set("max_concurrency", vsLabelValue(t[len(pre):]))
			}
		}
	case 'A':
		if strings.HasPrefix(t, "Avg latency:") {
			p.startLatency(n, t)
		}
	}
	if i := strings.IndexByte(t, ' '); i > 0 && t[0] != 'T' && strings.HasPrefix(t[i+1:], "Throughput:") {
		// A fork's run tag before the line: "bs_8_input_128_output_128
		// Throughput: ...", kept as the label "run".
		p.startThroughput(n, t[i+1:])
		if p.pending != nil && p.pending.Format == "vllm-throughput" {
			p.pending.SetLabel("run", t[:i])
		}
	}
	p.ctx.line(s)
}

// vsLabelValue reads the value of a label line: its first word, or "not
// set".
func vsLabelValue(s string) string {
	v, rest := vsToken(vsTrimLeft(s))
	if v == "not" {
		if w, _ := vsToken(vsTrimLeft(rest)); w == "set" {
			return "not set"
		}
	}
	return v
}

// vsQuantity reads "<number> [unit]" from s.
func vsQuantity(s string) (float64, string, bool) {
	tok, rest := vsToken(vsTrimLeft(s))
	v, unit, ok := vsNumber(tok)
	if ok && unit == "" {
		unit, _ = vsToken(vsTrimLeft(rest))
		unit = strings.TrimRight(unit, ".,;")
	}
	return v, unit, ok
}

// blockLine reads block items from s. more reports that rest holds more
// text to read (after the block ended on this line).
func (p *vsParser) blockLine(n int, s string, atStart bool, emit Emit) (rest string, more bool, err error) {
	b := p.blk
	if atStart {
		s = vsStrip(s)
	}
	if vsTrimLeft(s) == "" {
		return "", false, nil // blank lines neither end nor extend a block
	}
	read := false // an item was read on this line
	for {
		s = vsTrimLeft(s)
		if s == "" {
			break
		}
		switch s[0] {
		case '=':
			run := vsRun(s, '=')
			if run < 3 {
				break
			}
			after := vsTrimLeft(s[run:])
			if strings.HasPrefix(after, vsBannerTitle) {
				// A new banner: this block ended (and was closed when the
				// closing rule ran into the banner's own run).
				if err := p.finish(n, run > 20, false, emit); err != nil {
					return "", false, err
				}
				return s, true, nil
			}
			if run < 10 {
				s = s[run:]
				continue
			}
			b.last = n
			if err := p.finish(n, true, false, emit); err != nil {
				return "", false, err
			}
			return after, after != "", nil
		case '-':
			run := vsRun(s, '-')
			if run < 3 {
				break
			}
			after := s[run:]
			title := after
			if k := strings.Index(after, "---"); k >= 0 {
				title = after[:k]
				after = after[k:]
				after = after[vsRun(after, '-'):]
			} else {
				after = ""
			}
			if title = vsTrim(title); title != "" {
				b.section = strings.ToLower(title)
			}
			read = true
			b.last = n
			s = after
			continue
		}
		next, ok, err := p.item(n, s)
		if err != nil {
			return "", false, err
		}
		if !ok {
			break
		}
		read = true
		b.last = n
		s = next
	}
	if read {
		b.junk = 0
		return "", false, nil
	}
	// A line of other output. It may hold the next banner.
	if i := strings.Index(s, vsBannerTitle); i >= 0 {
		if k, _, ok := vsBanner(s, i); ok {
			if err := p.finish(n, false, false, emit); err != nil {
				return "", false, err
			}
			return s[k:], true, nil
		}
	}
	b.junk++
	b.sawJunk = true
	if b.junk >= vsMaxJunk {
		return "", false, p.finish(b.last+1, false, false, emit)
	}
	return "", false, nil
}

// vsHead returns at most the first n bytes of s, where a label may end.
func vsHead(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func vsRun(s string, c byte) int {
	i := 0
	for i < len(s) && s[i] == c {
		i++
	}
	return i
}

// item reads one "Label: value" item at the start of s. ok is false when
// s holds no block item. next is the text after the item (and after any
// note that follows its value).
func (p *vsParser) item(n int, s string) (next string, ok bool, err error) {
	b := p.blk
	colon := strings.IndexByte(vsHead(s, 97), ':')
	if colon <= 0 {
		return "", false, nil
	}
	label := vsTrim(s[:colon])
	if !vsLooksLikeLabel(label) {
		return "", false, nil
	}
	tgt := vsLookup(b.section, label)
	if b.sawJunk && !tgt.known {
		return "", false, nil
	}
	v := vsTrimLeft(s[colon+1:])
	tok, after := vsToken(v)
	if tok == "not" {
		if t, a := vsToken(vsTrimLeft(after)); t == "set" {
			tok, after = "not set", a
		}
	}
	switch {
	case tok == "":
		// A sub-heading ("Per-position acceptance (%):") or a label whose
		// value is missing.
		if tgt.metric == "" && tgt.label == "" {
			return "", true, nil
		}
		if !tgt.known {
			return "", false, nil
		}
		return "", true, nil
	case tgt.label != "":
		b.own = vsSetOwn(b.own, tgt.label, tok)
	case tgt.metric == "completed" && strings.IndexByte(tok, '/') > 0:
		// SGLang's diffusion block: "Successful requests: 14/20".
		done, total, ok := vsFraction(tok)
		if !ok {
			return "", false, &Error{File: p.file, Line: n, Msg: fmt.Sprintf("SGLang result line %s is not \"<completed>/<sent>\"; fix the value or write N/A", Quote(label+": "+v))}
		}
		b.res.Set("completed", done)
		b.res.Set("failed", total-done)
		b.diffusion, b.sglang = true, true
	case IsAbsent(tok) || strings.HasPrefix(tok, "..") || strings.HasPrefix(tok, "…"):
		// absent, or elided in a copied excerpt
	default:
		val, unit, isNum := vsNumber(tok)
		if !isNum {
			if next := vsNextItem(v); tgt.known && tgt.metric == "" && tgt.label == "" && next != "" && len(next) == len(v) {
				// A sub-heading whose line break was lost: the next item
				// follows the colon.
				b.items++
				return next, true, nil
			}
			if tgt.known {
				return "", false, &Error{File: p.file, Line: n, Msg: fmt.Sprintf("%s result line %s has a value that is not a number; fix the value or write N/A", vsDisplay(b, tgt), Quote(label+": "+v))}
			}
			return "", false, nil
		}
		scale := tgt.scale
		if tgt.stat {
			// A latency: the label's unit, else the value's, else ms.
			scale = tgt.timeScale
			if !tgt.labelUnit {
				if unit == "" {
					unit, _ = vsToken(vsTrimLeft(after))
				}
				if ts := vsTimeScale(unit); ts > 0 {
					scale = ts
				}
			}
		}
		if tgt.metric == "" {
			return "", false, nil
		}
		b.res.Set(tgt.metric, val*scale)
		if tgt.stat {
			b.countStat()
		}
	}
	if tgt.sglang {
		b.sglang = true
	}
	if tgt.diffusion {
		b.diffusion = true
	}
	b.items++
	return vsNextItem(after), true, nil
}

func vsSetOwn(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	if IsAbsent(value) {
		m[key] = ""
	} else {
		m[key] = value
	}
	return m
}

func vsDisplay(b *vsBlock, tgt vsTarget) string {
	if b.sglang || tgt.sglang {
		return "SGLang"
	}
	return "vLLM"
}

// countStat counts a latency statistic in the current section.
func (b *vsBlock) countStat() {
	if n := len(b.sections); n == 0 || b.sections[n-1].title != b.section {
		b.sections = append(b.sections, vsSection{title: b.section})
	}
	b.sections[len(b.sections)-1].stats++
}

// vsNextItem returns the part of after (the text after a value) where the
// next item of a line whose breaks were lost starts, or "" when after is
// blank or a note ("<- was 1020") with no item after it.
func vsNextItem(after string) string {
	t := vsTrimLeft(after)
	if t == "" {
		return ""
	}
	if t[0] == '=' && vsRun(t, '=') >= 3 || t[0] == '-' && vsRun(t, '-') >= 3 {
		return t
	}
	// The label of the next item: a known label ending at the next colon,
	// possibly after a note; or a capitalised label with a number after it.
	if colon := strings.IndexByte(vsHead(t, 160), ':'); colon > 0 {
		cand := t[:colon]
		for i := 0; i < len(cand); i++ {
			if i > 0 && cand[i-1] != ' ' {
				continue
			}
			label := vsTrim(cand[i:])
			if label == "" || !vsLooksLikeLabel(label) {
				continue
			}
			if vsLookup("", label).known {
				return t[i:]
			}
			if i == 0 && label[0] >= 'A' && label[0] <= 'Z' {
				tok, _ := vsToken(vsTrimLeft(t[colon+1:]))
				if _, _, ok := vsNumber(tok); ok || IsAbsent(tok) {
					return t
				}
			}
		}
	}
	// A note; a closing rule or a banner may still follow it.
	for i := 0; i+5 <= len(t); i++ {
		if (t[i] == '=' || t[i] == '-') && vsRun(t[i:], t[i]) >= 5 {
			return t[i:]
		}
	}
	return ""
}

// vsLooksLikeLabel accepts labels that start with an ASCII letter and hold
// no control characters, brackets or markup.
func vsLooksLikeLabel(s string) bool {
	if s == "" || len(s) > 80 || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c == 0x7f || c == '[' || c == ']' || c == '{' || c == '}' || c == '<' || c == '>' || c == '=' || c == '|' || c == '"' || c == '`' {
			return false
		}
	}
	return true
}

// vsTarget says where a block line goes.
type vsTarget struct {
	metric    string  // metric name, or ""
	label     string  // label key, or ""
	scale     float64 // factor applied to the value
	stat      bool    // a latency statistic, stored in ms
	timeScale float64 // for a latency: ms per unit of the label's unit
	labelUnit bool    // for a latency: the label states its unit
	known     bool    // the vocabulary knows the line
	sglang    bool    // the line marks an SGLang block
	diffusion bool    // the line marks SGLang's diffusion block
}

// vsFixed maps normalized labels (lower case, single spaces, with their
// unit) to targets.
var vsFixed = map[string]vsTarget{
	"successful requests":                  {metric: "completed"},
	"failed requests":                      {metric: "failed"},
	"benchmark duration (s)":               {metric: "duration"},
	"benchmark duration":                   {metric: "duration"},
	"benchmark duration (ms)":              {metric: "duration", scale: 1e-3},
	"total input tokens":                   {metric: "total_input_tokens"},
	"total generated tokens":               {metric: "total_output_tokens"},
	"total output tokens":                  {metric: "total_output_tokens"},
	"total generated tokens (retokenized)": {metric: "total_output_tokens_retokenized", sglang: true},
	"total input text tokens":              {metric: "total_input_text_tokens", sglang: true},
	"total input vision tokens":            {metric: "total_input_vision_tokens", sglang: true},
	"request throughput (req/s)":           {metric: "request_throughput"},
	"request goodput (req/s)":              {metric: "request_goodput"},
	"input token throughput (tok/s)":       {metric: "input_throughput"},
	"output token throughput (tok/s)":      {metric: "output_throughput"},
	"total token throughput (tok/s)":       {metric: "total_token_throughput"},
	"total throughput (tok/s)":             {metric: "total_token_throughput", sglang: true},
	"peak output token throughput (tok/s)": {metric: "max_output_tokens_per_s"},
	"peak concurrent requests":             {metric: "max_concurrent_requests"},
	"concurrency":                          {metric: "concurrency", sglang: true},
	"accept length":                        {metric: "spec_decode_acceptance_length", sglang: true},
	"rtfx (inverse real-time factor)":      {metric: "rtfx"},
	"input throughput (inputs/s)":          {metric: "input_sequence_throughput"},
	"probe requests completed":             {metric: "probe_completed"},
	"probe requests failed":                {metric: "probe_failed"},
	"acceptance rate (%)":                  {metric: "spec_decode_acceptance_rate"},
	"acceptance length":                    {metric: "spec_decode_acceptance_length"},
	"drafts":                               {metric: "spec_decode_num_drafts"},
	"draft tokens":                         {metric: "spec_decode_draft_tokens"},
	"accepted tokens":                      {metric: "spec_decode_accepted_tokens"},
	"per-position acceptance (%)":          {},
	"committed throughput (tok/s)":         {metric: "diffusion_committed_throughput"},
	"denoising steps per canvas":           {metric: "diffusion_steps_per_canvas"},
	"committed per denoising step":         {metric: "diffusion_committed_per_step"},
	"committed tokens":                     {metric: "diffusion_committed_tokens"},
	"denoising steps":                      {metric: "diffusion_denoising_steps"},
	"canvas positions evaluated":           {metric: "diffusion_canvas_positions"},
	"backend":                              {label: "backend", sglang: true},
	"architecture":                         {label: "architecture", sglang: true},
	"traffic request rate":                 {label: "request_rate", sglang: true},
	"max request concurrency":              {label: "max_concurrency", sglang: true},
	"maximum request concurrency":          {label: "max_concurrency"},
	"request rate configured (rps)":        {label: "request_rate"},
	"burstiness factor":                    {label: "burstiness"},
	// SGLang's diffusion/multimodal bench_serving (sglang.multimodal_gen).
	// "Task:" and "Successful requests: N/M" mark it; the other lines
	// are labels wherever they appear.
	"task":         {label: "task", sglang: true, diffusion: true},
	"model":        {label: "model"},
	"dataset":      {label: "dataset"},
	"request rate": {label: "request_rate"},
}

// vsKinds maps the kind words of "<Stat> <Kind> (unit)" lines to names.
var vsKinds = map[string]struct {
	name   string
	sglang bool
}{
	"ttft":                    {name: "ttft"},
	"tpot":                    {name: "tpot"},
	"itl":                     {name: "itl"},
	"e2el":                    {name: "e2el"},
	"e2e latency":             {name: "e2el", sglang: true},
	"latency":                 {name: "e2el"}, // GPUStack's "Latency" section
	"client queue time":       {name: "client_queue_time"},
	"e2el incl. client queue": {name: "e2el_including_client_queue"},
}

func vsNormLabel(s string) string {
	s = strings.ToLower(s)
	if strings.Contains(s, "  ") || strings.ContainsAny(s, "\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// vsLookup maps a block label, read in section (lower case), to a target.
func vsLookup(section, label string) vsTarget {
	norm := vsNormLabel(label)
	if t, ok := vsFixed[norm]; ok {
		t.known = true
		if t.scale == 0 {
			t.scale = 1
		}
		return t
	}
	base, unit := norm, ""
	if strings.HasSuffix(norm, ")") {
		if i := strings.LastIndex(norm, " ("); i > 0 {
			base, unit = norm[:i], norm[i+2:len(norm)-1]
		} else if i := strings.LastIndexByte(norm, '('); i > 0 && vsTimeScale(norm[i+1:len(norm)-1]) > 0 {
			// "Mean Latency(s)": a time unit without the space.
			base, unit = norm[:i], norm[i+1:len(norm)-1]
		}
	}
	timeScale := vsTimeScale(unit)
	if sp := strings.LastIndexByte(base, ' '); sp > 0 && timeScale > 0 {
		// "<Kind> <Stat> (unit)", as SGLang's diffusion block prints
		// "Latency Mean (s)".
		if stat := vsStat(base[sp+1:]); stat != "" {
			if k, known := vsKinds[base[:sp]]; known {
				return vsTarget{metric: stat + "_" + k.name + "_ms", scale: 1, stat: true, timeScale: timeScale, labelUnit: true, known: true}
			}
		}
	}
	if sp := strings.IndexByte(base, ' '); sp > 0 {
		if stat := vsStat(base[:sp]); stat != "" {
			kindWords := base[sp+1:]
			probe := strings.HasPrefix(kindWords, "probe ")
			kindWords = strings.TrimPrefix(kindWords, "probe ")
			k, known := vsKinds[kindWords]
			if known || timeScale > 0 {
				name := k.name
				if !known {
					name = metric.Sanitize(kindWords)
				}
				labelUnit := timeScale > 0
				if !labelUnit {
					timeScale = 1 // the four kinds are printed in ms
				}
				m := stat + "_" + name + "_ms"
				if probe {
					m = "probe_" + m
				}
				return vsTarget{metric: m, scale: 1, stat: true, timeScale: timeScale, labelUnit: labelUnit, known: known, sglang: k.sglang}
			}
		}
	}
	if strings.Contains(section, "speculative") {
		if strings.HasPrefix(norm, "position ") {
			if _, err := strconv.Atoi(norm[len("position "):]); err == nil {
				return vsTarget{metric: "spec_decode_acceptance_rate_pos" + norm[len("position "):], scale: 1, known: true}
			}
		}
		return vsTarget{metric: "spec_decode_" + metric.Sanitize(label), scale: 1}
	}
	if strings.Contains(section, "diffusion") {
		return vsTarget{metric: "diffusion_" + metric.Sanitize(label), scale: 1}
	}
	return vsTarget{metric: metric.Sanitize(label), scale: 1}
}

// vsStat normalizes a statistic word: mean, median, std, min, max, or a
// percentile "p99", "p99.9".
func vsStat(w string) string {
	switch w {
	case "mean", "avg", "average":
		return "mean"
	case "median", "std", "min", "max":
		return w
	}
	if len(w) > 1 && w[0] == 'p' {
		f, err := strconv.ParseFloat(w[1:], 64)
		if err != nil || f < 0 || f > 100 {
			return ""
		}
		return metric.Percentile(f)
	}
	return ""
}

// missing names what a block without its closing line lacks to be taken
// as complete, or "" when nothing.
func (b *vsBlock) missing() string {
	if b.diffusion {
		return b.missingDiffusion()
	}
	var miss []string
	if _, ok := b.res.Metrics["completed"]; !ok {
		miss = append(miss, `the "Successful requests" line`)
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := b.res.Metrics[n]; ok {
				return true
			}
		}
		return false
	}
	if !has("request_throughput", "output_throughput", "total_token_throughput") {
		miss = append(miss, "the throughput lines")
	}
	// vLLM prints the ITL section last of the default ones, E2EL after it
	// when asked for (or alone, for embeddings); SGLang prints ITL last.
	// Every section prints the same statistics, but for SGLang's shorter
	// End-to-End Latency section: the last one must have as many as the
	// first of the others.
	var final, ref *vsSection
	for i := range b.sections {
		sec := &b.sections[i]
		e2e := strings.Contains(sec.title, "end-to-end")
		if ref == nil && !(b.sglang && e2e) {
			ref = sec
		}
		if strings.Contains(sec.title, "inter-token") || e2e && !b.sglang {
			final = sec
		}
	}
	switch n := len(b.sections); {
	case n == 0:
		miss = append(miss, "the latency sections")
	case final == nil:
		miss = append(miss, "the Inter-token Latency section")
	case ref != nil && b.sections[n-1].stats < ref.stats:
		last := b.sections[n-1].title
		if last == "" {
			last = "last"
		}
		miss = append(miss, fmt.Sprintf("part of the %q section", last))
	}
	if n := len(miss); n > 1 {
		return strings.Join(miss[:n-1], ", ") + " and " + miss[n-1]
	}
	return strings.Join(miss, "")
}

// missingDiffusion is missing for SGLang's diffusion block, whose last
// default line is "Latency P99 (s)" (peak memory follows only when the
// server reports it).
func (b *vsBlock) missingDiffusion() string {
	var miss []string
	for _, m := range []struct{ name, line string }{
		{"completed", "Successful requests"},
		{"request_throughput", "Request throughput (req/s)"},
		{"mean_e2el_ms", "Latency Mean (s)"},
		{"p99_e2el_ms", "Latency P99 (s)"},
	} {
		if _, ok := b.res.Metrics[m.name]; !ok {
			miss = append(miss, strconv.Quote(m.line))
		}
	}
	if len(miss) == 0 {
		return ""
	}
	return "the lines " + strings.Join(miss, ", ")
}

// vsFraction reads "14/20".
func vsFraction(tok string) (done, total float64, ok bool) {
	a, b, _ := strings.Cut(tok, "/")
	if !allDigits(a) || !allDigits(b) {
		return 0, 0, false
	}
	done, _ = strconv.ParseFloat(a, 64)
	total, _ = strconv.ParseFloat(b, 64)
	return done, total, done <= total
}

// finish ends the open block at line n. closed reports that its closing
// line was read; atEnd that the input ended.
func (p *vsParser) finish(n int, closed, atEnd bool, emit Emit) error {
	b := p.blk
	p.blk = nil
	ctx := p.ctx.take()
	kind := "vllm"
	if b.sglang {
		kind = "sglang"
	}
	if p.want&vsFormatBits[kind] == 0 {
		return nil
	}
	b.res.Format = kind
	tool := "vLLM"
	if kind == "sglang" {
		tool = "SGLang"
	}
	if b.items == 0 && !closed && (!atEnd || b.sawJunk) {
		return nil // a quoted banner, not a block
	}
	if !closed {
		if atEnd && p.cut > 0 && b.last == p.cut {
			return &Error{File: p.file, Line: p.cut, Msg: fmt.Sprintf("%s serving result block that starts at line %d is cut off: its last line has no line break and no closing \"=====\" line follows, so the input ends inside that line (a value may have lost digits); rerun the benchmark or copy the whole block", tool, b.start)}
		}
		if miss := b.missing(); miss != "" {
			how := "the input ends"
			if !atEnd {
				how = "other output follows"
			}
			return &Error{File: p.file, Line: n, Msg: fmt.Sprintf("%s serving result block that starts at line %d is cut off: %s before its closing \"=====\" line and it lacks %s; rerun the benchmark or copy the whole block", tool, b.start, how, miss)}
		}
		b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("%s result block that starts at line %d has no closing \"=====\" line after line %d; it looks complete and was kept", tool, b.start, b.last))
	}
	if len(b.res.Metrics) == 0 {
		return &Error{File: p.file, Line: b.start, Msg: fmt.Sprintf("%s serving result block holds no metric lines; check the output, or remove the empty block", tool)}
	}
	vsApplyLabels(&b.res, ctx, b.own)
	b.res.Name = vsName(&b.res, kind)
	p.emitted++
	emit(b.res)
	return nil
}
