package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/store"
)

// Runs that cannot be stored go to a directory of the user's own, never
// to a fixed name in the shared temporary directory that another user
// could create first (issue 34): a directory of that name, a link to
// elsewhere, one another user owns or one others may write is not used.
func TestSaveAsideDirIsTheUsers(t *testing.T) {
	uid := os.Getuid()
	cases := []struct {
		name    string
		cache   bool                                      // the user has a cache directory
		prepare func(t *testing.T, tmp, elsewhere string) // what another user made first
		want    string                                    // where the runs go, relative to tmp ("" none)
	}{
		{"a link at the old shared name", false, func(t *testing.T, tmp, elsewhere string) {
			if err := os.Symlink(elsewhere, filepath.Join(tmp, "perfgate-unsaved")); err != nil {
				t.Fatal(err)
			}
		}, fmt.Sprintf("perfgate-unsaved-%d", uid)},
		{"the user's cache directory first", true, nil, "cache/perfgate/unsaved"},
		{"a link at the user's name", false, func(t *testing.T, tmp, elsewhere string) {
			if err := os.Symlink(elsewhere, filepath.Join(tmp, fmt.Sprintf("perfgate-unsaved-%d", uid))); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"others may write it", false, func(t *testing.T, tmp, elsewhere string) {
			d := filepath.Join(tmp, fmt.Sprintf("perfgate-unsaved-%d", uid))
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"another user's", false, func(t *testing.T, tmp, elsewhere string) {
			if uid != 0 {
				t.Skip("making a directory of another user's needs root")
			}
			d := filepath.Join(tmp, fmt.Sprintf("perfgate-unsaved-%d", uid))
			if err := os.Mkdir(d, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(d, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmp, elsewhere := t.TempDir(), t.TempDir()
			t.Setenv("TMPDIR", tmp)
			t.Setenv("HOME", "")
			t.Setenv("XDG_CACHE_HOME", "")
			if tc.cache {
				t.Setenv("XDG_CACHE_HOME", filepath.Join(tmp, "cache"))
			}
			if tc.prepare != nil {
				tc.prepare(t, tmp, elsewhere)
			}
			locked := errors.New("history locked")
			sv := &Saver{Open: func() (*store.Store, error) { return nil, locked }, DB: "postgres://u@h/db"}
			_, err := sv.Save([]store.Run{{Benchmark: "s", Metrics: map[string]float64{"mean_ttft_ms": 1}}})
			var ue *UnsavedError
			saved := errors.As(err, &ue)
			if found, _ := filepath.Glob(filepath.Join(elsewhere, "*")); len(found) > 0 {
				t.Fatalf("runs written where another user pointed: %v", found)
			}
			if tc.want == "" {
				if saved {
					t.Fatalf("runs saved in %s, a directory not the user's own", ue.File)
				}
				if !errors.Is(err, locked) {
					t.Errorf("Save = %v, want the history's error", err)
				}
				return
			}
			if !saved {
				t.Fatalf("Save = %v, want the runs saved", err)
			}
			dir := filepath.Join(tmp, tc.want)
			if filepath.Dir(ue.File) != dir || !strings.Contains(ue.Error(), ue.File) {
				t.Errorf("runs saved in %s, want %s", ue.File, dir)
			}
			if fi, err := os.Stat(dir); err != nil {
				t.Error(err)
			} else if fi.Mode().Perm() != 0o700 {
				t.Errorf("%s: mode %v, want 0700", dir, fi.Mode().Perm())
			}
		})
	}
}
