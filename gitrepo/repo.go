package gitrepo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	commitgraph "github.com/go-git/go-git/v5/plumbing/format/commitgraph/v2"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// Repo is an open git repository.
type Repo struct {
	root      string // top of the working tree; "" for a bare repository
	gitDir    string // this worktree's git directory
	commonDir string // the shared git directory (== gitDir outside linked worktrees)

	st *filesystem.Storage // references, config and index, through go-git

	mu      sync.Mutex
	odb     *odb
	graph   commitgraph.Index // nil when there is no usable commit-graph
	graphC  []io.Closer
	shallow map[plumbing.Hash]bool
	nodes   map[plumbing.Hash]*node
	touched []*node // nodes whose walk flags must be cleared
	cfg     *config.Config
}

// Open opens the repository containing path (a working-tree directory at any
// depth, a linked worktree, or a bare repository). An empty path means the
// current directory.
func Open(path string) (*Repo, error) {
	if path == "" {
		path = "."
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(abs); err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("repository path %q does not exist; pass --repo with a directory inside a git checkout", path)
		}
		return nil, err
	} else if !fi.IsDir() {
		abs = filepath.Dir(abs)
	}
	root, gitDir, err := discover(abs)
	if err != nil {
		return nil, err
	}
	commonDir, err := commonDirOf(gitDir)
	if err != nil {
		return nil, err
	}
	r := &Repo{root: root, gitDir: gitDir, commonDir: commonDir, nodes: map[plumbing.Hash]*node{}}

	var fs billy.Filesystem = osfs.New(gitDir)
	if commonDir != gitDir {
		fs = dotgit.NewRepositoryFilesystem(fs, osfs.New(commonDir))
	}
	// The object cache is unused (objects are read by odb); keep it tiny.
	r.st = filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(64*cache.KiByte), filesystem.Options{})
	if r.cfg, err = r.st.Config(); err != nil {
		return nil, fmt.Errorf("%s: %v; fix the file (git config --list shows what git reads) and retry", filepath.Join(commonDir, "config"), err)
	}
	if err := checkExtensions(r.cfg, commonDir); err != nil {
		return nil, err
	}
	if r.odb, err = newODB(filepath.Join(commonDir, "objects")); err != nil {
		return nil, err
	}
	if r.shallow, err = readShallow(commonDir); err != nil {
		r.odb.close()
		return nil, err
	}
	r.openGraph()
	return r, nil
}

// Close releases the mapped pack files.
func (r *Repo) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for _, c := range r.graphC {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	r.graphC, r.graph = nil, nil
	if r.odb != nil {
		if err := r.odb.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Root is the top directory of the working tree ("" for a bare repository).
func (r *Repo) Root() string { return r.root }

// GitDir is the git directory of this working tree (for a linked worktree,
// .git/worktrees/NAME of the main repository).
func (r *Repo) GitDir() string { return r.gitDir }

// CommonDir is the git directory shared by all worktrees: objects, refs,
// config and info/exclude live there.
func (r *Repo) CommonDir() string { return r.commonDir }

// IsShallow reports whether the repository is a shallow clone.
func (r *Repo) IsShallow() bool { return len(r.shallow) > 0 }

// HasCommitGraph reports whether a commit-graph file is in use.
func (r *Repo) HasCommitGraph() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.graph != nil
}

// discover walks up from dir to the first directory holding .git (a
// directory, or a file "gitdir: PATH" as in linked worktrees and submodules),
// or that is itself a bare repository.
func discover(dir string) (root, gitDir string, err error) {
	for p := dir; ; {
		dot := filepath.Join(p, ".git")
		fi, err := os.Stat(dot)
		switch {
		case err == nil && fi.IsDir():
			if isGitDir(dot) {
				return p, dot, nil
			}
		case err == nil:
			gd, err := readGitFile(dot)
			if err != nil {
				return "", "", err
			}
			return p, gd, nil
		case !os.IsNotExist(err):
			return "", "", err
		}
		if isGitDir(p) && filepath.Base(p) != ".git" {
			return "", p, nil // bare repository
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", "", &NotRepositoryError{Path: dir}
		}
		p = parent
	}
}

// isGitDir mirrors git's is_git_directory: HEAD, objects/ and refs/ (objects
// may be elsewhere in a linked worktree, which has commondir instead).
func isGitDir(p string) bool {
	if _, err := os.Stat(filepath.Join(p, "HEAD")); err != nil {
		return false
	}
	if _, err := os.Stat(filepath.Join(p, "commondir")); err == nil {
		return true
	}
	for _, d := range []string{"objects", "refs"} {
		if fi, err := os.Stat(filepath.Join(p, d)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

func readGitFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	gd, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s: expected a line \"gitdir: PATH\", got %q; the worktree link is damaged: run `git worktree repair`", path, line)
	}
	gd = filepath.FromSlash(strings.TrimSpace(gd))
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(path), gd)
	}
	if !isGitDir(gd) {
		return "", fmt.Errorf("%s points to %q, which is not a git directory; the worktree may have been removed: run `git worktree prune` or `git worktree repair`", path, gd)
	}
	return filepath.Clean(gd), nil
}

func commonDirOf(gitDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if os.IsNotExist(err) {
		return gitDir, nil
	}
	if err != nil {
		return "", err
	}
	cd := filepath.FromSlash(strings.TrimSpace(string(b)))
	if !filepath.IsAbs(cd) {
		cd = filepath.Join(gitDir, cd)
	}
	return filepath.Clean(cd), nil
}

// checkExtensions refuses repositories whose format go-git cannot read,
// with the reason, instead of failing later on a confusing error.
func checkExtensions(cfg *config.Config, commonDir string) error {
	if cfg.Raw != nil && cfg.Raw.HasSection("core") {
		v := strings.TrimSpace(cfg.Raw.Section("core").Option("repositoryformatversion"))
		if n, err := strconv.Atoi(v); v != "" && (err != nil || n < 0 || n > 1) {
			return fmt.Errorf("%s: core.repositoryformatversion is %q; git and perfgate read versions 0 and 1 only: the repository was made by a newer tool, or the setting is wrong (`git config core.repositoryformatversion 1` if nothing else changed)", commonDir, v)
		}
	}
	if cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return nil
	}
	for _, o := range cfg.Raw.Section("extensions").Options {
		key, val := strings.ToLower(o.Key), strings.ToLower(o.Value)
		switch key {
		case "noop", "noop-v1", "worktreeconfig", "preciousobjects", "partialclone":
		case "objectformat":
			if val != "sha1" && val != "" {
				return fmt.Errorf("%s: extensions.objectFormat is %q; perfgate reads SHA-1 repositories only (go-git v5): use a SHA-1 clone", commonDir, o.Value)
			}
		case "refstorage":
			if val != "files" && val != "" {
				return fmt.Errorf("%s: extensions.refStorage is %q; perfgate reads the files ref backend only (go-git v5): run `git refs migrate --ref-format=files`", commonDir, o.Value)
			}
		default:
			return fmt.Errorf("%s: repository extension %q is not supported; clone the repository without it", commonDir, o.Key)
		}
	}
	return nil
}

func readShallow(commonDir string) (map[plumbing.Hash]bool, error) {
	f, err := os.Open(filepath.Join(commonDir, "shallow"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[plumbing.Hash]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if plumbing.IsHash(line) {
			m[plumbing.NewHash(line)] = true
		}
	}
	return m, sc.Err()
}

// openGraph loads the commit-graph file or chain, as git would use it: not
// in shallow clones or with grafts, and not when core.commitGraph is false.
// A damaged graph is ignored: it only accelerates, objects are the truth.
func (r *Repo) openGraph() {
	if len(r.shallow) > 0 {
		return
	}
	if _, err := os.Stat(filepath.Join(r.commonDir, "info", "grafts")); err == nil {
		return
	}
	if r.cfg.Raw != nil && r.cfg.Raw.HasSection("core") {
		if v := strings.ToLower(r.cfg.Raw.Section("core").Option("commitGraph")); v == "false" || v == "no" || v == "off" || v == "0" {
			return
		}
	}
	info := filepath.Join(r.commonDir, "objects", "info")
	if data, c, err := mapFile(filepath.Join(info, "commit-graph")); err == nil {
		if checkGraphFile(data, nil) != nil {
			c.Close()
			return
		}
		idx, err := commitgraph.OpenFileIndex(memReaderAt{bytes.NewReader(data)})
		if err != nil {
			c.Close()
			return
		}
		r.graph, r.graphC = idx, []io.Closer{c}
		return
	}
	chain, err := os.ReadFile(filepath.Join(info, "commit-graphs", "commit-graph-chain"))
	if err != nil {
		return
	}
	var idx commitgraph.Index
	var closers []io.Closer
	var layers []string // checksums of the layers below, as BASE lists them
	for _, h := range strings.Fields(string(chain)) {
		if !plumbing.IsHash(h) {
			idx = nil
			break
		}
		data, c, err := mapFile(filepath.Join(info, "commit-graphs", "graph-"+h+".graph"))
		if err != nil {
			idx = nil
			break
		}
		closers = append(closers, c)
		if checkGraphFile(data, layers) != nil || hex.EncodeToString(data[len(data)-20:]) != h {
			idx = nil
			break
		}
		layers = append(layers, h)
		next, err := commitgraph.OpenFileIndexWithParent(memReaderAt{bytes.NewReader(data)}, idx)
		if err != nil {
			idx = nil
			break
		}
		idx = next
	}
	if idx == nil {
		for _, c := range closers {
			c.Close()
		}
		return
	}
	r.graph, r.graphC = idx, closers
}

// checkGraphFile checks what git checks when it loads a commit-graph file
// (or one layer of a chain, base being the checksums of the layers below):
// the header, a terminated chunk table whose offsets stay inside the file,
// and chunk sizes that agree with the commit count. A truncated or
// overwritten file is then ignored as a whole, as git ignores it, instead of
// failing reads halfway through a walk.
func checkGraphFile(data []byte, base []string) error {
	const hdr, entry, trailer = 8, 12, 20
	if len(data) < hdr+entry+trailer || string(data[:4]) != "CGPH" || data[4] != 1 || data[5] != 1 {
		return errors.New("bad commit-graph header")
	}
	nChunks, nBase := int(data[6]), int(data[7])
	if nBase != len(base) {
		return errors.New("commit-graph layer lists the wrong number of base layers")
	}
	tableEnd := hdr + (nChunks+1)*entry
	end := len(data) - trailer
	if tableEnd > end {
		return errors.New("truncated chunk table")
	}
	sizes := map[string]int{}
	for i := 0; i < nChunks; i++ {
		e := data[hdr+i*entry:]
		off := binary.BigEndian.Uint64(e[4:12])
		next := binary.BigEndian.Uint64(e[entry+4 : entry+12])
		if off < uint64(tableEnd) || next < off || next > uint64(end) {
			return errors.New("chunk offset out of range")
		}
		if _, dup := sizes[string(e[:4])]; dup {
			return errors.New("duplicate chunk")
		}
		sizes[string(e[:4])] = int(next - off)
	}
	if binary.BigEndian.Uint32(data[hdr+nChunks*entry:]) != 0 {
		return errors.New("unterminated chunk table")
	}
	if sizes["OIDF"] != 256*4 {
		return errors.New("bad fanout chunk")
	}
	fanout := data[binary.BigEndian.Uint64(data[hdr+4+entryIndex(data, "OIDF")*entry:]):]
	n := int(binary.BigEndian.Uint32(fanout[255*4:]))
	if sizes["OIDL"] != n*20 || sizes["CDAT"] != n*36 {
		return errors.New("chunk sizes disagree with the commit count")
	}
	if g, ok := sizes["GDA2"]; ok && g != n*4 {
		return errors.New("generation chunk size disagrees with the commit count")
	}
	if sizes["BASE"] != nBase*20 {
		return errors.New("bad base-graphs chunk")
	}
	if nBase > 0 {
		b := data[binary.BigEndian.Uint64(data[hdr+4+entryIndex(data, "BASE")*entry:]):]
		for i, h := range base {
			if hex.EncodeToString(b[i*20:i*20+20]) != h {
				return errors.New("commit-graph chain does not match its layers")
			}
		}
	}
	return nil
}

// entryIndex returns the position of a chunk in a checked table.
func entryIndex(data []byte, id string) int {
	for i := 0; i < int(data[6]); i++ {
		if string(data[8+i*12:8+i*12+4]) == id {
			return i
		}
	}
	return -1
}

// dropGraph stops using a commit-graph that failed a read (damaged past
// what checkGraphFile sees). Commits already loaded from it keep their
// parents and dates, which objects confirm, but lose their generation
// numbers: without the graph every commit is ordered by date alone, as git
// orders commits outside a graph.
func (r *Repo) dropGraph() {
	for _, c := range r.graphC {
		c.Close()
	}
	r.graph, r.graphC = nil, nil
	for _, n := range r.nodes {
		n.gen = genInfinity
	}
}

// memReaderAt adapts an in-memory file to go-git's commit-graph reader; the
// mapping itself is closed by Repo.Close.
type memReaderAt struct{ *bytes.Reader }

func (memReaderAt) Close() error { return nil }

// Head returns the commit HEAD points to.
func (r *Repo) Head() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.head()
}

func (r *Repo) head() (string, error) {
	ref, err := r.st.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("%s: cannot read HEAD: %v", r.gitDir, err)
	}
	res, err := storer.ResolveReference(r.st, plumbing.HEAD)
	if err != nil {
		if errors.Is(err, plumbing.ErrReferenceNotFound) && ref.Type() == plumbing.SymbolicReference {
			return "", fmt.Errorf("HEAD points to branch %q, which has no commits yet; commit first, or switch to an existing branch (`git switch NAME`; `git branch` lists them)", ref.Target().Short())
		}
		return "", fmt.Errorf("%s: cannot resolve HEAD: %v", r.gitDir, err)
	}
	return res.Hash().String(), nil
}

// Branch returns the short name of the branch HEAD is on, or "" when HEAD is
// detached (as in CI checkouts of a pull request: use the CI's variables
// such as GITHUB_HEAD_REF there).
func (r *Repo) Branch() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref, err := r.st.Reference(plumbing.HEAD)
	if err != nil {
		return "", fmt.Errorf("%s: cannot read HEAD: %v", r.gitDir, err)
	}
	if ref.Type() != plumbing.SymbolicReference {
		return "", nil
	}
	return ref.Target().Short(), nil
}

// node is what walks need of a commit.
type node struct {
	id      plumbing.Hash
	parents []plumbing.Hash
	time    int64  // committer time, Unix seconds
	gen     uint64 // generation (corrected commit date or topological level); infinity when unknown
	flags   uint8
	inQueue int32
}

const genInfinity = math.MaxUint64

// load returns the node for a commit, from the commit-graph when it has
// it, else from the object. A missing object yields errObjectMissing.
func (r *Repo) load(id plumbing.Hash) (*node, error) {
	if n, ok := r.nodes[id]; ok {
		return n, nil
	}
	if r.graph != nil {
		i, err := r.graph.GetIndexByHash(id)
		if err == nil {
			var cd *commitgraph.CommitData
			if cd, err = r.graph.GetCommitDataByIndex(i); err == nil {
				n := &node{id: id, parents: cd.ParentHashes, time: cd.When.Unix(), gen: cd.Generation}
				if r.graph.HasGenerationV2() {
					n.gen = cd.GenerationV2
				}
				r.nodes[id] = n
				return n, nil
			}
		}
		if !errors.Is(err, plumbing.ErrObjectNotFound) {
			r.dropGraph()
		}
	}
	t, data, err := r.odb.read(id)
	if err != nil {
		return nil, err
	}
	if t != plumbing.CommitObject {
		return nil, fmt.Errorf("object %s is a %s, not a commit", id, t)
	}
	h, err := parseCommitHeader(data)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %v; the object is damaged: run `git fsck`", id, err)
	}
	n := &node{id: id, parents: h.parents, time: h.commitTime, gen: genInfinity}
	r.nodes[id] = n
	return n, nil
}

// commitNode loads a commit that the caller expects to exist, turning a
// missing object into a user-facing error. child is the commit whose parent
// this is (zero for a starting point), so a shallow boundary is reported
// as such.
func (r *Repo) commitNode(id, child plumbing.Hash, op string) (*node, error) {
	if !child.IsZero() && r.shallow[child] {
		return nil, &ShallowError{Op: op, Commit: child.String()}
	}
	n, err := r.load(id)
	if errors.Is(err, errObjectMissing) {
		if !child.IsZero() && r.shallow[child] {
			return nil, &ShallowError{Op: op, Commit: child.String()}
		}
		return nil, &MissingObjectError{ID: id.String(), Kind: "commit", Shallow: len(r.shallow) > 0}
	}
	return n, err
}

type commitHeader struct {
	tree       plumbing.Hash
	parents    []plumbing.Hash
	commitTime int64
}

// parseCommitHeader reads the tree, parents and committer time of a raw
// commit object without decoding the message.
func parseCommitHeader(data []byte) (commitHeader, error) {
	var h commitHeader
	seenTree, seenCommitter := false, false
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			break // end of headers
		}
		key, val, _ := bytes.Cut(line, []byte{' '})
		switch string(key) {
		case "tree":
			id, ok := parseHex(val)
			if !ok {
				return h, fmt.Errorf("bad tree line %q", line)
			}
			h.tree, seenTree = id, true
		case "parent":
			id, ok := parseHex(val)
			if !ok {
				return h, fmt.Errorf("bad parent line %q", line)
			}
			h.parents = append(h.parents, id)
		case "committer":
			if !seenCommitter {
				h.commitTime, seenCommitter = signatureTime(val), true
			}
		}
	}
	if !seenTree {
		return h, errors.New("no tree line")
	}
	return h, nil
}

func parseHex(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) != 40 {
		return h, false
	}
	if _, err := hex.Decode(h[:], b); err != nil {
		return h, false
	}
	return h, true
}

// signatureTime extracts the Unix time of "Name <email> 1700000000 +0000"
// as git's parse_commit_date does: the digits after the last '>', and 0 when
// there are none (no email, no date, a negative date). Such commits exist in
// old and imported histories; git walks them, so must we.
func signatureTime(b []byte) int64 {
	i := bytes.LastIndexByte(b, '>')
	if i < 0 {
		return 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) == 0 {
		return 0
	}
	var t int64
	for _, c := range f[0] {
		if c < '0' || c > '9' {
			break
		}
		if t > math.MaxInt64/10-10 {
			return 0
		}
		t = t*10 + int64(c-'0')
	}
	return t
}
