package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// A site of several repositories (perfgate site --repository, on a
// PostgreSQL history that holds them) is an index page that lists them,
// and under r/NAME/ one sub-site per repository, each exactly the site
// of that repository alone: its own commits, runs, acceptances and
// watch alerts, so that nothing of one repository is ever a baseline of
// another's.
//
//	index.html, style.css   the list of repositories and their status
//	perfgate-site.json      what was generated, per repository
//	r/NAME/                 a repository's site (see Generate)

// Orders of a site's commits (Options.Order).
const (
	// OrderBranch: the first-parent history of Options.Ref, from git.
	OrderBranch = ""
	// OrderMeasured: the commits that have runs, by the time of their
	// first run (store.FirstMeasured), for a repository whose git
	// history is not at hand.
	OrderMeasured = "measured"
)

// RepoSite is one repository on the index of several.
type RepoSite struct {
	Name string `json:"name"`
	Dir  string `json:"dir"` // its sub-site, relative to the index, e.g. r/github.com-org-engine
	// Order is how its commits are ordered: OrderBranch ("", the
	// first-parent history of Ref) or OrderMeasured.
	Order string `json:"order,omitempty"`
	Ref   string `json:"ref,omitempty"`
	// Status: "regression" (a chart flagged: an open regression of
	// perfgate watch's, or the latest commit beyond the noise band),
	// "ok", or "empty" (no results).
	Status string `json:"status"`
	*Summary
}

// IndexSummary says what WriteIndex wrote.
type IndexSummary struct {
	Repositories []RepoSite `json:"repositories"`
	Flagged      int        `json:"flagged"`          // charts flagged, all repositories
	Open         int        `json:"open_regressions"` // watch's open regressions, all repositories
	Files        int        `json:"files"`            // files written, sub-sites included
}

// PrepareIndex makes dir ready for a site of several repositories (as
// Generate does for one: new, empty, or holding a site, whose contents
// go) and returns the sub-directory of each name, relative to dir,
// unique even when two names make the same file name (repoDirs).
func PrepareIndex(dir string, names []string) ([]string, error) {
	if err := prepareDir(dir); err != nil {
		return nil, err
	}
	for _, f := range []string{"app.js", "index.html"} { // a single site's viewer
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	dirs := repoDirs(names)
	out := make([]string, len(names))
	for i, d := range dirs {
		out[i] = path.Join(repoDir, d)
	}
	return out, nil
}

// repoDirs names each repository's sub-directory, the same whatever the
// order of names and whatever other names are drawn with it: a name's
// slug when no other name makes the same one, or when the name is that
// slug itself; else the slug, "--" and a hash of the name. slug never
// writes "--", so no name can make another's directory by choosing what
// it slugs to: a repository named "Engine" cannot take r/engine from
// "engine", nor bump it to r/engine-2 for a repository named
// "engine-2" to be shown in its place.
func repoDirs(names []string) []string {
	count := map[string]int{}
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		count[slug(n)]++
	}
	out := make([]string, len(names))
	for i, n := range names {
		s := slug(n)
		if count[s] == 1 || n == s {
			out[i] = s
			continue
		}
		sum := sha256.Sum256([]byte(n))
		out[i] = s + "--" + hex.EncodeToString(sum[:6])
	}
	return out
}

// repoDir holds the sub-sites.
const repoDir = "r"

// WriteIndex writes the index page of the repositories' sub-sites (each
// written by Generate into dir/RepoSite.Dir, in the order given) and the
// marker that describes them.
func WriteIndex(dir, title string, repos []RepoSite) (*IndexSummary, error) {
	if title == "" {
		title = "perfgate"
	}
	sum := &IndexSummary{Repositories: repos}
	for i := range repos {
		r := &repos[i]
		if r.Summary == nil {
			r.Summary = &Summary{}
		}
		r.Status = repoStatus(r.Summary)
		sum.Flagged += r.Flagged
		sum.Open += r.OpenRegressions
		sum.Files += r.Files
	}
	css, err := assets.ReadFile("assets/style.css")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "style.css"), css, 0o644); err != nil {
		return nil, err
	}
	var page bytes.Buffer
	if err := indexPage().Execute(&page, indexData{Title: title, Repos: repos, Sum: sum}); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), page.Bytes(), 0o644); err != nil {
		return nil, err
	}
	sum.Files += 3 // style.css, index.html, the marker
	marker, _ := json.MarshalIndent(struct {
		Generator string `json:"generator"`
		*IndexSummary
	}{"perfgate site", sum}, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, Marker), append(marker, '\n'), 0o644); err != nil {
		return nil, err
	}
	return sum, nil
}

func repoStatus(s *Summary) string {
	switch {
	case s.Runs == 0:
		return "empty"
	case s.Flagged > 0:
		return "regression"
	}
	return "ok"
}

type indexData struct {
	Title string
	Repos []RepoSite
	Sum   *IndexSummary
}

// indexPage is the list of repositories: plain HTML (html/template
// escapes every name), no script, so it works from file:// as is. Parsed
// on first use: every perfgate process starts the package (issue 37).
var indexPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("index").Funcs(template.FuncMap{
		"short": func(s string) string { return s[:min(len(s), 7)] },
		"date":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") },
		"plural": func(n int, one, many string) string {
			if n == 1 {
				return one
			}
			return many
		},
	}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>{{.Title}}</title>
<link rel="stylesheet" href="style.css">
</head>
<body>
<header class="top">
  <a href="index.html" class="brand">{{.Title}}</a>
  <span class="meta">{{len .Repos}} {{plural (len .Repos) "repository" "repositories"}}{{with .Sum.Open}}, {{.}} open {{plural . "regression" "regressions"}} (perfgate watch){{end}}</span>
</header>
<main>
<section id="repositories" aria-label="Repositories">
  <div class="tablewrap">
  <table>
    <thead><tr>
      <th scope="col">Repository</th>
      <th scope="col">Status</th>
      <th scope="col" class="num">Open regressions</th>
      <th scope="col" class="num">Charts flagged</th>
      <th scope="col" class="num">Series</th>
      <th scope="col" class="num">Charts</th>
      <th scope="col" class="num">Runs</th>
      <th scope="col" class="num">Commits measured</th>
      <th scope="col">Latest commit</th>
      <th scope="col">Commits in order of</th>
    </tr></thead>
    <tbody>
{{- range .Repos}}
    <tr data-repository="{{.Name}}" data-status="{{.Status}}">
      <td class="name"><a href="{{.Dir}}/index.html">{{.Name}}</a></td>
      <td class="flag-{{.Status}}">{{if eq .Status "regression"}}regression{{else if eq .Status "empty"}}no results{{else}}ok{{end}}</td>
      <td class="num">{{.OpenRegressions}}</td>
      <td class="num">{{.Flagged}}</td>
      <td class="num">{{.Series}}</td>
      <td class="num">{{.Charts}}</td>
      <td class="num">{{.Runs}}</td>
      <td class="num">{{.Measured}}</td>
      <td>{{with .Latest}}<code>{{short .SHA}}</code> {{date .Time}}{{end}}</td>
      <td>{{if eq .Order "measured"}}first measurement{{else}}first-parent history of {{.Ref}}{{end}}</td>
    </tr>
{{- end}}
    </tbody>
  </table>
  </div>
  {{if not .Repos}}<p class="meta">No repository has results in this history yet.</p>{{end}}
  <p class="meta">Each repository's page is its own site: its runs, baselines, noise bands, accepted changes and perfgate watch's alerts are its own; nothing of one repository is a baseline of another.
  A repository checked out where the site was generated is drawn along the first-parent history of its branch; any other along its measured commits, in order of each commit's first run (a history measured as commits land, e.g. nightly, is the branch's order; a commit measured later sorts where it was measured).</p>
</section>
</main>
</body>
</html>
`))
})
