# The build targets of template.yaml's functions (BuildMethod: makefile):
# sam build runs `make build-<LogicalId>` with ARTIFACTS_DIR set. This
# repository's Makefile includes this file; a module of one's own copies
# it as its Makefile (or includes it) and names its flow function's
# package (docs/AWS.md, "Your own workflows"):
#
#   FLOW_PKG=./cmd/flow scripts/sam.sh build
#
# sam build does not say which architecture the template asks for:
# LAMBDA_ARCH must match its Architecture parameter.
GO ?= go
LAMBDA_ARCH ?= arm64
LAMBDA_GOARCH = $(if $(filter x86_64,$(LAMBDA_ARCH)),amd64,arm64)
LAMBDA_BUILD = CGO_ENABLED=0 GOOS=linux GOARCH=$(LAMBDA_GOARCH) $(GO) build -tags lambda.norpc -trimpath -ldflags=-s -o $(ARTIFACTS_DIR)/bootstrap

# The packages the functions are built from. The flow function is the one
# that holds workflow code: an application's own. The webhook function
# and the example API are this module's, named by import path so that the
# same names build in a module that requires it.
FLOW_PKG ?= ./functions/flow
WEBHOOK_PKG ?= github.com/lambdaworkflow/workflow/functions/webhook
API_PKG ?= github.com/lambdaworkflow/workflow/functions/api
FLIGHT_PKG ?= github.com/lambdaworkflow/workflow/functions/flight

.PHONY: build-FlowFunction build-WebhookFunction build-ApiFunction build-FlightFunction

build-FlowFunction:
	$(LAMBDA_BUILD) $(FLOW_PKG)

build-WebhookFunction:
	$(LAMBDA_BUILD) $(WEBHOOK_PKG)

build-ApiFunction:
	$(LAMBDA_BUILD) $(API_PKG)

build-FlightFunction:
	$(LAMBDA_BUILD) $(FLIGHT_PKG)
