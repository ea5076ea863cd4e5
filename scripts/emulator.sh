#!/usr/bin/env bash
# Starts or stops MiniStack, the local AWS emulator the world/aws tests and
# local runs use, on 127.0.0.1:4566.
#
#   scripts/emulator.sh start   install requirements-dev.txt, start, wait until healthy
#   scripts/emulator.sh stop    stop the emulator this script started
#
# The pins live in a virtualenv of their own (scripts/pyvenv.sh): ministack
# pins an exact botocore, which would clash with a system-wide awscli.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$root/scripts/pyvenv.sh"
venv=${WORKFLOW_EMULATOR_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/lambdaworkflow/ministack-venv}
port=4566
health=http://127.0.0.1:$port/_ministack/health

healthy() { curl -fs -o /dev/null --max-time 2 "$health"; }

start() {
	pyvenv ministack "$root/scripts/requirements-dev.txt" "$venv" >/dev/null
	if healthy; then
		echo "MiniStack already running on 127.0.0.1:$port"
		return
	fi
	# AWS_ENDPOINT_URL is for the Lambda functions MiniStack runs: they
	# inherit its environment and so call back into the emulator.
	BIND_HOST=127.0.0.1 GATEWAY_PORT=$port AWS_ENDPOINT_URL=http://127.0.0.1:$port \
		"$venv/bin/ministack" -d
	for _ in $(seq 1 100); do
		if healthy; then
			echo "MiniStack healthy on 127.0.0.1:$port"
			return
		fi
		sleep 0.2
	done
	echo "MiniStack did not become healthy within 20 s; log: ${TMPDIR:-/tmp}/ministack-$port.log" >&2
	exit 1
}

stop() {
	if [[ -x $venv/bin/ministack ]]; then
		GATEWAY_PORT=$port "$venv/bin/ministack" --stop || true
	fi
}

case ${1:-} in
start) start ;;
stop) stop ;;
*)
	echo "usage: $0 start|stop" >&2
	exit 2
	;;
esac
