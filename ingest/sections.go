package ingest

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sections. People keep benchmark results in markdown documents, often
// one section per change they tried (an optimisation log), each with the
// same benchmark's output. The text reader notes every ATX heading ("#"
// to "######" at the start of a line, outside fenced code blocks) and
// gives each result of console output the nearest heading above it. With
// Options.SectionLabel set, that heading becomes a label of the result
// (unless the block states that label itself), so the blocks of each
// section are series of their own. Without it, a result with the
// benchmark name and labels of an earlier one of the document but under
// another heading gets a warning naming both headings: stored at one
// commit, such blocks become repetitions of one series.
//
// A heading is made inert before it is used: control characters are
// dropped, runs of blanks become one space, and it is cut to
// MaxHeadingBytes.

// MaxHeadingBytes bounds the heading stored as a section label.
const MaxHeadingBytes = 120

type heading struct {
	line int
	text string
}

// headingTracker collects the headings of console output as it streams.
type headingTracker struct {
	fence byte // '`' or '~' inside a fenced code block, else 0
	list  []heading
}

// line looks at one line (already cleaned) for a heading or a fence.
func (h *headingTracker) line(n int, s string) {
	t := strings.TrimLeft(s, " ")
	if len(s)-len(t) > 3 || t == "" {
		return
	}
	switch c := t[0]; c {
	case '`', '~':
		if strings.HasPrefix(t, strings.Repeat(string(c), 3)) {
			switch {
			case h.fence == 0:
				h.fence = c
			case h.fence == c && strings.Trim(t, string(c)+" \t") == "":
				h.fence = 0
			}
		}
	case '#':
		if h.fence != 0 {
			return
		}
		if text, ok := atxHeading(t); ok {
			h.list = append(h.list, heading{n, text})
		}
	}
}

// atxHeading reads "## Title ##" (t starts with '#').
func atxHeading(t string) (string, bool) {
	level := 0
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level > 6 || level < len(t) && t[level] != ' ' && t[level] != '\t' {
		return "", false
	}
	text := strings.TrimSpace(t[level:])
	if end := strings.TrimRight(text, "#"); end != text && (end == "" || strings.HasSuffix(end, " ") || strings.HasSuffix(end, "\t")) {
		text = strings.TrimSpace(end)
	}
	text = inertHeading(text)
	if !hasAlnum(text) || strings.Contains(text, "===") || strings.Contains(text, "---") || looksLikeItem(text) {
		// A rule, a banner or a "Label: 12.3" line of a block commented
		// out with "# ", not a heading.
		return "", false
	}
	return text, true
}

func hasAlnum(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return true
		}
	}
	return false
}

// looksLikeItem reports an ASCII "Label (unit): number" line.
func looksLikeItem(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !vsLooksLikeLabel(s[:colon]) {
		return false
	}
	tok, _ := vsToken(vsTrimLeft(s[colon+1:]))
	_, _, ok := vsNumber(tok)
	return ok || IsAbsent(tok)
}

// inertHeading drops control characters and invalid UTF-8, folds blanks
// and bounds the length.
func inertHeading(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == utf8.RuneError, unicode.IsControl(r) && !unicode.IsSpace(r):
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			if b.Len()+1 > MaxHeadingBytes {
				break
			}
			b.WriteByte(' ')
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > MaxHeadingBytes {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// at returns the nearest heading above line, or "".
func (h *headingTracker) at(line int) string {
	i := sort.Search(len(h.list), func(i int) bool { return h.list[i].line >= line })
	if i == 0 {
		return ""
	}
	return h.list[i-1].text
}

// sectionSeen is where a result identity was first met.
type sectionSeen struct {
	line    int
	heading string
}

// applySection labels a result with its heading (Options.SectionLabel),
// or warns when it repeats an earlier result's identity under another
// heading.
func (r *Reader) applySection(res *Result) {
	h := r.heads.at(res.Line)
	if h == "" {
		return
	}
	if key := r.opts.SectionLabel; key != "" {
		if own, ok := res.Labels[key]; ok && own != h {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the block states label %s=%s itself; its heading %s is not stored as --section-label %s", key, Quote(own), Quote(h), key))
			return
		}
		res.Labels[key] = h
		return
	}
	id := identityKey(res)
	prev, ok := r.ids[id]
	if !ok {
		if r.ids == nil {
			r.ids = map[string]sectionSeen{}
		}
		r.ids[id] = sectionSeen{res.Line, h}
		return
	}
	if prev.heading != h {
		r.repeats.add(res.Line, prev, h)
	}
}

// sectionRepeats are the blocks that repeat an earlier block's benchmark
// name and labels under another heading, said once per input (Warnings).
type sectionRepeats struct {
	blocks   int
	headings map[string]bool
	line     int         // the first such block
	heading  string      // its heading
	prev     sectionSeen // the block it repeats
}

func (s *sectionRepeats) add(line int, prev sectionSeen, heading string) {
	if s.blocks == 0 {
		s.line, s.heading, s.prev = line, heading, prev
		s.headings = map[string]bool{}
	}
	s.blocks++
	s.headings[prev.heading], s.headings[heading] = true, true
}

// warning is the one sentence about the repeats, or "".
func (s *sectionRepeats) warning(file string) string {
	if s.blocks == 0 {
		return ""
	}
	what := fmt.Sprintf("a block repeats the benchmark name and labels of line %d's under another heading (%s, that one under %s)", s.prev.line, Quote(s.heading), Quote(s.prev.heading))
	if s.blocks > 1 {
		what = fmt.Sprintf("%d blocks repeat the benchmark name and labels of an earlier one under %d headings (first %s, line %d's under %s)", s.blocks, len(s.headings), Quote(s.heading), s.prev.line, Quote(s.prev.heading))
	}
	return fmt.Sprintf("%s:%d: %s: stored at one commit they are repetitions of one series; --section-label NAME keeps each heading a series of its own", file, s.line, what)
}

// Warnings returns what is said once about the whole input (blocks that
// repeat one identity under several headings), for the caller to print
// on stderr after Scan returned false.
func (r *Reader) Warnings() []string {
	if w := r.repeats.warning(r.file); w != "" {
		return []string{w}
	}
	return nil
}

// identityKey is a result's benchmark name and labels.
func identityKey(res *Result) string {
	keys := make([]string, 0, len(res.Labels))
	for k := range res.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(res.Name)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s\x00%s", k, res.Labels[k])
	}
	return b.String()
}
