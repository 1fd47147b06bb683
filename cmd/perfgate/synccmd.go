package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/github"
	"github.com/perfgate/perfgate/histsync"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, syncCommand) }

func syncCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "sync",
		Usage: "pull and push the history through a data branch on the git remote, so CI and developers share it",
		Description: "Runs are stored as JSONL files on a branch with no code (perfgate-history by default) of the\n" +
			"remote (origin by default), one file per push, merged into bigger files as they accumulate:\n" +
			"sync imports the branch's new runs into the local history, then commits the local runs the\n" +
			"branch lacks and pushes them, retrying on top when another runner pushed first. It reads only\n" +
			"what changed since the last sync. Files on the branch that hold no runs are skipped with a\n" +
			"warning. Runs measured on uncommitted changes are never pushed. A fresh clone rebuilds its\n" +
			"history with one sync. On a laptop, --pull-only fetches CI's baselines without sharing local runs.\n" +
			"HTTPS remotes use PERFGATE_GITHUB_TOKEN or GITHUB_TOKEN (for the GITHUB_SERVER_URL host only),\n" +
			"actions/checkout's stored credentials, or git's credential helpers; SSH remotes use the SSH agent.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "remote", Value: histsync.DefaultRemote, EnvVars: []string{"PERFGATE_SYNC_REMOTE"}, Usage: "git remote `NAME` to sync with"},
			&cli.StringFlag{Name: "branch", Value: histsync.DefaultBranch, EnvVars: []string{"PERFGATE_SYNC_BRANCH"}, Usage: "data `BRANCH` that holds the history"},
			&cli.BoolFlag{Name: "pull-only", Usage: "only import the branch's runs; push nothing"},
			&cli.BoolFlag{Name: "push-only", Usage: "only push local runs; import nothing"},
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			out, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			if c.Bool("pull-only") && c.Bool("push-only") {
				return usageErrorf("sync: --pull-only and --push-only exclude each other; give one, or neither to do both")
			}
			repo, err := openRepo(c)
			if err != nil {
				return err
			}
			defer repo.Close()
			dir := repo.Root()
			if dir == "" {
				dir = repo.GitDir()
			}
			pushOnly := c.Bool("push-only")
			if pushOnly {
				path, err := dbPath(c, repo)
				if err != nil {
					return err
				}
				if _, err := os.Stat(path); !store.IsPostgres(path) && errors.Is(err, os.ErrNotExist) { // no history: nothing to push
					return writeSync(e, out, &histsync.Result{Remote: c.String("remote"), Branch: c.String("branch")})
				}
			}
			// Writable also to push only: the history remembers what was
			// pushed, so the next sync reads only what is new. It is open
			// only while read or written, never across the network: a
			// benchmark that finishes meanwhile stores its results.
			open := func() (*store.Store, func(), error) {
				st, err := openStore(c, repo, false)
				if err != nil {
					return nil, nil, err
				}
				return st, func() { st.Close() }, nil
			}
			var token string
			for _, v := range github.TokenVars {
				if token = strings.TrimSpace(e.getenv(v)); token != "" {
					break
				}
			}
			res, err := histsync.SyncOpen(c.Context, dir, open, histsync.Options{
				Remote: c.String("remote"), Branch: c.String("branch"),
				NoPull: pushOnly, NoPush: c.Bool("pull-only"),
				Token: token, TokenHost: tokenHost(e.getenv("GITHUB_SERVER_URL")),
				Log: func(format string, args ...any) {
					fmt.Fprintf(e.stderr, "perfgate: "+format+"\n", args...)
				},
			})
			if err != nil {
				return syncError(err, token)
			}
			for _, s := range res.Skipped {
				fmt.Fprintf(e.stderr, "perfgate: warning: skipped %s\n", s)
			}
			if more := res.SkippedTotal - len(res.Skipped); more > 0 {
				fmt.Fprintf(e.stderr, "perfgate: warning: skipped %d more files or lines of the branch that are no runs\n", more)
			}
			return writeSync(e, out, res)
		},
	}
}

// tokenHost is the host a GitHub token may be sent to.
func tokenHost(serverURL string) string {
	if u, err := url.Parse(serverURL); err == nil && u.Host != "" {
		return u.Host
	}
	return "github.com"
}

// syncError maps sync failures: a wrong remote or branch is bad input
// (2), an unreachable or refusing remote the environment (3).
func syncError(err error, token string) error {
	msg := err.Error()
	if token != "" && len(token) >= 4 {
		msg = strings.ReplaceAll(msg, token, "***")
	}
	err2 := fmt.Errorf("sync: %s", msg)
	switch {
	case errors.Is(err, histsync.ErrConfig):
		return &exitError{code: exitBad, err: err2}
	case errors.Is(err, store.ErrLocked), errors.Is(err, histsync.ErrRemote):
		return envError(err2)
	case errors.Is(err, store.ErrBadInput):
		return &exitError{code: exitBad, err: err2}
	}
	return envError(err2)
}

func writeSync(e *env, out string, res *histsync.Result) error {
	if out == "json" {
		skipped, warnings := res.Skipped, res.Warnings
		if skipped == nil {
			skipped = []string{}
		}
		if warnings == nil {
			warnings = []string{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{
			"remote": res.Remote, "branch": res.Branch, "url": res.URL, "tip": res.Tip,
			"format": res.Format, "files_on_branch": res.Files, "pulled": res.Pulled, "pushed": res.Pushed,
			"attempts": res.Attempts, "dirty_not_pushed": res.Dirty, "skipped": skipped, "skipped_total": res.SkippedTotal,
			"warnings": warnings, "records_pulled": res.RecordsPulled, "records_pushed": res.RecordsPushed,
		})
	}
	where := "the branch does not exist yet"
	if res.Tip != "" {
		where = fmt.Sprintf("%s on the branch at %s", nFiles(res.Files), res.Tip[:12])
	}
	fmt.Fprintf(e.stdout, "synced with %s %s (%s): pulled %s, pushed %s; %s\n",
		res.Remote, res.Branch, res.URL, nRuns(res.Pulled), nRuns(res.Pushed), where)
	if res.RecordsPulled > 0 || res.RecordsPushed > 0 {
		fmt.Fprintf(e.stdout, "records (accepted changes, invalidated runs): pulled %d, pushed %d\n", res.RecordsPulled, res.RecordsPushed)
	}
	if res.Attempts > 1 {
		fmt.Fprintf(e.stdout, "other runners pushed first: pushed on attempt %d\n", res.Attempts)
	}
	if res.Dirty > 0 {
		fmt.Fprintf(e.stdout, "%s measured on uncommitted changes stay local (never pushed)\n", nRuns(res.Dirty))
	}
	return nil
}

// nFiles is "1 file" or "N files".
func nFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// nRuns is "1 run" or "N runs".
func nRuns(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
