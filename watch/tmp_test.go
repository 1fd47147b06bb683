package watch

import (
	"fmt"
	"strings"
	"testing"
)

func TestTmpShow(t *testing.T) {
	for _, s := range simCorpus() {
		if !strings.Contains(s.name, "drift") && !strings.Contains(s.name, "random walk (") && !strings.Contains(s.name, "thermal cycle (+") {
			continue
		}
		var d []string
		for _, st := range Detect(s.values, DefaultParams()) {
			k := ""
			if st.Drift {
				k = "D"
			}
			if st.Suspected {
				k += "?"
			}
			d = append(d, fmt.Sprintf("%d..%d%s(%.1f)", st.From, st.At, k, st.Z))
		}
		t.Logf("%-20.20s truth %v: %s", s.name, s.truth, strings.Join(d, " "))
	}
}
