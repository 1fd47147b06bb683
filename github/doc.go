// Package github owns perfgate's side of GitHub: reading what a GitHub
// Actions workflow tells a step (the repository, the pull request, the
// commit, the API URL, the token, the job summary and output files), and
// publishing a rendered report there: one sticky pull-request comment per
// gate id, a commit status or a check run, the job summary and the step
// outputs.
//
// It knows nothing of the command line nor of how a report is computed:
// callers hand it markdown, a verdict and a one-line title. Package gate
// knows nothing of GitHub.
//
// # Environment
//
// FromEnv reads the standard Actions variables (GITHUB_REPOSITORY,
// GITHUB_EVENT_NAME, GITHUB_SHA, GITHUB_API_URL, GITHUB_SERVER_URL,
// GITHUB_RUN_ID, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT) and the event payload
// (GITHUB_EVENT_PATH): for pull_request and pull_request_target the pull
// request's number, head commit and head repository; for workflow_run the
// triggering run's head commit, branch, repository and pull requests; for
// push the pushed commit; for merge_group the group's head. The token is
// PERFGATE_GITHUB_TOKEN, else GITHUB_TOKEN. It is kept unexported, is sent
// only in the Authorization header and never over plain http (NewClient
// refuses an http:// GITHUB_API_URL and Transport any http request that
// carries it, but to a loopback address), and every error that leaves
// this package has it replaced by "***".
//
// GITHUB_API_URL is the API root as Actions sets it: https://api.github.com
// on github.com, https://HOST/api/v3 on GitHub Enterprise Server, so the
// same workflow works on both. Any other root is read as go-github's
// WithEnterpriseURLs does: a bare https://HOST gets /api/v3, api.* hosts
// (GHE.com) are kept as they are.
//
// # Sticky comments
//
// A comment carries the hidden marker <!-- perfgate:gate=ID -->. Publishing
// lists every page of the pull request's comments (following the Link
// headers) and adopts only the comments that carry the marker and were
// written by the identity the token acts as: GET /user, or
// github-actions[bot] when the token may not call it (GITHUB_TOKEN gets
// 403). A comment by anyone else that starts with the marker is never
// edited nor deleted. It edits the first own comment and deletes later
// own duplicates (left by two runs that raced), or creates the comment
// when none exists. Creating is not idempotent: a
// create that fails with a 5xx or a network error may have posted the
// comment, so it is never retried blindly; the comments are listed again
// and the create repeated only when the marker is still absent. A check
// run carries a random external_id for the same look before a repeat. A body over GitHub's limit of 65,536
// characters is shortened at a line boundary, open <details> and code
// fences are closed, and a note says so: it is never rejected.
//
// # Watch issues
//
// SyncIssues keeps one issue per alert of perfgate watch (an open
// regression, a series that stopped reporting). Each issue starts with
// the hidden marker <!-- perfgate:watch=KEY -->; every page of the open
// issues with the first configured label is listed, and only issues with
// the marker written by the token's identity are adopted. An alert's
// issue is edited in place (never opened twice), a new alert opens one
// with the configured labels, and an issue whose alert is gone gets a
// comment and is closed; duplicates left by two racing runs are closed
// the same way. Creates follow the rule of sticky comments: never retried
// blindly after an ambiguous failure. A dry run lists and changes nothing.
//
// # Step outputs
//
// Publish writes the outputs verdict, report (the markdown, cut below
// the 128 KiB Linux allows one environment variable, so that a later
// step can read it through env:, with a note saying so) and
// report-file (a file under RUNNER_TEMP with the whole report), and
// appends the report to the job summary, cut to GitHub's 1 MiB.
//
// # Retries
//
// go-github v60 has no retry and does not map 429 to a rate-limit error.
// Transport, the http.RoundTripper under the client, retries 500, 502,
// 503 and 504, 429, and 403 responses that are rate limits (a secondary
// rate limit message, a Retry-After header, or x-ratelimit-remaining: 0),
// as well as network errors, with exponential backoff and jitter. It
// honours Retry-After (seconds or an HTTP date) and x-ratelimit-reset, and
// waits a minute for a secondary limit that names no time, as GitHub asks.
// Attempts and total time are bounded (MaxAttempts, MaxElapsed); when the
// next wait would exceed the budget, the last response is returned as is.
// Each attempt has its own timeout (AttemptTimeout); the http.Client has
// none, as it would bound the waits too. Requests marked NoBlindRetry
// (creating a comment or a check run) are retried only after rate limits,
// which GitHub refuses before acting.
package github
