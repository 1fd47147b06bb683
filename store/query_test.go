package store

import "testing"

func TestMoved(t *testing.T) {
	for _, tc := range []struct {
		prev, next []byte
		want       bool
	}{
		{[]byte{1, 2}, []byte{1, 3}, true},
		{[]byte{1, 2}, nil, true},
		{[]byte{1, 2}, []byte{1, 2}, false},
		{[]byte{1, 2}, []byte{0, 9}, false},
	} {
		if got := moved(tc.prev, tc.next); got != tc.want {
			t.Errorf("moved(%x, %x) = %v, want %v", tc.prev, tc.next, got, tc.want)
		}
	}
}
