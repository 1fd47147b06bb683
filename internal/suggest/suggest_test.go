package suggest

import "testing"

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"kitten", "sitting", 3},
		{"mean tftt", "mean ttft", 1}, // transposition
		{"ab", "ba", 1},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau
		{"μs", "us", 1},  // runes, not bytes
		{"mean_ttft_ms", "mean_ttft_ms", 0},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := Distance(tt.b, tt.a); got != tt.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"check", "compare", "history", "ingest", "main", "master"}
	for in, want := range map[string]string{"chekc": "check", "mian": "main", "histroy": "history", "zzzzzz": "", "MAIN": "main"} {
		if got := Closest(in, names); got != want {
			t.Errorf("Closest(%q) = %q, want %q", in, got, want)
		}
	}
}
