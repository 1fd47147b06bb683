package gitrepo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/config"
)

// OriginURL returns remote.origin.url as `git config --get
// remote.origin.url` prints it ("" when there is none), read from the
// config files without starting git: a PostgreSQL history names the
// repository by it on every command. ok is false when only git can say:
// a GIT_CONFIG* variable is set, a config file includes another, or the
// worktree has its own config.
func (r *Repo) OriginURL() (url string, ok bool) {
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GIT_CONFIG") {
			return "", false
		}
	}
	dir := r.commonDir
	if dir == "" {
		dir = r.gitDir
	}
	if _, err := os.Stat(filepath.Join(r.gitDir, "config.worktree")); err == nil {
		return "", false
	}
	local, err := os.ReadFile(filepath.Join(dir, "config"))
	if err != nil || mentions(local, "include") {
		return "", false
	}
	c, err := config.ReadConfig(bytes.NewReader(local))
	if err != nil {
		return "", false
	}
	if o := c.Remotes["origin"]; o != nil && len(o.URLs) > 0 {
		return o.URLs[len(o.URLs)-1], true // the last value wins, as in git
	}
	// The repository's config says nothing: the user's and the system's
	// would, were one to name an origin (or include another file).
	for _, f := range userConfigs() {
		if b, err := os.ReadFile(f); err == nil && (mentions(b, "include") || mentions(b, "origin")) {
			return "", false
		}
	}
	return "", true
}

// mentions reports whether a config file holds word in any case.
func mentions(b []byte, word string) bool {
	return bytes.Contains(bytes.ToLower(b), []byte(word))
}

// userConfigs are the global and system config files git may read.
func userConfigs() []string {
	files := []string{"/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"}
	if home, err := os.UserHomeDir(); err == nil {
		files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	return files
}
