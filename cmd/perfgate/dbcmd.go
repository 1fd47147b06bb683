package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, dbCommand) }

// dbCommand is perfgate db migrate: the PostgreSQL schema, created or
// upgraded by a role that may create tables, for the roles that may not.
func dbCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "db",
		Usage: "manage a PostgreSQL history (--db postgres://...)",
		Description: "A PostgreSQL history is set up on first use by a role that may create tables. When the roles\n" +
			"that run perfgate may not (a read-only role for check, watch and site), the database's owner\n" +
			"runs perfgate --db postgres://OWNER@HOST/DB db migrate once, and after each perfgate upgrade\n" +
			"that changes the schema. See docs/postgres.md for the schema and the grants.",
		ArgsUsage: "migrate",
		Flags:     []cli.Flag{outputFlag("text", "json")},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 || c.Args().First() != "migrate" {
				return usageErrorf("db takes one action, migrate (got %q): perfgate --db postgres://USER@HOST/DB db migrate", strings.Join(c.Args().Slice(), " "))
			}
			o, err := checkOutput(c, "text", "json")
			if err != nil {
				return err
			}
			return dbMigrate(c, e, o)
		},
	}
}

// dbMigrate creates or upgrades the schema of the database --db names.
func dbMigrate(c *cli.Context, e *env, o string) error {
	repo, _ := openRepo(c)
	if repo != nil {
		defer repo.Close()
	}
	path, err := dbPath(c, repo)
	if err != nil {
		return err
	}
	if !store.IsPostgres(path) {
		return usageErrorf("db migrate applies to a PostgreSQL history; --db (or PERFGATE_DB, or db: in .perfgate.yml) is %q, a bbolt file that every command upgrades itself: pass --db postgres://USER@HOST/DB", path)
	}
	timeout, err := lockTimeout()
	if err != nil {
		return err
	}
	from, to, err := store.Migrate(path, store.Options{Timeout: timeout})
	if err != nil {
		return storeError(err)
	}
	if o == "json" {
		return writeJSON(e.stdout, map[string]any{"database": redactDB(path), "from": from, "to": to})
	}
	if from == to {
		fmt.Fprintf(e.stdout, "%s has schema v%d already; nothing to do\n", redactDB(path), to)
	} else {
		fmt.Fprintf(e.stdout, "%s: schema v%d -> v%d\n", redactDB(path), from, to)
	}
	return nil
}

// redactDB names a history in output: a database URL without its
// password.
func redactDB(path string) string {
	if !store.IsPostgres(path) {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return "the database of --db"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") || q.Has("sslpassword") {
		q.Del("password")
		q.Del("sslpassword")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// historySettings are the history keys of the rules file: db (the
// history when --db and PERFGATE_DB are unset) and repository (the name
// the repository's runs carry in a database shared by several).
type historySettings struct {
	DB         string `yaml:"db"`
	Repository string `yaml:"repository"`
}

// rulesHistory reads db: and repository: from the rules file (--rules
// when the command has it, else .perfgate.yml at the repo root), once
// per invocation. A file that cannot be read or parsed gives none: the
// commands that read rules report it.
func rulesHistory(c *cli.Context, repo *gitrepo.Repo) historySettings {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	if h, ok := c.App.Metadata["history-settings"].(historySettings); ok {
		return h
	}
	var h historySettings
	path := c.String("rules")
	if path == "" && repo != nil && repo.Root() != "" {
		path = filepath.Join(repo.Root(), ".perfgate.yml")
	}
	if path != "" {
		if data, err := os.ReadFile(path); err == nil {
			if yaml.Unmarshal(data, &h) != nil {
				h = historySettings{}
			}
		}
	}
	h.DB, h.Repository = strings.TrimSpace(h.DB), strings.TrimSpace(h.Repository)
	if (h.DB != "" || h.Repository != "") && rulesFromBase(c) {
		// The checked-out rules file is the pull request's own: under
		// --rules-from base it must not choose which history the gate
		// reads (db: a forged file committed in the pull request,
		// repository: another repository's runs in a shared database).
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s: db: and repository: of the checked-out rules file are ignored under --rules-from base; give the history with --db or PERFGATE_DB (and PERFGATE_REPOSITORY)\n", path)
		h = historySettings{}
	}
	c.App.Metadata["history-settings"] = h
	return h
}

// rulesFromBase reports whether the rules are read as committed at the
// merge-base (check --rules-from base, or PERFGATE_RULES_FROM=base for
// every command).
func rulesFromBase(c *cli.Context) bool {
	return c.String("rules-from") == "base" || strings.TrimSpace(os.Getenv("PERFGATE_RULES_FROM")) == "base"
}

// repositoryName is the name a repository's runs carry in a PostgreSQL
// history: PERFGATE_REPOSITORY (a command run outside the repository,
// e.g. a dashboard job), else repository: in the rules file, else the origin remote's URL
// as host/path (no scheme, credentials or .git), else the path of the
// main working tree (a repository without a remote).
func repositoryName(c *cli.Context, repo *gitrepo.Repo) string {
	if name := strings.TrimSpace(os.Getenv("PERFGATE_REPOSITORY")); name != "" {
		return name
	}
	if name := rulesHistory(c, repo).Repository; name != "" {
		return name
	}
	if repo == nil {
		return ""
	}
	if name := remoteName(originURL(repo)); name != "" {
		return name
	}
	// No remote: the main working tree's path, so that two local
	// repositories sharing a database never share runs.
	if repo.Root() == "" {
		return ""
	}
	main := filepath.Dir(filepath.Dir(sharedDBPath(repo.Root(), repo.GitDir(), repo.CommonDir())))
	if abs, err := filepath.Abs(main); err == nil {
		main = abs
	}
	return filepath.ToSlash(main)
}

var scpLike = regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`)

// remoteName turns a remote URL into host/owner/name: the same
// repository reached over https or ssh gets the same name.
func remoteName(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	var host, path string
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" && u.Host != "" {
		host, path = u.Hostname(), u.Path
	} else if m := scpLike.FindStringSubmatch(raw); m != nil && !strings.Contains(raw, "://") {
		host, path = m[1], m[2]
	} else {
		return filepath.ToSlash(filepath.Clean(raw)) // a local path
	}
	path = strings.TrimSuffix(strings.Trim(path, "/"), ".git")
	return strings.ToLower(host) + "/" + path
}

// openPostgres opens the PostgreSQL history at url for this repository.
func openPostgres(c *cli.Context, repo *gitrepo.Repo, url string, readOnly bool) (*store.Store, error) {
	timeout, err := lockTimeout()
	if err != nil {
		return nil, err
	}
	warn := func(msg string) { fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s\n", msg) }
	s, err := store.Open(url, store.Options{ReadOnly: readOnly, Timeout: timeout, Repository: repositoryName(c, repo), Warn: warn})
	if err != nil {
		return nil, storeError(err)
	}
	return s, nil
}

// dbUnavailable reports whether err means the history could not be
// opened or written for a reason of the environment (a lock held, a
// database down): the runs a command measured are then saved elsewhere.
func dbUnavailable(err error) bool {
	return errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrNeedsMigration)
}
