package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestExpandGlobs: a pattern that matches a file named "-" (or "-x")
// yields ./- (./-x), never stdin or a flag; "-" given as it is stays
// stdin.
func TestExpandGlobs(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"-", "-x.json", "a.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, tc := range []struct {
		args, want []string
	}{
		{[]string{"*"}, []string{"./-", "./-x.json", "a.json"}},
		{[]string{"*.json"}, []string{"./-x.json", "a.json"}},
		{[]string{"-"}, []string{"-"}},
		{[]string{"a.json"}, []string{"a.json"}},
	} {
		got, err := expandGlobs(tc.args)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.want {
			tc.want[i] = filepath.FromSlash(tc.want[i])
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("expandGlobs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
