#!/usr/bin/env bash
# check-release-archive.sh DIST OS ARCH: checks the GoReleaser archive for
# OS/ARCH in DIST (a snapshot or a release): its checksum is in the
# checksums file, it holds the completions and the man page, and its
# binary (for this machine) prints "perfgate vVERSION" with a commit, a
# build date and its Go version.
set -euo pipefail
dist=$1 os=$2 arch=$3
sums=$(ls "$dist"/perfgate_*_checksums.txt)
archive=$(ls "$dist"/perfgate_*_"${os}_${arch}".tar.gz)
name=$(basename "$archive")
(cd "$dist" && grep "  $name\$" "$(basename "$sums")" | sha256sum -c -)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$archive" -C "$tmp"
for f in perfgate LICENSE README.md completions/perfgate.bash completions/perfgate.zsh completions/perfgate.fish manpages/perfgate.1.gz; do
	[ -e "$tmp/$f" ] || { echo "$name has no $f" >&2; exit 1; }
done
"$tmp/perfgate" --version | tee "$tmp/version"
version=${name#perfgate_}
version=${version%_"${os}_${arch}".tar.gz}
head -1 "$tmp/version" | grep -qx "perfgate v$version" || { echo "$name: --version does not say v$version" >&2; exit 1; }
grep -q '^commit:   [0-9a-f]\{40\}$' "$tmp/version" || { echo "$name: no commit in --version" >&2; exit 1; }
grep -q '^built:    20' "$tmp/version" || { echo "$name: no build date in --version" >&2; exit 1; }
"$tmp/perfgate" version -o json | grep -q '"go_version": "go1\.'
echo "$name: ok"
