//go:build !unix

package runner

import "io/fs"

// ownedByUs: where files carry no owner perfgate can read, the directory
// in the user's own cache (or temporary) directory is taken as theirs.
func ownedByUs(fs.FileInfo) bool { return true }
