package site

import "testing"

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
