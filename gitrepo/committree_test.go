package gitrepo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A tree measured dirty, then committed as it is: the commit's states
// include the tree's, and an edit after measuring does not.
func TestCommitStates(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		change func(r *testRepo)
		commit []string // git arguments that commit the tree
		match  bool
	}{
		{"modified, commit -am", func(r *testRepo) { r.write(map[string]string{"src/a.go": "package a // 1\n"}) }, []string{"commit", "-qam", "x"}, true},
		{"deleted", func(r *testRepo) { os.Remove(filepath.Join(r.dir, "README.md")) }, []string{"commit", "-qam", "x"}, true},
		{"staged new file", func(r *testRepo) {
			r.write(map[string]string{"src/b/new.go": "package b\n"})
			r.git("add", "src/b/new.go")
		}, []string{"commit", "-qm", "x"}, true},
		{"untracked new file, add -A", func(r *testRepo) {
			r.write(map[string]string{"src/b/new.go": "package b\n", "src/a.go": "package a // 2\n"})
		}, []string{"commit", "-qam", "x"}, false}, // the untracked file stays out of the commit
		{"executable", func(r *testRepo) {
			r.write(map[string]string{"run.sh": "#!/bin/sh\n"})
			os.Chmod(filepath.Join(r.dir, "run.sh"), 0o755)
			r.git("add", "run.sh")
		}, []string{"commit", "-qm", "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRepo(t)
			r.commit("one", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
			tt.change(r)
			before, err := r.open().TreeState(ctx, nil)
			if err != nil || before.Hash == "" {
				t.Fatalf("TreeState() = %v, %v", before, err)
			}
			parent, _ := r.open().Head()
			r.git(tt.commit...)
			gotParent, states, err := r.open().CommitStates("HEAD")
			if err != nil || gotParent != parent {
				t.Fatalf("CommitStates() parent %q, err %v; want %q", gotParent, err, parent)
			}
			if got := slices.Contains(states, before.Hash); got != tt.match {
				t.Errorf("states %q contain the measured tree's %q: %v, want %v", states, before.Hash, got, tt.match)
			}
		})
	}
	t.Run("add -A", func(t *testing.T) {
		r := newTestRepo(t)
		r.commit("one", map[string]string{"README.md": "hello\n"})
		r.write(map[string]string{"new.txt": "new\n", "README.md": "bye\n"})
		before, _ := r.open().TreeState(ctx, nil)
		r.git("add", "-A")
		r.git("commit", "-qm", "x")
		_, states, _ := r.open().CommitStates("HEAD")
		if !slices.Contains(states, before.Hash) {
			t.Errorf("states %q miss the untracked tree's %q", states, before.Hash)
		}
	})
}
