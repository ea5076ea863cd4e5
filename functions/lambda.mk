# The build targets of template.yaml's functions (BuildMethod: makefile):
# sam build runs `make build-<LogicalId>` with ARTIFACTS_DIR set. This
# repository's Makefile includes this file; a module of one's own copies
# it as its Makefile (or includes it) and names its flow function's
# package (docs/AWS.md, "Your own workflows"):
#
#   FLOW_PKG=./cmd/flow sam build
#
# Each function is built in the directory of a Go module (go -C), from a
# package of that module or of one it requires: FLOW_DIR and FLOW_PKG,
# WEBHOOK_DIR and WEBHOOK_PKG. The defaults fit a module of one's own that
# requires the SDK's functions module (go get -tool, docs/AWS.md).
#
# sam build does not say which architecture the template asks for:
# LAMBDA_ARCH must match its Architecture parameter.
GO ?= go
LAMBDA_ARCH ?= arm64
LAMBDA_GOARCH = $(if $(filter x86_64,$(LAMBDA_ARCH)),amd64,arm64)
# $(call LAMBDA_BUILD,dir,package) builds a function's bootstrap.
LAMBDA_BUILD = CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_GOARCH) $(GO) -C $(1) build -tags lambda.norpc -trimpath -ldflags=-s -o $(ARTIFACTS_DIR)/bootstrap $(2)

# The flow function holds the workflow code: an application's own. The
# webhook function is the SDK's, named by import path.
FLOW_DIR ?= .
FLOW_PKG ?= ./cmd/flow
WEBHOOK_DIR ?= .
WEBHOOK_PKG ?= github.com/lambdaworkflow/workflow/functions/webhook

.PHONY: build-FlowFunction build-WebhookFunction

build-FlowFunction:
	$(call LAMBDA_BUILD,$(FLOW_DIR),$(FLOW_PKG))

build-WebhookFunction:
	$(call LAMBDA_BUILD,$(WEBHOOK_DIR),$(WEBHOOK_PKG))
