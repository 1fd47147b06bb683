package runner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/store"
)

// accepts reports whether a stored run may stand for a measurement on
// testbed: it has no testbed (stored before perfgate recorded one), or
// this one, or testbed is "" (bisect --stored, which keeps testbeds apart
// as setups).
func accepts(testbed string, r store.Run) bool {
	return testbed == "" || r.Testbed == "" || r.Testbed == testbed
}

// withTestbed is a run's labels with its testbed under "testbed", so that
// runs of two testbeds are two setups and --label testbed=NAME picks one.
func withTestbed(r store.Run) map[string]string {
	if r.Testbed == "" {
		return r.Labels
	}
	l := make(map[string]string, len(r.Labels)+1)
	for k, v := range r.Labels {
		l[k] = v
	}
	l[gate.TestbedLabel] = r.Testbed
	return l
}

// adoptLegacyTestbed gives runs without a testbed the testbed of the other
// runs of their benchmark and labels when they all share one, so that a
// range measured partly before perfgate recorded testbeds is one setup.
func adoptLegacyTestbed(runs map[string][]store.Run) {
	beds := map[string]map[string]bool{}
	setup := func(r store.Run) string { return r.Benchmark + "\x00" + identityKey(r.Labels) }
	for _, rs := range runs {
		for _, r := range rs {
			if r.Testbed != "" {
				k := setup(r)
				if beds[k] == nil {
					beds[k] = map[string]bool{}
				}
				beds[k][r.Testbed] = true
			}
		}
	}
	for _, rs := range runs {
		for i := range rs {
			if rs[i].Testbed != "" || len(beds[setup(rs[i])]) != 1 {
				continue
			}
			for tb := range beds[setup(rs[i])] {
				rs[i].Testbed = tb
			}
		}
	}
}

// setupKey identifies the setup of a stored run for bisect: its identity
// labels and its testbed.
func setupKey(r store.Run) string { return identityKey(r.Labels) + "\x00" + r.Testbed }

// setupNames renders setup keys for a message, sorted: the labels ("(no
// labels)" when none), and the testbed only when the setups do not all
// share one.
func setupNames(setups map[string]int) []string {
	beds := map[string]bool{}
	for k := range setups {
		_, tb, _ := strings.Cut(k, "\x00")
		beds[tb] = true
	}
	names := make([]string, 0, len(setups))
	for k := range setups {
		labels, tb, _ := strings.Cut(k, "\x00")
		if labels == "" {
			labels = "(no labels)"
		}
		if len(beds) > 1 {
			if tb == "" {
				tb = "none recorded"
			}
			labels += fmt.Sprintf(" on testbed %q", tb)
		}
		names = append(names, labels)
	}
	sort.Strings(names)
	return names
}
