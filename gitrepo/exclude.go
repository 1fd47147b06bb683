package gitrepo

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExcludePath adds a gitignore pattern (e.g. ".perfgate/") to the
// repository's info/exclude, unless a line equal to it is already there, so
// perfgate's files never show up in `git status`. The file lives in the
// common git directory, so one entry covers every linked worktree.
func (r *Repo) ExcludePath(pattern string) error {
	if strings.TrimSpace(pattern) == "" || strings.ContainsAny(pattern, "\r\n") {
		return fmt.Errorf("exclude pattern %q must be one non-empty line", pattern)
	}
	path := filepath.Join(r.commonDir, "info", "exclude")
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("%s: %v", path, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimRight(line, "\r") == pattern {
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("%s: %v; check the permissions of the git directory", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %v; check the permissions of the git directory", path, err)
	}
	line := pattern + "\n"
	if len(b) > 0 && b[len(b)-1] != '\n' {
		line = "\n" + line
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return fmt.Errorf("%s: %v", path, err)
	}
	return f.Close()
}
