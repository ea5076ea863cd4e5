#!/usr/bin/env bash
# Runs the whole AWS stack (template.yaml) on a local emulator.
#
#   scripts/local.sh              `make local`: start MiniStack (unless
#                                 AWS_ENDPOINT_URL names a running emulator,
#                                 e.g. LocalStack), build, deploy, print the
#                                 URLs to call
#   scripts/local.sh deploy NAME  build (into .aws-sam/local/NAME) and deploy
#                                 stack NAME to the running emulator; print
#                                 its outputs as Key=Value lines on stdout
#                                 (the e2e test reads them); the stack's
#                                 Event API (stream push) is made first
#   scripts/local.sh delete-events NAME
#                                 delete stack NAME's Event API, which the
#                                 stack does not own
#
# Environment: AWS_ENDPOINT_URL (default http://127.0.0.1:4566, MiniStack),
# STACK_NAME for
# the default command (default workflow-local), EXAMPLE_API (the template's
# ExampleApi: http-api by default, function-url for LocalStack (see
# localstack/README.md), none for a stack of one's own workflows only), STACK_PARAMETERS (more
# Key=Value parameter overrides, space-separated, e.g.
# ScheduleAfterSeconds=5).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
. scripts/pyvenv.sh

# With no AWS_ENDPOINT_URL, the default command starts MiniStack; with
# one, it uses the emulator already running there.
endpoint_given=${AWS_ENDPOINT_URL:-}
export AWS_ENDPOINT_URL=${AWS_ENDPOINT_URL:-http://127.0.0.1:4566}
# Emulators accept any credentials; real ones in the environment are
# replaced so that nothing here can reach an AWS account.
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
unset AWS_SESSION_TOKEN AWS_PROFILE
export AWS_REGION=${AWS_REGION:-us-east-1}
export AWS_DEFAULT_REGION=$AWS_REGION
# An emulator deploys in moments: poll it every second, not every five.
export SAM_CLI_POLL_DELAY=${SAM_CLI_POLL_DELAY:-1}

# The emulator runs the bootstrap binaries on this machine: build for it.
case $(uname -m) in
x86_64 | amd64) arch=x86_64 ;;
aarch64 | arm64) arch=arm64 ;;
*)
	echo "unsupported host architecture $(uname -m)" >&2
	exit 1
	;;
esac

# localURL rewrites the URLs MiniStack reports, which are AWS's (a Function
# URL on lambda-url.<region>.on.aws) or need a resolver for *.localhost
# (an API's execute-api.localhost), into its path-style routes on the
# endpoint, keeping a Function URL's trailing slash or its absence (the
# template's ApiUrl has none). Other URLs (LocalStack's resolve as they
# are) pass unchanged.
localURL() {
	local re_url='^https://([a-z0-9]+)\.lambda-url\.[a-z0-9-]+\.on\.aws(/?)$'
	local re_api='^https?://([a-z0-9]+)\.execute-api\.localhost(:[0-9]+)?/?$'
	if [[ $1 =~ $re_url ]]; then
		echo "$AWS_ENDPOINT_URL/_aws/lambda-url/${BASH_REMATCH[1]}${BASH_REMATCH[2]}"
	elif [[ $1 =~ $re_api ]]; then
		echo "$AWS_ENDPOINT_URL/_aws/execute-api/${BASH_REMATCH[1]}"
	else
		echo "$1"
	fi
}

# outputs prints the stack's outputs as Key=Value lines, nothing if the
# stack does not exist.
outputs() {
	scripts/sam.sh list stack-outputs --stack-name "$1" --output json 2>/dev/null |
		python3 -c 'import json, sys
for o in json.load(sys.stdin): print(o["OutputKey"] + "=" + o["OutputValue"])' || true
}

output() { sed -n "s/^$1=//p" <<<"$2"; }

# secretValue prints the value of secret $1 (the example API's bearer
# token), read with the SAM CLI's boto3.
secretValue() {
	local venv
	venv=$(pyvenv sam "$root/scripts/requirements-sam.txt" "${WORKFLOW_SAM_VENV:-}")
	"$venv/bin/python" -c 'import boto3, sys
print(boto3.client("secretsmanager").get_secret_value(SecretId=sys.argv[1])["SecretString"])' "$1"
}

# eventAPI prints the ID of stack $1's Event API (IAM authorization, the
# template's default channel namespace), made through the emulator's
# AppSync control plane the first time: the emulators' CloudFormation
# cannot make one, and the template takes an existing one
# (StreamEventsApiId). Nothing if the emulator has no AppSync Events
# (LocalStack's free tier): then the stack's readers poll.
eventAPI() {
	local venv
	venv=$(pyvenv sam "$root/scripts/requirements-sam.txt" "${WORKFLOW_SAM_VENV:-}")
	"$venv/bin/python" - "$1-streams" <<'PY' || echo "no AppSync Events on $AWS_ENDPOINT_URL: the stack's stream readers poll" >&2
import boto3, sys
name, namespace = sys.argv[1], "streams"
appsync = boto3.client("appsync")
ids = [a["apiId"] for a in appsync.list_apis()["apis"] if a["name"] == name]
if not ids:
    iam = [{"authType": "AWS_IAM"}]
    config = {"authProviders": iam, "connectionAuthModes": iam, "defaultPublishAuthModes": iam, "defaultSubscribeAuthModes": iam}
    ids = [appsync.create_api(name=name, eventConfig=config)["api"]["apiId"]]
    appsync.create_channel_namespace(apiId=ids[0], name=namespace)
print(ids[0])
PY
}

# deleteEventAPI deletes stack $1's Event API, if it has one.
deleteEventAPI() {
	local venv
	venv=$(pyvenv sam "$root/scripts/requirements-sam.txt" "${WORKFLOW_SAM_VENV:-}")
	"$venv/bin/python" - "$1-streams" <<'PY'
import boto3, sys
appsync = boto3.client("appsync")
for a in appsync.list_apis()["apis"]:
    if a["name"] == sys.argv[1]:
        appsync.delete_api(apiId=a["apiId"])
PY
}

samDeploy() {
	local stack=$1 base=$2 build=$3 events=$4
	local params=("Architecture=$arch" FlowTimeout=60 "ExampleApi=${EXAMPLE_API:-http-api}")
	[[ -z $events ]] || params+=("StreamEventsApiId=$events")
	# shellcheck disable=SC2206 # split on purpose: one override per word
	params+=(${STACK_PARAMETERS:-})
	# sam refuses an empty value; the parameter's default is empty.
	[[ -z $base ]] || params+=("WebhookBaseUrl=$base")
	# SAM looks for its config beside the template unless told.
	scripts/sam.sh deploy --config-file "$root/samconfig.toml" --config-env local --stack-name "$stack" \
		--template-file "$build/template.yaml" --parameter-overrides "${params[@]}" >&2
}

# webhookBase is the WebhookBaseUrl a stack with these outputs needs:
# the local form of its Function URL, or nothing if that URL works as it is.
webhookBase() {
	local url
	url=$(output WebhookUrl "$1")
	[[ -z $url || $(localURL "$url") == "$url" ]] || localURL "$url"
}

# gate replays the runs in flight in the stack's World against the code
# about to be deployed (examples/gate), opening sealed runs with the
# stack's payload key: a run the new code would break stops the deploy
# before anything changed. A new stack has no runs.
gate() {
	local stack=$1 out
	out=$(outputs "$stack")
	if [[ -z $(output TableName "$out") ]]; then
		echo "gate: stack $stack is new, no run in flight to replay" >&2
		return
	fi
	echo "gate: replaying the runs in flight of stack $stack on this build" >&2
	WORKFLOW_TABLE=$(output TableName "$out") WORKFLOW_QUEUE_URL=$(output QueueUrl "$out") \
		WORKFLOW_BUCKET=$(output BucketName "$out") WORKFLOW_PAYLOAD_KMS_KEY=$(output PayloadKeyArn "$out") \
		go run ./examples/gate >&2
}

deploy() {
	local stack=$1 base want events
	gate "$stack"
	# A build directory of the stack's own: a build for AWS in .aws-sam/build
	# (arm64, say) is left alone, and stacks can be deployed side by side.
	local build=.aws-sam/local/$stack
	LAMBDA_ARCH=$arch scripts/sam.sh build --config-env local --build-dir "$build" \
		--parameter-overrides "Architecture=$arch" >&2
	# Workflows build webhook URLs on WebhookBaseUrl. A Function URL's ID is
	# known only once it exists, so a new stack may need a second deploy.
	events=$(eventAPI "$stack")
	base=$(webhookBase "$(outputs "$stack")")
	samDeploy "$stack" "$base" "$build" "$events"
	want=$(webhookBase "$(outputs "$stack")")
	if [[ $want != "$base" ]]; then
		samDeploy "$stack" "$want" "$build" "$events"
	fi
	while IFS='=' read -r key value; do
		echo "$key=$(localURL "$value")"
	done <<<"$(outputs "$stack")"
}

up() {
	local stack=${STACK_NAME:-workflow-local} out api token
	if [[ -z $endpoint_given ]]; then
		scripts/emulator.sh start
	elif ! curl -s -o /dev/null --max-time 5 "$AWS_ENDPOINT_URL"; then
		echo "no emulator answers on $AWS_ENDPOINT_URL (see localstack/README.md)" >&2
		exit 1
	fi
	out=$(deploy "$stack")
	api=$(output ApiUrl "$out")
	printf '\nStack %s is up on %s:\n%s\n' "$stack" "$AWS_ENDPOINT_URL" "$out"
	cat <<EOF

Inspect its runs (sealed: the CLI needs the payload key to show their data, docs/CLI.md):
  WORKFLOW_TABLE=$(output TableName "$out") WORKFLOW_QUEUE_URL=$(output QueueUrl "$out") \\
  WORKFLOW_BUCKET=$(output BucketName "$out") WORKFLOW_PAYLOAD_KMS_KEY=$(output PayloadKeyArn "$out") \\
  AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL AWS_REGION=$AWS_REGION AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \\
  go run ./cmd/workflow inspect runs --world aws
EOF
	if [[ -z $api ]]; then
		echo "No example API (ExampleApi=none): start runs with a client on this World (docs/AWS.md)."
		return
	fi
	token=$(secretValue "$(output ApiTokenSecret "$out")")
	cat <<EOF

Try it (docs/AWS.md explains each call):
  curl -X POST '$api/orders' -H 'Authorization: Bearer $token' -H 'Content-Type: application/json' \\
       -d '{"id": "o1", "items": [{"sku": "tea", "quantity": 2, "unitCents": 450}]}'
  curl '$api/orders/o1' -H 'Authorization: Bearer $token'     # .webhook is the order's webhook URL
  WEBHOOK=...    # the .webhook of the reply above
  curl -N -X POST "\$WEBHOOK" -H 'Content-Type: application/json' -d '{"accept": true, "name": "Ada"}'
  curl -X POST '$api/orders/o1/approval' -H 'Authorization: Bearer $token' -H 'Content-Type: application/json' \\
       -d '{"approve": true, "approver": "Grace"}'

The flight agent (examples/flight/README.md; its model is MiniStack's mock Bedrock, which answers
with text and calls no tools):
  curl --aws-sigv4 aws:amz:$AWS_REGION:lambda --user test:test -H 'Content-Type: application/json' \\
       -H 'Accept: application/x-ndjson' -d '{"messages": [{"role": "user", "text": "Hello!"}]}' \\
       '$(output FlightUrl "$out")flight/sessions'
EOF
}

case ${1:-up} in
up) up ;;
deploy)
	[[ -n ${2:-} ]] || {
		echo "usage: $0 deploy STACK_NAME" >&2
		exit 2
	}
	deploy "$2"
	;;
delete-events)
	[[ -n ${2:-} ]] || {
		echo "usage: $0 delete-events STACK_NAME" >&2
		exit 2
	}
	deleteEventAPI "$2"
	;;
*)
	echo "usage: $0 [up | deploy STACK_NAME | delete-events STACK_NAME]" >&2
	exit 2
	;;
esac
