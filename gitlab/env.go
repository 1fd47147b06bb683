// Package gitlab publishes a gate's report in GitLab CI: one sticky merge
// request note per gate id (found by its hidden marker, edited in place),
// a commit status, a dotenv report of the outputs and a metrics report for
// the merge request widget. The API calls retry as package github's do
// (github.Transport); a failure is a warning that never changes the
// verdict. Self-managed GitLab is reached through CI_API_V4_URL.
package gitlab

import (
	"fmt"
	"strconv"
	"strings"
)

// Env is what a GitLab CI job knows of its pipeline, read by FromEnv.
type Env struct {
	GitLab    bool   // GITLAB_CI is "true"
	APIURL    string // CI_API_V4_URL, without a trailing slash
	ServerURL string // CI_SERVER_URL
	// ProjectID is the project of the merge request
	// (CI_MERGE_REQUEST_PROJECT_ID), else of the pipeline (CI_PROJECT_ID).
	ProjectID string
	// SourceProjectID is the merge request's source project; another
	// than ProjectID for a merge request from a fork.
	SourceProjectID string
	MR              int    // CI_MERGE_REQUEST_IID; 0 outside a merge request pipeline
	SHA             string // the merge request's head (CI_MERGE_REQUEST_SOURCE_BRANCH_SHA), else CI_COMMIT_SHA
	DiffBaseSHA     string // CI_MERGE_REQUEST_DIFF_BASE_SHA
	TargetBranch    string // CI_MERGE_REQUEST_TARGET_BRANCH_NAME
	Ref             string // CI_COMMIT_REF_NAME
	JobURL          string // CI_JOB_URL
	ProjectDir      string // CI_PROJECT_DIR, where the reports are written

	token string
}

// TokenVar is the variable the token is read from: a project access token
// with the api scope (a job token cannot write notes).
const TokenVar = "PERFGATE_GITLAB_TOKEN"

// DefaultAPIURL is the API of gitlab.com.
const DefaultAPIURL = "https://gitlab.com/api/v4"

// FromEnv reads the GitLab CI environment through getenv. The error is
// for a value present and wrong.
func FromEnv(getenv func(string) string) (*Env, error) {
	e := &Env{
		GitLab:          getenv("GITLAB_CI") == "true",
		APIURL:          strings.TrimRight(strings.TrimSpace(getenv("CI_API_V4_URL")), "/"),
		ServerURL:       strings.TrimRight(getenv("CI_SERVER_URL"), "/"),
		ProjectID:       strings.TrimSpace(getenv("CI_MERGE_REQUEST_PROJECT_ID")),
		SourceProjectID: strings.TrimSpace(getenv("CI_MERGE_REQUEST_SOURCE_PROJECT_ID")),
		SHA:             strings.TrimSpace(getenv("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")),
		DiffBaseSHA:     strings.TrimSpace(getenv("CI_MERGE_REQUEST_DIFF_BASE_SHA")),
		TargetBranch:    strings.TrimSpace(getenv("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")),
		Ref:             getenv("CI_COMMIT_REF_NAME"),
		JobURL:          getenv("CI_JOB_URL"),
		ProjectDir:      getenv("CI_PROJECT_DIR"),
		token:           strings.TrimSpace(getenv(TokenVar)),
	}
	if e.APIURL == "" {
		e.APIURL = DefaultAPIURL
		if e.ServerURL != "" {
			e.APIURL = e.ServerURL + "/api/v4"
		}
	}
	if e.ProjectID == "" {
		e.ProjectID = strings.TrimSpace(getenv("CI_PROJECT_ID"))
	}
	if e.SHA == "" {
		e.SHA = strings.TrimSpace(getenv("CI_COMMIT_SHA"))
	}
	if s := strings.TrimSpace(getenv("CI_MERGE_REQUEST_IID")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return e, fmt.Errorf("CI_MERGE_REQUEST_IID %q is not a merge request number", s)
		}
		e.MR = n
	}
	return e, nil
}

// Fork reports whether the merge request comes from another project,
// whose pipeline runs in the fork without the parent's variables.
func (e *Env) Fork() bool {
	return e.SourceProjectID != "" && e.SourceProjectID != e.ProjectID
}

// HasToken reports whether a token was found.
func (e *Env) HasToken() bool { return e.token != "" }

// Redact replaces the token in s with "***".
func (e *Env) Redact(s string) string {
	if len(e.token) < 4 {
		return s
	}
	return strings.ReplaceAll(s, e.token, "***")
}

// String describes the environment without the token.
func (e Env) String() string {
	tok := "no token"
	if e.token != "" {
		tok = "token set"
	}
	return fmt.Sprintf("project=%s mr=%d sha=%s api=%s (%s)", e.ProjectID, e.MR, e.SHA, e.APIURL, tok)
}

// GoString keeps %#v from printing the token.
func (e Env) GoString() string { return "gitlab.Env{" + e.String() + "}" }
