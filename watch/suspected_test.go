package watch

import "testing"

// A suspected change says so in the report's status, and is never open.
func TestSuspectedStatus(t *testing.T) {
	tests := []struct {
		c    Change
		want string
	}{
		{Change{Kind: Regression, Suspected: true}, "suspected regression"},
		{Change{Kind: Improvement, Suspected: true}, "suspected improvement"},
		{Change{Kind: Regression, Open: true}, "OPEN regression"},
		{Change{Kind: Regression, Suspected: true, Accepted: "ok"}, "regression, accepted"},
	}
	for _, tt := range tests {
		if got := tt.c.status(); got != tt.want {
			t.Errorf("%+v: status %q, want %q", tt.c, got, tt.want)
		}
	}
}
