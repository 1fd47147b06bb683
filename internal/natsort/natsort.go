// Package natsort orders strings the way people read them: digit runs
// compare as numbers, so "max_concurrency=8" comes before
// "max_concurrency=16".
package natsort

import "strings"

// Less reports whether a sorts before b, with their digit runs compared
// as numbers (leading zeros break ties) and other bytes as bytes.
func Less(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			ta, tb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			switch {
			case len(ta) != len(tb):
				return len(ta) < len(tb)
			case ta != tb:
				return ta < tb
			case da != db:
				return da < db
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
