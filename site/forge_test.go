package site

import (
	"strings"
	"testing"
)

func TestParseRemote(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	tests := []struct {
		remote, want string
	}{
		{"https://github.com/perfgate/perfgate.git", "https://github.com/perfgate/perfgate/commit/" + sha},
		{"https://github.com/perfgate/perfgate", "https://github.com/perfgate/perfgate/commit/" + sha},
		{"https://x-access-token:secret@github.com/o/r.git", "https://github.com/o/r/commit/" + sha},
		{"git@github.com:o/r.git", "https://github.com/o/r/commit/" + sha},
		{"ssh://git@ghe.example.com:2222/team/svc.git", "https://ghe.example.com/team/svc/commit/" + sha},
		{"https://ghe.corp.example/team/svc", "https://ghe.corp.example/team/svc/commit/" + sha},
		{"https://gitlab.com/group/sub/proj.git", "https://gitlab.com/group/sub/proj/-/commit/" + sha},
		{"git@gitlab.example.org:group/proj.git", "https://gitlab.example.org/group/proj/-/commit/" + sha},
		{"/srv/git/repo.git", ""},
		{"file:///srv/git/repo.git", ""},
		{"", ""},
		{"https://github.com/only", ""},
		{"javascript:alert(1)//x/y", ""},
	}
	for _, tt := range tests {
		if got := ParseRemote(tt.remote).CommitURL(sha); got != tt.want {
			t.Errorf("ParseRemote(%q).CommitURL = %q, want %q", tt.remote, got, tt.want)
		}
	}
}

// FuzzParseRemote: a remote URL is the repository's configuration, which
// a workflow may not control; whatever it holds, a link is either absent
// or an https address made of URL-safe characters only.
func FuzzParseRemote(f *testing.F) {
	for _, s := range []string{"git@github.com:o/r.git", "https://u:p@gitlab.com/g/p", "ssh://git@h:22/a/b", "javascript:alert(1)//x/y", "https://h/a/../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		u := ParseRemote(remote).CommitURL("0123456789abcdef0123456789abcdef01234567")
		if u == "" {
			return
		}
		if !strings.HasPrefix(u, "https://") || !onlyChars(strings.TrimPrefix(u, "https://"), "/._~-") || strings.Contains(u, "..") {
			t.Fatalf("ParseRemote(%q) links to %q", remote, u)
		}
	})
}
