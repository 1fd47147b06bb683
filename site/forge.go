package site

import (
	"net/url"
	"strings"
)

// Forge turns commit ids into links on the forge that hosts the
// repository, from its origin remote URL.
type Forge struct {
	// Kind is "github" (github.com and GitHub Enterprise Server) or
	// "gitlab"; "" when the remote is unknown, and commits have no link.
	Kind string `json:"kind,omitempty"`
	// Repo is the repository's web address, e.g.
	// https://github.com/owner/name, without credentials.
	Repo string `json:"repo,omitempty"`
}

// CommitURL returns the web address of a commit, "" without a forge.
func (f Forge) CommitURL(sha string) string {
	switch f.Kind {
	case "github":
		return f.Repo + "/commit/" + sha
	case "gitlab":
		return f.Repo + "/-/commit/" + sha
	}
	return ""
}

// ParseRemote reads a git remote URL in the forms git and the forges
// print: https://host/owner/name(.git), ssh://git@host[:port]/owner/name,
// git@host:owner/name.git. A host named like GitLab (gitlab.com, or one
// whose name contains "gitlab") gets GitLab's links; every other host
// GitHub's (github.com and GitHub Enterprise Server share them).
// Credentials and ports are dropped. A local path or an unreadable URL
// gives the zero Forge: the site then shows commits without links.
func ParseRemote(remote string) Forge {
	remote = strings.TrimSpace(remote)
	var host, path string
	switch {
	case strings.Contains(remote, "://"):
		u, err := url.Parse(remote)
		if err != nil || u.Hostname() == "" {
			return Forge{}
		}
		switch u.Scheme {
		case "https", "http", "ssh", "git", "git+ssh", "ssh+git":
		default:
			return Forge{}
		}
		host, path = u.Hostname(), u.Path
	default:
		// scp-like: [user@]host:owner/name
		at := strings.LastIndex(remote, "@")
		rest := remote[at+1:]
		h, p, ok := strings.Cut(rest, ":")
		if !ok || h == "" || strings.ContainsAny(h, "/\\") {
			return Forge{}
		}
		host, path = h, p
	}
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	if strings.Count(path, "/") < 1 || strings.Contains(path, "..") || strings.Contains(path, "//") || !validHost(host) ||
		!onlyChars(path, "/._~-") || !onlyChars(host, ".-") {
		return Forge{}
	}
	kind := "github"
	if strings.Contains(strings.ToLower(host), "gitlab") {
		kind = "gitlab"
	}
	return Forge{Kind: kind, Repo: "https://" + strings.ToLower(host) + "/" + path}
}

// onlyChars reports whether s is made of ASCII letters, digits and extra.
func onlyChars(s, extra string) bool {
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(extra, r)
		if !ok {
			return false
		}
	}
	return s != ""
}

// validHost reports whether host is a DNS name a link may point at: labels
// of letters, digits and hyphens, none empty ("a..b", a trailing dot) and
// none starting or ending with a hyphen.
func validHost(host string) bool {
	if host == "" || len(host) > 253 {
		return false
	}
	for _, l := range strings.Split(host, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || !onlyChars(l, "-") {
			return false
		}
	}
	return true
}
