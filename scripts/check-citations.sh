#!/usr/bin/env bash
# Fails if a tracked text file cites a document a reader of the repository
# cannot open: a private seed number, an issue number of a tracker that is
# not public, or "the RFC" without saying which. Cite the public document
# by link (https://useworkflow.dev/docs/..., the RespondingHook proposal at
# https://github.com/vercel/workflow/discussions/3740) or state the fact.
set -euo pipefail
cd "$(dirname "$0")/.."

pattern='seed [0-9]|issue #?[0-9]+|\bthe RFC\b|\bRFC'"'"'s\b|/work/shared'
if git grep -nIiE "$pattern" -- . ':!scripts/check-citations.sh'; then
	echo "citations: the lines above cite documents a reader cannot open; link the public document or state the fact" >&2
	exit 1
fi
