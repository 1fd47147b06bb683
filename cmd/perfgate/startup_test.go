package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// initBudget is how many bytes the package initialization of perfgate's
// own packages may allocate in every process, before main runs
// (GODEBUG=inittrace=1). Before issue 37 it was about 300 KB, of which
// the github package's watch-marker regexps (their {1,100} repeats) 100 KB,
// the command line's regexps 76 KB and the site's index template 20 KB;
// now regexps and templates are compiled on first use, and what is left is
// the metric table (53 KB) and the formats ingest registers (29 KB).
const initBudget = 128 << 10

// TestPackageInitIsLight: a process that only prints its version (as every
// perfgate process starts) must not spend more than initBudget in the
// package initialization of perfgate's own packages. Allocation counts,
// unlike times, do not depend on the machine's load.
func TestPackageInitIsLight(t *testing.T) {
	parallel(t)
	args, _ := json.Marshal([]string{"perfgate", "--version"})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+string(args), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("perfgate --version: %v\n%s", err, out)
	}
	total, per := int64(0), map[string]int64{}
	for _, l := range strings.Split(string(out), "\n") {
		// init github.com/perfgate/perfgate/metric @3.2 ms, 0.066 ms clock, 53152 bytes, 515 allocs
		var pkg string
		var at, clock float64
		var bytes, allocs int64
		if _, err := fmt.Sscanf(l, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &pkg, &at, &clock, &bytes, &allocs); err != nil {
			continue
		}
		if pkg == "github.com/perfgate/perfgate" || strings.HasPrefix(pkg, "github.com/perfgate/perfgate/") {
			per[pkg] += bytes
			total += bytes
		}
	}
	if len(per) == 0 {
		t.Fatalf("no package initialization traced (GODEBUG=inittrace=1):\n%.2000s", out)
	}
	if total > initBudget {
		var rows []string
		for p, b := range per {
			rows = append(rows, fmt.Sprintf("%8d %s", b, p))
		}
		sort.Sort(sort.Reverse(sort.StringSlice(rows)))
		t.Errorf("perfgate's packages allocate %d bytes at initialization, over the budget of %d: compile regexps and templates on first use (sync.OnceValue), not in package variables:\n%s",
			total, initBudget, strings.Join(rows, "\n"))
	}
}
