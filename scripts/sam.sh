#!/usr/bin/env bash
# Runs the pinned SAM CLI (requirements-sam.txt), installing it first into
# a virtualenv of its own if needed:
#
#   scripts/sam.sh validate --lint
#   scripts/sam.sh build
#
# A virtualenv of its own because aws-sam-cli and ministack pin clashing
# botocore versions (see requirements-sam.txt).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${WORKFLOW_SAM_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/lambdaworkflow/sam-venv}
stamp=$venv/.requirements.sha256
want=$(sha256sum "$root/requirements-sam.txt" | cut -d' ' -f1)

if [[ ! -x $venv/bin/sam || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
	echo "installing the SAM CLI into $venv" >&2
	[[ -x $venv/bin/python ]] || python3 -m venv "$venv"
	"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/requirements-sam.txt" >&2
	echo "$want" >"$stamp"
fi

export SAM_CLI_TELEMETRY=0
exec "$venv/bin/sam" "$@"
