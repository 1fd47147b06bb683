package gate

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"time"
)

// fakeRepo is an in-memory Graph and History: commits with one parent
// each (enough for first-parent questions) and samples per commit.
type fakeRepo struct {
	n       int
	parent  map[string]string
	depth   map[string]int
	subject map[string]string
	when    map[string]time.Time
	samples map[string][]Sample
	calls   int // Samples calls, to check batching
}

func newFakeRepo() *fakeRepo {
	return &fakeRepo{
		parent:  map[string]string{},
		depth:   map[string]int{},
		subject: map[string]string{},
		when:    map[string]time.Time{},
		samples: map[string][]Sample{},
	}
}

var fakeEpoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// commit adds a commit on top of parent ("" for a root) and returns its id.
func (f *fakeRepo) commit(parent, subject string) string {
	f.n++
	sum := sha1.Sum([]byte(fmt.Sprintf("commit %d", f.n)))
	sha := hex.EncodeToString(sum[:])
	f.parent[sha] = parent
	f.depth[sha] = 0
	if parent != "" {
		f.depth[sha] = f.depth[parent] + 1
	}
	f.subject[sha] = subject
	f.when[sha] = fakeEpoch.Add(time.Duration(f.n) * time.Hour)
	return sha
}

// chain adds n commits on top of parent and returns them oldest first.
func (f *fakeRepo) chain(parent string, n int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		parent = f.commit(parent, fmt.Sprintf("%s %d", prefix, i))
		out[i] = parent
	}
	return out
}

// add stores a result of benchmark at commit.
func (f *fakeRepo) add(commit, bench string, labels map[string]string, metrics map[string]float64) {
	f.samples[commit] = append(f.samples[commit], Sample{Commit: commit, Benchmark: bench, Labels: labels, Metrics: metrics, Time: f.when[commit]})
}

func (f *fakeRepo) MergeBase(a, b string) (string, error) {
	if _, ok := f.depth[a]; !ok {
		return "", fmt.Errorf("unknown commit %s", a)
	}
	if _, ok := f.depth[b]; !ok {
		return "", fmt.Errorf("unknown commit %s", b)
	}
	for f.depth[a] > f.depth[b] {
		a = f.parent[a]
	}
	for f.depth[b] > f.depth[a] {
		b = f.parent[b]
	}
	for a != b {
		a, b = f.parent[a], f.parent[b]
		if a == "" || b == "" {
			return "", fmt.Errorf("no merge base")
		}
	}
	return a, nil
}

func (f *fakeRepo) FirstParents(from string, n int) ([]Commit, error) {
	if _, ok := f.depth[from]; !ok {
		return nil, fmt.Errorf("unknown commit %s", from)
	}
	var out []Commit
	for c := from; c != "" && len(out) < n; c = f.parent[c] {
		out = append(out, Commit{SHA: c, Subject: f.subject[c], Time: f.when[c]})
	}
	return out, nil
}

func (f *fakeRepo) Samples(commits []string) (map[string][]Sample, error) {
	f.calls++
	out := make(map[string][]Sample, len(commits))
	for _, c := range commits {
		if s, ok := f.samples[c]; ok {
			out[c] = s
		}
	}
	return out, nil
}
