package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Env is what a workflow step knows of its run, read by FromEnv.
type Env struct {
	Actions   bool   // GITHUB_ACTIONS is "true"
	APIURL    string // API root with a trailing slash
	ServerURL string // web root, e.g. https://github.com
	Owner     string // of the repository the workflow runs in
	Repo      string
	EventName string // GITHUB_EVENT_NAME

	// PR is the pull request number; 0 when the event names none.
	PR int
	// HeadSHA is the commit a status or check run belongs on: the pull
	// request's head (not the merge commit GITHUB_SHA names on
	// pull_request events), the triggering run's head on workflow_run,
	// else GITHUB_SHA.
	HeadSHA string
	// HeadRepo is owner/name of the pull request's head repository, and
	// HeadBranch its branch; both are known on pull_request and
	// workflow_run events.
	HeadRepo   string
	HeadBranch string
	BaseRef    string // the pull request's base branch
	// TriggerEvent is, on workflow_run, the event of the run that
	// triggered this one (pull_request, push, ...).
	TriggerEvent string

	// PRLabels are the pull request's labels on pull_request events (nil
	// when the event payload carries none).
	PRLabels []string
	// Actor is GITHUB_ACTOR: who triggered the workflow run.
	Actor string

	RunURL      string // the workflow run's page, for links
	StepSummary string // GITHUB_STEP_SUMMARY
	OutputFile  string // GITHUB_OUTPUT
	TempDir     string // RUNNER_TEMP, where the report file goes

	token string
}

// Fork reports whether the pull request comes from another repository,
// whose pull_request workflows get a read-only token.
func (e *Env) Fork() bool {
	return e.HeadRepo != "" && !strings.EqualFold(e.HeadRepo, e.Owner+"/"+e.Repo)
}

// HasToken reports whether a token was found.
func (e *Env) HasToken() bool { return e.token != "" }

// Redact replaces the token in s with "***".
func (e *Env) Redact(s string) string { return redact(s, e.token) }

// String describes the environment without the token.
func (e Env) String() string {
	tok := "no token"
	if e.token != "" {
		tok = "token set"
	}
	return fmt.Sprintf("%s/%s event=%s pr=%d sha=%s api=%s (%s)", e.Owner, e.Repo, e.EventName, e.PR, e.HeadSHA, e.APIURL, tok)
}

// GoString keeps %#v from printing the token.
func (e Env) GoString() string { return "github.Env{" + e.String() + "}" }

// TokenVars are the variables the token is read from, in order.
var TokenVars = []string{"PERFGATE_GITHUB_TOKEN", "GITHUB_TOKEN"}

// DefaultAPIURL is the API root of github.com.
const DefaultAPIURL = "https://api.github.com/"

// FromEnv reads the Actions environment through getenv (os.Getenv in the
// program, a map in tests). Variables that are absent stay empty; the
// error is for values that are present and wrong (a malformed
// GITHUB_REPOSITORY, an unreadable event payload), and names the variable
// and the file.
func FromEnv(getenv func(string) string) (*Env, error) {
	e := &Env{
		Actions:     getenv("GITHUB_ACTIONS") == "true",
		EventName:   getenv("GITHUB_EVENT_NAME"),
		HeadSHA:     getenv("GITHUB_SHA"),
		StepSummary: getenv("GITHUB_STEP_SUMMARY"),
		OutputFile:  getenv("GITHUB_OUTPUT"),
		TempDir:     getenv("RUNNER_TEMP"),
		BaseRef:     getenv("GITHUB_BASE_REF"),
	}
	for _, v := range TokenVars {
		if t := strings.TrimSpace(getenv(v)); t != "" {
			e.token = t
			break
		}
	}
	e.APIURL = apiRoot(getenv("GITHUB_API_URL"))
	e.ServerURL = strings.TrimSuffix(getenv("GITHUB_SERVER_URL"), "/")
	if e.ServerURL == "" {
		e.ServerURL = "https://github.com"
	}
	if r := getenv("GITHUB_REPOSITORY"); r != "" {
		owner, name, ok := strings.Cut(r, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return e, fmt.Errorf("GITHUB_REPOSITORY %q is not OWNER/NAME; set it to the repository, e.g. octo-org/octo-repo", r)
		}
		e.Owner, e.Repo = owner, name
	}
	if id := getenv("GITHUB_RUN_ID"); id != "" && e.Owner != "" {
		e.RunURL = fmt.Sprintf("%s/%s/%s/actions/runs/%s", e.ServerURL, e.Owner, e.Repo, id)
	}
	e.Actor = getenv("GITHUB_ACTOR")
	if p := getenv("GITHUB_EVENT_PATH"); p != "" {
		if err := e.readEvent(p); err != nil {
			return e, err
		}
	}
	return e, nil
}

// apiRoot normalises GITHUB_API_URL to a root with a trailing slash.
func apiRoot(u string) string {
	u = strings.TrimSpace(u)
	if u == "" {
		return DefaultAPIURL
	}
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// event is the part of the payloads perfgate reads.
type event struct {
	Number      int       `json:"number"`
	PullRequest *pullJSON `json:"pull_request"`
	After       string    `json:"after"`
	WorkflowRun *struct {
		HeadSHA        string     `json:"head_sha"`
		HeadBranch     string     `json:"head_branch"`
		HeadRepository *repoJSON  `json:"head_repository"`
		PullRequests   []pullJSON `json:"pull_requests"`
		Event          string     `json:"event"`
		ID             int64      `json:"id"`
		HTMLURL        string     `json:"html_url"`
	} `json:"workflow_run"`
	MergeGroup *struct {
		HeadSHA string `json:"head_sha"`
		BaseRef string `json:"base_ref"`
	} `json:"merge_group"`
}

type pullJSON struct {
	Number int `json:"number"`
	Head   struct {
		SHA  string    `json:"sha"`
		Ref  string    `json:"ref"`
		Repo *repoJSON `json:"repo"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
	} `json:"base"`
	Labels []struct {
		Name string `json:"name"`
	} `json:"labels"`
}

type repoJSON struct {
	FullName string `json:"full_name"`
}

func (e *Env) readEvent(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a local run that copied the variables without the file
	}
	if err != nil {
		return fmt.Errorf("GITHUB_EVENT_PATH %q: %v", path, err)
	}
	var ev event
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("GITHUB_EVENT_PATH %q: the event payload is not valid JSON: %v", path, err)
	}
	switch {
	case ev.PullRequest != nil:
		pr := ev.PullRequest
		e.PR = pr.Number
		if e.PR == 0 {
			e.PR = ev.Number
		}
		if pr.Head.SHA != "" {
			e.HeadSHA = pr.Head.SHA
		}
		e.HeadBranch = pr.Head.Ref
		if pr.Head.Repo != nil {
			e.HeadRepo = pr.Head.Repo.FullName
		}
		if pr.Base.Ref != "" {
			e.BaseRef = pr.Base.Ref
		}
		e.PRLabels = []string{}
		for _, l := range pr.Labels {
			e.PRLabels = append(e.PRLabels, l.Name)
		}
	case ev.WorkflowRun != nil:
		wr := ev.WorkflowRun
		if wr.HeadSHA != "" {
			e.HeadSHA = wr.HeadSHA
		}
		e.HeadBranch = wr.HeadBranch
		e.TriggerEvent = wr.Event
		if wr.HeadRepository != nil {
			e.HeadRepo = wr.HeadRepository.FullName
		}
		// GitHub lists the pull requests only when the head branch is in
		// this repository; for a fork the list is empty and the pull
		// request is looked up by head (Client.FindPR).
		for _, p := range wr.PullRequests {
			if p.Head.SHA == "" || p.Head.SHA == wr.HeadSHA {
				e.PR = p.Number
				e.BaseRef = p.Base.Ref
				break
			}
		}
	case ev.MergeGroup != nil:
		if ev.MergeGroup.HeadSHA != "" {
			e.HeadSHA = ev.MergeGroup.HeadSHA
		}
		e.BaseRef = strings.TrimPrefix(ev.MergeGroup.BaseRef, "refs/heads/")
	case ev.After != "" && strings.Trim(ev.After, "0") != "":
		e.HeadSHA = ev.After
	}
	return nil
}

// ParsePR reads a pull request number given by a user (a flag).
func ParsePR(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(s), "#"))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a pull request number; give a positive number such as 42", s)
	}
	return n, nil
}

// redact replaces every occurrence of token in s.
func redact(s, token string) string {
	if token == "" || len(token) < 4 {
		return s
	}
	return strings.ReplaceAll(s, token, "***")
}
