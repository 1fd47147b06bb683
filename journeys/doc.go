// Package journeys owns the end-to-end tests of the journeys a user takes
// with perfgate, each run with the perfgate binary built from this
// checkout (go build, once per test run) on real files: the optimisation
// log in testdata, the seeds and real tool outputs of ../shared when they
// are there. Each journey has a regression (Mean TTFT made 10% worse in
// the real file's own text) that must fail with exit 1 naming Mean TTFT
// (the sweep's: a capacity 10% lower, naming capacity), and an unchanged
// head that must pass:
//
//   - a backfill from a log on a laptop, then a local pre-merge check;
//   - the GitHub Action (its main step, action.yml) recording runs on main
//     and gating a pull request, with its comment and status through the
//     GitHub fake (github/githubtest);
//   - a history ingested by hand, then the Action turned on: inconclusive
//     with the remedy, never green;
//   - CI's history synced to a laptop and a local run: nothing comparable,
//     and why;
//   - a serving run (--server, --ready, --repeat) against a stand-in engine
//     (internal/fakeserve);
//   - the same on PostgreSQL (PERFGATE_TEST_POSTGRES, internal/pgtest);
//   - a serving sweep (README, "Serving: load curves and SLOs"): five
//     concurrencies per commit, each point's vLLM --save-result file
//     ingested with its load label, an SLO and a capacity rule; its
//     regression is a capacity 10% lower, failing the capacity rule;
//   - bisect naming the commit that made TTFT 10% worse;
//   - the README's demo, run exactly as the README prints it.
//
// The package holds no code of its own: the journeys go through the
// command line only. Run just them with go test ./journeys. A change that
// turns a journey's regression into a pass fails here; when a rule must
// change what a journey does, the README changes in the same commit.
package journeys
