package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// objectsRepo makes a repository whose blobs and trees delta well against
// each other, with annotated tags, in loose objects (one fast-import).
func objectsRepo(t testing.TB) *testRepo {
	r := newTestRepo(t)
	var body strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&body, "line %d of a file that changes a little at each commit\n", i)
	}
	var st strings.Builder
	blob := func(path, content string) {
		fmt.Fprintf(&st, "M 100644 inline %s\ndata %d\n%s\n", path, len(content), content)
	}
	for i := 1; i <= 12; i++ {
		msg := fmt.Sprintf("commit %d\n\n%s", i, strings.Repeat("a long message body line\n", 20))
		fmt.Fprintf(&st, "commit refs/heads/main\nmark :%d\ncommitter C <c@example.com> %d +0000\ndata %d\n%s\n", i, baseTime+i*60, len(msg), msg)
		if i > 1 {
			fmt.Fprintf(&st, "from :%d\n", i-1)
		}
		blob("big.txt", body.String()+fmt.Sprintf("revision %d\n", i))
		blob(fmt.Sprintf("d%d/f.txt", i%3), strings.Repeat(fmt.Sprint(i), 100))
		if i%4 == 0 {
			fmt.Fprintf(&st, "tag t%d\nfrom :%d\ntagger T <t@example.com> %d +0000\ndata 5\ntag %d\n", i, i, baseTime+i*60, i%10)
		}
	}
	r.fastImport([]byte(st.String()))
	// fast-import writes a pack; make the objects loose like fresh commits.
	packs, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.pack"))
	for _, p := range packs {
		// unpack-objects skips objects the repository already has.
		moved := filepath.Join(t.TempDir(), "p.pack")
		if err := os.Rename(p, moved); err != nil {
			t.Fatal(err)
		}
		os.Remove(strings.TrimSuffix(p, ".pack") + ".idx")
		f, err := os.Open(moved)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.run(r.dir, f, "unpack-objects", "-q"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if n := r.git("count-objects"); strings.HasPrefix(n, "0 objects") {
		t.Fatalf("no loose objects after unpacking: %s", n)
	}
	r.git("checkout", "-q", "main")
	return r
}

// checkAllObjects reads every object git lists and checks its type and
// that its content hashes to its id.
func checkAllObjects(t *testing.T, r *testRepo, dir string) {
	t.Helper()
	out, err := r.run(dir, nil, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	n := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		id := plumbing.NewHash(f[0])
		typ, data, err := repo.odb.read(id)
		if err != nil {
			t.Errorf("read %s (%s): %v", f[0], f[1], err)
			continue
		}
		if typ.String() != f[1] {
			t.Errorf("read %s: type %s, git says %s", f[0], typ, f[1])
		}
		if got := plumbing.ComputeHash(typ, data); got != id {
			t.Errorf("read %s: content hashes to %s", f[0], got)
		}
		n++
	}
	if n < 50 {
		t.Errorf("only %d objects checked", n)
	}
	if _, _, err := repo.odb.read(plumbing.NewHash(strings.Repeat("ab", 20))); err != errObjectMissing {
		t.Errorf("read of an absent object: %v, want errObjectMissing", err)
	}
}

func countDeltas(t *testing.T, r *testRepo) int {
	idx, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.idx"))
	n := 0
	for _, f := range idx {
		out := r.git("verify-pack", "-v", f)
		for _, line := range strings.Split(out, "\n") {
			if len(strings.Fields(line)) == 7 { // "id type size size-in-pack offset depth base"
				n++
			}
		}
	}
	return n
}

func TestODBFormats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		pack   func(r *testRepo)
		deltas bool
	}{
		{"loose objects", func(r *testRepo) {}, false},
		{"pack with offset deltas", func(r *testRepo) { r.git("repack", "-q", "-a", "-d", "-f", "--depth=20") }, true},
		{"pack with ref deltas", func(r *testRepo) {
			r.git("-c", "repack.useDeltaBaseOffset=false", "repack", "-q", "-a", "-d", "-f")
		}, true},
		{"index version 1", func(r *testRepo) { r.git("-c", "pack.indexVersion=1", "repack", "-q", "-a", "-d", "-f") }, true},
		{"64-bit offset table", func(r *testRepo) {
			r.git("repack", "-q", "-a", "-d", "-f")
			packs, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.pack"))
			idx := strings.TrimSuffix(packs[0], ".pack") + ".idx"
			os.Remove(idx)
			// Every object past offset 64 goes to the large-offset table.
			r.git("index-pack", "--index-version=2,64", "-o", idx, packs[0])
		}, true},
		{"several packs and loose objects", func(r *testRepo) {
			r.git("repack", "-q", "-d") // pack what is loose
			r.commit("more", map[string]string{"big.txt": "replaced\n", "new.txt": "new\n"})
			r.git("repack", "-q", "-d") // a second pack
			r.commit("loose", map[string]string{"loose.txt": "loose\n"})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := objectsRepo(t)
			tt.pack(r)
			if tt.deltas && countDeltas(t, r) == 0 {
				t.Fatal("the pack has no deltas; the test would not exercise them")
			}
			checkAllObjects(t, r, r.dir)
		})
	}
}

func TestODBAlternates(t *testing.T) {
	t.Parallel()
	r := objectsRepo(t)
	r.git("repack", "-q", "-a", "-d")
	shared := filepath.Join(filepath.Dir(r.dir), "shared")
	r.gitIn(filepath.Dir(r.dir), "clone", "-q", "--shared", r.dir, shared)
	s := r.at(shared)
	s.commit("own object", map[string]string{"own.txt": "own\n"})
	if _, err := os.Stat(filepath.Join(shared, ".git", "objects", "info", "alternates")); err != nil {
		t.Fatal("clone --shared wrote no alternates file")
	}
	checkAllObjects(t, s, shared)
	repo := s.open()
	if mb, err := repo.MergeBase("HEAD", "t4"); err != nil || mb != s.revParse("t4") {
		t.Errorf("MergeBase through alternates = %q, %v", mb, err)
	}
}

func TestODBNewPackAfterOpen(t *testing.T) {
	t.Parallel()
	r := objectsRepo(t)
	r.git("repack", "-q", "-a", "-d")
	repo := r.open()
	// git gc / fetch while perfgate runs: new pack, old one deleted.
	r.commit("after open", map[string]string{"x": "1"})
	r.git("repack", "-q", "-a", "-d")
	if c, err := repo.Commit("HEAD"); err != nil || c.Subject != "after open" {
		t.Errorf("Commit(HEAD) after a repack = %+v, %v", c, err)
	}
}

func TestParseCommitHeader(t *testing.T) {
	tree := strings.Repeat("a", 40)
	p1, p2 := strings.Repeat("b", 40), strings.Repeat("c", 40)
	good := "tree " + tree + "\nparent " + p1 + "\nparent " + p2 +
		"\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1700000123 -0700\n" +
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n parent " + strings.Repeat("d", 40) + "\n -----END PGP SIGNATURE-----\n\nmsg\nparent " + strings.Repeat("e", 40) + "\n"
	h, err := parseCommitHeader([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if h.tree.String() != tree || len(h.parents) != 2 || h.parents[0].String() != p1 || h.parents[1].String() != p2 || h.commitTime != 1700000123 {
		t.Errorf("parseCommitHeader = %+v", h)
	}
	// Malformed committer lines do not stop git (parse_commit_date reads
	// the digits after the last '>', else 0): old and imported histories
	// have them, so they must not stop a walk either.
	for _, tc := range []struct {
		hdr  string
		time int64
	}{
		{"tree " + tree + "\n", 0},
		{"tree " + tree + "\ncommitter C <c@x>\n", 0},
		{"tree " + tree + "\ncommitter C <c@x> 12a +0000\n", 12},
		{"tree " + tree + "\ncommitter C <c@x> -100 +0000\n", 0},
		{"tree " + tree + "\ncommitter C 1700000000 +0000\n", 0},
		{"tree " + tree + "\ncommitter C <c@x> 1700000000 bogus\n", 1700000000},
	} {
		if h, err := parseCommitHeader([]byte(tc.hdr)); err != nil || h.commitTime != tc.time {
			t.Errorf("parseCommitHeader(%q) = time %d, %v; want %d as git reads it", tc.hdr, h.commitTime, err, tc.time)
		}
	}
	for _, bad := range []string{
		"", "parent " + p1 + "\ncommitter C <c@x> 1 +0000\n", "tree zz\ncommitter C <c@x> 1 +0000\n",
		"tree " + tree + "\nparent 123\ncommitter C <c@x> 1 +0000\n",
	} {
		if _, err := parseCommitHeader([]byte(bad)); err == nil {
			t.Errorf("parseCommitHeader(%q): want an error", bad)
		}
	}
}

func FuzzParseCommitHeader(f *testing.F) {
	f.Add([]byte("tree " + strings.Repeat("a", 40) + "\nparent " + strings.Repeat("b", 40) + "\ncommitter C <c@x> 1 +0000\n\nmsg"))
	f.Add([]byte("committer <> 99999999999999999999999 +0000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := parseCommitHeader(data)
		if err == nil && h.commitTime < 0 {
			t.Errorf("negative time %d", h.commitTime)
		}
	})
}

func FuzzParseTree(f *testing.F) {
	f.Add([]byte("100644 a\x00" + strings.Repeat("\x01", 20) + "40000 d\x00" + strings.Repeat("\x02", 20)))
	f.Add([]byte("100644 \x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := parseTree(data)
		if err != nil {
			return
		}
		size := 0
		for _, e := range es {
			size += len(fmt.Sprintf("%o", uint32(e.mode))) + 1 + len(e.name) + 1 + 20
		}
		if size > len(data) {
			t.Errorf("decoded %d bytes of entries from %d bytes", size, len(data))
		}
	})
}

// FuzzReadPacked damages bytes of a real pack (with deltas) and reads
// every object: errors are fine, panics and hangs are not.
func FuzzReadPacked(f *testing.F) {
	needGit(f)
	r := objectsRepo(f)
	r.git("repack", "-q", "-a", "-d", "-f", "--depth=20")
	packs, _ := filepath.Glob(filepath.Join(r.dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		f.Fatalf("want one pack, have %d", len(packs))
	}
	packData, err := os.ReadFile(packs[0])
	if err != nil {
		f.Fatal(err)
	}
	idxData, err := os.ReadFile(strings.TrimSuffix(packs[0], ".pack") + ".idx")
	if err != nil {
		f.Fatal(err)
	}
	var ids []plumbing.Hash
	for _, line := range strings.Split(r.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)"), "\n") {
		ids = append(ids, plumbing.NewHash(line))
	}
	f.Add(uint32(12), byte(0xff), uint32(0), byte(0))
	f.Add(uint32(len(packData)/2), byte(0x80), uint32(9000), byte(1))
	f.Add(uint32(100), byte(0x0f), uint32(2000), byte(0x80))
	f.Fuzz(func(t *testing.T, packAt uint32, packXor byte, idxAt uint32, idxXor byte) {
		dir := t.TempDir()
		pack, idx := append([]byte{}, packData...), append([]byte{}, idxData...)
		pack[int(packAt)%len(pack)] ^= packXor
		idx[int(idxAt)%len(idx)] ^= idxXor
		base := filepath.Join(dir, "pack", "pack-x")
		os.MkdirAll(filepath.Dir(base), 0o755)
		os.WriteFile(base+".pack", pack, 0o644)
		os.WriteFile(base+".idx", idx, 0o644)
		db, err := newODB(dir)
		if err != nil {
			return
		}
		defer db.close()
		for _, id := range ids {
			typ, data, err := db.read(id)
			if err == nil && packXor == 0 && idxXor == 0 && plumbing.ComputeHash(typ, data) != id {
				t.Errorf("undamaged pack: %s hashes to %s", id, plumbing.ComputeHash(typ, data))
			}
		}
	})
}
