package histsync

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/store"
)

// editBranch commits files (path -> content; "" deletes) to the remote's
// data branch with the git CLI, as a person or another tool would,
// creating the branch when it does not exist.
func (w *world) editBranch(files map[string]string) {
	w.t.Helper()
	x := filepath.Join(w.t.TempDir(), "edit")
	if strings.Contains(runGit(w.t, w.bare, "branch", "--list", DefaultBranch), DefaultBranch) {
		runGit(w.t, w.root, "clone", "-q", "-b", DefaultBranch, w.remote, x)
	} else {
		runGit(w.t, w.root, "init", "-q", "-b", DefaultBranch, x)
		runGit(w.t, x, "remote", "add", "origin", w.remote)
	}
	for name, body := range files {
		p := filepath.Join(x, filepath.FromSlash(name))
		if body == "" {
			os.Remove(p)
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			w.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			w.t.Fatal(err)
		}
	}
	runGit(w.t, x, "add", "-A", ".")
	runGit(w.t, x, "commit", "-q", "-m", "edit")
	runGit(w.t, x, "push", "-q", "origin", DefaultBranch)
}

// testRuns makes n valid runs of bench at commit, with their JSONL lines.
func testRuns(bench, commit string, n int) ([]store.Run, []string) {
	runs := make([]store.Run, n)
	lines := make([]string, n)
	for i := range runs {
		runs[i] = store.Run{
			Commit: commit, Benchmark: bench, Time: time.Date(2025, 6, 1, 0, 0, i, 0, time.UTC),
			Metrics: map[string]float64{"mean_ttft_ms": 50 + float64(i)}, Labels: map[string]string{},
			Source: store.Source{Format: "generic", File: fmt.Sprintf("%s-%d.json", bench, i)},
		}
		runs[i].ID = store.ContentID(runs[i])
		lines[i] = string(store.AppendJSON(nil, &runs[i]))
	}
	return runs, lines
}

// TestSyncStrayFiles: files that are not perfgate's on the branch are
// skipped with their path named, never a panic (a file named
// runs/zz/a.json made sync panic with "slice bounds out of range").
func TestSyncStrayFiles(t *testing.T) {
	w := newWorld(t)
	runs, lines := testRuns("serving", w.code[0], 3)
	w.editBranch(map[string]string{
		"README.md":                          "format 1",
		"runs/zz/a.json":                     "{}",
		"runs/" + runs[0].ID[:2] + "/x.json": lines[0],
		"runs/a.json":                        lines[1],
		"runs/" + runs[2].ID[:2] + "/" + runs[2].ID + ".json": lines[2],
		"runs/" + runs[1].ID[:2] + "/" + runs[1].ID + ".json": "{}\n{}\n",
	})
	a := w.clone("a")
	res := a.sync(t, Options{NoPush: true})
	if res.Pulled != 1 || res.Format != 1 {
		t.Errorf("pull over stray files: %+v", res)
	}
	got := strings.Join(res.Skipped, "\n")
	for _, want := range []string{"runs/zz: ", "runs/" + runs[0].ID[:2] + "/x.json: ", "runs/a.json: ", "exactly one JSONL line"} {
		if !strings.Contains(got, want) {
			t.Errorf("skipped does not name %q:\n%s", want, got)
		}
	}

	// The first push migrates to format 2; the stray files are kept
	// under unreadable/runs, every run is in a pack.
	a.put(t, "serving", w.code[1], 1, false)
	res = a.sync(t, Options{})
	if res.Pushed != 1 || res.Format != FormatVersion {
		t.Errorf("migrating push: %+v", res)
	}
	if out := runGit(t, w.bare, "ls-tree", "--name-only", DefaultBranch); strings.Contains(out, "runs") || !strings.Contains(out, "unreadable") || !strings.Contains(out, "FORMAT") {
		t.Errorf("root after the migration:\n%s", out)
	}
	// runs 0 and 1 are in unreadable/runs (in misplaced files), run 2
	// and the new one in a pack.
	if n := len(w.remoteRuns()); n != 4 {
		t.Errorf("%d runs on the branch, want 4", n)
	}
	w.onlyAdds()

	// Format 2 with stray files and lines.
	w.editBranch(map[string]string{
		"log/9/a.jsonl":                lines[0] + "\n",
		"log/0/notes.txt":              "hello",
		"log/0/bad.jsonl":              lines[0] + "\nnot json\n{\"id\":\"zz\"}\n" + lines[1] + "\n",
		"packs/garbage/x.jsonl":        lines[0] + "\n",
		"packs/2026-01":                "a file, not a directory",
		"stray.bin":                    "\x00\x01",
		"log/1/" + "link.jsonl":        "",
		"packs/2026-02/e.jsonl":        "\n\n",
		"packs/2026-02/ok.jsonl":       lines[0] + "\n",
		"log/0/x\n::error::forged.txt": "x",
	})
	b := w.clone("b")
	res = b.sync(t, Options{NoPush: true})
	got = strings.Join(res.Skipped, "\n")
	for _, want := range []string{"log/9: ", "log/0/notes.txt: ", "log/0/bad.jsonl:2: ", "log/0/bad.jsonl:3: ", "packs/garbage: ", "packs/2026-01: ", "stray.bin: ", `"log/0/x\n::error::forged.txt": `} {
		if !strings.Contains(got, want) {
			t.Errorf("skipped does not name %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\n::error::") {
		t.Errorf("a file name forged a log line:\n%s", got)
	}
	if res.Pulled != 4 { // runs 0 and 1 from bad.jsonl and ok.jsonl, run 2 and the pushed one from a pack
		t.Errorf("pulled %d runs, want 4: %+v", res.Pulled, res)
	}
}

func TestSyncFormatErrors(t *testing.T) {
	for _, tt := range []struct {
		format, want string
	}{
		{"3\n", "history format 3, newer than this perfgate understands (2): upgrade perfgate"},
		{"two\n", `FORMAT holds "two\n", not a format number`},
	} {
		w := newWorld(t)
		w.editBranch(map[string]string{"FORMAT": tt.format})
		a := w.clone("a")
		_, err := Sync(context.Background(), a.dir, a.st, Options{})
		if !errors.Is(err, ErrConfig) || !strings.Contains(fmt.Sprint(err), tt.want) {
			t.Errorf("FORMAT %q: %v, want %q", tt.format, err, tt.want)
		}
	}
}

// TestSyncCompaction pushes many times with small levels: files are
// merged level by level into packs, no run is lost on the way, the
// number of files stays small, and a fresh clone gets every run.
func TestSyncCompaction(t *testing.T) {
	defer func(f int, c [levels]int64) { fanIn, levelCeil = f, c }(fanIn, levelCeil)
	fanIn, levelCeil = 3, [levels]int64{1 << 10, 3 << 10, 9 << 10}
	w := newWorld(t)
	a, b := w.clone("a"), w.clone("b")
	var want []string
	for i := 0; i < 40; i++ {
		c := a
		if i%3 == 0 {
			c = b
		}
		want = append(want, c.put(t, fmt.Sprint("bench-", i), w.code[i%len(w.code)], 2, false)...)
		res := c.sync(t, Options{})
		if res.Pushed != 2 {
			t.Fatalf("push %d: %+v", i, res)
		}
	}
	all := sortedUnion(want)
	if got := w.remoteRuns(); !equal(got, all) {
		t.Errorf("remote has %d runs, want %d", len(got), len(all))
	}
	w.onlyAdds()
	files := strings.Split(runGit(t, w.bare, "ls-tree", "-r", "--name-only", DefaultBranch), "\n")
	var packs int
	for _, f := range files {
		if strings.HasPrefix(f, "packs/") {
			packs++
		}
	}
	if packs == 0 || len(files) > 3+levels*fanIn+packs {
		t.Errorf("after 40 pushes: %d files (%d packs):\n%s", len(files), packs, strings.Join(files, "\n"))
	}
	log := runGit(t, w.bare, "log", "--format=%B", DefaultBranch)
	if !strings.Contains(log, "merged the 3 files of log/0") {
		t.Errorf("no merge in the log:\n%s", log)
	}
	c := w.clone("c")
	if res := c.sync(t, Options{NoPush: true}); res.Pulled != len(all) {
		t.Errorf("fresh clone pulled %d runs, want %d", res.Pulled, len(all))
	}
	if got := c.ids(t); !equal(got, all) {
		t.Errorf("fresh clone has %d runs, want %d", len(got), len(all))
	}
}

// TestSyncPullsDeltas: a fresh clone reads files of runs that the remote
// keeps as deltas of one another (as git servers do after a gc), through
// the pack reader of large blobs.
func TestSyncPullsDeltas(t *testing.T) {
	defer func(l int64) { largeBlob = l }(largeBlob)
	largeBlob = 512
	w := newWorld(t)
	a := w.clone("a")
	var want []string
	for i := 0; i < 6; i++ {
		want = append(want, a.put(t, fmt.Sprint("bench-", i), w.code[i%len(w.code)], 20, false)...)
		a.sync(t, Options{})
	}
	runGit(t, w.bare, "repack", "-q", "-a", "-d", "-f", "--window=50", "--depth=50")
	if v := runGit(t, w.bare, "count-objects", "-v"); !strings.Contains(v, "in-pack") {
		t.Fatalf("no pack: %s", v)
	}
	deltas := 0
	for _, idx := range strings.Fields(runGit(t, w.bare, "rev-parse", "--git-path", "objects/pack")) {
		files, _ := filepath.Glob(filepath.Join(w.bare, idx, "*.idx"))
		for _, f := range files {
			for _, l := range strings.Split(runGit(t, w.bare, "verify-pack", "-v", f), "\n") {
				if fs := strings.Fields(l); len(fs) == 7 && fs[1] == "blob" {
					deltas++
				}
			}
		}
	}
	if deltas == 0 {
		t.Fatal("the remote's pack holds no deltified blob: the test tests nothing")
	}
	c := w.clone("c")
	if res := c.sync(t, Options{NoPush: true}); res.Pulled != len(want) || res.SkippedTotal != 0 {
		t.Fatalf("fresh clone: %+v, want %d runs pulled", res, len(want))
	}
	if got, all := c.ids(t), sortedUnion(want); !equal(got, all) {
		t.Errorf("fresh clone has %d runs, want %d", len(got), len(all))
	}
}

// TestSyncReadsOnlyWhatIsNew: after the first sync, a sync reads the
// files added since (not the whole branch) and pushes the runs stored
// since (not a comparison of the whole store with the branch).
func TestSyncReadsOnlyWhatIsNew(t *testing.T) {
	w := newWorld(t)
	a, b := w.clone("a"), w.clone("b")
	for i := 0; i < 5; i++ {
		a.put(t, fmt.Sprint("bench-", i), w.code[0], 3, false)
		a.sync(t, Options{})
	}
	if res := b.sync(t, Options{}); res.Read != 5 || res.Pulled != 15 {
		t.Errorf("first sync: %+v", res)
	}
	a.put(t, "new", w.code[1], 2, false)
	a.sync(t, Options{})
	res := b.sync(t, Options{})
	if res.Read != 1 || res.Pulled != 2 || res.Pushed != 0 {
		t.Errorf("second sync read %d files, pulled %d, pushed %d; want 1, 2, 0", res.Read, res.Pulled, res.Pushed)
	}
	// The pull-only syncs of a laptop never make its pulled runs look new.
	b.sync(t, Options{NoPush: true})
	a.put(t, "newer", w.code[2], 1, false)
	a.sync(t, Options{})
	b.sync(t, Options{NoPush: true})
	ids := b.put(t, "local", w.code[2], 1, false)
	if res := b.sync(t, Options{}); res.Pushed != 1 || res.Read != 0 {
		t.Errorf("push after pull-only syncs: %+v", res)
	}
	if got := w.remoteRuns(); !strings.Contains(strings.Join(got, ","), ids[0]) || len(got) != 19 {
		t.Errorf("remote has %d runs", len(got))
	}
	// The mark is kept in the store: a store without it compares all,
	// once, and pushes nothing twice.
	if err := b.st.SetMark((&syncer{url: w.remote, opts: Options{Branch: DefaultBranch}}).markKey(), nil); err != nil {
		t.Fatal(err)
	}
	if res := b.sync(t, Options{}); res.Pushed != 0 || res.Pulled != 0 || res.Read == 0 {
		t.Errorf("sync without a mark: %+v", res)
	}
}

// TestSyncRefusedPush: the remote's reason reaches the error.
func TestSyncRefusedPush(t *testing.T) {
	w := newWorld(t)
	a := w.clone("a")
	a.put(t, "serving", w.code[0], 1, false)
	hook := filepath.Join(w.bare, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'GH001: Large files detected.' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Sync(context.Background(), a.dir, a.st, Options{})
	if !errors.Is(err, ErrRemote) || !strings.Contains(fmt.Sprint(err), "the remote refused it") || !strings.Contains(fmt.Sprint(err), "size limit") {
		t.Errorf("refused push: %v", err)
	}
}

// TestSyncSizeLimits: a file near GitHub's limits is warned about, one
// over them is refused before the push, and so is a branch too large.
func TestSyncSizeLimits(t *testing.T) {
	defer func(w, m, b int64) { fileWarn, fileMax, branchWarn = w, m, b }(fileWarn, fileMax, branchWarn)
	fileWarn, fileMax, branchWarn = 150, 5000, 600
	w := newWorld(t)
	a := w.clone("a")
	a.put(t, "serving", w.code[0], 1, false)
	res := a.sync(t, Options{})
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "GitHub warns about files over 50 MiB") {
		t.Errorf("warnings of a 150-byte file: %q", res.Warnings)
	}
	a.put(t, "serving", w.code[1], 3, false)
	res = a.sync(t, Options{})
	if got := strings.Join(res.Warnings, "\n"); !strings.Contains(got, "GitHub recommends repositories under 1 GB") {
		t.Errorf("warnings of a large branch: %s", got)
	}
	big := store.Run{Commit: w.code[2], Benchmark: "big", Time: time.Unix(1, 0), Metrics: map[string]float64{},
		Labels: map[string]string{"blob": strings.Repeat("x", 4000)}, Source: store.Source{File: "big.json"}}
	for i := 0; i < 40; i++ {
		big.Metrics[fmt.Sprintf("m%03d_with_a_long_name", i)] = float64(i)
	}
	if _, err := a.st.Put([]store.Run{big}); err != nil {
		t.Fatal(err)
	}
	_, err := Sync(context.Background(), a.dir, a.st, Options{})
	if !errors.Is(err, ErrConfig) || !strings.Contains(fmt.Sprint(err), "GitHub refuses files over 100 MiB") {
		t.Errorf("a run over the limit: %v", err)
	}
}
