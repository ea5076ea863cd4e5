#!/usr/bin/env bash
# LocalStack init hook (ready stage): deploys the stack scripts/local.sh
# built in .aws-sam/local/workflow-local (mounted at /workflow/build), so
# that a restarted LocalStack, which forgets everything, comes back with
# the stack. Without a build it only says how to make one. The example
# API goes behind a Function URL: LocalStack's free image served no API
# Gateway v2 (README.md beside init/).
set -euo pipefail

build=/workflow/build
stack=${WORKFLOW_STACK_NAME:-workflow-local}
if [[ ! -f $build/template.yaml ]]; then
	echo "workflow: no $build/template.yaml; run EXAMPLE_API=function-url AWS_ENDPOINT_URL=http://localhost:4566 scripts/local.sh on the host"
	exit 0
fi

# The functions run in containers of this machine's architecture.
case $(uname -m) in
aarch64 | arm64) arch=arm64 ;;
*) arch=x86_64 ;;
esac

bucket=workflow-artifacts
awslocal s3 mb "s3://$bucket" >/dev/null 2>&1 || true
awslocal cloudformation package --template-file "$build/template.yaml" \
	--s3-bucket "$bucket" --output-template-file /tmp/workflow-packaged.yaml
awslocal cloudformation deploy --template-file /tmp/workflow-packaged.yaml \
	--stack-name "$stack" --capabilities CAPABILITY_IAM --no-fail-on-empty-changeset \
	--parameter-overrides "Architecture=$arch" FlowTimeout=60 ExampleApi=function-url
awslocal cloudformation describe-stacks --stack-name "$stack" \
	--query 'Stacks[0].Outputs[].[OutputKey,OutputValue]' --output text
