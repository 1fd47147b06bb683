package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/perfgate/perfgate/internal/suggest"
)

const revSyntax = "a branch, tag, HEAD, @{u} or a commit SHA (full or at least 4 hex digits), optionally followed by ~N or ^N, e.g. main~3 or HEAD^2"

// Resolve returns the full SHA of the commit a revision names: HEAD (or @),
// FETCH_HEAD, a branch, a remote-tracking branch (origin/main), a tag
// (annotated tags are peeled to their commit), a full or abbreviated SHA, any
// of them followed by ~N, ^N, ^{} or ^{commit}, and the upstream of a branch
// (@{u}, @{upstream}, BRANCH@{u}, from branch.NAME.remote and .merge).
// Reflog selectors (@{1}, @{yesterday}, @{-1}) are refused with advice.
// Refs win over abbreviated SHAs, as in git. Errors are *RevisionError (bad or unknown revision),
// *ShallowError or *MissingObjectError.
func (r *Repo) Resolve(rev string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, err := r.resolve(rev)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// ResolveBranch resolves the name of a base branch as CI checkouts have it:
// the local branch refs/heads/NAME, else origin's remote-tracking branch,
// else another remote's if only one has it, else any revision. It returns
// the commit and the ref used. A CI checkout (actions/checkout) creates no
// local branches for the base, so "main" is found as refs/remotes/origin/main
// once fetched.
func (r *Repo) ResolveBranch(name string) (sha, ref string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	name = strings.TrimSpace(name)
	if validRefName(name) == nil {
		candidates := []plumbing.ReferenceName{
			plumbing.NewBranchReferenceName(name),
			plumbing.NewRemoteReferenceName("origin", name),
		}
		for _, c := range candidates {
			if h, ok := r.refTarget(c); ok {
				return r.peelBranch(name, h, c)
			}
		}
		var found []plumbing.ReferenceName
		iter, err := r.st.IterReferences()
		if err == nil {
			_ = iter.ForEach(func(ref *plumbing.Reference) error {
				n := ref.Name().String()
				if strings.HasPrefix(n, "refs/remotes/") && strings.HasSuffix(n, "/"+name) &&
					strings.Count(strings.TrimPrefix(n, "refs/remotes/"), "/") == strings.Count(name, "/")+1 {
					found = append(found, ref.Name())
				}
				return nil
			})
			iter.Close()
		}
		if len(found) == 1 {
			if h, ok := r.refTarget(found[0]); ok {
				return r.peelBranch(name, h, found[0])
			}
		}
		// A remote's HEAD ("origin/HEAD") names the branch it points to.
		if remote, ok := strings.CutSuffix(name, "/HEAD"); ok && remote != "" {
			sym := plumbing.NewRemoteReferenceName(remote, "HEAD")
			if ref, err := r.st.Reference(sym); err == nil && ref.Type() == plumbing.SymbolicReference {
				if h, ok := r.refTarget(ref.Target()); ok {
					return r.peelBranch(name, h, ref.Target())
				}
			}
		}
	}
	h, err := r.resolve(name)
	if err != nil {
		var re *RevisionError
		if errors.As(err, &re) && validRefName(name) == nil {
			if sug := suggest.Closest(name, r.branchNames()); sug != "" && sug != name {
				re.Reason = fmt.Sprintf("no branch %q here; did you mean %q?", name, sug)
			} else {
				re.Reason = fmt.Sprintf("no branch %q here: neither refs/heads/%s nor refs/remotes/origin/%s exists; in GitHub Actions set `fetch-depth: 0` on actions/checkout (it fetches all branches), or run `git fetch origin %s`", name, name, name, name)
			}
		}
		return "", "", err
	}
	return h.String(), "", nil
}

// branchNames lists the local branches and the remote-tracking branches
// without their remote, for "did you mean"; r.mu is held.
func (r *Repo) branchNames() []string {
	var names []string
	iter, err := r.st.IterReferences()
	if err != nil {
		return nil
	}
	defer iter.Close()
	_ = iter.ForEach(func(ref *plumbing.Reference) error {
		n := ref.Name()
		switch {
		case n.IsBranch():
			names = append(names, n.Short())
		case n.IsRemote():
			if _, b, ok := strings.Cut(strings.TrimPrefix(n.String(), "refs/remotes/"), "/"); ok && b != "HEAD" {
				names = append(names, b)
			}
		}
		return nil
	})
	return names
}

func (r *Repo) peelBranch(name string, h plumbing.Hash, ref plumbing.ReferenceName) (string, string, error) {
	id, err := r.peelRev(name, h)
	if err != nil {
		return "", "", err
	}
	return id.String(), ref.String(), nil
}

// resolve is Resolve with r.mu held.
func (r *Repo) resolve(rev string) (plumbing.Hash, error) {
	orig := rev
	rev = strings.TrimSpace(rev)
	if rev == "" {
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: "empty revision; name " + revSyntax}
	}
	if strings.Contains(rev, "..") || strings.ContainsAny(rev, ": \t\n") {
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: "unsupported revision syntax (ranges and :path are not commits); name " + revSyntax}
	}
	if i := strings.Index(rev, "@{"); i >= 0 {
		return r.resolveAtBrace(orig, rev, i)
	}
	cut := strings.IndexAny(rev, "~^")
	base, suffix := rev, ""
	if cut >= 0 {
		base, suffix = rev[:cut], rev[cut:]
	}
	if base == "" {
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: "missing the branch, tag or SHA before ~ or ^; name " + revSyntax}
	}
	id, err := r.resolveBase(orig, base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.applySuffix(orig, id, suffix)
}

func (r *Repo) resolveBase(orig, base string) (plumbing.Hash, error) {
	if base == "@" {
		base = "HEAD"
	}
	if len(base) == 40 && isHex(base) {
		return r.peelRev(orig, plumbing.NewHash(strings.ToLower(base)))
	}
	if base == "FETCH_HEAD" {
		if id, ok := readFetchHead(r.gitDir); ok {
			return r.peelRev(orig, id)
		}
	}
	refErr := validRefName(base)
	if refErr == nil {
		for _, rule := range plumbing.RefRevParseRules {
			if rule == "%s" && !pseudoRef(base) && !strings.HasPrefix(base, "refs/") {
				continue
			}
			name := plumbing.ReferenceName(fmt.Sprintf(rule, base))
			if h, ok := r.refTarget(name); ok {
				return r.peelRev(orig, h)
			}
		}
		if base == "HEAD" {
			reason := "HEAD does not name a commit; check out a branch or commit"
			if _, err := r.head(); err != nil {
				reason = err.Error()
			}
			return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: reason}
		}
	}
	if len(base) >= 4 && len(base) < 40 && isHex(base) {
		ids, err := r.odb.withPrefix(base, 4096)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		var commits []plumbing.Hash
		seen := map[plumbing.Hash]bool{}
		for _, id := range ids {
			c, err := r.peelToCommit(id)
			if err != nil || seen[c] {
				continue
			}
			seen[c] = true
			commits = append(commits, c)
		}
		switch len(commits) {
		case 1:
			return commits[0], nil
		case 0:
		default:
			var names []string
			for _, c := range commits {
				desc := c.String()[:12]
				if info, err := r.commitInfo(c); err == nil {
					desc += " " + info.Subject
				}
				names = append(names, desc)
			}
			if len(names) > 5 {
				names = append(names[:5], "...")
			}
			return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf(
				"short SHA %q is ambiguous, it matches %d commits (%s); type more hex digits", base, len(commits), strings.Join(names, "; "))}
		}
	}
	reason := fmt.Sprintf("not a branch, tag or commit in the repository at %s; check the spelling (`git branch -a` and `git tag` list the names), run `git fetch origin` if it exists only on the remote, or pass a full commit SHA", r.displayPath())
	if refErr != nil && !isHex(base) {
		reason = fmt.Sprintf("%q is not a valid branch or tag name (%v); name %s", base, refErr, revSyntax)
	}
	if len(r.shallow) > 0 {
		reason += "; this clone is shallow and may lack it: " + ShallowHint
	}
	return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: reason}
}

func (r *Repo) displayPath() string {
	if r.root != "" {
		return r.root
	}
	return r.gitDir
}

// refTarget resolves a reference (following symbolic refs) to its object id.
// A missing reference, or a file under .git that is not one, is no match.
func (r *Repo) refTarget(name plumbing.ReferenceName) (plumbing.Hash, bool) {
	ref, err := storer.ResolveReference(r.st, name)
	if err != nil || ref.Type() != plumbing.HashReference || ref.Hash().IsZero() {
		return plumbing.ZeroHash, false
	}
	return ref.Hash(), true
}

// peelRev peels id to a commit, explaining failures in terms of the
// revision the user typed.
func (r *Repo) peelRev(orig string, id plumbing.Hash) (plumbing.Hash, error) {
	c, err := r.peelToCommit(id)
	if err == nil {
		return c, nil
	}
	var nc notCommitError
	switch {
	case errors.As(err, &nc):
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf("names a %s (%s), not a commit; name %s", nc.typ, shortID(nc.id.String()), revSyntax)}
	case errors.Is(err, errObjectMissing):
		reason := fmt.Sprintf("commit %s is not in the repository at %s; run `git fetch origin` to get it", shortID(id.String()), r.displayPath())
		if len(r.shallow) > 0 {
			reason += "; this clone is shallow and may lack it: " + ShallowHint
		}
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: reason}
	}
	return plumbing.ZeroHash, err
}

type notCommitError struct {
	id  plumbing.Hash
	typ plumbing.ObjectType
}

func (e notCommitError) Error() string { return fmt.Sprintf("%s is a %s, not a commit", e.id, e.typ) }

// peelToCommit follows annotated tags to the commit they name.
func (r *Repo) peelToCommit(id plumbing.Hash) (plumbing.Hash, error) {
	for depth := 0; depth < 16; depth++ {
		if _, ok := r.nodes[id]; ok {
			return id, nil
		}
		if r.graph != nil {
			if _, err := r.graph.GetIndexByHash(id); err == nil {
				return id, nil
			}
		}
		t, data, err := r.odb.read(id)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		switch t {
		case plumbing.CommitObject:
			if _, err := r.load(id); err != nil {
				return plumbing.ZeroHash, err
			}
			return id, nil
		case plumbing.TagObject:
			target, ok := tagTarget(data)
			if !ok {
				return plumbing.ZeroHash, fmt.Errorf("tag object %s has no valid object line; the tag is damaged: run `git fsck`", id)
			}
			id = target
		default:
			return plumbing.ZeroHash, notCommitError{id: id, typ: t}
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("tag %s: more than 16 levels of tags", id)
}

func tagTarget(data []byte) (plumbing.Hash, bool) {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	v, ok := bytes.CutPrefix(line, []byte("object "))
	if !ok {
		return plumbing.ZeroHash, false
	}
	return parseHex(v)
}

func (r *Repo) applySuffix(orig string, id plumbing.Hash, s string) (plumbing.Hash, error) {
	op := fmt.Sprintf("resolving %q", orig)
	walked := 0
	for len(s) > 0 {
		c := s[0]
		s = s[1:]
		if c == '^' && strings.HasPrefix(s, "{") {
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: "unterminated ^{...}; name " + revSyntax}
			}
			if what := s[1:end]; what != "" && what != "commit" {
				return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf("^{%s} is not supported, only ^{} and ^{commit}; name %s", what, revSyntax)}
			}
			s = s[end+1:]
			continue
		}
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		n := 1
		if j > 0 {
			v, err := strconv.Atoi(s[:j])
			if err != nil || v > 1<<20 {
				return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf("number %q is too large", s[:j])}
			}
			n = v
		}
		s = s[j:]
		if c == '~' {
			for i := 0; i < n; i++ {
				cur, err := r.commitNode(id, plumbing.ZeroHash, op)
				if err != nil {
					return plumbing.ZeroHash, err
				}
				if len(cur.parents) == 0 {
					return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf(
						"goes back past the first commit: %s has no parent, %d commit(s) back; use a smaller number", shortID(id.String()), walked)}
				}
				if _, err := r.commitNode(cur.parents[0], id, op); err != nil {
					return plumbing.ZeroHash, err
				}
				id = cur.parents[0]
				walked++
			}
			continue
		}
		// '^N'
		if n == 0 {
			continue
		}
		cur, err := r.commitNode(id, plumbing.ZeroHash, op)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if n > len(cur.parents) {
			return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf(
				"commit %s has %d parent(s), so ^%d does not exist; use ^1 for the first parent (^2 for the merged branch of a merge)", shortID(id.String()), len(cur.parents), n)}
		}
		if _, err := r.commitNode(cur.parents[n-1], id, op); err != nil {
			return plumbing.ZeroHash, err
		}
		id = cur.parents[n-1]
		walked++
	}
	return id, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return len(s) > 0
}

// pseudoRef reports names git looks up directly in the git directory:
// HEAD, ORIG_HEAD, MERGE_HEAD and the like.
func pseudoRef(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return strings.HasSuffix(s, "HEAD")
}

// validRefName applies git check-ref-format's rules, so a typed name can
// never address a file outside refs.
func validRefName(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") || strings.Contains(s, "//"):
		return errors.New("misplaced /")
	case strings.Contains(s, ".."):
		return errors.New("contains ..")
	case strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock"):
		return errors.New("ends with . or .lock")
	case strings.Contains(s, "@{") || s == "@":
		return errors.New("contains @{")
	}
	for _, part := range strings.Split(s, "/") {
		if strings.HasPrefix(part, ".") {
			return errors.New("a component starts with .")
		}
	}
	for _, c := range s {
		if c < 0x20 || c == 0x7f || strings.ContainsRune(" ~^:?*[\\", c) {
			return fmt.Errorf("contains %q", c)
		}
	}
	return nil
}

func readFetchHead(gitDir string) (plumbing.Hash, bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "FETCH_HEAD"))
	if err != nil {
		return plumbing.ZeroHash, false
	}
	// Lines are "SHA<TAB>[not-for-merge]<TAB>description"; like git,
	// FETCH_HEAD names the first line's commit.
	line, _, _ := strings.Cut(string(b), "\n")
	f, _, _ := strings.Cut(line, "\t")
	if !plumbing.IsHash(f) {
		return plumbing.ZeroHash, false
	}
	return plumbing.NewHash(f), true
}

// resolveAtBrace resolves a revision with an @{...} selector at index i:
// the upstream of a branch (@{u}, @{upstream}), optionally followed by ~N
// or ^N. Reflog selectors name what a ref pointed to earlier on this
// machine, which CI clones do not have: they are refused with advice.
func (r *Repo) resolveAtBrace(orig, rev string, i int) (plumbing.Hash, error) {
	end := strings.IndexByte(rev[i:], '}')
	if end < 0 {
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: "unterminated @{...}; name " + revSyntax}
	}
	base, sel, suffix := rev[:i], rev[i+2:i+end], rev[i+end+1:]
	switch strings.ToLower(sel) {
	case "u", "upstream":
	default:
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf(
			"the reflog selector @{%s} is unsupported: perfgate resolves commits, not this machine's reflog; only @{u} (@{upstream}) is supported, or name the commit with ~N/^N or its SHA (`git rev-parse %s` prints it)", sel, rev)}
	}
	if strings.Contains(suffix, "@{") || (suffix != "" && suffix[0] != '~' && suffix[0] != '^') {
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf("unexpected %q after @{%s}; only ~N or ^N may follow, e.g. @{u}~1", suffix, sel)}
	}
	id, err := r.upstream(orig, base)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.applySuffix(orig, id, suffix)
}

// upstream returns the commit of the upstream branch of a local branch
// (HEAD's branch when branch is "", "@" or "HEAD"), as git's @{u}.
func (r *Repo) upstream(orig, branch string) (plumbing.Hash, error) {
	fail := func(format string, args ...any) (plumbing.Hash, error) {
		return plumbing.ZeroHash, &RevisionError{Rev: orig, Reason: fmt.Sprintf(format, args...)}
	}
	if branch == "" || branch == "@" || branch == "HEAD" {
		ref, err := r.st.Reference(plumbing.HEAD)
		if err != nil {
			return fail("cannot read HEAD: %v", err)
		}
		if ref.Type() != plumbing.SymbolicReference || !ref.Target().IsBranch() {
			return fail("HEAD is detached (as in CI checkouts), so it has no upstream branch; name the base branch instead, e.g. origin/main")
		}
		branch = ref.Target().Short()
	}
	branch = strings.TrimPrefix(branch, "refs/heads/")
	if err := validRefName(branch); err != nil {
		return fail("%q is not a valid branch name (%v); @{u} follows a local branch, e.g. main@{u}", branch, err)
	}
	if _, ok := r.refTarget(plumbing.NewBranchReferenceName(branch)); !ok {
		return fail("there is no local branch %q, so it has no upstream; `git branch` lists the local branches, or name the remote branch itself, e.g. origin/%s", branch, branch)
	}
	bc := r.cfg.Branches[branch]
	if bc == nil || bc.Merge == "" {
		return fail("branch %q has no upstream branch configured; set one with `git branch --set-upstream-to=origin/%s %s`, or name the base branch, e.g. origin/main", branch, branch, branch)
	}
	target := bc.Merge
	remote := bc.Remote
	if remote == "" {
		remote = "origin"
	}
	if remote != "." {
		rc := r.cfg.Remotes[remote]
		if rc == nil {
			return fail("branch %q tracks remote %q (branch.%s.remote), which is not configured; `git remote -v` lists the remotes", branch, remote, branch)
		}
		target = ""
		for _, spec := range rc.Fetch {
			if spec.Match(bc.Merge) {
				target = spec.Dst(bc.Merge)
				break
			}
		}
		if target == "" {
			return fail("the upstream of branch %q, %s on remote %q, is not fetched into a remote-tracking branch (remote.%s.fetch has no matching refspec); name the commit instead, or fix the refspec", branch, bc.Merge, remote, remote)
		}
	}
	h, ok := r.refTarget(target)
	if !ok && remote == "." {
		return fail("the upstream of branch %q is the local branch %s, which does not exist; set another with `git branch --set-upstream-to=BRANCH %s`", branch, target, branch)
	}
	if !ok {
		return fail("the upstream of branch %q is %s, which does not exist in this clone; run `git fetch %s`", branch, target, remote)
	}
	return r.peelRev(orig, h)
}
