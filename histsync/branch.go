package histsync

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// The layout of the data branch (see the package doc).
const (
	// FormatVersion is the branch format this package writes; it reads
	// it and format 1 (runs/<xx>/<id>.json), which it migrates on its
	// first push.
	FormatVersion = 2

	formatFile = "FORMAT"
	readmeFile = "README.md"
	logDir     = "log"
	packsDir   = "packs"
	runsDir    = "runs"       // format 1
	atticDir   = "unreadable" // format 1's runs/ when it held files that are no runs
	recordsDir = "records"    // records/<name>.jsonl: accepted changes, invalidated runs

	levels = 3 // log/0 .. log/2
	// packMax bounds a file perfgate writes (unless one run is larger).
	packMax = 16 << 20
	// maxRead bounds a file sync reads from the branch.
	maxRead = 64 << 20
)

// Limits and compaction (variables for tests). A log level with fanIn files is
// merged into one file; levelCeil[k] is the size below which a file lives
// in log/k, and a file of levelCeil[levels-1] bytes or more is a pack.
var (
	// fileWarn and fileMax: GitHub warns about files over 50 MiB and
	// refuses files over 100 MiB.
	fileWarn int64 = 40 << 20
	fileMax  int64 = 95 << 20
	// branchWarn: GitHub recommends repositories under 1 GB.
	branchWarn int64 = 512 << 20

	fanIn     = 16
	levelCeil = [levels]int64{16 << 10, 128 << 10, 1 << 20}
)

// Kinds of files on the branch, by where they live.
const (
	kindLegacy  = -1     // runs/<xx>/<id>.json, format 1
	kindPack    = levels // packs/<period>/<name>.jsonl; log/<k>/ is kind k
	kindRecords = -2     // records/<name>.jsonl
)

// branchFile is one file of runs on the branch.
type branchFile struct {
	path string // e.g. log/0/3fa2....jsonl
	dir  string // e.g. log/0
	name string
	hash plumbing.Hash
	kind int
}

// branchState is the data branch at one tip: its format, its files of
// runs, and the trees perfgate may rewrite, by directory ("" is the root).
type branchState struct {
	tip     plumbing.Hash
	format  int // 0: no branch or an empty tree
	files   []branchFile
	byPath  map[string]plumbing.Hash
	trees   map[string][]object.TreeEntry
	junk    []string     // "path: why", files and directories that are not perfgate's
	records []branchFile // records/<name>.jsonl
	atticOK bool         // format 1's runs/ held only run files
}

// list reads the layout of the branch at tip: trees only, never the
// files' contents. Anything that is not where perfgate puts runs is
// listed in junk and left alone; a format newer than this package's, or a
// tree that is no perfgate history, is an error.
func (s *syncer) list(tip plumbing.Hash) (*branchState, error) {
	st := &branchState{tip: tip, byPath: map[string]plumbing.Hash{}, trees: map[string][]object.TreeEntry{}, atticOK: true}
	if tip.IsZero() {
		return st, nil
	}
	c, err := object.GetCommit(s.repo.Storer, tip)
	if err != nil {
		return nil, remoteErrorf("%s %s: cannot read commit %s: %v", s.opts.Remote, s.opts.Branch, tip, err)
	}
	root, err := s.tree(c.TreeHash, "")
	if err != nil {
		return nil, err
	}
	st.trees[""] = root.Entries
	var hasRuns, hasLog, hasPacks bool
	for _, e := range root.Entries {
		switch {
		case e.Name == formatFile && e.Mode.IsFile():
			v, err := s.formatOf(e.Hash)
			if err != nil {
				return nil, err
			}
			st.format = v
		case e.Name == readmeFile && e.Mode.IsFile():
		case e.Name == runsDir && e.Mode == filemode.Dir:
			hasRuns = true
		case e.Name == logDir && e.Mode == filemode.Dir:
			hasLog = true
		case e.Name == packsDir && e.Mode == filemode.Dir:
			hasPacks = true
		case e.Name == atticDir && e.Mode == filemode.Dir:
		case e.Name == recordsDir && e.Mode == filemode.Dir:
			if err := s.listRecords(st, e.Hash); err != nil {
				return nil, err
			}
		default:
			st.junk = append(st.junk, show(e.Name)+": not part of a perfgate history (left alone)")
		}
	}
	switch {
	case st.format > FormatVersion:
		return nil, configErrorf("branch %s on %s has history format %d, newer than this perfgate understands (%d): upgrade perfgate", s.opts.Branch, s.opts.Remote, st.format, FormatVersion)
	case st.format == 0 && hasRuns:
		st.format = 1
	case st.format == 0 && len(root.Entries) > 0:
		return nil, configErrorf("branch %s on %s is not a perfgate history (no %s file or %s/ directory at its root); choose another branch with --branch", s.opts.Branch, s.opts.Remote, formatFile, runsDir)
	}
	if hasRuns {
		if err := s.listLegacy(st, root); err != nil {
			return nil, err
		}
	}
	if hasLog {
		if err := s.listDirs(st, logDir, func(name string) (int, bool) {
			k, err := strconv.Atoi(name)
			return k, err == nil && k >= 0 && k < levels && name == strconv.Itoa(k)
		}); err != nil {
			return nil, err
		}
	}
	if hasPacks {
		if err := s.listDirs(st, packsDir, func(name string) (int, bool) { return kindPack, isPeriod(name) }); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// formatOf reads the FORMAT file: "2\n".
func (s *syncer) formatOf(h plumbing.Hash) (int, error) {
	data, err := s.blob(h, 64)
	if err != nil {
		return 0, remoteErrorf("%s %s: cannot read %s: %v", s.opts.Remote, s.opts.Branch, formatFile, err)
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || v < 1 {
		return 0, configErrorf("branch %s on %s: %s holds %q, not a format number such as %d; restore it (git show %s~1:%s) or choose another branch with --branch", s.opts.Branch, s.opts.Remote, formatFile, string(data), FormatVersion, s.opts.Branch, formatFile)
	}
	return v, nil
}

// tree reads a tree of the branch; dir names it in errors.
func (s *syncer) tree(h plumbing.Hash, dir string) (*object.Tree, error) {
	t, err := object.GetTree(s.repo.Storer, h)
	if err != nil {
		if dir == "" {
			dir = "its root"
		} else {
			dir += "/"
		}
		return nil, remoteErrorf("%s %s: cannot read %s: %v", s.opts.Remote, s.opts.Branch, dir, err)
	}
	return t, nil
}

// listDirs lists top/<sub>/<name>.jsonl; kindOf validates sub.
func (s *syncer) listDirs(st *branchState, top string, kindOf func(sub string) (int, bool)) error {
	h := entryHash(st.trees[""], top)
	t, err := s.tree(h, top)
	if err != nil {
		return err
	}
	st.trees[top] = t.Entries
	for _, d := range t.Entries {
		kind, ok := kindOf(d.Name)
		dir := top + "/" + d.Name
		if !ok || d.Mode != filemode.Dir {
			st.junk = append(st.junk, show(dir)+": not a directory perfgate writes (left alone)")
			continue
		}
		sub, err := s.tree(d.Hash, dir)
		if err != nil {
			return err
		}
		st.trees[dir] = sub.Entries
		for _, f := range st.jsonlFiles(dir, sub.Entries, kind) {
			st.add(f)
		}
	}
	return nil
}

// jsonlFiles returns the .jsonl files among a directory's entries as
// branch files of kind; anything else there is junk.
func (st *branchState) jsonlFiles(dir string, entries []object.TreeEntry, kind int) []branchFile {
	var out []branchFile
	for _, f := range entries {
		p := dir + "/" + f.Name
		if !strings.HasSuffix(f.Name, ".jsonl") || !isRegular(f.Mode) {
			st.junk = append(st.junk, show(p)+": not a .jsonl file (left alone)")
			continue
		}
		out = append(out, branchFile{path: p, dir: dir, name: f.Name, hash: f.Hash, kind: kind})
	}
	return out
}

// listRecords lists records/<name>.jsonl; anything else there is junk.
func (s *syncer) listRecords(st *branchState, h plumbing.Hash) error {
	t, err := s.tree(h, recordsDir)
	if err != nil {
		return err
	}
	st.trees[recordsDir] = t.Entries
	st.records = append(st.records, st.jsonlFiles(recordsDir, t.Entries, kindRecords)...)
	return nil
}

// listLegacy lists format 1's runs/<xx>/<id>.json.
func (s *syncer) listLegacy(st *branchState, root *object.Tree) error {
	t, err := s.tree(entryHash(root.Entries, runsDir), runsDir)
	if err != nil {
		return err
	}
	st.trees[runsDir] = t.Entries
	for _, d := range t.Entries {
		dir := runsDir + "/" + d.Name
		if d.Mode != filemode.Dir || len(d.Name) != 2 || !isHex(d.Name) {
			st.junk = append(st.junk, show(dir)+": not a runs/<xx>/ directory (skipped)")
			st.atticOK = false
			continue
		}
		sub, err := s.tree(d.Hash, dir)
		if err != nil {
			return err
		}
		for _, f := range sub.Entries {
			p := dir + "/" + f.Name
			id, ok := strings.CutSuffix(f.Name, ".json")
			if !ok || len(id) != 32 || !isHex(id) || id[:2] != d.Name || !isRegular(f.Mode) {
				st.junk = append(st.junk, show(p)+": not a run file runs/<xx>/<32 hex digits>.json (skipped)")
				st.atticOK = false
				continue
			}
			st.add(branchFile{path: p, dir: dir, name: f.Name, hash: f.Hash, kind: kindLegacy})
		}
	}
	return nil
}

func (st *branchState) add(f branchFile) {
	st.files = append(st.files, f)
	st.byPath[f.path] = f.hash
}

func entryHash(entries []object.TreeEntry, name string) plumbing.Hash {
	for _, e := range entries {
		if e.Name == name {
			return e.Hash
		}
	}
	return plumbing.ZeroHash
}

// show returns a path of the branch for a message: as is when it is
// plain printable text, else quoted, so that a hostile file name cannot
// forge lines of the log (or GitHub Actions workflow commands).
func show(p string) string {
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError || (r >= 0x80 && !unicode.IsPrint(r)) {
			return strconv.Quote(p)
		}
	}
	return p
}

func isRegular(m filemode.FileMode) bool { return m == filemode.Regular || m == filemode.Executable }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// isPeriod reports whether name is a packs/ directory name, YYYY-MM.
func isPeriod(name string) bool {
	if len(name) != 7 || name[4] != '-' {
		return false
	}
	y, err1 := strconv.Atoi(name[:4])
	m, err2 := strconv.Atoi(name[5:])
	return err1 == nil && err2 == nil && y >= 1970 && m >= 1 && m <= 12
}

// kindOfSize is where a file of n bytes goes: the first log level whose
// ceiling it is under, else packs.
func kindOfSize(n int64) int {
	for k, ceil := range levelCeil {
		if n < ceil {
			return k
		}
	}
	return kindPack
}

// dirOf is the directory of a file of kind written at period.
func dirOf(kind int, period string) string {
	if kind == kindPack {
		return packsDir + "/" + period
	}
	return fmt.Sprintf("%s/%d", logDir, kind)
}

// parent is the directory holding dir ("" for the root).
func parent(dir string) string {
	if p := path.Dir(dir); p != "." {
		return p
	}
	return ""
}
