package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/perfgate/perfgate/gitrepo"
	"github.com/perfgate/perfgate/internal/inert"
	"github.com/perfgate/perfgate/store"
)

func init() { commandSet = append(commandSet, dbCommand) }

// dbCommand is perfgate db: the PostgreSQL schema, created or upgraded
// by a role that may create tables (migrate), and which repositories
// each writer role may write (grant, revoke, writers).
func dbCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:  "db",
		Usage: "manage a PostgreSQL history (--db postgres://...)",
		Description: "A PostgreSQL history is set up on first use by a role that may create tables. When the roles\n" +
			"that run perfgate may not (a read-only role for check, watch and site), the database's owner\n" +
			"runs perfgate --db postgres://OWNER@HOST/DB db migrate once, and after each perfgate upgrade\n" +
			"that changes the schema. A writer role stores runs, records and marks only in the repositories\n" +
			"the owner grants it: db grant --role ROLE --repository NAME (db revoke takes it back; db writers\n" +
			"lists the grants). See docs/postgres.md for the schema and the grants.",
		ArgsUsage: "migrate|grant|revoke|writers",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "role", Usage: "db grant and revoke: the PostgreSQL `ROLE` (a login role, or a group role whose members write through it)"},
			&cli.StringFlag{Name: "repository", Usage: "db grant and revoke: the repository `NAME` as perfgate stores it (e.g. github.com/org/engine)"},
			outputFlag("text", "json"),
		},
		Action: func(c *cli.Context) error {
			actions := map[string]func(c *cli.Context, e *env, o, path string, opts store.Options) error{
				"migrate": dbMigrate, "grant": dbGrant, "revoke": dbGrant, "writers": dbWriters,
			}
			fn := actions[c.Args().First()]
			if c.NArg() != 1 || fn == nil {
				return usageErrorf("db takes one action, migrate, grant, revoke or writers (got %q): perfgate --db postgres://USER@HOST/DB db migrate", strings.Join(c.Args().Slice(), " "))
			}
			roleFlags := c.IsSet("role") || c.IsSet("repository")
			if grant := c.Args().First() == "grant" || c.Args().First() == "revoke"; grant && (c.String("role") == "" || c.String("repository") == "") {
				return usageErrorf("db %s needs --role and --repository (got --role %q, --repository %q): perfgate --db postgres://OWNER@HOST/DB db %[1]s --role ROLE --repository NAME, the name as perfgate stores it (perfgate runs -o json shows it)", c.Args().First(), c.String("role"), c.String("repository"))
			} else if !grant && roleFlags {
				return usageErrorf("--role and --repository apply to db grant and db revoke, not db %s", c.Args().First())
			}
			return dbAction(c, e, fn)
		},
	}
}

// dbAction checks the action's arguments and output flag and finds the
// database --db names, then runs fn.
func dbAction(c *cli.Context, e *env, fn func(c *cli.Context, e *env, o, path string, opts store.Options) error) error {
	o, err := checkOutput(c, "text", "json")
	if err != nil {
		return err
	}
	repo, _ := openRepo(c)
	if repo != nil {
		defer repo.Close()
	}
	path, err := dbPath(c, repo)
	if err != nil {
		return err
	}
	if !store.IsPostgres(path) {
		return usageErrorf("db %s applies to a PostgreSQL history; --db (or PERFGATE_DB, or db: in .perfgate.yml) is %q, a bbolt file that every command upgrades itself and that has no roles: pass --db postgres://USER@HOST/DB", c.Args().First(), path)
	}
	timeout, err := lockTimeout()
	if err != nil {
		return err
	}
	return fn(c, e, o, path, store.Options{Timeout: timeout, NoEnvCredentials: fromUntrustedRules(c, repo)})
}

// dbMigrate creates or upgrades the schema of the database --db names,
// and warns of the writer roles that may write no repository.
func dbMigrate(c *cli.Context, e *env, o, path string, opts store.Options) error {
	from, to, err := store.Migrate(path, opts)
	if err != nil {
		return storeError(err)
	}
	unscoped, err := store.UnscopedWriters(path, opts)
	if err != nil {
		fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: could not list the writer roles that write no repository: %v\n", err)
	}
	warnUnscoped(c, path, unscoped)
	if o == "json" {
		return writeJSON(e.stdout, map[string]any{"database": redactDB(path), "from": from, "to": to, "unscoped_writers": nonNil(unscoped)})
	}
	if from == to {
		fmt.Fprintf(e.stdout, "%s has schema v%d already; nothing to do\n", redactDB(path), to)
	} else {
		fmt.Fprintf(e.stdout, "%s: schema v%d -> v%d\n", redactDB(path), from, to)
	}
	return nil
}

// warnUnscoped names the roles that may insert runs but write no
// repository (a writer of schema v1, before its db grant).
func warnUnscoped(c *cli.Context, path string, roles []string) {
	if len(roles) == 0 {
		return
	}
	fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: role(s) %s may insert runs but write no repository (since schema v2 a writer stores only in the repositories it is granted): for each, perfgate --db %s db grant --role ROLE --repository NAME (docs/postgres.md)\n",
		quoteAll(roles), redactDB(path))
}

// dbGrant is db grant and db revoke.
func dbGrant(c *cli.Context, e *env, o, path string, opts store.Options) error {
	role, name := c.String("role"), c.String("repository")
	grant := c.Args().First() == "grant"
	change := store.GrantWriter
	if !grant {
		change = store.RevokeWriter
	}
	changed, err := change(path, opts, role, name)
	if err != nil {
		return storeError(err)
	}
	if o == "json" {
		return writeJSON(e.stdout, map[string]any{"database": redactDB(path), "action": c.Args().First(), "role": role, "repository": name, "changed": changed})
	}
	r, n := inert.Line(role, 200), inert.Line(name, 200)
	switch {
	case grant && changed:
		fmt.Fprintf(e.stdout, "role %q may now write repository %q in %s\n", r, n, redactDB(path))
	case grant:
		fmt.Fprintf(e.stdout, "role %q may write repository %q in %s already; nothing to do\n", r, n, redactDB(path))
	case changed:
		fmt.Fprintf(e.stdout, "role %q may no longer write repository %q in %s\n", r, n, redactDB(path))
	default:
		fmt.Fprintf(e.stdout, "role %q had no grant of repository %q in %s; nothing to do\n", r, n, redactDB(path))
	}
	return nil
}

// dbWriters lists the grants, and warns of the writer roles that have
// none.
func dbWriters(c *cli.Context, e *env, o, path string, opts store.Options) error {
	ws, err := store.Writers(path, opts)
	if err != nil {
		return storeError(err)
	}
	unscoped, err := store.UnscopedWriters(path, opts)
	if err != nil {
		return storeError(err)
	}
	if o == "json" {
		return writeJSON(e.stdout, map[string]any{"database": redactDB(path), "writers": ws, "unscoped_writers": nonNil(unscoped)})
	}
	warnUnscoped(c, path, unscoped)
	if len(ws) == 0 {
		fmt.Fprintf(e.stdout, "no role of %s may write a repository (its owner writes all): perfgate --db URL db grant --role ROLE --repository NAME\n", redactDB(path))
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROLE\tREPOSITORY")
	for _, w := range ws {
		fmt.Fprintf(tw, "%s\t%s\n", inert.Line(w.Role, 200), inert.Line(w.Repository, 200))
	}
	return tw.Flush()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func quoteAll(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
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
	// untrusted: db: is the pull request's own, unconfirmed by the base
	// branch's rules, so the environment's credentials must not follow it.
	untrusted bool
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
	if (h.DB != "" || h.Repository != "") && onPullRequest() {
		h = baseHistory(c, repo, path, h)
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
	name, _ := repositoryIdentity(c, repo)
	return name
}

// repositoryIdentity is repositoryName and where it came from, for the
// messages that name it.
func repositoryIdentity(c *cli.Context, repo *gitrepo.Repo) (name, source string) {
	if name := strings.TrimSpace(os.Getenv("PERFGATE_REPOSITORY")); name != "" {
		return name, "PERFGATE_REPOSITORY"
	}
	if name := rulesHistory(c, repo).Repository; name != "" {
		return name, "repository: in the rules file"
	}
	if repo == nil {
		return "", ""
	}
	if name := remoteName(originURL(repo)); name != "" {
		return name, "the origin remote's URL"
	}
	if path := checkoutPath(repo); path != "" {
		return path, "the checkout's path, as it has no origin remote"
	}
	return "", ""
}

// checkoutPath is the path of the main working tree: the identity of a
// repository without a remote, so that two local repositories sharing a
// database never share runs.
func checkoutPath(repo *gitrepo.Repo) string {
	if repo == nil || repo.Root() == "" {
		return ""
	}
	main := filepath.Dir(filepath.Dir(sharedDBPath(repo.Root(), repo.GitDir(), repo.CommonDir())))
	if abs, err := filepath.Abs(main); err == nil {
		main = abs
	}
	return filepath.ToSlash(main)
}

var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`) })

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
	} else if m := scpLike().FindStringSubmatch(raw); m != nil && !strings.Contains(raw, "://") {
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
	name, source := repositoryIdentity(c, repo)
	warn := func(msg string) { fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s\n", msg) }
	s, err := store.Open(url, store.Options{ReadOnly: readOnly, Timeout: timeout, Repository: name, NoEnvCredentials: fromUntrustedRules(c, repo), Warn: warn})
	if err != nil {
		return nil, storeError(err)
	}
	if name != "" && warnOnce(c, "other-identities") {
		if msg := otherIdentities(s, name, source, checkoutPath(repo), !readOnly); msg != "" {
			fmt.Fprintf(c.App.ErrWriter, "perfgate: warning: %s\n", msg)
		}
	}
	return s, nil
}

// otherIdentities says, when the database holds no run of this
// repository's identity but runs of others, which identity is used and
// which the database holds, and how to choose: a checkout that gained
// an origin remote moves from its path to the remote's name and no
// longer sees the runs it stored. A command that stores runs is told
// only in that case (a new repository in a shared database has no runs
// yet); one that reads is told in every case.
func otherIdentities(s *store.Store, name, source, path string, writing bool) string {
	has, err := s.HasRuns()
	if err != nil || has {
		return ""
	}
	repos, err := s.Repositories()
	if err != nil || len(repos) == 0 {
		return ""
	}
	moved := ""
	var held []string
	for _, r := range repos {
		held = append(held, fmt.Sprintf("%s (%d runs)", strconv.Quote(inert.Line(r.Name, 200)), r.Runs))
		if path != "" && r.Name == path && r.Name != name {
			moved = r.Name
		}
	}
	if writing && moved == "" {
		return ""
	}
	const maxShown = 10
	more := ""
	if len(held) > maxShown {
		more = fmt.Sprintf(" and %d more", len(held)-maxShown)
		held = held[:maxShown]
	}
	msg := fmt.Sprintf("the history database holds no runs of repository %s (the identity taken from %s); it holds runs of %s%s",
		strconv.Quote(inert.Line(name, 200)), source, strings.Join(held, ", "), more)
	if moved != "" {
		msg += fmt.Sprintf(". %s is this checkout's path, its identity before it had an origin remote: to keep using those runs, set repository: %s in .perfgate.yml (or PERFGATE_REPOSITORY)",
			strconv.Quote(inert.Line(moved, 200)), inert.Line(moved, 200))
	} else {
		msg += "; to read one of them, set repository: NAME in .perfgate.yml (or PERFGATE_REPOSITORY=NAME)"
	}
	return msg
}

// dbUnavailable reports whether err means the history could not be
// opened or written for a reason of the environment (a lock held, a
// database down): the runs a command measured are then saved elsewhere.
func dbUnavailable(err error) bool {
	return errors.Is(err, store.ErrLocked) || errors.Is(err, store.ErrUnavailable) || errors.Is(err, store.ErrNeedsMigration)
}
