package gitrepo

import (
	"os"
	"path/filepath"

	"github.com/go-git/go-git/v5/config"
)

// User returns the git identity of the repository's user, as git commit
// would take it: user.name and user.email of the repository's config,
// else of the global (and system) config; "" for what is not set.
func (r *Repo) User() (name, email string) {
	dir := r.commonDir
	if dir == "" {
		dir = r.gitDir
	}
	if f, err := os.Open(filepath.Join(dir, "config")); err == nil {
		if c, err := config.ReadConfig(f); err == nil {
			name, email = c.User.Name, c.User.Email
		}
		f.Close()
	}
	for _, scope := range []config.Scope{config.GlobalScope, config.SystemScope} {
		if name != "" && email != "" {
			break
		}
		if c, err := config.LoadConfig(scope); err == nil {
			if name == "" {
				name = c.User.Name
			}
			if email == "" {
				email = c.User.Email
			}
		}
	}
	return name, email
}
