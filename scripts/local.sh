#!/usr/bin/env bash
# Runs the AWS stacks on a local emulator: template.yaml (the World, the
# flow and webhook functions) and the examples' stack beside it
# (examples/aws/template.yaml: the order API and the flight agent).
#
#   scripts/local.sh              `make local`: start MiniStack (unless
#                                 AWS_ENDPOINT_URL names a running emulator,
#                                 e.g. LocalStack), build and deploy both
#                                 stacks, print the URLs to call; what the
#                                 tools print goes to a log file it names
#   scripts/local.sh deploy NAME  build (into .aws-sam/local/NAME) and deploy
#                                 template.yaml as stack NAME to the running
#                                 emulator, its flow function FLOW_PKG of
#                                 the module in FLOW_DIR (the stack's
#                                 default: functions/flow); print its
#                                 outputs as Key=Value lines on stdout (the
#                                 tests read them); the stack's Event API
#                                 (stream push) is made first
#   scripts/local.sh deploy-examples NAME
#                                 the same with the examples' flow function
#                                 (after the examples' deploy gate), then
#                                 the examples' stack as NAME-examples on
#                                 its outputs; print both stacks' outputs
#   scripts/local.sh delete-events NAME
#                                 delete stack NAME's Event API, which the
#                                 stack does not own
#
# Environment: AWS_ENDPOINT_URL (default http://127.0.0.1:4566, MiniStack),
# STACK_NAME for the default command (default workflow-local), EXAMPLE_API
# (the examples' ExampleApi: http-api by default, function-url for
# LocalStack, see localstack/README.md), STACK_PARAMETERS (more Key=Value
# parameter overrides of template.yaml, space-separated, e.g.
# ScheduleAfterSeconds=5), FLIGHT_BEDROCK_ENDPOINT (where the flight
# agent's flow function calls Bedrock; default the emulator's).
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
# examples' ApiUrl has none). Other URLs (LocalStack's resolve as they
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

# progress tells the person running the script what it is doing: on
# stderr, or where `make local` points fd 3.
exec 3>&2
progress() { echo "$*" >&3; }

# outputs prints the stack's outputs as Key=Value lines, nothing if the
# stack does not exist (sam then prints no JSON at all).
outputs() {
	local json
	json=$(scripts/sam.sh list stack-outputs --stack-name "$1" --output json 2>/dev/null) || return 0
	[[ -n $json ]] || return 0
	python3 -c 'import json, sys
for o in json.load(sys.stdin): print(o["OutputKey"] + "=" + o["OutputValue"])' <<<"$json"
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

# samDeploy deploys the build in $2 of stack $1's template, with the
# parameter overrides that follow.
samDeploy() {
	local stack=$1 build=$2
	shift 2
	# SAM looks for its config beside the template unless told.
	scripts/sam.sh deploy --config-file "$root/samconfig.toml" --config-env local --stack-name "$stack" \
		--template-file "$build/template.yaml" --parameter-overrides "$@" >&2
}

# worldParameters prints template.yaml's parameters, one a line, for
# webhook base $1 and Event API $2.
worldParameters() {
	local params=("Architecture=$arch" FlowTimeout=60)
	[[ -z $2 ]] || params+=("StreamEventsApiId=$2")
	[[ -z ${FLOW_SETTINGS:-} ]] || params+=("FlowSettings=$FLOW_SETTINGS")
	# shellcheck disable=SC2206 # split on purpose: one override per word
	params+=(${STACK_PARAMETERS:-})
	# sam refuses an empty value; the parameter's default is empty.
	[[ -z $1 ]] || params+=("WebhookBaseUrl=$1")
	printf '%s\n' "${params[@]}"
}

# webhookBase is the WebhookBaseUrl a stack with these outputs needs:
# the local form of its Function URL, or nothing if that URL works as it is.
webhookBase() {
	local url
	url=$(output WebhookUrl "$1")
	[[ -z $url || $(localURL "$url") == "$url" ]] || localURL "$url"
}

# gate replays the runs in flight in the stack's World against the
# examples' code about to be deployed (examples/gate), opening sealed runs
# with the stack's payload key: a run the new code would break stops the
# deploy before anything changed. A new stack has no runs.
gate() {
	local stack=$1 out
	out=$(outputs "$stack")
	if [[ -z $(output TableName "$out") ]]; then
		echo "gate: stack $stack is new, no run in flight to replay" >&2
		return
	fi
	progress "Replaying the runs in flight of stack $stack on this build (the deploy gate)"
	WORKFLOW_TABLE=$(output TableName "$out") WORKFLOW_QUEUE_URL=$(output QueueUrl "$out") \
		WORKFLOW_BUCKET=$(output BucketName "$out") WORKFLOW_PAYLOAD_KMS_KEY=$(output PayloadKeyArn "$out") \
		go -C examples run ./gate >&2
}

# deployWorld builds template.yaml (its flow function FLOW_PKG in FLOW_DIR,
# which make passes on to functions/lambda.mk) and deploys it as stack $1;
# it prints the stack's outputs as the emulator reports them.
deployWorld() {
	local stack=$1 base want events params
	# A build directory of the stack's own: a build for AWS in .aws-sam/build
	# (arm64, say) is left alone, and stacks can be deployed side by side.
	local build=.aws-sam/local/$stack
	progress "Building template.yaml's functions for stack $stack"
	LAMBDA_ARCH=$arch scripts/sam.sh build --config-env local --build-dir "$build" \
		--parameter-overrides "Architecture=$arch" >&2
	# Workflows build webhook URLs on WebhookBaseUrl. A Function URL's ID is
	# known only once it exists, so a new stack may need a second deploy.
	events=$(eventAPI "$stack")
	base=$(webhookBase "$(outputs "$stack")")
	progress "Deploying stack $stack"
	mapfile -t params < <(worldParameters "$base" "$events")
	samDeploy "$stack" "$build" "${params[@]}"
	want=$(webhookBase "$(outputs "$stack")")
	if [[ $want != "$base" ]]; then
		progress "Deploying stack $stack again, with its webhook URL"
		mapfile -t params < <(worldParameters "$want" "$events")
		samDeploy "$stack" "$build" "${params[@]}"
	fi
	outputs "$stack"
}

# deployExamples deploys stack $1 of template.yaml with the examples' flow
# function, then the examples' stack beside it as $1-examples on its
# outputs; it prints both stacks' outputs.
deployExamples() {
	local stack=$1 world examples=$1-examples build=.aws-sam/local/$1-examples settings events key
	gate "$stack"
	# The flight agent's model: the examples' stack grants the flow function
	# this one (its FlightModelId's default), the flow function reads it
	# from FlowSettings (examples/aws/flow).
	settings="model=amazon.nova-lite-v1:0${FLIGHT_BEDROCK_ENDPOINT:+&bedrock-endpoint=$FLIGHT_BEDROCK_ENDPOINT}"
	world=$(FLOW_DIR=examples FLOW_PKG=./aws/flow FLOW_SETTINGS=$settings deployWorld "$stack")
	progress "Building the examples' functions for stack $examples"
	LAMBDA_ARCH=$arch scripts/sam.sh build --config-file "$root/samconfig.toml" --config-env local \
		--template-file examples/aws/template.yaml --build-dir "$build" --parameter-overrides "Architecture=$arch" >&2
	local params=("Architecture=$arch" "ExampleApi=${EXAMPLE_API:-http-api}")
	for key in TableName TableArn QueueUrl QueueArn BucketName BucketArn PayloadKeyArn FlowFunctionRoleName; do
		params+=("$key=$(output "$key" "$world")")
	done
	# The stack's Event API, if the emulator made one: the flight function
	# subscribes to run streams' writes.
	events=$(eventAPI "$stack")
	[[ -z $events ]] || params+=("StreamEventsApiId=$events")
	progress "Deploying stack $examples"
	samDeploy "$examples" "$build" "${params[@]}"
	printf '%s\n' "$world"
	outputs "$examples"
}

# localOutputs copies Key=Value lines with their URLs made local.
localOutputs() {
	local key value
	while IFS='=' read -r key value; do
		[[ -z $key ]] || echo "$key=$(localURL "$value")"
	done
}

up() {
	local stack=${STACK_NAME:-workflow-local} out api flight token log start=$SECONDS
	mkdir -p .aws-sam/local
	log=$root/.aws-sam/local/$stack.log
	: >"$log"
	# Progress on the terminal; what the tools print, in the log.
	exec 3>&1
	progress "make local: the tools' output goes to $log"
	if [[ -z $endpoint_given ]]; then
		progress "Starting MiniStack on 127.0.0.1:4566"
		scripts/emulator.sh start >>"$log" 2>&1 || {
			echo "MiniStack did not start; the last lines of $log:" >&2
			tail -n 20 "$log" >&2
			exit 1
		}
	elif ! curl -s -o /dev/null --max-time 5 "$AWS_ENDPOINT_URL"; then
		echo "no emulator answers on $AWS_ENDPOINT_URL (see localstack/README.md)" >&2
		exit 1
	fi
	if ! out=$(deployExamples "$stack" 2>>"$log" | localOutputs); then
		echo "make local failed; the last lines of $log:" >&2
		tail -n 30 "$log" >&2
		exit 1
	fi
	printf '\nThe stacks'"'"' outputs:\n%s\n' "$out" >>"$log"
	api=$(output ApiUrl "$out")
	flight=$(output FlightUrl "$out")
	token=$(secretValue "$(output ApiTokenSecret "$out")" 2>>"$log")
	cat <<EOF

Stacks $stack and $stack-examples are up on $AWS_ENDPOINT_URL, in $((SECONDS - start)) s
(their outputs are at the end of $log).

  Order API     $api
  API token     $token
  Flight agent  $flight
  Webhooks      $(output WebhookUrl "$out")

Place an order, then confirm and approve it (docs/AWS.md explains each call):
  curl -X POST '$api/orders' -H 'Authorization: Bearer $token' -H 'Content-Type: application/json' \\
       -d '{"id": "o1", "items": [{"sku": "tea", "quantity": 2, "unitCents": 450}]}'
  curl '$api/orders/o1' -H 'Authorization: Bearer $token'     # .webhook is the order's webhook URL
  WEBHOOK=...    # the .webhook of the reply above
  curl -N -X POST "\$WEBHOOK" -H 'Content-Type: application/json' -d '{"accept": true, "name": "Ada"}'
  curl -X POST '$api/orders/o1/approval' -H 'Authorization: Bearer $token' -H 'Content-Type: application/json' \\
       -d '{"approve": true, "approver": "Grace"}'

Chat with the flight agent (examples/flight/README.md; MiniStack's mock Bedrock answers with text
and calls no tools):
  curl --aws-sigv4 aws:amz:$AWS_REGION:lambda --user test:test -H 'Content-Type: application/json' \\
       -H 'Accept: application/x-ndjson' -d '{"messages": [{"role": "user", "text": "Hello!"}]}' \\
       '${flight}flight/sessions'

Inspect the runs (sealed: the CLI needs the payload key to show their data, docs/CLI.md):
  WORKFLOW_TABLE=$(output TableName "$out") WORKFLOW_QUEUE_URL=$(output QueueUrl "$out") \\
  WORKFLOW_BUCKET=$(output BucketName "$out") WORKFLOW_PAYLOAD_KMS_KEY=$(output PayloadKeyArn "$out") \\
  AWS_ENDPOINT_URL=$AWS_ENDPOINT_URL AWS_REGION=$AWS_REGION AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \\
  go run ./cmd/workflow inspect runs --world aws

Stop the emulator (its state goes with it): scripts/emulator.sh stop
EOF
}

case ${1:-up} in
up) up ;;
deploy | deploy-examples)
	[[ -n ${2:-} ]] || {
		echo "usage: $0 $1 STACK_NAME" >&2
		exit 2
	}
	if [[ $1 == deploy ]]; then deployWorld "$2"; else deployExamples "$2"; fi | localOutputs
	;;
delete-events)
	[[ -n ${2:-} ]] || {
		echo "usage: $0 delete-events STACK_NAME" >&2
		exit 2
	}
	deleteEventAPI "$2"
	;;
*)
	echo "usage: $0 [up | deploy STACK_NAME | deploy-examples STACK_NAME | delete-events STACK_NAME]" >&2
	exit 2
	;;
esac
