// Package histsync shares perfgate's history through git itself, so that
// it outlives a CI workflow run and reaches developers' machines: runs are
// pushed to and pulled from a data branch (perfgate-history by default) on
// a remote of the repository (origin by default). The bbolt store is the
// local index of that branch: a clone with no history rebuilds it with one
// sync.
//
// # Layout of the data branch
//
// The branch has no history in common with the code. Each run is one file,
//
//	runs/<first two hex digits of the run id>/<run id>.json
//
// holding the run's line of the JSONL interchange (store.AppendJSON: with
// its testbed and environment, so a clone keeps laptop and CI apart), so
// a file never changes once written and two runners adding different runs
// never touch the same file. A commit only adds files: its tree shares
// every unchanged subtree with its parent, so a sync costs the new runs,
// three small trees and a commit, whatever the size of the history. The
// 256-way fan-out keeps each directory small. A README.md at the root
// says what the branch is.
//
// # Sync
//
// Sync fetches the branch into refs/remotes/<remote>/<branch>, imports the
// runs the store lacks (store.Import, so a run already stored is skipped),
// then commits the store's runs the branch lacks on top of the fetched tip
// and pushes that commit. The push names the tip it was built on as the
// ref's old value, so the remote accepts it only if nobody pushed in
// between; when another runner pushed first, Sync fetches again, imports
// what the other runner added, rebuilds its commit on the new tip and
// pushes again, up to Options.MaxAttempts times with a jittered backoff.
// No run is lost and no file conflicts.
//
// Runs measured on a working tree with uncommitted changes (dirty runs)
// are never pushed: their commit does not describe the code they measured.
//
// The push sends a pack of exactly the new objects, over go-git's
// transport. (go-git's Remote.Push walks every object reachable from every
// remote ref to find what the remote already has, which costs the size of
// the code's whole history.) The same objects are then written locally as
// one pack.
//
// # Credentials
//
// SSH remotes use go-git's defaults (the SSH agent). For HTTPS remotes the
// first of these is used: a token given in Options.Token, sent only to
// Options.TokenHost (perfgate passes GITHUB_TOKEN or
// PERFGATE_GITHUB_TOKEN and the host of GITHUB_SERVER_URL); the
// http.<url>.extraheader that actions/checkout stores in the repository's
// git config; credentials in the remote URL. When the remote still asks
// for credentials, git's credential helpers are asked (git credential
// fill, without prompting), as git itself would. Neither the token nor
// the extraheader is sent to a plain http:// remote (but on a loopback
// address): it would travel unencrypted.
package histsync
