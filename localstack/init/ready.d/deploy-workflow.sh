#!/usr/bin/env bash
# LocalStack init hook (ready stage): deploys the stacks scripts/local.sh
# built in .aws-sam/local/workflow-local and workflow-local-examples
# (mounted at /workflow/build and /workflow/build-examples), so that a
# restarted LocalStack, which forgets everything, comes back with them:
# template.yaml's stack first, then the examples' beside it on its
# outputs. Without a build it only says how to make one. The example API
# goes behind a Function URL: LocalStack's free image served no API
# Gateway v2 (README.md beside init/).
set -euo pipefail

build=/workflow/build
examples_build=/workflow/build-examples
stack=${WORKFLOW_STACK_NAME:-workflow-local}
if [[ ! -f $build/template.yaml || ! -f $examples_build/template.yaml ]]; then
	echo "workflow: no $build/template.yaml or $examples_build/template.yaml; run EXAMPLE_API=function-url AWS_ENDPOINT_URL=http://localhost:4566 scripts/local.sh on the host"
	exit 0
fi

# The functions run in containers of this machine's architecture.
case $(uname -m) in
aarch64 | arm64) arch=arm64 ;;
*) arch=x86_64 ;;
esac

bucket=workflow-artifacts
awslocal s3 mb "s3://$bucket" >/dev/null 2>&1 || true

# deploy STACK BUILD PARAMETERS...
deploy() {
	local stack=$1 build=$2
	shift 2
	awslocal cloudformation package --template-file "$build/template.yaml" \
		--s3-bucket "$bucket" --output-template-file "/tmp/$stack-packaged.yaml"
	awslocal cloudformation deploy --template-file "/tmp/$stack-packaged.yaml" \
		--stack-name "$stack" --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset \
		--parameter-overrides "$@"
}

# output NAME: one output of the World's stack.
output() {
	awslocal cloudformation describe-stacks --stack-name "$stack" \
		--query "Stacks[0].Outputs[?OutputKey=='$1'].OutputValue" --output text
}

deploy "$stack" "$build" "Architecture=$arch" FlowTimeout=60 FlowSettings=model=amazon.nova-lite-v1:0
params=("Architecture=$arch" ExampleApi=function-url)
for key in TableName TableArn QueueUrl QueueArn BucketName BucketArn PayloadKeyArn FlowFunctionRoleName; do
	params+=("$key=$(output "$key")")
done
deploy "$stack-examples" "$examples_build" "${params[@]}"
for s in "$stack" "$stack-examples"; do
	awslocal cloudformation describe-stacks --stack-name "$s" \
		--query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output text
done
