#!/usr/bin/env bash
# Runs the pinned SAM CLI (requirements-sam.txt), installing it first into
# a virtualenv of its own if needed (scripts/pyvenv.sh):
#
#   scripts/sam.sh validate --lint
#   scripts/sam.sh build
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/pyvenv.sh"
venv=$(pyvenv sam "$root/scripts/requirements-sam.txt" "${WORKFLOW_SAM_VENV:-}")

export SAM_CLI_TELEMETRY=0
exec "$venv/bin/sam" "$@"
