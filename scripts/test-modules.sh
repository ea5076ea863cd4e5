#!/usr/bin/env bash
# Runs the tests of the repository's modules in two lanes at once: the SDK's
# module (its World suites are the longest, world/aws waiting on the
# emulator most of its time) in one, and every other module, one after
# another, in the second. Before the functions and the examples were modules
# of their own their stack tests ran beside world/aws inside one go test;
# run one after the other, the modules add their times up. Each lane's
# output is printed whole when it ends, and the run fails if either lane
# does.
#
#   scripts/test-modules.sh GO MODULE...   (the first module is the SDK's)
set -uo pipefail
go=$1 first=$2
shift 2
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

lane() {
	local m
	for m in "$@"; do
		echo "== $m"
		"$go" -C "$m" test -race -count=1 -timeout 15m ./... || return 1
	done
}

lane "$first" >"$logs/sdk" 2>&1 &
sdk=$!
lane "$@" >"$logs/rest" 2>&1 &
rest=$!
wait "$sdk"
sdk_status=$?
wait "$rest"
rest_status=$?
cat "$logs/sdk" "$logs/rest"
if ((sdk_status != 0 || rest_status != 0)); then
	echo "test-modules: a lane failed (SDK module: exit $sdk_status, the other modules: exit $rest_status)" >&2
	exit 1
fi
