package store

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// fastLine decodes a line in exactly the shape AppendJSON writes (no
// escapes in strings, no command), several times
// faster than encoding/json; ok is false for anything else, which the
// caller then decodes the general way. A history branch holds millions
// of such lines.
func fastLine(line []byte, names map[string]string) (r Run, ok bool) {
	p := fastParser{b: line, names: names}
	var id, commit, bench, ts string
	ok = p.lit(`{"id":`) && p.str(&id) &&
		p.lit(`,"commit":`) && p.str(&commit) &&
		p.lit(`,"benchmark":`) && p.name(&bench) &&
		p.lit(`,"time":`) && p.str(&ts) &&
		p.lit(`,"metrics":{`)
	if !ok {
		return Run{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return Run{}, false
	}
	r = Run{ID: id, Commit: commit, Benchmark: bench, Time: t.UTC(), Metrics: make(map[string]float64, p.entries())}
	for first := true; !p.lit("}"); first = false {
		var k string
		var v float64
		if (!first && !p.lit(",")) || !p.name(&k) || !p.lit(":") || !p.num(&v) {
			return Run{}, false
		}
		r.Metrics[k] = v
	}
	if !p.lit(`,"labels":{`) {
		return Run{}, false
	}
	r.Labels = make(map[string]string, p.entries())
	for first := true; !p.lit("}"); first = false {
		var k, v string
		if (!first && !p.lit(",")) || !p.name(&k) || !p.lit(":") || !p.name(&v) {
			return Run{}, false
		}
		r.Labels[k] = v
	}
	if !p.lit(`,"source":{"format":`) || !p.name(&r.Source.Format) || !p.lit(`,"file":`) || !p.name(&r.Source.File) {
		return Run{}, false
	}
	if p.lit(`,"line":`) && !p.int(&r.Source.Line) {
		return Run{}, false
	}
	if !p.lit("}") {
		return Run{}, false
	}
	if p.lit(`,"dirty":true`) {
		r.Dirty = true
	}
	if p.lit(`,"invalid":`) && !p.str(&r.Invalid) {
		return Run{}, false
	}
	if p.lit(`,"testbed":`) && !p.name(&r.Testbed) {
		return Run{}, false
	}
	if p.lit(`,"env":{`) {
		r.Env = map[string]string{}
		for first := true; !p.lit("}"); first = false {
			var k, v string
			if (!first && !p.lit(",")) || !p.name(&k) || !p.lit(":") || !p.name(&v) {
				return Run{}, false
			}
			r.Env[k] = v
		}
		if len(r.Env) == 0 {
			r.Env = nil
		}
	}
	if p.lit(`,"tree":`) && !p.str(&r.Tree) {
		return Run{}, false
	}
	if p.lit(`,"requests":`) {
		// The request summary is the last field: a JSON object up to the
		// line's closing brace (validate checks that it is compact).
		end := len(p.b) - 1
		if end <= p.i || p.b[p.i] != '{' || !json.Valid(p.b[p.i:end]) {
			return Run{}, false
		}
		r.Requests = bytes.Clone(p.b[p.i:end])
		p.i = end
	}
	if !p.lit("}") || p.i != len(p.b) {
		return Run{}, false
	}
	return r, true
}

type fastParser struct {
	b     []byte
	i     int
	names map[string]string // when not nil, the names read so far, shared
}

// maxNames bounds a Parser's names: a file of unique names grows it no
// further.
const maxNames = 1 << 14

// name reads a string that is a name (benchmark, metric, label, format,
// file, testbed): the lines of a history repeat them, so one copy is
// kept of each.
func (p *fastParser) name(dst *string) bool {
	if p.names == nil {
		return p.str(dst)
	}
	start := p.i
	if !p.str(nil) {
		return false
	}
	raw := p.b[start+1 : p.i-1]
	if s, ok := p.names[string(raw)]; ok { // no allocation to look up
		*dst = s
		return true
	}
	*dst = string(raw)
	if len(p.names) < maxNames {
		p.names[*dst] = *dst
	}
	return true
}

// entries estimates the entries of the object whose '{' was just read,
// a size for its map (a key holding ',' or '}' only makes it wrong).
func (p *fastParser) entries() int {
	rest := p.b[p.i:]
	end := bytes.IndexByte(rest, '}')
	if end <= 0 {
		return 0
	}
	return bytes.Count(rest[:end], []byte{','}) + 1
}

func (p *fastParser) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// str reads a string without escapes or control characters.
func (p *fastParser) str(dst *string) bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	end := bytes.IndexByte(p.b[p.i+1:], '"')
	if end < 0 {
		return false
	}
	s := p.b[p.i+1 : p.i+1+end]
	for _, c := range s {
		if c == '\\' || c < 0x20 {
			return false
		}
	}
	if dst != nil {
		*dst = string(s)
	}
	p.i += end + 2
	return true
}

// num reads a JSON number.
func (p *fastParser) num(dst *float64) bool {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	intStart := p.i
	if n := digits(); n == 0 || (n > 1 && p.b[intStart] == '0') {
		return false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return false
		}
	}
	v, err := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	if err != nil {
		return false
	}
	*dst = v
	return true
}

// int reads a non-negative integer that fits an int.
func (p *fastParser) int(dst *int) bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == start || (p.i-start > 1 && p.b[start] == '0') {
		return false
	}
	v, err := strconv.Atoi(string(p.b[start:p.i]))
	if err != nil {
		return false
	}
	*dst = v
	return true
}
