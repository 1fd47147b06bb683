// Package histsync shares perfgate's history through git itself, so that
// it outlives a CI workflow run and reaches developers' machines: runs are
// pushed to and pulled from a data branch (perfgate-history by default) on
// a remote of the repository (origin by default). The bbolt store is the
// local index of that branch: a clone with no history rebuilds it with one
// sync.
//
// # Layout of the data branch (format 2)
//
// The branch has no history in common with the code. Its root holds
//
//	FORMAT                      "2": the format version
//	README.md                   what the branch is, for a person browsing it
//	log/0/<name>.jsonl          recent runs, one file per push
//	log/1/, log/2/              merges of 16 files of the level below
//	packs/<YYYY-MM>/<name>.jsonl  older runs, in files of at most 16 MiB
//	records/<name>.jsonl        accepted changes and invalidated runs
//	                            (store.Record lines), one file per push that had any
//
// Every file holds runs as lines of the JSONL interchange
// (store.AppendJSON, with each run's testbed and environment, so a clone
// keeps laptop and CI apart; perfgate import reads them), and is named by the
// first 16 hex digits of its git blob name. A push adds one file to log/0
// (or to the level its size calls for: under 16 KiB log/0, 128 KiB
// log/1, 1 MiB log/2, else packs/<month of the push>/, cut at 16 MiB
// unless one run is larger). When a level holds 16 files, the push also
// merges them into one file of the next level (dropping runs repeated
// between them), and a merge of log/2 goes to packs/: each run is written
// at most four times, a merge reads at most 16 MiB, and the branch keeps
// a few dozen small files and one pack per 16 MiB of runs. A file that
// holds anything but valid runs is never merged nor deleted. A commit
// never drops a run: every run of a file it removes is in a file it adds.
//
// Records (perfgate accept, perfgate invalidate) are few: every sync reads
// every file of records/, validating each line with store.ParseRecord
// (untrusted input: a bad line is skipped with its file and line), imports
// the records the store lacks and pushes, in one new file, the store's
// records the branch lacks. Records are immutable and never removed. A
// perfgate from before records lists records/ as a directory it does not
// know and leaves it alone.
//
// Reading the branch validates every path: anything that is not a
// .jsonl file where the layout puts one (a stray file, a symlink, a
// submodule, a directory log/9 or packs/garbage), is skipped with a
// warning naming it and left alone; a bad line is skipped with its file
// and line, as is a run whose id is not the id of its content
// (store.ContentID: a forged line must not stand in for the run whose id
// it copied); a file over 64 MiB is skipped. A FORMAT newer than this
// package's, or that is no number, stops the sync with ErrConfig.
//
// Format 1 (perfgate before this layout) kept one file per run,
// runs/<first two hex digits of the id>/<id>.json. Sync reads it, and its
// first push migrates the branch: every run goes into packs/, runs/ is
// removed (kept whole as unreadable/runs/ when it held files that are no
// runs) and FORMAT is written. A perfgate that knows only format 1 then
// refuses the branch with "not a perfgate history (no runs/ directory at
// its root)", exit 2, and the README.md on the branch says to upgrade: it
// never reads a partial history. A perfgate that meets a FORMAT newer than
// its own refuses it the same way and says so.
//
// # Sync
//
// Sync fetches the branch into refs/remotes/<remote>/<branch>, imports the
// runs the store lacks, then commits the store's runs the branch lacks on
// top of the fetched tip and pushes that commit. The push names the tip it
// was built on as the ref's old value, so the remote accepts it only if
// nobody pushed in between; when another runner pushed first, Sync
// fetches again, imports what the other runner added, rebuilds its
// commit on the new tip and pushes again, up to Options.MaxAttempts
// times with a jittered backoff. No run is lost.
//
// Its cost follows what is new, not the size of the history: the store
// remembers, per remote URL and branch (store marks), a tip of the branch
// whose runs it holds and the ranges of its own sequence numbers that need
// no push (pulled, pushed or dirty). A pull reads only the files that are
// not in that tip's tree (a few trees are listed, no file of runs is read
// twice), skipping without decoding the lines of runs it has; a push
// reads only the runs stored since. A store without a mark (the first
// sync of a clone, a history from before marks) compares the whole
// branch with the whole store once. A run stored by perfgate import that
// is on the branch already may be pushed again; merges drop the repeat.
//
// A pull reads the files in path order on one goroutine, decodes and
// validates their lines on a pool of GOMAXPROCS goroutines (each line
// once: the store takes the validated runs as they are, store.MergeValid)
// and stores them in the order read, in write transactions of 2,000 runs,
// with at most a few chunks of 2,000 lines in flight. The first sync of
// an empty history (a fresh clone) looks no line up in the store and
// turns off the sync to disk after each transaction, syncing the file
// once at the end (store.Bulk): a crash of the process keeps every
// transaction committed, and the mark is written only after the pull, so
// the next sync finishes it.
//
// The store also remembers which of its runs a pull imported (the ranges
// of their sequence numbers, with the remote and branch: PulledAt), so
// that a pull request's check can use at head only the runs its own job
// stored, and name the others with the branch commit that brought them
// (RunVias).
//
// Runs measured on a working tree with uncommitted changes (dirty runs)
// are never pushed: their commit does not describe the code they measured.
//
// The push sends a pack of exactly the new objects, over go-git's
// transport. (go-git's Remote.Push walks every object reachable from every
// remote ref to find what the remote already has, which costs the size of
// the code's whole history.) The same pack is then written locally.
//
// # Limits
//
// GitHub warns about files over 50 MiB, refuses them over 100 MiB, and
// recommends repositories under 1 GB. perfgate's files stay under 16 MiB;
// a run of 40 MiB or more as JSON is warned about, one over 95 MiB is
// refused before the push (ErrConfig). A sync warns (Result.Warnings) when
// the runs on the branch exceed 512 MiB. When the remote refuses a push
// (a hook, branch protection, a size limit), Sync fails with ErrRemote
// and the remote's message; the runs stay in the store for the next sync.
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
