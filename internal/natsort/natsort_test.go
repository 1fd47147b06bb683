package natsort

import (
	"slices"
	"strings"
	"testing"
)

func TestLess(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"c=16 c=4 c=64 c=8 c=32", "c=4 c=8 c=16 c=32 c=64"},
		{"run10 run9 run1 run01", "run01 run1 run9 run10"},
		{"b a ab", "a ab b"},
		{"x2y10 x2y9 x10y1", "x2y9 x2y10 x10y1"},
	} {
		got := strings.Fields(tc.in)
		slices.SortFunc(got, func(a, b string) int {
			switch {
			case Less(a, b):
				return -1
			case Less(b, a):
				return 1
			}
			return 0
		})
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s sorted %v, want %s", tc.in, got, tc.want)
		}
	}
}
