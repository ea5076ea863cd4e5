# Workflow for Go. `make run` and `make test` are the two commands a fresh
# clone needs; the rest are for working on the project.
GO ?= go
GOLANGCI_LINT_VERSION ?= v2.15.0
# go run caches the linter it builds in the Go build cache: the first lint
# on a machine builds it (a few minutes), later ones start at once.
# --allow-parallel-runners: without it a second lint on the machine (another
# checkout) fails at once, "parallel golangci-lint is running".
GOLANGCI_LINT_RUN = $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) run --allow-parallel-runners
# The modules of this repository: the SDK, and in modules of their own,
# so that their dependencies reach a user's module graph only when the
# user asks for them: the OpenTelemetry SDK's set-up (otel: gRPC,
# protobuf), the agents (agent: JSON Schema, Bedrock) and the OpenAI and
# Anthropic model providers, the Lambda functions (which set up the
# OpenTelemetry SDK), the examples, the AWS stack tests' rigs, the
# benchmarks and the determinism linter.
MODULES = . otel agent agent/openai agent/anthropic functions examples internal/testrig/awsstack bench bench/peers workflowcheck

.PHONY: run flight test lint emulator bench

run: ## run the checkout example on the embedded World
	$(GO) -C examples run ./checkout

flight: ## the flight-booking agent in a chat session over HTTP, on the embedded World (the day's price watch cut to 2 s)
	$(GO) -C examples run ./flight/cmd/flight -watch 2s

test: ## vet and run every test, the SDK's module beside the others (scripts/test-modules.sh); the AWS World's tests need MiniStack (make emulator)
	for m in $(MODULES); do $(GO) -C $$m vet ./... || exit 1; done
	scripts/test-modules.sh $(GO) $(MODULES)

lint: ## gofmt, the core builds for Windows, public citations, checkov over the templates (scripts/checkov.yaml), go mod tidy and golangci-lint (scripts/golangci.yml) in every module, the determinism linter over the examples
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	GOOS=windows $(GO) build . ./world/... ./internal/...
	scripts/check-citations.sh
	scripts/checkov.sh
	@for m in $(MODULES); do \
		echo "== $$m"; \
		(cd $$m && $(GO) mod tidy -diff) || { echo "go mod tidy: $$m/go.mod or go.sum is not tidy (run go mod tidy there)"; exit 1; }; \
		(cd $$m && $(GOLANGCI_LINT_RUN) --config "$(CURDIR)/scripts/golangci.yml" ./...) || exit 1; \
	done
	$(GO) -C workflowcheck build -o $(CURDIR)/bin/workflowcheck ./cmd/workflowcheck
	cd examples && $(CURDIR)/bin/workflowcheck ./...

emulator: ## install and start MiniStack on 127.0.0.1:4566 for the AWS tests
	scripts/emulator.sh start

bench: ## the Workflow SDK's benchmarks (useworkflow.dev/docs/performance) on every World and on DBOS Transact Go and go-workflows, side by side, quick (FULL=1: its methodology, an hour or more; HISTORY=1: only the resume after a long history; WORLDS=local,memory to pick)
	$(GO) -C bench/peers run ./cmd/bench -out $(CURDIR)/bench/results $(if $(FULL),-full) $(if $(HISTORY),-history) $(if $(WORLDS),-worlds $(WORLDS))
	$(GO) -C bench test -run '^$$' -bench . -benchtime 10x ./codec/  # payload codecs: bytes and write units per step

.PHONY: local

local: ## MiniStack with the SAM stacks deployed to it (template.yaml and the examples', for the host's architecture); prints its URLs
	scripts/local.sh

# AWS Lambda: the build targets sam build runs for template.yaml
# (functions/lambda.mk), in the functions module: the stack's default flow
# function unless FLOW_DIR and FLOW_PKG name another (scripts/local.sh
# names the examples').
FLOW_DIR ?= functions
FLOW_PKG ?= ./flow
WEBHOOK_DIR ?= functions
WEBHOOK_PKG ?= ./webhook
include $(dir $(lastword $(MAKEFILE_LIST)))functions/lambda.mk
