package gate

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// WatchConfig is the rules file's watch section, read by perfgate watch:
//
//	watch:
//	  missing_after: 5        # a series that reported on the last 5 measured commits, then stopped, is an alert
//	  min_change: 5%          # smallest change worth an alert for a metric no max_regression rule covers (smaller ones are listed apart)
//	  issue_labels: [perfgate, performance]
type WatchConfig struct {
	MissingAfter int      // default DefaultMissingAfter
	MinChange    float64  // percent; default DefaultMinChange
	IssueLabels  []string // labels of the issues watch opens; nil: the CLI's default
}

// Defaults of the watch section.
const (
	DefaultMissingAfter = 5
	DefaultMinChange    = 5.0
)

var watchKeys = []string{"missing_after", "min_change", "issue_labels"}

func (p *ruleParser) watch(n *yaml.Node, w *WatchConfig) error {
	return p.mapping(n, "watch", watchKeys, func(key string, k, v *yaml.Node) error {
		switch key {
		case "missing_after":
			x, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || x < 1 {
				return p.errf(v, "watch missing_after is %q; it must be a whole number of measured commits, 1 or more (default %d)", v.Value, DefaultMissingAfter)
			}
			w.MissingAfter = x
		case "min_change":
			x, err := parsePercent(v.Value)
			if v.Kind != yaml.ScalarNode || err != nil || x <= 0 {
				return p.errf(v, "watch min_change is %q; it must be a percentage above 0, e.g. 5%% (default %g%%)", v.Value, DefaultMinChange)
			}
			w.MinChange = x
		case "issue_labels":
			if v.Kind != yaml.SequenceNode {
				return p.errf(v, "watch issue_labels must be a list of label names, e.g. [perfgate, performance]")
			}
			w.IssueLabels = []string{}
			for _, item := range v.Content {
				name := strings.TrimSpace(item.Value)
				if item.Kind != yaml.ScalarNode || name == "" || len(name) > 50 || strings.Contains(name, ",") {
					return p.errf(item, "watch issue_labels holds %q; a label is a name of at most 50 characters without commas", item.Value)
				}
				w.IssueLabels = append(w.IssueLabels, name)
			}
		}
		return nil
	})
}
