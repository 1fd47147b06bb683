package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/histsync"
	"github.com/perfgate/perfgate/internal/inert"
)

// Which runs at head a check uses. Whoever can push the history branch can
// add runs at any commit, a pull request's own among them; after the pull
// request's job syncs, its check would use them beside the job's own runs
// and could turn a FAIL into a PASS. So a pull request's check uses, at
// head, only the runs its own job stored (perfgate run, ingest, import),
// not the ones a sync brought from the branch, unless told otherwise.
const (
	headRunsAuto  = "auto"  // local in a pull request's check on GitHub Actions, else all
	headRunsLocal = "local" // only the runs stored in this history, not pulled from the branch
	headRunsAll   = "all"   // every run at head; those from the branch are named in the report
)

var headRunsModes = []string{headRunsAuto, headRunsLocal, headRunsAll}

func headRunsFlag() cli.Flag {
	return &cli.StringFlag{Name: "head-runs", Value: headRunsAuto, EnvVars: []string{"PERFGATE_HEAD_RUNS"},
		Usage: "which runs at head the check uses: `auto` (local in a pull request's check on GitHub Actions, else all), local (only the runs stored in this history by perfgate run, ingest or import, not the ones perfgate sync brought from the history branch, which anyone who can push it can write) or all (those from the branch are named in the report with their branch commit and author)"}
}

// headRunsMode reads --head-runs; "" (a command without the flag) is auto.
func headRunsMode(c *cli.Context, e *env) (string, error) {
	mode := strings.TrimSpace(c.String("head-runs"))
	if mode == "" {
		mode = headRunsAuto
	}
	if !slices.Contains(headRunsModes, mode) {
		return "", usageErrorf("--head-runs (or PERFGATE_HEAD_RUNS) %q is not a choice; use one of %s", mode, strings.Join(headRunsModes, ", "))
	}
	if mode == headRunsAuto {
		mode = headRunsAll
		if ghEnv, err := github.FromEnv(e.getenv); err == nil && ghEnv.Actions && ghEnv.PR != 0 {
			mode = headRunsLocal
		}
	}
	return mode, nil
}

// headRunsFromBranch finds the runs at head that a sync brought from the
// history branch. Under local it leaves them out of h; either way it
// returns the report's warning that names them with the branch commit and
// author that brought them ("" when there are none).
func headRunsFromBranch(mode string, repo *gitrepo.Repo, h *history, head string) (string, error) {
	if h.s == nil {
		return "", nil
	}
	pulled, err := histsync.PulledAt(h.s, head)
	if err != nil {
		return "", storeError(err)
	}
	if len(pulled) == 0 {
		return "", nil
	}
	ids := make([]string, 0, len(pulled))
	for id := range pulled {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	named := make([]string, len(ids))
	vias := map[string]histsync.Via{}
	byBranch := map[histsync.Pulled][]string{}
	for _, id := range ids {
		byBranch[pulled[id]] = append(byBranch[pulled[id]], id)
	}
	for p, list := range byBranch {
		vs, err := histsync.RunVias(repo.Root(), p.Remote, p.Branch, list)
		if err != nil {
			vs = nil // named without their branch commit
		}
		for id, v := range vs {
			vias[id] = v
		}
	}
	for i, id := range ids {
		p := pulled[id]
		how := fmt.Sprintf("from %s %s, its branch commit not found there now", inert.Line(p.Remote, 100), inert.Line(p.Branch, 100))
		if v, ok := vias[id]; ok {
			how = fmt.Sprintf("arrived %s in %s commit %s, author %s", v.Time.UTC().Format("2006-01-02 15:04 UTC"), inert.Line(v.Branch, 100), shortCommit(v.Commit), inert.Line(v.Author, 200))
		}
		named[i] = fmt.Sprintf("run %s [%s]", id[:min(8, len(id))], how)
	}
	list := strings.Join(named, ", ")
	if mode == headRunsLocal {
		if h.leaveOut == nil {
			h.leaveOut = map[string]bool{}
		}
		for _, id := range ids {
			h.leaveOut[id] = true
		}
		return fmt.Sprintf("%d run(s) at head came from the history branch, not from this job, and are left out (anyone who can push the branch can write runs at any commit): %s; --head-runs all uses them", len(ids), list), nil
	}
	return fmt.Sprintf("%d run(s) at head came from the history branch, not from this job, and are used (--head-runs all): %s", len(ids), list), nil
}
