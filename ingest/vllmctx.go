package ingest

import (
	"path"
	"strconv"
	"strings"
)

// Helpers shared by the vLLM and SGLang console parsers (vllmtext.go,
// vllmbench.go): stripping the prefixes logs and documents put before a
// line, reading numbers without regexps, and collecting the labels a run
// states around its result (a Namespace(...) dump, the command line).

// vsStrip trims a line and removes what loggers, shells and documents put
// before the text a benchmark printed, repeatedly: markdown quotes ("> "),
// comment and heading marks ("# ", "//"), list bullets ("- ", "* "),
// bracketed fields ("[2025-03-18 11:42:57]", "[x.py:1]", "[INFO]"),
// process tags ("(APIServer pid=158)"), timestamps ("09-02", "13:08:10",
// "2025-04-14T14:11:28.123Z"), log levels ("INFO", "WARNING:"), container
// runtime tags ("stdout F ") and docker compose service columns
// ("vllm-1  | "). The result is a substring of s: it never allocates.
func vsStrip(s string) string {
	s = vsTrim(s)
	for i := 0; i < 16 && s != ""; i++ {
		t := vsStripOne(s)
		if len(t) == len(s) {
			break
		}
		s = vsTrimLeft(t)
	}
	return s
}

var vsLogLevels = []string{"INFO", "WARNING", "WARN", "DEBUG", "ERROR", "CRITICAL", "FATAL", "TRACE", "NOTICE"}

func vsStripOne(s string) string {
	c := s[0]
	switch {
	case c == '>':
		return s[1:]
	case c == '#':
		i := 0
		for i < len(s) && s[i] == '#' {
			i++
		}
		return s[i:]
	case c == '/' && strings.HasPrefix(s, "//"):
		return s[2:]
	case (c == '-' || c == '*' || c == '+') && len(s) > 1 && s[1] == ' ':
		return s[2:]
	case c == '(':
		if end := strings.IndexByte(s, ')'); end > 0 && end < 96 && strings.Contains(s[:end], "pid=") {
			return s[end+1:]
		}
	case c == '[':
		if end := strings.IndexByte(s, ']'); end > 0 && end < 128 {
			// torchrun and friends: "[rank0]: text".
			if end+1 < len(s) && s[end+1] == ':' {
				return s[end+2:]
			}
			return s[end+1:]
		}
	case c == '|' && len(s) > 1 && (s[1] == ' ' || s[1] == '\t'):
		// loguru and friends: "2026-11-25 08:00:00 | INFO | text".
		return s[2:]
	case c >= '0' && c <= '9':
		sep := false
		i := 0
		for ; i < len(s); i++ {
			b := s[i]
			if b == '-' || b == ':' || b == '/' {
				sep = true
			} else if !(b >= '0' && b <= '9' || b == '.' || b == ',' || b == 'T' || b == 'Z' || b == '+') {
				break
			}
		}
		if sep && i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			return s[i:]
		}
	case c == 'I' || c == 'W' || c == 'D' || c == 'E' || c == 'C' || c == 'F' || c == 'T' || c == 'N':
		for _, lv := range vsLogLevels {
			if len(s) > len(lv) && s[:len(lv)] == lv {
				switch s[len(lv)] {
				case ' ', '\t':
					return s[len(lv):]
				case ':':
					return s[len(lv)+1:]
				}
			}
		}
	}
	if c == 's' && len(s) > 9 && (s[:7] == "stdout " || s[:7] == "stderr ") && (s[7] == 'F' || s[7] == 'P') && s[8] == ' ' {
		return s[9:]
	}
	// loguru's location: "__main__:main:42 - text".
	if sp := strings.IndexByte(s, ' '); sp > 2 && sp < 128 && strings.HasPrefix(s[sp:], " - ") {
		if colon := strings.LastIndexByte(s[:sp], ':'); colon > 0 && colon < sp-1 && allDigits(s[colon+1:sp]) {
			return s[sp+3:]
		}
	}
	// docker compose: "service-1  | text".
	for i := 1; i < len(s) && i < 64; i++ {
		switch s[i] {
		case ':', '|':
			return s
		case ' ':
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			if j+1 < len(s) && s[j] == '|' && s[j+1] == ' ' {
				return s[j+2:]
			}
			return s
		}
	}
	return s
}

func vsTrimLeft(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

func vsTrim(s string) string {
	s = vsTrimLeft(s)
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// vsToken splits s (already trimmed on the left) at the first blank.
func vsToken(s string) (tok, rest string) {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// vsNumber reads a number with an optional unit glued to it or following
// it: "945.18", "-0.00", "1,234", "2.5e3", "inf", "4651ms". unit is the
// glued unit ("ms" of "4651ms"), or "". ok is false when tok is not a
// number (absent markers included).
func vsNumber(tok string) (v float64, unit string, ok bool) {
	tok = strings.TrimRight(tok, ",;")
	i := 0
	if i < len(tok) && (tok[i] == '-' || tok[i] == '+') {
		i++
	}
	digits, commas := 0, false
	for i < len(tok) && (tok[i] >= '0' && tok[i] <= '9' || tok[i] == ',' && digits > 0) {
		if tok[i] == ',' {
			commas = true
		} else {
			digits++
		}
		i++
	}
	if i < len(tok) && tok[i] == '.' {
		i++
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			digits++
			i++
		}
	}
	if digits == 0 {
		switch strings.ToLower(strings.TrimLeft(tok, "+-")) {
		case "inf", "infinity", "nan":
			f, err := strconv.ParseFloat(tok, 64)
			return f, "", err == nil
		}
		return 0, "", false
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		j := i + 1
		if j < len(tok) && (tok[j] == '-' || tok[j] == '+') {
			j++
		}
		k := j
		for k < len(tok) && tok[k] >= '0' && tok[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	num := tok[:i]
	if commas {
		num = strings.ReplaceAll(num, ",", "")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, "", false
	}
	unit = tok[i:]
	for j := 0; j < len(unit); j++ {
		b := unit[j]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '%' || b == '/' || b >= 0x80) {
			return 0, "", false
		}
	}
	if f == 0 {
		f = 0 // -0.00 is printed for tiny negative values; store 0
	}
	return f, unit, true
}

// vsTimeScale returns the factor that converts a time in unit to
// milliseconds, or 0 when unit is not a time unit.
func vsTimeScale(unit string) float64 {
	ms, ok := LatencyMs(1, unit)
	if !ok || unit == "" {
		return 0
	}
	return ms
}

// benchContext collects the labels that the lines around a result state:
// a Namespace(...) dump of the benchmark's arguments, its command line
// (vllm bench serve ..., benchmark_serving.py ..., sglang.bench_serving
// ..., continued over lines ending in "\"), and single lines such as
// "Maximum request concurrency: 16" or "Traffic request rate: 4.0". The
// next result takes them (its own lines override them) and the context
// starts empty again, so labels never leak from one run to a later one.
type benchContext struct {
	labels    map[string]string // "" marks a value stated as absent
	namespace bool              // labels hold a Namespace dump
	cont      bool              // the command line continues on the next line
}

// vsCommandMarkers name the benchmark entry points whose command lines
// state labels.
var vsCommandMarkers = []string{
	"bench serve", "benchmark_serving", "bench_serving",
	"bench throughput", "benchmark_throughput", "bench_throughput",
	"bench latency", "benchmark_latency", "bench_latency",
}

// line looks at a line outside result blocks for a Namespace dump or a
// command line. It returns quickly for lines that hold neither.
func (c *benchContext) line(s string) {
	if c.cont {
		c.flags(s)
		return
	}
	if strings.Contains(s, "Namespace(") {
		c.parseNamespace(s)
		return
	}
	if strings.Contains(s, "bench") {
		for _, m := range vsCommandMarkers {
			if strings.Contains(s, m) {
				c.reset()
				c.flags(s[strings.Index(s, m)+len(m):])
				return
			}
		}
	}
}

func (c *benchContext) reset() {
	c.labels = nil
	c.namespace = false
	c.cont = false
}

func (c *benchContext) set(key, value string) {
	if c.labels == nil {
		c.labels = map[string]string{}
	}
	value = strings.Trim(vsTrim(value), `'"`)
	if IsAbsent(value) {
		c.labels[key] = ""
		return
	}
	c.labels[key] = value
}

// take returns the collected labels and empties the context.
func (c *benchContext) take() map[string]string {
	l := c.labels
	c.reset()
	return l
}

// vsFlagLabels maps command-line flags to labels.
var vsFlagLabels = map[string]string{
	"backend":              "backend",
	"model":                "model",
	"dataset-name":         "dataset",
	"num-prompts":          "num_prompts",
	"num-prompt":           "num_prompts",
	"request-rate":         "request_rate",
	"max-concurrency":      "max_concurrency",
	"burstiness":           "burstiness",
	"input-len":            "input_len",
	"random-input-len":     "input_len",
	"random-input":         "input_len",
	"sonnet-input-len":     "input_len",
	"output-len":           "output_len",
	"random-output-len":    "output_len",
	"random-output":        "output_len",
	"sonnet-output-len":    "output_len",
	"sharegpt-output-len":  "output_len",
	"batch-size":           "batch_size",
	"tensor-parallel-size": "tp",
	"tp":                   "tp",
	"tp-size":              "tp",
}

// flags reads "--flag value" and "--flag=value" pairs of a command line.
func (c *benchContext) flags(s string) {
	s = vsTrim(s)
	c.cont = strings.HasSuffix(s, "\\")
	if c.cont {
		s = strings.TrimSuffix(s, "\\")
	}
	fields := strings.Fields(s)
	datasetPath := ""
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if !strings.HasPrefix(f, "-") || len(f) < 2 {
			continue
		}
		name := strings.TrimLeft(f, "-")
		value, hasValue := "", false
		if eq := strings.IndexByte(name, '='); eq >= 0 {
			name, value, hasValue = name[:eq], name[eq+1:], true
		} else if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "--") {
			if _, num, ok := vsNumber(fields[i+1]); ok && num == "" || !strings.HasPrefix(fields[i+1], "-") {
				value, hasValue = fields[i+1], true
				i++
			}
		}
		if !hasValue {
			continue
		}
		if name == "dataset-path" || name == "dataset" {
			datasetPath = value
			continue
		}
		if key, ok := vsFlagLabels[name]; ok {
			c.set(key, value)
		}
	}
	if datasetPath != "" && c.labels["dataset"] == "" {
		c.set("dataset", path.Base(strings.Trim(datasetPath, `'"`)))
	}
}

// vsNamespaceLabels maps the keys of a Namespace(...) dump to labels.
var vsNamespaceLabels = map[string]string{
	"backend":              "backend",
	"model":                "model",
	"dataset_name":         "dataset",
	"num_prompts":          "num_prompts",
	"request_rate":         "request_rate",
	"max_concurrency":      "max_concurrency",
	"burstiness":           "burstiness",
	"input_len":            "input_len",
	"output_len":           "output_len",
	"batch_size":           "batch_size",
	"tensor_parallel_size": "tp",
}

// parseNamespace reads the labels of a Python argparse Namespace dump:
// Namespace(backend='vllm', model='meta-llama/...', num_prompts=200, ...).
// A second dump starts a new context; a dump right after a command line
// refines the labels the command line gave.
func (c *benchContext) parseNamespace(s string) {
	i := strings.Index(s, "Namespace(")
	s = s[i+len("Namespace("):]
	if c.namespace {
		c.reset()
	}
	c.namespace = true
	kv := map[string]string{}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ,")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			break
		}
		key := vsTrim(s[:eq])
		s = s[eq+1:]
		value, rest := vsPyValue(s)
		s = rest
		if strings.ContainsAny(key, " ()[]{}'\"") {
			break
		}
		kv[key] = value
	}
	for k, label := range vsNamespaceLabels {
		if v, ok := kv[k]; ok {
			c.set(label, v)
		}
	}
	ds := c.labels["dataset"]
	if ds == "random" || ds == "random-mm" {
		if v, ok := kv["random_input_len"]; ok && kv["input_len"] == "" {
			c.set("input_len", v)
		}
		if v, ok := kv["random_output_len"]; ok && kv["output_len"] == "" {
			c.set("output_len", v)
		}
	}
	if ds == "" {
		for _, k := range []string{"dataset_path", "dataset"} {
			if v := strings.Trim(kv[k], `'"`); v != "" && !IsAbsent(v) {
				c.set("dataset", path.Base(v))
				break
			}
		}
	}
}

// vsPyValue reads one value of a Python repr up to the comma that ends
// it: a quoted string, a bracketed expression, or a bare token.
func vsPyValue(s string) (value, rest string) {
	if s == "" {
		return "", ""
	}
	if q := s[0]; q == '\'' || q == '"' {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case q:
				return s[1:i], s[i+1:]
			}
		}
		return s[1:], ""
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return vsTrim(s[:i]), ""
			}
			depth--
		case '\'', '"':
			q := s[i]
			for i++; i < len(s) && s[i] != q; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case ',':
			if depth == 0 {
				return vsTrim(s[:i]), s[i+1:]
			}
		}
	}
	return vsTrim(s), ""
}

// vsApplyLabels copies context labels and then a result's own labels
// (which win) into r; "" values remove a label.
func vsApplyLabels(r *Result, ctx, own map[string]string) {
	for _, m := range []map[string]string{ctx, own} {
		for _, k := range docSortedKeys(m) { // in order, for the order of warnings
			v := m[k]
			if v == "" {
				delete(r.Labels, k)
				continue
			}
			r.SetLabel(k, v)
		}
	}
}

// vsName is the name of a console result: vLLM and SGLang blocks do not
// name their benchmark, so it is empty and the user's --name applies.
// Model and dataset are identity labels, not part of the name: a name
// that changed with the model would hide a label mismatch.
func vsName(r *Result, format string) string {
	return ""
}

// allDigits reports whether s is one or more ASCII digits.
func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
