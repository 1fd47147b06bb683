package main

import (
	"os"
	"path/filepath"
	"strings"
)

// expandGlobs expands the patterns among file arguments, so that a
// workflow passes "results/*.json" as one argument and no shell expands
// it: a file a pull request names "--label=x=y.json" stays a file name.
// An argument that names an existing file, or has no *, ? or [, is kept
// as it is ("-" is stdin); a pattern is expanded in lexical order
// (filepath.Glob: within one directory level, no **), directories left
// out, a match whose name starts with "-" made ./-name, and one that
// matches no file is an error that names it.
func expandGlobs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if a == "-" || !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		if _, err := os.Lstat(a); err == nil {
			out = append(out, a) // a file whose name has a * in it
			continue
		}
		matches, err := filepath.Glob(a)
		if err != nil {
			return nil, usageErrorf("%q is not a valid file pattern (%v); use *, ? and [...] within one directory, or quote a file name", a, err)
		}
		n := len(out)
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
				if strings.HasPrefix(m, "-") {
					// A file named "-" is a file, not stdin; nor is
					// "-x" a flag.
					m = "." + string(filepath.Separator) + m
				}
				out = append(out, m)
			}
		}
		if len(out) == n {
			return nil, usageErrorf("%q matches no file; check the path (patterns use *, ? and [...] within one directory, no **)", a)
		}
	}
	return out, nil
}
