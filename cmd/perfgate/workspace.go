package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/store"
)

// The workspace is the repository and the history a command works on.
// Commands open only what they need and close it as soon as they can: a
// read-only history open is blocked by a writer, so it is held briefly.

// openRepo opens the repository named by --repo, or the one containing
// the working directory.
func openRepo(c *cli.Context) (*gitrepo.Repo, error) {
	path := c.String("repo")
	if path == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, envError(fmt.Errorf("cannot read the working directory: %v", err))
		}
		path = wd
	}
	r, err := gitrepo.Open(path)
	if err != nil {
		return nil, gitError(err)
	}
	return r, nil
}

// openRepoOrDB opens the repository like openRepo, but a command that
// needs no git when --db names the history runs outside one: then the
// repository is nil and there is no error.
func openRepoOrDB(c *cli.Context) (*gitrepo.Repo, error) {
	r, err := openRepo(c)
	if err != nil && c.String("db") != "" {
		return nil, nil
	}
	return r, err
}

// gitError maps git failures to exit codes: a revision the user typed
// that does not exist is bad input (2); a missing repository, a shallow
// clone or a broken object store is the environment (3).
func gitError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	if errors.Is(err, gitrepo.ErrUnknownRevision) {
		return &exitError{code: exitBad, err: err}
	}
	return envError(err)
}

// dbPath returns the history path: --db / PERFGATE_DB, else db: in the
// rules file, else .perfgate/history.db at the root of the repository's
// main working tree. A postgres:// URL names a PostgreSQL history.
// Linked worktrees (git worktree add) share it, as they share the
// repository's objects: a branch checked out next to main finds main's
// history. repo may be nil when --db is given.
func dbPath(c *cli.Context, repo *gitrepo.Repo) (string, error) {
	if p := c.String("db"); p != "" {
		source := "--db"
		if os.Getenv("PERFGATE_DB") == p {
			source = "PERFGATE_DB"
		}
		if err := store.CheckPath(p, source); err != nil {
			return "", &exitError{code: exitBad, err: err}
		}
		return p, nil
	}
	if p := rulesHistory(c, repo).DB; p != "" {
		if err := store.CheckPath(p, "db: in the rules file"); err != nil {
			return "", &exitError{code: exitBad, err: err}
		}
		return p, nil
	}
	if repo == nil || repo.Root() == "" {
		return "", usageErrorf("no history: not inside a git working tree; pass --db PATH (or set PERFGATE_DB), or --repo PATH")
	}
	return sharedDBPath(repo.Root(), repo.GitDir(), repo.CommonDir()), nil
}

// sharedDBPath is the history of a working tree at root whose git
// directory is gitDir: its own .perfgate/ in the main working tree; for a
// linked worktree, the main working tree's (the parent of a common
// directory named .git), or perfgate/ inside a bare common directory.
func sharedDBPath(root, gitDir, commonDir string) string {
	if commonDir == "" || filepath.Clean(gitDir) == filepath.Clean(commonDir) {
		return filepath.Join(root, ".perfgate", "history.db")
	}
	if filepath.Base(commonDir) == ".git" {
		return filepath.Join(filepath.Dir(commonDir), ".perfgate", "history.db")
	}
	return filepath.Join(commonDir, "perfgate", "history.db")
}

// openStore opens the history for writing (creating it, and keeping
// .perfgate/ out of git status) or, with readOnly, for reading; a
// read-only open of a history that does not exist yet returns (nil, nil).
func openStore(c *cli.Context, repo *gitrepo.Repo, readOnly bool) (*store.Store, error) {
	path, err := dbPath(c, repo)
	if err != nil {
		return nil, err
	}
	if store.IsPostgres(path) {
		return openPostgres(c, repo, path, readOnly)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, usageErrorf("history %q (--db or PERFGATE_DB) is a directory, not a history file; name the file, e.g. --db %s (or leave --db and PERFGATE_DB unset for .perfgate/history.db at the repo root)", path, filepath.Join(path, "history.db"))
	}
	if readOnly {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if c.String("db") != "" && warnOnce(c, "missing-db") {
				// A typo in --db would otherwise read as "no results".
				fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: history %q (--db or PERFGATE_DB) does not exist; reading it as empty%s\n", path, urlLikeHint(path))
			}
			return nil, nil
		}
	} else if c.String("db") == "" && repo != nil {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			if err := repo.ExcludePath(".perfgate/"); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: could not add .perfgate/ to .git/info/exclude: %v\n", err)
			}
		}
	}
	timeout, err := lockTimeout()
	if err != nil {
		return nil, err
	}
	s, err := store.Open(path, store.Options{ReadOnly: readOnly, Timeout: timeout})
	if err != nil {
		return nil, storeError(err)
	}
	return s, nil
}

// urlLikeHint is the note added when a history path that does not exist
// looks like a mistyped URL (postgres:/host/db, postgres:host): a
// PostgreSQL history is named by a postgres:// URL.
func urlLikeHint(path string) string {
	scheme, _, ok := strings.Cut(path, ":")
	if !ok || len(scheme) < 2 || strings.ContainsAny(scheme, "/\\.") {
		return ""
	}
	return fmt.Sprintf(" (%q looks like a URL, not a file: a PostgreSQL history is named postgres://USER@HOST/DATABASE)", scheme+":")
}

// warnOnce reports whether the warning key was not given yet in this
// invocation: a command that opens the history several times (check,
// bisect) says a thing once.
func warnOnce(c *cli.Context, key string) bool {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	key = "warned:" + key
	if c.App.Metadata[key] != nil {
		return false
	}
	c.App.Metadata[key] = true
	return true
}

// lockTimeout reads PERFGATE_LOCK_TIMEOUT, how long to wait for another
// perfgate process to release the history (default 10s; 0 means the
// default, a negative value means do not wait).
func lockTimeout() (time.Duration, error) {
	v := os.Getenv("PERFGATE_LOCK_TIMEOUT")
	if v == "" {
		return 0, nil // the store's default
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, usageErrorf("PERFGATE_LOCK_TIMEOUT %q is not a duration; use for example 30s or 2m, or unset it for the default (%s)", v, store.DefaultTimeout)
	}
	return d, nil
}

// storeError maps store failures: a locked or unreadable history is the
// environment (3); bad input is 2.
func storeError(err error) error {
	if err == nil {
		return nil
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	if errors.Is(err, store.ErrBadInput) {
		return &exitError{code: exitBad, err: err}
	}
	return envError(err)
}

// parseLabels reads repeatable --label k=v flags.
func parseLabels(flags []string) (map[string]string, error) {
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageErrorf("--label %q is not KEY=VALUE; for example --label hardware=910B3", f)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}
