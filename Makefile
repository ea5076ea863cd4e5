# Workflow for Go. `make run` and `make test` are the two commands a fresh
# clone needs; the rest are for working on the project.
GO ?= go
STATICCHECK_VERSION ?= v0.8.2

.PHONY: run test lint emulator bench

run: ## run the checkout example on the embedded World
	$(GO) run ./examples/checkout

test: ## vet and run every test; the AWS World's tests need MiniStack (make emulator)
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

lint: ## gofmt and staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

emulator: ## install and start MiniStack on 127.0.0.1:4566 for the AWS tests
	scripts/emulator.sh start
