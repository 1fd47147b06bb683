package gate

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Where a record (an accepted change, an invalidated run) comes from, as
// the trust section of the rules file names it:
//   - SourceLabel: a pull request's label (check --accept-label), which
//     only those with triage rights on the repository can set;
//   - SourceBranch: a record that came from the history branch (perfgate
//     sync pulled it; the branch commit that brought it is known);
//   - SourceLocal: a record made in this history file and not (yet) seen
//     on the branch: on a CI runner, one that the job's own steps, the
//     pull request's code among them, may have written.
const (
	SourceLabel  = "label"
	SourceBranch = "branch"
	// SourceUnverified is a record from the history branch of an origin
	// that is not the repository the CI names: no trust: list admits it.
	SourceUnverified = "unverified-branch"
	SourceLocal      = "local"
)

// TrustConfig is the rules file's trust section: which records may change
// a verdict. The history branch is written by more hands than CI's, and a
// record changes verdicts: an acceptance passes a regression, an
// invalidation moves a baseline. By default every record applies (and is
// shown with the verdict it changes); a team narrows that here:
//
//	trust:
//	  accept: [label, branch]          # acceptances from PR labels and from the branch, not local ones
//	  invalidate: [branch]             # invalidations from the branch only
//	  invalidate_label: perf-invalidation-ok   # in a PR's check, invalidations apply only when the PR carries it
//
// A record that is not trusted is not applied, and the report says which
// and why. The ruleset that lets only the base branch's jobs push to the
// branch (docs/github.md) is what makes "branch" mean "the base branch's
// jobs".
type TrustConfig struct {
	Accept     []string // sources whose acceptances apply; nil: all
	Invalidate []string // sources whose invalidations apply; nil: all (label is no source of invalidations)
	// InvalidateLabel: in the check of a pull request, invalidations on
	// record apply only when the pull request carries this label.
	InvalidateLabel string
}

var trustKeys = []string{"accept", "invalidate", "invalidate_label"}

// AcceptanceApplies says whether an acceptance from source changes
// verdicts; why says, when not, what would let it.
func (t TrustConfig) AcceptanceApplies(source string) (ok bool, why string) {
	if t.Accept == nil || slices.Contains(t.Accept, source) {
		return true, ""
	}
	return false, fmt.Sprintf("trust.accept is [%s] and it is a %s record", strings.Join(t.Accept, ", "), describeSource(source))
}

// InvalidationApplies says whether an invalidation from source changes
// verdicts in a check whose pull request carries prLabels (nil when the
// check is of no pull request: a push, a local check).
func (t TrustConfig) InvalidationApplies(source string, prLabels []string) (ok bool, why string) {
	if t.Invalidate != nil && !slices.Contains(t.Invalidate, source) {
		return false, fmt.Sprintf("trust.invalidate is [%s] and it is a %s record", strings.Join(t.Invalidate, ", "), describeSource(source))
	}
	if t.InvalidateLabel != "" && prLabels != nil && !slices.Contains(prLabels, t.InvalidateLabel) {
		return false, fmt.Sprintf("trust.invalidate_label is %q and the pull request does not carry it (a maintainer adds the label to let invalidations on record apply to this pull request)", t.InvalidateLabel)
	}
	return true, ""
}

func describeSource(source string) string {
	switch source {
	case SourceBranch:
		return "history-branch"
	case SourceLocal:
		return "local (not from the history branch)"
	case SourceLabel:
		return "pull-request-label"
	case SourceUnverified:
		return "history-branch (of an origin that is not the CI's repository)"
	}
	return fmt.Sprintf("%q", source)
}

func (p *ruleParser) trust(n *yaml.Node, t *TrustConfig) error {
	return p.mapping(n, "trust", trustKeys, func(key string, k, v *yaml.Node) error {
		switch key {
		case "accept":
			return p.sources(v, "trust accept", []string{SourceLabel, SourceBranch, SourceLocal}, &t.Accept)
		case "invalidate":
			return p.sources(v, "trust invalidate", []string{SourceBranch, SourceLocal}, &t.Invalidate)
		case "invalidate_label":
			name := strings.TrimSpace(v.Value)
			if v.Kind != yaml.ScalarNode || name == "" || len(name) > 50 || strings.ContainsAny(name, ",\r\n") {
				return p.errf(v, "trust invalidate_label is %q; give a pull request label name of at most 50 characters, e.g. perf-invalidation-ok", v.Value)
			}
			t.InvalidateLabel = name
		}
		return nil
	})
}

// sources reads a list of record sources, each one of valid.
func (p *ruleParser) sources(v *yaml.Node, what string, valid []string, out *[]string) error {
	example := "[" + strings.Join(valid, ", ") + "]"
	if v.Kind != yaml.SequenceNode {
		return p.errf(v, "%s must be a list of record sources, e.g. %s", what, example)
	}
	list := []string{}
	for _, item := range v.Content {
		if item.Kind != yaml.ScalarNode || !slices.Contains(valid, item.Value) {
			return p.errf(item, "%s holds %q; the sources are %s (an empty list [] trusts none)", what, item.Value, strings.Join(valid, ", "))
		}
		if !slices.Contains(list, item.Value) {
			list = append(list, item.Value)
		}
	}
	*out = list
	return nil
}
