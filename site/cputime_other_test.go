//go:build !unix

package site

import "time"

// cpuTime is not measured here: the benchmark reports 0.
func cpuTime() time.Duration { return 0 }
