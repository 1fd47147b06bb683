// Package suggest answers "did you mean": the edit distance between what a
// user typed and the names perfgate knows (metrics, rule keys, commands,
// flags, benchmarks, branches), and the closest likely typo.
package suggest

import (
	"math"
	"strings"
)

// Closest returns the candidate nearest to s by edit distance (s compared
// in lower case; candidates that contain s, or that s contains, count as
// one edit), or "" when none is close enough to be a likely typo.
func Closest(s string, cands []string) string {
	best, bestD := "", math.MaxInt
	ls := strings.ToLower(s)
	for _, c := range cands {
		d := Distance(ls, c)
		if strings.Contains(c, ls) || strings.Contains(ls, c) {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > len(s)/2+1 {
		return ""
	}
	return best
}

// Distance is the edit distance between a and b, counted in runes:
// insertions, deletions, substitutions and transpositions of two adjacent
// runes each cost one (optimal string alignment), so "Mean TFTT" is one
// edit from "Mean TTFT". The "did you mean" suggestions of metrics, rules
// and commands use it.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1) // row i-2, for transpositions
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
