package runner

import "testing"

func TestShellQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/repo/.perfgate/history.db", "/repo/.perfgate/history.db"},
		{"/my repo/h.db", "'/my repo/h.db'"},
		{"it's", `'it'\''s'`},
		{"", "''"},
		{"$(touch x)", "'$(touch x)'"},
		{"bench.sh", "bench.sh"},
		{"/repo/x-y_z.sh", "/repo/x-y_z.sh"},
		{"k=v,w", "k=v,w"},
		{"a b", "'a b'"},
		{"#1", "'#1'"},
		{"!x", "'!x'"},
		{"a\tb", "'a\tb'"},
		// Anything outside the safe set is quoted, so nothing from a
		// benchmark name or label reaches the shell bare.
		{"^x", "'^x'"},
		{"café", "'café'"},
		{"a\x00b", "'a\x00b'"},
	}
	for _, tt := range tests {
		if got := ShellQuote(tt.in); got != tt.want {
			t.Errorf("ShellQuote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
