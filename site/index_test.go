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
