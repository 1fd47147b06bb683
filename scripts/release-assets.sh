#!/bin/sh
# Writes the shell completions and the man page the release archives carry
# (run by .goreleaser.yaml before the build; the directories are ignored
# by git).
set -eu
cd "$(dirname "$0")/.."
rm -rf completions manpages
mkdir -p completions manpages
go build -o completions/.perfgate ./cmd/perfgate
for shell in bash zsh fish; do
	completions/.perfgate completion "$shell" > "completions/perfgate.$shell"
done
completions/.perfgate man > manpages/perfgate.1
gzip -9n manpages/perfgate.1
rm completions/.perfgate
