package runner

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/metric"
	"github.com/perfgate/perfgate/store"
)

// scriptRepo makes a repository in a directory whose name has a space
// (so rewritten command lines quote it): committed.sh is in both commits,
// later.sh only in the second, and local.sh, a directory sub and
// ../outside.sh exist only in the working tree.
func scriptRepo(t *testing.T) (repo *gitrepo.Repo, dir string, shas []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	parent := t.TempDir()
	dir = filepath.Join(parent, "my repo")
	write := func(name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("echo hi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string { t.Helper(); return runGit(t, dir, args...) }
	write(filepath.Join(dir, "committed.sh"))
	git("-c", "init.defaultBranch=main", "init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "first")
	shas = append(shas, git("rev-parse", "HEAD"))
	write(filepath.Join(dir, "later.sh"))
	git("add", "-A")
	git("commit", "-q", "-m", "second")
	shas = append(shas, git("rev-parse", "HEAD"))
	write(filepath.Join(dir, "local.sh"))
	write(filepath.Join(dir, "sub", "x"))
	write(filepath.Join(parent, "outside.sh"))
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, dir, shas
}

func TestLocalScript(t *testing.T) {
	repo, dir, shas := scriptRepo(t)
	local := "'" + filepath.Join(dir, "local.sh") + "'"
	later := "'" + filepath.Join(dir, "later.sh") + "'"
	a, b := shas[0][:7], shas[1][:7]
	note := func(word, at, file string) string {
		return word + " is not committed at " + at + ": each checkout runs the copy in your working tree, " +
			filepath.Join(dir, file) + " (commit it to bisect with the script of each commit)"
	}
	tests := []struct {
		name, cmdline      string
		revs               []string
		wantLine, wantNote string // wantLine "" means unchanged, without a note
	}{
		{"not committed", "./local.sh --fast", shas, local + " --fast", note("./local.sh", a+" and "+b, "local.sh")},
		{"sh form", "sh ./local.sh", shas, "sh " + local, note("./local.sh", a+" and "+b, "local.sh")},
		{"bash form", "bash ./local.sh -n 2", shas, "bash " + local + " -n 2", note("./local.sh", a+" and "+b, "local.sh")},
		{"spacing kept", "  ./local.sh   -n 2", shas[1:], "  " + local + "   -n 2", note("./local.sh", b, "local.sh")},
		{"cleaned path", "./sub/../local.sh", shas[:1], local, note("./sub/../local.sh", a, "local.sh")},
		{"committed at one commit only", "./later.sh", shas, later, note("./later.sh", a, "later.sh")},
		{"committed", "./committed.sh", shas, "", ""},
		{"committed, sh form", "sh ./committed.sh", shas, "", ""},
		{"committed where asked", "./later.sh", shas[1:], "", ""},
		{"no commits", "./local.sh", nil, "", ""},
		{"absolute", filepath.Join(dir, "local.sh"), shas, "", ""},
		{"variable", "$PWD/local.sh", shas, "", ""},
		{"semicolon", "./local.sh;true", shas, "", ""},
		{"glob", "./local.s?", shas, "", ""},
		{"quoted", "'./local.sh'", shas, "", ""},
		{"parent", "../outside.sh", shas, "", ""},
		{"parent, sh form", "sh ../outside.sh", shas, "", ""},
		{"parent after cleaning", "./sub/../../outside.sh", shas, "", ""},
		{"no slash", "local.sh", shas, "", ""},
		{"sh, no slash", "sh local.sh", shas, "", ""},
		{"missing", "./missing.sh", shas, "", ""},
		{"directory", "./sub", shas, "", ""},
		{"not the first word", "echo ./local.sh", shas, "", ""},
		{"sh alone", "sh", shas, "", ""},
		{"empty", "", shas, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.wantLine
			if want == "" {
				want = tt.cmdline
			}
			got, note := LocalScript(repo, tt.cmdline, tt.revs...)
			if got != want || note != tt.wantNote {
				t.Errorf("LocalScript(%q) =\n  %q, %q\nwant\n  %q, %q", tt.cmdline, got, note, want, tt.wantNote)
			}
		})
	}
}

func TestCommandLine(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"sh", "-c", "sh bench.sh | tee out"}, "sh bench.sh | tee out"},
		{[]string{"sh", "bench.sh"}, "sh bench.sh"},
		{[]string{"sh", "-c"}, "sh -c"},
		{[]string{"sh", "-c", "x", "y"}, "sh -c x y"},
		{[]string{"python3", "b.py", "--name", "a b", ""}, "python3 b.py --name 'a b' ''"},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := CommandLine(tt.argv); got != tt.want {
			t.Errorf("CommandLine(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

func TestBaselineHint(t *testing.T) {
	tg := Target{Name: "serving", Labels: map[string]string{"model": "llama 3", "gpu": "a100"}}
	got := BaselineHint("v1.2", tg, []string{"sh", "-c", "sh bench.sh"})
	want := "git checkout v1.2 && { sh -c 'sh bench.sh'; } | perfgate ingest --name serving --label gpu=a100 --label 'model=llama 3' - ; git checkout -"
	if got != want {
		t.Errorf("BaselineHint =\n  %s\nwant\n  %s", got, want)
	}
}

func TestDirtyRuns(t *testing.T) {
	tg := Target{Name: "serving", Metric: metric.Info{Name: "mean_ttft_ms"}, Labels: map[string]string{"model": "a"}}
	m := map[string]float64{"mean_ttft_ms": 500}
	a := map[string]string{"model": "a", "gpu": "x"}
	tests := []struct {
		name string
		runs []store.Run
		want int
	}{
		{"none", nil, 0},
		{"clean", []store.Run{{Metrics: m, Labels: a}}, 0},
		{"dirty", []store.Run{{Metrics: m, Labels: a, Dirty: true}, {Metrics: m, Labels: a, Dirty: true}, {Metrics: m, Labels: a}}, 2},
		{"dirty and invalid", []store.Run{{Metrics: m, Labels: a, Dirty: true, Invalid: "throttled"}}, 0},
		{"dirty, other labels", []store.Run{{Metrics: m, Labels: map[string]string{"model": "b"}, Dirty: true}}, 0},
		{"dirty, no labels", []store.Run{{Metrics: m, Dirty: true}}, 0},
		{"dirty, other metric", []store.Run{{Metrics: map[string]float64{"itl_ms": 5}, Labels: a, Dirty: true}}, 0},
	}
	for _, tt := range tests {
		if got := DirtyRuns(tt.runs, tg); got != tt.want {
			t.Errorf("%s: DirtyRuns = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestHistoryShape(t *testing.T) {
	s, err := store.Open(filepath.Join(t.TempDir(), "h.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sha := func(c byte) string { return strings.Repeat(string(c), 40) }
	run := func(commit byte, v float64, dirty bool) store.Run {
		return store.Run{Commit: sha(commit), Benchmark: "serving", Metrics: map[string]float64{"mean_ttft_ms": v}, Dirty: dirty}
	}
	// a and b are in the range; c has two clean runs, d one, e one clean
	// and one dirty, f two clean runs of which one is invalidated.
	runs := []store.Run{run('a', 1, false), run('a', 2, false), run('b', 3, false), run('b', 4, false),
		run('c', 5, false), run('c', 6, false), run('d', 7, false), run('e', 8, false), run('e', 9, true),
		run('f', 10, false), run('f', 11, false)}
	if _, err := s.Put(runs); err != nil {
		t.Fatal(err)
	}
	tg := Target{Name: "serving", Metric: metric.Info{Name: "mean_ttft_ms"}}
	shas := []string{sha('a'), sha('b')}

	got, n, err := HistoryShape(s, tg, shas, nil)
	if err != nil {
		t.Fatal(err)
	}
	sortEach(got)
	if want := [][]float64{{5, 6}, {10, 11}}; !sameSets(got, want) || n != 4 {
		t.Errorf("HistoryShape = %v, %d runs; want %v, 4 runs", got, n, want)
	}

	mark := func(rs map[string][]store.Run) error {
		for i := range rs[sha('f')] {
			if rs[sha('f')][i].Metrics["mean_ttft_ms"] == 10 {
				rs[sha('f')][i].Invalid = "invalidated by T: throttled"
			}
		}
		return nil
	}
	got, n, err = HistoryShape(s, tg, shas, mark)
	if err != nil || !reflect.DeepEqual(sortEach(got), [][]float64{{5, 6}}) || n != 2 {
		t.Errorf("with an invalidated run: HistoryShape = %v, %d runs, %v; want [[5 6]], 2 runs", got, n, err)
	}

	boom := errors.New("boom")
	if got, _, err := HistoryShape(s, tg, shas, func(map[string][]store.Run) error { return boom }); got != nil || !errors.Is(err, boom) {
		t.Errorf("mark failing: HistoryShape = %v, %v; want nil, boom", got, err)
	}
}

func sortEach(h [][]float64) [][]float64 {
	for _, vs := range h {
		slices.Sort(vs)
	}
	return h
}

// sameSets reports whether got holds want's slices, in any order.
func sameSets(got, want [][]float64) bool {
	if len(got) != len(want) {
		return false
	}
	used := make([]bool, len(want))
	for _, g := range got {
		found := false
		for i, w := range want {
			if !used[i] && reflect.DeepEqual(g, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
