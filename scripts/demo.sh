#!/usr/bin/env bash
# demo.sh: perfgate end to end on an example shipped in the repository,
# with no server and no accelerator. A real vllm-ascend optimization
# log (testdata/vllm-ascend-multimodal-optimizations.md) has five sections,
# each a throughput and a latency run of one code change. The demo makes a
# throwaway git repository where the first four sections are commits on
# main and the last is a pull-request branch, ingests each section's runs
# under its commit, and gates the branch against main.
#
# Usage: scripts/demo.sh [path/to/perfgate]   (default: bin/perfgate)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pg=${1:-$root/bin/perfgate}
seed=$root/testdata/vllm-ascend-multimodal-optimizations.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Results live outside the work tree, as a CI artifact would.
results=$tmp/results
mkdir -p "$tmp/repo" "$results"
cd "$tmp/repo"

git -c init.defaultBranch=main init -q
git config user.name demo
git config user.email demo@example.com
git config commit.gpgsign false

# One file per "## " section, named 1.md .. 5.md, with the section title,
# split outside the work tree: an untracked file is a change, and runs
# ingested on a changed tree measure no commit.
(cd "$results" && awk '/^## /{n++; print substr($0, 4) > (n ".title")} n{print > (n ".md")}' "$seed")
for i in 1 2 3 4 5; do
	title=$(cat "$results/$i.title")
	if [ "$i" = 5 ]; then git checkout -q -b pr; fi
	echo "$title" >change.txt
	git add change.txt
	git commit -q -m "$title"
	# The log was measured on one machine (an Ascend server), not here:
	# its runs get the testbed "unknown" and compare with each other.
	"$pg" ingest --name multimodal "$results/$i.md" 2>/dev/null >/dev/null
done

echo "\$ perfgate history --branch pr --name multimodal --metric 'Mean TTFT' --label max_concurrency=16"
"$pg" history --branch pr --name multimodal --metric 'Mean TTFT' --label max_concurrency=16
echo
echo "\$ perfgate check --rule 'Mean TTFT:3%' --rule 'output_throughput:2%' --rule 'failed<=0'"
set +e
"$pg" check --rule 'Mean TTFT:3%' --rule 'output_throughput:2%' --rule 'failed<=0'
code=$?
set -e
echo
echo "perfgate check exit code: $code (0 pass, 1 regression, 2 bad input, 3 environment)"
# The last change lost 2.01% of output throughput against a 2% rule: the
# demo fails on purpose, and anything else means the demo broke.
[ "$code" -eq 1 ]
