package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/gitlab/gitlabtest"
)

// hostileBench is a benchmark name that tries markup, HTML, mentions and
// GitLab references: it must render as text in an annotation and a note.
const hostileBench = `x<img src=y onerror=alert(1)>@alice~bug!3%v1$9:tada:`

// ciJob is a CI job's script: pull the history, measure (the stand-in vllm
// reports $FAKE_TTFT), store, then push (the default branch) or gate.
func ciJob(gate bool) string {
	s := "perfgate sync --pull-only\n" +
		"vllm bench serve | tee bench.txt\n" +
		"perfgate ingest --name '" + hostileBench + "' --commit HEAD bench.txt\n"
	if gate {
		return s + "perfgate check\n"
	}
	return s + "perfgate sync --push-only\n"
}

// outsideCode is md without its code spans (a line's text between
// matching backtick fences), which CommonMark and GFM render as literal
// text.
func outsideCode(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); {
		if md[i] != '`' {
			b.WriteByte(md[i])
			i++
			continue
		}
		n := 0
		for i+n < len(md) && md[i+n] == '`' {
			n++
		}
		fence := md[i : i+n]
		end := strings.Index(md[i+n:], fence)
		if end < 0 || strings.Contains(md[i+n:i+n+end], "\n") {
			b.WriteString(fence)
			i += n
			continue
		}
		i += n + end + n
	}
	return b.String()
}

// annotations splits the stand-in agent's log into its annotate calls.
func annotations(log string) []string {
	var out []string
	for _, part := range strings.Split(log, "buildkite-agent ")[1:] {
		if strings.HasPrefix(part, "annotate ") {
			out = append(out, part)
		}
	}
	return out
}

// Buildkite end to end on a bare remote, with a stand-in buildkite-agent
// on PATH: the default branch records; a pull request 10% slower fails the
// step with one error annotation (base and testbed from the environment,
// no flags), a re-run replaces it (the same context, never --append), an
// unchanged head passes and turns it green; the hostile name is inert.
func TestBuildkiteEndToEnd(t *testing.T) {
	parallel(t)
	r := newCIRunner(t)
	bk := []string{"BUILDKITE=true", "BUILDKITE_PIPELINE_DEFAULT_BRANCH=main", "BUILDKITE_REPO=" + r.remote, "BUILDKITE_AGENT_NAME=gpu-1"}
	main := r.checkout("main", "main")
	if out, code := r.sh(main, ciJob(false), []string{"-e"}, append(bk, "FAKE_TTFT=100.00", "BUILDKITE_PULL_REQUEST=false", "BUILDKITE_BRANCH=main")...); code != 0 || r.historyRuns() != 1 {
		t.Fatalf("default branch: exit %d, %d runs\n%s", code, r.historyRuns(), out)
	}
	if log := r.fakeLog(); log != "" {
		t.Errorf("the default branch's build called the agent:\n%s", log)
	}
	pr := append(bk, "BUILDKITE_PULL_REQUEST=12", "BUILDKITE_BRANCH=feature", "BUILDKITE_PULL_REQUEST_BASE_BRANCH=main")
	for run := 1; run <= 2; run++ {
		dir := r.checkout("pr"+string(rune('0'+run)), "feature")
		out, code := r.sh(dir, ciJob(true), []string{"-e"}, append(pr, "FAKE_TTFT=110.00")...)
		if code != 1 {
			t.Fatalf("run %d: exit %d, want 1 (a 10%% regression)\n%s", run, code, out)
		}
		ann := annotations(r.fakeLog())
		if len(ann) != run {
			t.Fatalf("run %d: %d annotate calls\n%s", run, len(ann), r.fakeLog())
		}
		last := ann[len(ann)-1]
		if !strings.HasPrefix(last, "annotate --context perfgate --style error\n--- stdin\n") || !strings.Contains(last, "Mean TTFT") {
			t.Errorf("run %d: annotation\n%s", run, last)
		}
		if strings.Contains(outsideCode(last), "<img") || strings.Contains(last, "--append") {
			t.Errorf("run %d: raw HTML or --append in the annotation\n%s", run, last)
		}
		if !strings.Contains(r.fakeLog(), "buildkite-agent artifact upload perfgate.json") {
			t.Errorf("run %d: no JSON report uploaded\n%s", run, r.fakeLog())
		}
	}
	dir := r.checkout("pr3", "feature")
	if out, code := r.sh(dir, ciJob(true), []string{"-e"}, append(pr, "FAKE_TTFT=100.00")...); code != 0 {
		t.Fatalf("unchanged head: exit %d\n%s", code, out)
	}
	ann := annotations(r.fakeLog())
	if len(ann) != 3 || !strings.HasPrefix(ann[2], "annotate --context perfgate --style success\n") {
		t.Errorf("unchanged head: annotations\n%s", strings.Join(ann, "\n"))
	}
	if r.historyRuns() != 1 {
		t.Errorf("a pull request pushed to the history")
	}
}

// GitLab end to end on a bare remote against the scripted API: a merge
// request 10% slower fails the job with one note and a failed status; a
// re-run edits the note; an unchanged head passes, edits it and sets the
// status green; the hostile name is inert in the note; the dotenv and
// metrics reports are written.
func TestGitLabEndToEnd(t *testing.T) {
	parallel(t)
	r := newCIRunner(t)
	const token = "glpat-e2e-secret"
	head := r.git(r.tmp, "--git-dir", r.remote, "rev-parse", "feature")
	notes := "/projects/42/merge_requests/7/notes"
	status := func(state string) gitlabtest.Call {
		return gitlabtest.Call{Method: "POST", Path: "/projects/42/statuses/" + head, Check: func(t testing.TB, _ *http.Request, body []byte) {
			if m := gitlabtest.DecodeBody(t, body); m["state"] != state || m["name"] != "perfgate" {
				t.Errorf("status %v, want %s", m, state)
			}
		}}
	}
	var bodies []string
	keep := func(t testing.TB, _ *http.Request, body []byte) {
		bodies = append(bodies, gitlabtest.DecodeBody(t, body)["body"].(string))
	}
	mine := func() []any {
		return []any{gitlabtest.Note(9, "<!-- perfgate:gate=perfgate -->\nold", gitlabtest.BotID)}
	}
	srv := gitlabtest.New(t, token,
		gitlabtest.User(), gitlabtest.Call{Method: "GET", Path: notes, Body: []any{}},
		gitlabtest.Call{Method: "POST", Path: notes, Body: gitlabtest.Note(9, "x", gitlabtest.BotID), Check: keep}, status("failed"),
		gitlabtest.User(), gitlabtest.Call{Method: "GET", Path: notes, Body: mine()},
		gitlabtest.Call{Method: "PUT", Path: notes + "/9", Check: keep}, status("failed"),
		gitlabtest.User(), gitlabtest.Call{Method: "GET", Path: notes, Body: mine()},
		gitlabtest.Call{Method: "PUT", Path: notes + "/9", Check: keep}, status("success"),
	)
	gl := []string{"GITLAB_CI=true", "CI_API_V4_URL=" + srv.APIURL(), "CI_PROJECT_ID=42", "CI_RUNNER_DESCRIPTION=gpu-1", "CI_JOB_URL=https://gitlab.example/g/p/-/jobs/1"}
	main := r.checkout("main", "main")
	if out, code := r.sh(main, ciJob(false), []string{"-e"}, append(gl, "FAKE_TTFT=100.00", "CI_COMMIT_SHA="+r.git(main, "rev-parse", "HEAD"), "CI_PROJECT_DIR="+main)...); code != 0 || r.historyRuns() != 1 {
		t.Fatalf("default branch: exit %d\n%s", code, out)
	}
	mr := append(gl, "CI_MERGE_REQUEST_IID=7", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main", "CI_COMMIT_SHA="+head, "PERFGATE_GITLAB_TOKEN="+token)
	for run, ttft := range []string{"110.00", "110.00", "100.00"} {
		dir := r.checkout("mr"+string(rune('1'+run)), "feature")
		out, code := r.sh(dir, ciJob(true), []string{"-e"}, append(mr, "FAKE_TTFT="+ttft, "CI_PROJECT_DIR="+dir)...)
		if want := map[bool]int{true: 1, false: 0}[run < 2]; code != want {
			t.Fatalf("run %d: exit %d, want %d\n%s", run+1, code, want, out)
		}
		if strings.Contains(out, token) {
			t.Errorf("run %d: the token is in the job's log", run+1)
		}
		dotenv, _ := os.ReadFile(filepath.Join(dir, "perfgate.env"))
		metrics, _ := os.ReadFile(filepath.Join(dir, "perfgate-metrics.txt"))
		if want := "PERFGATE_VERDICT=" + map[bool]string{true: "fail", false: "pass"}[run < 2]; !strings.HasPrefix(string(dotenv), want) || !strings.Contains(string(metrics), "mean_ttft") {
			t.Errorf("run %d: dotenv %q, metrics %q", run+1, dotenv, metrics)
		}
	}
	if len(bodies) != 3 {
		t.Fatalf("%d notes written", len(bodies))
	}
	for i, b := range bodies {
		if !strings.HasPrefix(b, "<!-- perfgate:gate=perfgate -->\n") || !strings.Contains(b, "`"+hostileBench+"`") {
			t.Errorf("note %d:\n%s", i+1, b)
		}
		// Outside code spans (literal text in GFM: no HTML, no reference)
		// nothing of the name is markup or a reference.
		for _, ref := range []string{"<img", "@alice", "~bug", "!3", "%v1", "$9", ":tada"} {
			if strings.Contains(outsideCode(b), ref) {
				t.Errorf("note %d: %q outside a code span:\n%s", i+1, ref, outsideCode(b))
			}
		}
	}
}
