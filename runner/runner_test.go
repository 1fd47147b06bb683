package runner

import "testing"

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/repo/.perfgate/history.db", "/repo/.perfgate/history.db"},
		{"/my repo/h.db", "'/my repo/h.db'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"$(touch x)", "'$(touch x)'"},
	}
	for _, tt := range tests {
		if got := ShellQuote(tt.in); got != tt.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
