package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOriginURL compares OriginURL with what git config --get prints,
// and says ok false where only git can tell.
func TestOriginURL(t *testing.T) {
	for _, c := range []struct {
		name   string
		setup  []string // git commands
		config string   // appended to .git/config
		want   string
		ok     bool
	}{
		{name: "no remote", ok: true},
		{name: "https remote", setup: []string{"remote add origin https://github.com/o/r.git"}, want: "https://github.com/o/r.git", ok: true},
		{name: "another remote only", setup: []string{"remote add upstream git@github.com:o/r.git"}, ok: true},
		{name: "two values, the last wins", setup: []string{"remote add origin git@github.com:o/a.git", "config --add remote.origin.url git@github.com:o/b.git"}, want: "git@github.com:o/b.git", ok: true},
		{name: "quoted and commented", config: "[remote \"origin\"] # the forge\n\turl = \"ssh://git@host:22/o/r\" ; why\n", want: "ssh://git@host:22/o/r", ok: true},
		{name: "an include", config: "[include]\n\tpath = other.config\n", ok: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newTestRepo(t)
			// The user's config is the test's (empty) one; git's own
			// variables would make OriginURL defer to git.
			t.Setenv("HOME", r.home)
			for _, kv := range os.Environ() {
				if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GIT_CONFIG") || k == "XDG_CONFIG_HOME" {
					t.Setenv(k, "")
					os.Unsetenv(k)
				}
			}
			for _, s := range c.setup {
				r.git(strings.Fields(s)...)
			}
			if c.config != "" {
				f, err := os.OpenFile(filepath.Join(r.dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(c.config)
				f.Close()
			}
			repo, err := Open(r.dir)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := repo.OriginURL()
			if got != c.want || ok != c.ok {
				t.Errorf("OriginURL = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
			if ok {
				gitSays, _ := r.run(r.dir, nil, "config", "--get", "remote.origin.url")
				if got != gitSays {
					t.Errorf("OriginURL = %q, git config --get says %q", got, gitSays)
				}
			}
		})
	}
}
