package journeys

import (
	"path/filepath"
	"strings"
	"testing"
)

// history is a history to backfill: the result files of main's commits,
// oldest first, and the file the pull request's head measured unchanged.
type history struct {
	main []string
	head string
}

// sectionsHistory is an optimisation log's sections as commits, as the
// README's demo makes them: all but the last on main, the last the head.
func sectionsHistory(t *testing.T, log string) history {
	files := seedSections(t, log, t.TempDir())
	return history{main: files[:len(files)-1], head: files[len(files)-1]}
}

// sameFileHistory is one real tool output measured at three commits of
// main, and again at the head.
func sameFileHistory(file string) history {
	return history{main: []string{file, file, file}, head: file}
}

// backfillCase is a named history.
type backfillCase struct {
	name string
	make func(t *testing.T) history
}

// backfills are the real files of the journeys on a laptop: the
// optimisation log committed in testdata, the seeds and real tool outputs
// of ../shared (skipped when absent).
var backfills = []backfillCase{
	{"optimisation log, five commits", func(t *testing.T) history { return sectionsHistory(t, logFile()) }},
	{"seed vllm-ascend log", func(t *testing.T) history {
		return sectionsHistory(t, shared(t, "seeds/vllm-ascend-multimodal-optimizations.md"))
	}},
	{"seed MindIE log", func(t *testing.T) history { return sameFileHistory(shared(t, "seeds/mindie-tuning-qwq32b.md")) }},
	{"vllm serve text v0.11", func(t *testing.T) history {
		return sameFileHistory(shared(t, "fixtures/vllm_serve_text/vllm-ascend_issue4110_v0.11_serve.txt"))
	}},
	{"vllm serve text v0.7", func(t *testing.T) history {
		return sameFileHistory(shared(t, "fixtures/vllm_serve_text/vllm_issue12845_v0.7_serve.txt"))
	}},
	{"benchmark_serving console log, four rates", func(t *testing.T) history {
		return sameFileHistory(shared(t, "fixtures/vllm_serve_text/llm-k8s_tp8_pp1_benchmark-script-run.log"))
	}},
	{"vllm serve JSON", func(t *testing.T) history {
		return sameFileHistory(shared(t, "fixtures/vllm_serve_json/llm-k8s_serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json"))
	}},
}

// TestJourneyBackfillThenLocalCheck: on a laptop (CI unset), a user
// backfills a history from their files with the README's flags only
// (perfgate ingest --name NAME FILE per commit, no --testbed), then checks
// a change locally (perfgate check --rule 'Mean TTFT:3%'), committed on a
// branch or still uncommitted: its Mean TTFT 10% worse fails naming Mean
// TTFT; the head unchanged passes.
func TestJourneyBackfillThenLocalCheck(t *testing.T) {
	backfillJourney(t, backfills, nil)
}

// backfillJourney is TestJourneyBackfillThenLocalCheck on cases, with
// global flags (a --db) before each command.
func backfillJourney(t *testing.T, cases []backfillCase, extra []string) {
	for _, bf := range cases {
		t.Run(bf.name, func(t *testing.T) {
			t.Parallel()
			h := bf.make(t)
			m := laptop(t)
			repo := backfill(t, m, h, extra)
			for _, head := range heads(t, m, h) {
				t.Run(head.name+" on a branch", func(t *testing.T) {
					m.git(repo, "checkout", "-q", "-b", "pr-"+head.name, "main")
					m.commit(repo, "the change", map[string]string{"change.txt": head.name})
					m.must(repo, cmdline(extra, "ingest", "--name", "serving", head.file)...)
					head.want(t, m.perfgate(repo, cmdline(extra, "check", "--rule", "Mean TTFT:3%")...))
				})
				// The README's local pre-merge check: the change not
				// committed yet, measured, then checked.
				t.Run(head.name+" uncommitted", func(t *testing.T) {
					m.git(repo, "checkout", "-q", "main")
					writeFile(t, filepath.Join(repo, "change.txt"), "uncommitted "+head.name)
					defer m.git(repo, "checkout", "-q", "--", "change.txt")
					m.must(repo, cmdline(extra, "ingest", "--name", "serving", head.file)...)
					r := m.perfgate(repo, cmdline(extra, "check", "--rule", "Mean TTFT:3%")...)
					head.want(t, r)
					if !strings.Contains(r.stdout, "uncommitted changes") {
						t.Errorf("the check does not say it gated the working tree: %s", r)
					}
				})
			}
		})
	}
}

// backfill makes a repository whose main has one commit per file of h,
// each file ingested at its commit as the README says, with global flags
// (a --db) before the command.
func backfill(t *testing.T, m *machine, h history, extra []string) string {
	t.Helper()
	repo := m.repo()
	for i, f := range h.main {
		m.commit(repo, "change "+filepath.Base(f), map[string]string{"change.txt": strings.Repeat("x", i+1)})
		r := m.must(repo, cmdline(extra, "ingest", "--name", "serving", f)...)
		if !strings.Contains(r.stdout+r.stderr, `testbed "unknown"`) {
			t.Errorf("a file ingested outside CI without --testbed is not on testbed unknown: %s", r)
		}
	}
	return repo
}

// head is a pull request's head: its file and what its check must say.
type head struct {
	name string
	file string
	want func(*testing.T, result)
}

// heads are the regression (Mean TTFT 10% worse, must fail) and the
// unchanged head (must pass) of h.
func heads(t *testing.T, m *machine, h history) []head {
	return []head{
		{"regression", regressed(t, m, h.head, t.TempDir()), wantFail},
		{"unchanged", h.head, wantPass},
	}
}
