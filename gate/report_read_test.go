package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// demoReportJSON is the JSON of a real check report: failing, with
// windows, reasons and a mismatch.
func demoReportJSON(t testing.TB) []byte {
	t.Helper()
	d := newDemo()
	rep, err := Check(context.Background(), d.repo, d.repo, CheckOptions{Head: d.head, Base: d.tip, BaseRef: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	return js.Bytes()
}

// hostile are strings a fork can put in its report to get markup,
// mentions, links or images into the comment a write token posts.
var hostile = []string{
	"x`` <img src=y> ``",
	"@octocat &#64;admin &#x40;team",
	"[link](https://evil.example) ![i](https://evil.example/p.png)",
	"<img src=x onerror=alert(1)><script>alert(1)</script>",
	"a|b\n| injected | row |\r\n### heading",
	"fixes #1 and www.evil.example and https://evil.example",
	"<details><summary>x</summary>",
	"`",
	"```mermaid\n```\n<b>out</b>",
}

// TestHostileReportIsInert publishes a report whose every free-text field
// is hostile: the markdown has no raw HTML, no live mention, reference,
// link or image, and no broken code span or table row.
func TestHostileReportIsInert(t *testing.T) {
	var rep Report
	if err := json.Unmarshal(demoReportJSON(t), &rep); err != nil {
		t.Fatal(err)
	}
	for i, h := range hostile {
		rep.BaseRef = h
		rep.Rules.File = h
		rep.Warnings = append(rep.Warnings, h)
		rep.Notes = append(rep.Notes, h)
		rep.Mismatches = append(rep.Mismatches, Mismatch{Benchmark: h, HeadLabels: map[string]string{h: h}, Commit: rep.Head, Diff: h})
		for j := range rep.Checks {
			c := &rep.Checks[j]
			if (j+i)%3 == 0 {
				c.Benchmark = h
			}
			c.Label, c.Rule, c.Reason = h, h, h
			c.Labels = map[string]string{h: h, "k": h}
		}
		var js, md bytes.Buffer
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		back, err := ReadReport(&js)
		if err != nil {
			t.Fatalf("%q: a report with hostile names but a valid schema is refused: %v", h, err)
		}
		if err := back.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := inert(md.String()); err != nil {
			t.Errorf("hostile %q: %v\n%s", h, err, md.String())
		}
	}
}

// TestReadReportRefuses: what the schema does not allow is refused, with
// the field named.
func TestReadReportRefuses(t *testing.T) {
	valid := demoReportJSON(t)
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal(valid, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	check0 := func(m map[string]any) map[string]any { return m["checks"].([]any)[0].(map[string]any) }
	long := strings.Repeat("x", maxText+1)
	tests := []struct{ name, in, want string }{
		{"a short head", edit(func(m map[string]any) { m["head"] = "abc1234" }), `head "abc1234" is not a commit id`},
		{"a head that breaks its code span", edit(func(m map[string]any) { m["head"] = "abc` <img src=x> `" }), `head "abc`},
		{"an upper-case sha", edit(func(m map[string]any) {
			m["baseline"].(map[string]any)["commit"] = strings.Repeat("A", 40)
		}), "baseline.commit"},
		{"a short baseline commit of a check", edit(func(m map[string]any) { check0(m)["baseline_commit"] = "@octocat" }), "checks[0].baseline_commit"},
		{"a history commit", edit(func(m map[string]any) {
			check0(m)["history"] = []any{map[string]any{"commit": "x", "value": 1.0}}
		}), "checks[0].history[0].commit"},
		{"an unknown check verdict", edit(func(m map[string]any) { check0(m)["verdict"] = "<b>pass</b>" }), `checks[0].verdict "<b>pass</b>" is not a verdict; valid: pass, fail`},
		{"an unknown method", edit(func(m map[string]any) { check0(m)["method"] = "[x](https://e.example)" }), `checks[0].method "[x](https://e.example)" is not a method; valid: shift, mann-whitney`},
		{"a summary that does not count the checks", edit(func(m map[string]any) { m["summary"].(map[string]any)["checks"] = 999.0 }), "does not count the checks"},
		{"an unknown inconclusive policy", edit(func(m map[string]any) { m["rules"].(map[string]any)["inconclusive"] = "<b>" }), `rules.inconclusive "<b>" is not a policy; valid: pass, warn, fail`},
		{"a report verdict", edit(func(m map[string]any) { m["verdict"] = "improved" }), `verdict "improved" is not "pass", "fail" or "inconclusive"`},
		{"a negative count", edit(func(m map[string]any) { check0(m)["samples"].(map[string]any)["current"] = -1.0 }), "checks[0].samples.current -1 is not a count"},
		{"a long reason", edit(func(m map[string]any) { check0(m)["reason"] = long }), "checks[0].reason is 65537 bytes, over the limit of 65536"},
		{"a long benchmark name", edit(func(m map[string]any) { check0(m)["benchmark"] = long }), "checks[0].benchmark is 65537 bytes, over the limit of 4096"},
		{"too many warnings", edit(func(m map[string]any) {
			w := make([]any, maxLines+1)
			for i := range w {
				w[i] = "w"
			}
			m["warnings"] = w
		}), "warnings has 10001 entries, over the limit of 10000"},
		{"trailing data", string(valid) + `{"verdict":"pass"}`, "more data after the report"},
		{"a second verdict key, pass after fail", strings.Replace(string(valid), `"verdict": "fail",`, `"verdict": "fail", "verdict": "pass",`, 1), `key "verdict" appears twice in one object`},
		{"a duplicate key in a check", strings.Replace(string(valid), `"metric": `, `"metric": "x", "metric": `, 1), `key "metric" appears twice`},
		{"a pass headline over a failing check", edit(func(m map[string]any) { m["verdict"] = "pass" }), `verdict "pass" does not follow from its checks, which make it "fail"`},
		{"a pass with no check", edit(func(m map[string]any) {
			m["verdict"], m["checks"], m["summary"] = "pass", nil, map[string]any{}
		}), `verdict "pass" does not follow from its checks, which make it "inconclusive"`},
		{"more rules from flags than rules", edit(func(m map[string]any) { m["rules"].(map[string]any)["flags"] = 99.0 }), "rules.flags 99 is more than rules.count"},
		{"over the size limit", `{"verdict":"pass","notes":["` + strings.Repeat("x", MaxReportBytes) + `"]}`, "over 64 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadReport(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "perfgate check -o json") {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// FuzzReadReport: no report makes the reader or the markdown writer panic,
// and whatever the reader accepts renders as inert markdown and reads back.
func FuzzReadReport(f *testing.F) {
	valid := demoReportJSON(f)
	f.Add(valid)
	f.Add([]byte(`{"verdict":"pass","head":"` + strings.Repeat("a", 40) + `","baseline":{},"rules":{},"summary":{},"checks":[]}`))
	var rep Report
	if err := json.Unmarshal(valid, &rep); err != nil {
		f.Fatal(err)
	}
	for _, h := range hostile {
		rep.BaseRef, rep.Notes = h, []string{h}
		rep.Checks[0].Benchmark, rep.Checks[0].Label = h, h
		var b bytes.Buffer
		if err := rep.WriteJSON(&b); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ReadReport(bytes.NewReader(data))
		if err != nil {
			return
		}
		var md, js bytes.Buffer
		if err := rep.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := inert(md.String()); err != nil {
			t.Fatalf("%v\n%s", err, md.String())
		}
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadReport(&js); err != nil {
			t.Fatalf("an accepted report, written again, is refused: %v", err)
		}
	})
}

// inert checks markdown rendered from an untrusted report: outside code
// spans and the mermaid blocks, no raw HTML but the report's own tags, no
// character reference but the escapes', no mention, issue reference,
// link, image or bare URL; code spans closed on their line and with no
// raw pipe in a table row (it would split the cell; outside a table the
// backslash would show, and the line must not head a table); table rows
// of the right width.
func inert(md string) error {
	allowedTags := []string{"<details>", "</details>", "<summary>", "</summary>", "<sub>", "</sub>"}
	allowedRefs := []string{"&lt;", "&gt;", "&amp;", "&#8203;"}
	inFence, fences := false, 0
	width := 0
	rawPipe := false // the line before had a raw pipe in a code span
	for n, line := range strings.Split(md, "\n") {
		pipeAbove := rawPipe
		rawPipe = false
		where := func(format string, args ...any) error {
			return fmt.Errorf("line %d %q: %s", n+1, line, fmt.Sprintf(format, args...))
		}
		if strings.HasPrefix(line, "```") {
			if !inFence && line != "```mermaid" || inFence && line != "```" {
				return where("a fence the report did not open or close")
			}
			inFence = !inFence
			fences++
			continue
		}
		if inFence {
			continue
		}
		if strings.ContainsRune(line, '\r') {
			return where("a carriage return splits the line")
		}
		pipes := 0
		for i := 0; i < len(line); {
			c := line[i]
			switch {
			case c == '\\' && i+1 < len(line):
				i += 2
				continue
			case c == '`':
				run := backticks(line[i:])
				end := closing(line, i+run, run)
				if end < 0 {
					return where("a code span opened at byte %d is not closed on its line", i)
				}
				for j := i + run; j < end; j++ {
					if line[j] == '|' && line[j-1] != '\\' {
						if strings.HasPrefix(line, "|") {
							return where("a raw pipe in a code span of a table row")
						}
						rawPipe = true
					}
				}
				i = end + run
				continue
			case c == '|':
				pipes++
			case c == '<':
				if prefixOf(line[i:], allowedTags) == "" {
					return where("raw HTML at byte %d", i)
				}
			case c == '&':
				ref := prefixOf(line[i:], allowedRefs)
				if ref == "" {
					return where("a character reference at byte %d", i)
				}
				i += len(ref)
				continue
			case c == '@' || c == '#' && !(i == 0 || strings.Trim(line[:i], "#") == ""):
				if !strings.HasPrefix(line[i+1:], "&#8203;") {
					return where("a live mention or reference at byte %d", i)
				}
			case c == '[' || c == ']':
				return where("an unescaped bracket (link or image) at byte %d", i)
			case strings.HasPrefix(line[i:], "://") || strings.HasPrefix(line[i:], "www."):
				return where("a bare URL at byte %d", i)
			}
			i++
		}
		switch {
		case strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "|--"):
			if pipeAbove {
				return where("a delimiter row under a line with a raw pipe in a code span: that line heads a table")
			}
		case strings.HasPrefix(line, "| "):
			if width == 0 {
				width = pipes
			} else if pipes != width {
				return where("a table row of %d cells, the header has %d", pipes-1, width-1)
			}
		default:
			width = 0
		}
	}
	if inFence {
		return fmt.Errorf("a mermaid block is not closed (%d fences)", fences)
	}
	return nil
}

func backticks(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// closing finds the run of exactly n backticks that closes a code span.
func closing(line string, from, n int) int {
	for i := from; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		run := backticks(line[i:])
		if run == n {
			return i
		}
		i += run
	}
	return -1
}

// prefixOf returns the one of prefixes s starts with, or "".
func prefixOf(s string, prefixes []string) string {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}
