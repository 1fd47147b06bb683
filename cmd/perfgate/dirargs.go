package main

import (
	"fmt"
	"os"

	"github.com/perfgate/perfgate/ingest"
)

// expandDirs replaces each directory among the file arguments with the
// result files ingest.DirInputs finds in it (the runs a benchmark tool
// wrote: vllm bench sweep serve's run=N.json, AIPerf's profile_runs,
// inference-perf's stages), and says on stderr which files it leaves out
// and why (the tool's own aggregate, warm-ups, failures).
func expandDirs(e *env, files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		fi, err := os.Stat(f)
		if f == "-" || err != nil || !fi.IsDir() {
			out = append(out, f)
			continue
		}
		ins, err := ingest.DirInputs(f)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		for _, in := range ins {
			if in.Skip != "" {
				fmt.Fprintf(e.stderr, "perfgate: note: %s left out: %s\n", in.Path, in.Skip)
				continue
			}
			out = append(out, in.Path)
		}
	}
	return out, nil
}
