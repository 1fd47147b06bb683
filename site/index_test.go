package site

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gate"
	"github.com/perfgate/perfgate/internal/goldenfile"
)

// TestIndexGolden: a site of two repositories, one with a regression at
// its tip (genHistory's) and one steady, plus one without results: the
// index lists each with its status, and each sub-site is the site of its
// repository alone, linked back to the index.
func TestIndexGolden(t *testing.T) {
	dir := t.TempDir()
	names := []string{"github.com/org/engine", "github.com/org/plugin", "github.com/org/empty"}
	dirs, err := PrepareIndex(dir, names)
	if err != nil {
		t.Fatal(err)
	}
	if want := "r/github.com-org-engine"; dirs[0] != want {
		t.Errorf("sub-site of %s is %s, want %s", names[0], dirs[0], want)
	}
	engine, eh := genHistory(shape{commits: 40, benches: 1, metrics: 1, reps: 2})
	plugin, ph := stepHistory(30, 0, 0) // steady
	var repos []RepoSite
	for i, c := range []struct {
		commits []gate.Commit
		h       fakeHistory
		order   string
	}{{engine, eh, OrderBranch}, {plugin, ph, OrderMeasured}, {nil, fakeHistory{}, OrderMeasured}} {
		opts := Options{Ref: "main", Order: c.order, Up: "../../index.html", Forge: ParseRemote("https://" + names[i])}
		sum, err := Generate(context.Background(), c.commits, c.h, filepath.Join(dir, dirs[i]), opts)
		if err != nil {
			t.Fatal(err)
		}
		repos = append(repos, RepoSite{Name: names[i], Dir: dirs[i], Order: c.order, Ref: "main", Summary: sum})
	}
	sum, err := WriteIndex(dir, "perfgate: <org>", repos)
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{sum.Repositories[0].Status, sum.Repositories[1].Status, sum.Repositories[2].Status}; strings.Join(got, " ") != "regression ok empty" {
		t.Errorf("statuses %v, want regression ok empty", got)
	}
	if sum.Flagged != 1 || sum.Repositories[1].Flagged != 0 {
		t.Errorf("flagged %d (plugin %d): engine's regression must be engine's alone", sum.Flagged, sum.Repositories[1].Flagged)
	}
	for _, f := range []string{"index.html", Marker} {
		got, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		goldenfile.Check(t, filepath.Join("testdata", "index_"+f+".golden"), got)
	}
	ix, err := os.ReadFile(filepath.Join(dir, dirs[1], "data", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ix), `"order":"measured","up":"../../index.html"`) {
		t.Errorf("plugin's overview does not say its order and link up: %.300s", ix)
	}
	var marker IndexSummary
	data, _ := os.ReadFile(filepath.Join(dir, Marker))
	if err := json.Unmarshal(data, &marker); err != nil || len(marker.Repositories) != 3 || marker.Repositories[0].Runs == 0 {
		t.Errorf("marker %s: %v", data, err)
	}
	// Written again with one repository fewer: the other's sub-site goes.
	if _, err := PrepareIndex(dir, names[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, dirs[1])); !os.IsNotExist(err) {
		t.Errorf("the sub-site of a repository no longer drawn stays: %v", err)
	}
}

// TestPrepareIndexUniqueDirs: names that make the same file name get
// distinct sub-directories; a foreign directory is refused.
func TestPrepareIndexUniqueDirs(t *testing.T) {
	dirs, err := PrepareIndex(t.TempDir(), []string{"a/b", "a.b", "A/B"})
	if err != nil {
		t.Fatal(err)
	}
	if dirs[0] == dirs[2] || dirs[0] == dirs[1] || dirs[1] == dirs[2] {
		t.Errorf("sub-directories %v are not distinct", dirs)
	}
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("x"), 0o644)
	if _, err := PrepareIndex(foreign, []string{"a"}); err == nil {
		t.Error("PrepareIndex of a directory holding other files: no error")
	}
}

// A repository cannot take another's sub-directory by choosing a name
// that slugs like it (issue 34): the name that is its slug keeps it, in
// any order and beside any other names, and no name can make a
// directory the hashed one of another.
func TestPrepareIndexSlugTakeover(t *testing.T) {
	orders := [][]string{
		{"Engine", "engine", "engine-2"},
		{"engine-2", "Engine", "engine"},
		{"engine", "engine-2", "Engine"},
	}
	var first map[string]string
	for _, names := range orders {
		dirs, err := PrepareIndex(t.TempDir(), names)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for i, n := range names {
			got[n] = dirs[i]
		}
		if got["engine"] != "r/engine" || got["engine-2"] != "r/engine-2" {
			t.Errorf("names %q: engine in %s, engine-2 in %s; want r/engine and r/engine-2", names, got["engine"], got["engine-2"])
		}
		if !strings.HasPrefix(got["Engine"], "r/engine--") {
			t.Errorf("names %q: Engine in %s, want r/engine--HASH", names, got["Engine"])
		}
		if first == nil {
			first = got
		} else if got["Engine"] != first["Engine"] {
			t.Errorf("Engine's directory depends on the order: %s and %s", got["Engine"], first["Engine"])
		}
	}
	// Neither name is its slug: both hashed, distinct, and alone each
	// keeps the plain slug.
	dirs, _ := PrepareIndex(t.TempDir(), []string{"Org/Engine", "org/engine"})
	if dirs[0] == dirs[1] || !strings.HasPrefix(dirs[0], "r/org-engine--") || !strings.HasPrefix(dirs[1], "r/org-engine--") {
		t.Errorf("sub-directories %v, want two distinct r/org-engine--HASH", dirs)
	}
	if dirs, _ := PrepareIndex(t.TempDir(), []string{"org/engine"}); dirs[0] != "r/org-engine" {
		t.Errorf("a name alone: %v, want r/org-engine", dirs)
	}
	// A name that is another's hashed directory is not its slug (slug
	// never writes "--"), so it cannot take it.
	hashed := strings.TrimPrefix(first["Engine"], "r/")
	dirs, _ = PrepareIndex(t.TempDir(), []string{"Engine", "engine", hashed})
	if dirs[0] == dirs[2] {
		t.Errorf("name %q took Engine's directory %s", hashed, dirs[0])
	}
}
