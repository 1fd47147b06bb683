package gate

import (
	"fmt"
	"sort"
	"strings"
)

// TestbedLabel is the name under which the testbed is listed in
// ignore_labels to stop it from separating series (every machine's runs
// then form one series, as before perfgate recorded testbeds).
const TestbedLabel = "testbed"

// UnknownTestbed is the testbed of results whose machine is unknown (a
// file ingested outside CI without --testbed; testbed.Unknown). Unknown is
// a testbed like any other for comparison with itself (one person's own
// files, measured on the machine they always use), with a note saying the
// machines are unnamed; it never compares with a named testbed.
const UnknownTestbed = "unknown"

// testbed returns the testbed that identifies a sample's series: "" when
// none was recorded or when ignore_labels lists "testbed".
func (id identity) testbed(s *Sample) string {
	if id.ignore[TestbedLabel] {
		return ""
	}
	return s.Testbed
}

// legacyKey is the series key a sample would have without a testbed: the
// key of the results stored before perfgate recorded testbeds, which a
// series on any testbed accepts.
func (id identity) legacyKey(s *Sample) string {
	if id.testbed(s) == "" {
		return id.key(s)
	}
	c := *s
	c.Testbed = ""
	return id.key(&c)
}

// candidates returns the walked samples a series may compare with, in
// walk order: its own (same benchmark, labels and testbed) and, for a
// series on a named testbed, the results without a testbed (stored before
// perfgate recorded one) of the same benchmark and labels.
func (c *checker) candidates(sr *series) []indexed {
	own := c.w.bySeries[sr.key]
	if sr.testbed == "" || sr.legacy == sr.key {
		return own
	}
	old := c.w.bySeries[sr.legacy]
	if len(old) == 0 {
		return own
	}
	out := make([]indexed, 0, len(own)+len(old))
	i, j := 0, 0
	for i < len(own) || j < len(old) {
		if j == len(old) || (i < len(own) && own[i].idx <= old[j].idx) {
			out = append(out, own[i])
			i++
		} else {
			out = append(out, old[j])
			j++
		}
	}
	return out
}

// noteHeadTestbeds records the head's testbeds and legacy keys, and the
// report's list of testbeds.
func (c *checker) noteHeadTestbeds(all []*series) {
	c.headTestbeds = map[string]bool{}
	c.headLegacy = map[string]bool{}
	for _, sr := range all {
		c.headTestbeds[sr.testbed] = true
		c.headLegacy[sr.legacy] = true
		if sr.testbed != "" && !contains(c.rep.Testbeds, sr.testbed) {
			c.rep.Testbeds = append(c.rep.Testbeds, sr.testbed)
		}
	}
	sort.Strings(c.rep.Testbeds)
}

// notHeads reports whether a baseline sample belongs to none of head's
// series for a reason other than a missing benchmark: it was measured on
// a testbed head was not, or it is a result without a testbed that one of
// head's series accepts. missing() does not report such samples.
func (c *checker) notHeads(k keyed) bool {
	tb := c.id.testbed(k.s)
	if tb != "" {
		return !c.headTestbeds[tb]
	}
	return c.headLegacy[k.key]
}

// testbedMismatch records a series without a baseline whose benchmark and
// labels were measured nearby on another testbed, and returns it (nil when
// none). Such results are not compared: a laptop is not a CI runner.
func (c *checker) testbedMismatch(sr *series) *Mismatch {
	if sr.testbed == "" {
		return nil
	}
	limit := min(len(c.w.commits), c.cfg.Baseline.MaxDistance+1)
	for i := c.skip; i < limit; i++ {
		sha := c.w.commits[i].SHA
		for _, k := range c.w.samples[sha] {
			tb := c.id.testbed(k.s)
			if k.s.Dirty || tb == "" || tb == sr.testbed || c.id.legacyKey(k.s) != sr.legacy {
				continue
			}
			diff := fmt.Sprintf("testbed: %q (head) vs %q (baseline)", sr.testbed, tb)
			c.rep.Mismatches = append(c.rep.Mismatches, Mismatch{Benchmark: sr.bench, HeadLabels: sr.labels, BaselineLabels: sr.labels,
				Commit: sha, Diff: diff, HeadTestbed: sr.testbed, BaselineTestbed: tb})
			return &c.rep.Mismatches[len(c.rep.Mismatches)-1]
		}
	}
	return nil
}

// testbedRemedy says why a series measured on head's testbed was not
// compared with the base branch's results on another, and what to do.
func testbedRemedy(m Mismatch) string {
	switch {
	case m.HeadTestbed == UnknownTestbed:
		return fmt.Sprintf("head's results have testbed %q (a file ingested outside CI without --testbed) and the base branch's (%s) were measured on %q, and an unnamed machine is never compared with a named one; if the file was measured on that machine, ingest it again with --testbed %q and invalidate the unknown run(s) (perfgate runs --commit %s lists them), else measure the base branch the way head was measured",
			UnknownTestbed, shortSHA(m.Commit), m.BaselineTestbed, m.BaselineTestbed, "HEAD")
	case m.BaselineTestbed == UnknownTestbed:
		return fmt.Sprintf("head was measured on testbed %q and the base branch's results (%s) have testbed %q (files ingested outside CI without --testbed), and an unnamed machine is never compared with a named one; measure the base branch on %q (in CI: let the record job run on the base branch), or, if those files were measured on this machine, ingest them again with --testbed %q",
			m.HeadTestbed, shortSHA(m.Commit), UnknownTestbed, m.HeadTestbed, m.HeadTestbed)
	}
	return fmt.Sprintf("head was measured on testbed %q, its nearest baseline (%s) on testbed %q, and runs of different testbeds are never compared; measure the base branch on this testbed, or, if the machines are alike, name both the same with --testbed NAME (or testbed: in the rules file)",
		m.HeadTestbed, shortSHA(m.Commit), m.BaselineTestbed)
}

// testbedWarnings says which series compared with results that have no
// testbed, and which found a baseline only on another testbed. When those
// explain why no series has a baseline, the testbed warnings come first
// (first) in place of the generic "no baseline" one, whose advice (fetch
// the history) would not help.
func (c *checker) testbedWarnings(all []*series) (first, rest []string) {
	legacy := 0
	for _, sr := range all {
		if sr.testbed == "" {
			continue
		}
		for _, p := range sr.window {
			for _, s := range p.runs {
				if c.id.testbed(s) == "" {
					legacy++
				}
			}
		}
	}
	if legacy > 0 {
		rest = append(rest, fmt.Sprintf("%d baseline result(s) have no testbed (stored before perfgate recorded which machine measured a run) and were compared as if measured on %s; results stored from now on carry their testbed",
			legacy, quoteList(c.rep.Testbeds)))
	}
	c.unknownNote(all)
	explained := map[string]bool{}
	// One warning per pair of testbeds, naming its series: the remedy is
	// the same for each.
	var pairs []string
	byPair := map[string][]Mismatch{}
	for _, m := range c.rep.Mismatches {
		if m.HeadTestbed == "" {
			continue
		}
		explained[m.Benchmark+"\x00"+labelString(m.HeadLabels)+"\x00"+m.HeadTestbed] = true
		pair := m.HeadTestbed + "\x00" + m.BaselineTestbed
		if byPair[pair] == nil {
			pairs = append(pairs, pair)
		}
		byPair[pair] = append(byPair[pair], m)
	}
	var mm []string
	for _, pair := range pairs {
		ms := byPair[pair]
		names := make([]string, 0, len(ms))
		for _, m := range ms {
			names = append(names, seriesName(m.Benchmark, m.HeadLabels))
		}
		mm = append(mm, fmt.Sprintf("%s not compared: %s", listSeries(names), testbedRemedy(ms[0])))
	}
	if c.noBaseline != "" && len(mm) > 0 {
		every := true
		for _, sr := range all {
			if !explained[sr.bench+"\x00"+labelString(sr.labels)+"\x00"+sr.testbed] {
				every = false
			}
		}
		if every {
			c.noBaseline = ""
			return mm, rest
		}
	}
	return nil, append(rest, mm...)
}

// unknownNote says, once, that results of the unknown testbed were
// compared with each other: perfgate took them as one machine's.
func (c *checker) unknownNote(all []*series) {
	for _, sr := range all {
		if sr.testbed == UnknownTestbed && sr.baseIdx >= 0 {
			c.rep.Notes = append(c.rep.Notes, fmt.Sprintf("results of testbed %q (files ingested outside CI without --testbed) were compared with each other, as one unnamed machine's; name the machine with --testbed NAME on ingest (or testbed: in .perfgate.yml) to keep other machines' files apart", UnknownTestbed))
			return
		}
	}
}

// listSeries names series for a warning: every one up to three, else
// the first two and how many more.
func listSeries(names []string) string {
	if len(names) <= 3 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more series", strings.Join(names[:2], ", "), len(names)-2)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

// labelMismatches counts the mismatches of labels (not of testbeds, which
// testbedWarnings reports).
func labelMismatches(ms []Mismatch) int {
	n := 0
	for _, m := range ms {
		if m.HeadTestbed == "" {
			n++
		}
	}
	return n
}

// displayLabels are a sample's identity labels with its testbed, for
// reports that show several series side by side (compare, history).
func (id identity) displayLabels(s *Sample) map[string]string {
	l := id.labels(s.Labels)
	if tb := id.testbed(s); tb != "" {
		if l == nil {
			l = map[string]string{}
		}
		l[TestbedLabel] = tb
	}
	return l
}

// adoptLegacy gives the results without a testbed (stored before perfgate
// recorded one) the testbed of the other results of their series when
// there is exactly one, so that compare lines up a history across the
// upgrade; it returns the samples (copies where changed) and how many it
// adopted.
func adoptLegacy(id identity, sides ...[]Sample) ([][]Sample, int) {
	beds := map[string]map[string]bool{} // legacy key -> testbeds
	for _, ss := range sides {
		for i := range ss {
			if tb := id.testbed(&ss[i]); tb != "" {
				k := id.legacyKey(&ss[i])
				if beds[k] == nil {
					beds[k] = map[string]bool{}
				}
				beds[k][tb] = true
			}
		}
	}
	out := make([][]Sample, len(sides))
	n := 0
	for si, ss := range sides {
		out[si] = ss
		copied := false
		for i := range ss {
			if id.ignore[TestbedLabel] || ss[i].Testbed != "" {
				continue
			}
			tbs := beds[id.key(&ss[i])]
			if len(tbs) != 1 {
				continue
			}
			if !copied {
				out[si] = append([]Sample(nil), ss...)
				copied = true
			}
			for tb := range tbs {
				out[si][i].Testbed = tb
			}
			n++
		}
	}
	return out, n
}
