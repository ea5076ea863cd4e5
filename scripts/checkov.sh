#!/usr/bin/env bash
# Scans the templates (template.yaml, examples/aws/template.yaml) with the
# pinned checkov (requirements-checkov.txt), installing it first into a
# virtualenv of its own if needed (scripts/pyvenv.sh). Fails on any finding
# that is neither fixed nor skipped with its reason: in scripts/checkov.yaml
# for the checks that do not apply to the stacks as a whole, in a
# resource's Metadata for the others.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/pyvenv.sh"
venv=$(pyvenv checkov "$root/scripts/requirements-checkov.txt")

cd "$root"
# --skip-download: the policy metadata checkov would fetch from its vendor
# only adds links and severities, and CI has no route there.
exec "$venv/bin/checkov" --config-file scripts/checkov.yaml --skip-download "$@"
