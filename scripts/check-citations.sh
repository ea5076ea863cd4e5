#!/usr/bin/env bash
# Fails if a tracked text file cites a document a reader of the repository
# cannot open: a private specification number, an issue number of a tracker
# that is not public, or a proposal named only by its kind. Cite the public
# document by link (https://useworkflow.dev/docs/..., the RespondingHook
# proposal at https://github.com/vercel/workflow/discussions/3740) or state
# the fact.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each word is written with a bracket expression ([e], [u], ...) so that
# this file does not match its own pattern.
pattern='se[e]d [0-9]|iss[u]e #?[0-9]+|\bthe [R]FC\b|\b[R]FC'"'"'s\b|/wor[k]/shared'
if git grep -nIiE "$pattern" -- .; then
	echo "citations: the lines above cite documents a reader cannot open; link the public document or state the fact" >&2
	exit 1
fi
