package gitrepo

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit describes a commit for reports and history listings.
type Commit struct {
	SHA         string
	Short       string // unique abbreviation, at least 7 hex digits (as git log --oneline)
	Subject     string // first paragraph of the message on one line (git's %s)
	Author      string
	AuthorEmail string
	AuthorTime  time.Time
	CommitTime  time.Time
	Parents     []string
}

// Commit describes the commit a revision names.
func (r *Repo) Commit(rev string) (Commit, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := r.resolve(rev)
	if err != nil {
		return Commit{}, err
	}
	return r.commitInfo(id)
}

// Short returns the shortest unique abbreviation of a SHA, at least 7 hex
// digits; other input is returned unchanged.
func (r *Repo) Short(sha string) string {
	if !plumbing.IsHash(sha) {
		return sha
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.short(plumbing.NewHash(sha))
}

func (r *Repo) short(id plumbing.Hash) string {
	return id.String()[:r.odb.uniqueLen(id, 7)]
}

func (r *Repo) commitInfo(id plumbing.Hash) (Commit, error) {
	t, data, err := r.odb.read(id)
	if errors.Is(err, errObjectMissing) {
		return Commit{}, &MissingObjectError{ID: id.String(), Kind: "commit", Shallow: len(r.shallow) > 0}
	}
	if err != nil {
		return Commit{}, err
	}
	if t != plumbing.CommitObject {
		return Commit{}, fmt.Errorf("object %s is a %s, not a commit", id, t)
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(plumbing.CommitObject)
	if _, err := obj.Write(data); err != nil {
		return Commit{}, err
	}
	var c object.Commit
	if err := c.Decode(obj); err != nil {
		return Commit{}, fmt.Errorf("commit %s: %v; the object is damaged: run `git fsck`", id, err)
	}
	out := Commit{
		SHA:         id.String(),
		Short:       r.short(id),
		Subject:     toUTF8(subject(c.Message), string(c.Encoding)),
		Author:      toUTF8(c.Author.Name, string(c.Encoding)),
		AuthorEmail: c.Author.Email,
		AuthorTime:  c.Author.When,
		CommitTime:  c.Committer.When,
	}
	for _, p := range c.ParentHashes {
		out.Parents = append(out.Parents, p.String())
	}
	return out, nil
}

// subject is git's %s: the first paragraph (after leading blank lines),
// each line stripped of trailing white space, joined by single spaces.
func subject(msg string) string {
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimRight(line, " \t\r\v\f")
		if line == "" {
			if len(parts) > 0 {
				break
			}
			continue
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, " ")
}

// toUTF8 converts commit text to UTF-8 as git log does: a message whose
// encoding header names Latin-1 (old histories, imports from other VCSs) is
// decoded from it, unless it is valid UTF-8 already (a header that lies);
// any other invalid byte becomes U+FFFD, so reports and JSON stay valid.
func toUTF8(s, encoding string) string {
	if utf8.ValidString(s) {
		return s
	}
	switch strings.ToLower(strings.ReplaceAll(encoding, "_", "-")) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "cp819", "iso-ir-100":
		r := make([]rune, len(s))
		for i := 0; i < len(s); i++ {
			r[i] = rune(s[i])
		}
		return string(r)
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
