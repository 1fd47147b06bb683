package gitrepo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// testRepo is a repository built with the real git CLI, with fixed
// identities and commit dates so hashes are deterministic.
type testRepo struct {
	t    testing.TB
	dir  string
	home string
	tick *int64
}

const baseTime = 1700000000

func needGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git CLI is not installed; these tests build repositories with it")
	}
}

// newTestRepo runs git init (branch main) in a fresh directory.
func newTestRepo(t testing.TB) *testRepo {
	t.Helper()
	needGit(t)
	root := t.TempDir()
	// Resolve symlinks (macOS /var -> /private/var) so paths compare.
	root, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	tick := int64(0)
	r := &testRepo{t: t, dir: filepath.Join(root, "repo"), home: filepath.Join(root, "home"), tick: &tick}
	if err := os.MkdirAll(r.home, 0o755); err != nil {
		t.Fatal(err)
	}
	r.gitIn(root, "-c", "init.defaultBranch=main", "init", "-q", r.dir)
	return r
}

// at returns a view of the same test setup rooted at another directory
// (a clone or a worktree), sharing the clock.
func (r *testRepo) at(dir string) *testRepo {
	return &testRepo{t: r.t, dir: dir, home: r.home, tick: r.tick}
}

func (r *testRepo) env() []string {
	date := fmt.Sprintf("@%d +0000", baseTime+*r.tick*60)
	env := []string{
		"HOME=" + r.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + filepath.Join(r.home, "gitconfig"),
		"GIT_AUTHOR_NAME=Ada Author", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=Cy Committer", "GIT_COMMITTER_EMAIL=cy@example.com", "GIT_COMMITTER_DATE=" + date,
		"LC_ALL=C",
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PATH" || k == "TMPDIR" || k == "SystemRoot" {
			env = append(env, kv)
		}
	}
	return env
}

// git runs git in the repository and returns its trimmed stdout.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	return r.gitIn(r.dir, args...)
}

func (r *testRepo) gitIn(dir string, args ...string) string {
	r.t.Helper()
	out, err := r.run(dir, nil, args...)
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func (r *testRepo) run(dir string, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = r.env()
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%v: %s", err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// write creates or replaces files (paths relative to the repository).
func (r *testRepo) write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// commit writes files, stages everything and commits one minute after the
// previous commit. It returns the new commit's SHA.
func (r *testRepo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	*r.tick++
	r.write(files)
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// merge merges branch into the current branch with a merge commit.
func (r *testRepo) merge(branch, msg string) string {
	r.t.Helper()
	*r.tick++
	r.git("merge", "-q", "--no-ff", "-m", msg, branch)
	return r.git("rev-parse", "HEAD")
}

// revParse asks git for the commit a revision names.
func (r *testRepo) revParse(rev string) string {
	r.t.Helper()
	return r.git("rev-parse", "--verify", "-q", rev+"^{commit}")
}

func (r *testRepo) open() *Repo {
	r.t.Helper()
	repo, err := Open(r.dir)
	if err != nil {
		r.t.Fatalf("Open(%s): %v", r.dir, err)
	}
	r.t.Cleanup(func() { repo.Close() })
	return repo
}

// fastImport feeds a fast-import stream to git; the quickest way to make
// thousands of commits.
func (r *testRepo) fastImport(stream []byte) {
	r.t.Helper()
	if _, err := r.run(r.dir, bytes.NewReader(stream), "fast-import", "--quiet"); err != nil {
		r.t.Fatalf("git fast-import: %v", err)
	}
}

// sampleHistory builds a small history with every shape the gate and
// bisect meet:
//
//	main:    c1 - c2 - c3 ------- m1 - c6 - m2 - c8
//	                 \           /         /
//	feature:          f1 - f2 -'          /
//	                       \             /
//	topic:                  t1 ---------'
//	                 \
//	pr:               p1 - p2          (not merged)
//
// with an annotated tag v1.0 on c3 and a lightweight tag light on c6.
type sample struct {
	*testRepo
	c map[string]string // name -> SHA
}

// newSample copies a sample repository built once per test binary (its
// hashes are deterministic, so a copy is the same history).
func newSample(t testing.TB) *sample {
	t.Helper()
	needGit(t)
	sampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "gitrepo-sample-")
		if err != nil {
			sampleErr = err
			return
		}
		templates = append(templates, dir)
		sampleTmpl = buildSample(&fakeTB{TB: t, dir: dir})
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	r := newTestRepo(t)
	if err := os.RemoveAll(r.dir); err != nil {
		t.Fatal(err)
	}
	if err := copyTree(sampleTmpl.dir, r.dir); err != nil {
		t.Fatal(err)
	}
	*r.tick = *sampleTmpl.tick
	c := map[string]string{}
	for k, v := range sampleTmpl.c {
		c[k] = v
	}
	return &sample{testRepo: r, c: c}
}

var (
	sampleOnce sync.Once
	sampleTmpl *sample
	sampleErr  error
	templates  []string // removed by TestMain
)

// fakeTB lets buildSample run once outside any one test: it builds in dir
// and turns failures into a panic that fails the test that triggered it.
type fakeTB struct {
	testing.TB
	dir string
}

func (f *fakeTB) TempDir() string { return f.dir }
func (f *fakeTB) Fatal(args ...any) {
	sampleErr = fmt.Errorf("building the sample repository: %s", fmt.Sprint(args...))
	panic(sampleErr)
}
func (f *fakeTB) Fatalf(format string, args ...any) { f.Fatal(fmt.Sprintf(format, args...)) }
func (f *fakeTB) Cleanup(func())                    {}

func buildSample(t testing.TB) *sample {
	r := newTestRepo(t)
	s := &sample{testRepo: r, c: map[string]string{}}
	s.c["c1"] = r.commit("c1: initial", map[string]string{"README.md": "hello\n", "src/a.go": "package a\n"})
	s.c["c2"] = r.commit("c2: second", map[string]string{"src/a.go": "package a\n\nvar A = 2\n"})
	s.c["c3"] = r.commit("c3: third\n\nwith a body\nof two lines", map[string]string{"src/b.go": "package a\n"})
	r.git("tag", "-a", "-m", "release 1.0", "v1.0")
	r.git("checkout", "-q", "-b", "pr")
	s.c["p1"] = r.commit("p1", map[string]string{"pr.txt": "1\n"})
	s.c["p2"] = r.commit("p2", map[string]string{"pr.txt": "2\n"})
	r.git("checkout", "-q", "-b", "feature", s.c["c3"])
	s.c["f1"] = r.commit("f1", map[string]string{"feature.txt": "1\n"})
	s.c["f2"] = r.commit("f2", map[string]string{"feature.txt": "2\n"})
	r.git("checkout", "-q", "-b", "topic", s.c["f1"])
	s.c["t1"] = r.commit("t1", map[string]string{"topic.txt": "1\n"})
	r.git("checkout", "-q", "main")
	s.c["m1"] = r.merge("feature", "m1: merge feature")
	s.c["c6"] = r.commit("c6", map[string]string{"src/a.go": "package a\n\nvar A = 6\n"})
	r.git("tag", "light")
	s.c["m2"] = r.merge("topic", "m2: merge topic")
	s.c["c8"] = r.commit("c8", map[string]string{"README.md": "hello again\n"})
	return s
}

// branchSpec is a branch genHistory forks from main's first-parent chain
// forkBack commits before its tip, with length commits of its own.
type branchSpec struct {
	name             string
	forkBack, length int
}

// genHistory writes a fast-import stream of n commits on main with a side
// branch of three commits merged every 50 commits, each commit touching
// one file in a tree of about a thousand. Commits are one minute apart.
// Then each branch forks from main.
func genHistory(n int, branches ...branchSpec) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	mark := 0
	t := int64(baseTime)
	var mainMarks []int
	commit := func(ref string, from, merge int, msg string, files map[string]string) int {
		mark++
		t += 60
		fmt.Fprintf(w, "commit %s\nmark :%d\nauthor Ada Author <ada@example.com> %d +0000\ncommitter Cy Committer <cy@example.com> %d +0000\ndata %d\n%s\n",
			ref, mark, t, t, len(msg), msg)
		if from > 0 {
			fmt.Fprintf(w, "from :%d\n", from)
		}
		if merge > 0 {
			fmt.Fprintf(w, "merge :%d\n", merge)
		}
		names := make([]string, 0, len(files))
		for p := range files {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", p, len(files[p]), files[p])
		}
		return mark
	}
	file := func(i int) (string, string) {
		var c strings.Builder
		for k := 0; k < 20; k++ {
			fmt.Fprintf(&c, "line %d of file %d, revision %d\n", k, i%1000, i)
		}
		return fmt.Sprintf("dir%02d/sub%d/file%03d.txt", i%40, i%7, i%1000), c.String()
	}
	main, count := 0, 0
	for count < n {
		p, c := file(count * 7)
		main = commit("refs/heads/main", main, 0, fmt.Sprintf("main commit %d", count), map[string]string{p: c})
		mainMarks = append(mainMarks, main)
		count++
		if count%50 == 0 && count < n {
			side := main
			for k := 0; k < 3; k++ {
				p, c := file(count*11 + k)
				side = commit("refs/heads/side", side, 0, fmt.Sprintf("side commit %d", count), map[string]string{p: c})
				count++
			}
			p, c := file(count * 13)
			main = commit("refs/heads/main", main, side, fmt.Sprintf("Merge side %d", count), map[string]string{p: c})
			mainMarks = append(mainMarks, main)
			count++
		}
	}
	for _, br := range branches {
		from := mainMarks[len(mainMarks)-1-br.forkBack]
		for k := 0; k < br.length; k++ {
			p, c := file(n + k)
			from = commit("refs/heads/"+br.name, from, 0, fmt.Sprintf("%s commit %d", br.name, k), map[string]string{p: c})
		}
	}
	w.Flush()
	return b.Bytes()
}

// copyTree copies a directory tree with file modes and symlinks.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, info.Mode().Perm())
		}
	})
}
