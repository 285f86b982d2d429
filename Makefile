# One-line wrappers; plain `go generate ./... && go test ./...` works without make.
.PHONY: help generate test check build run bench reliability fuzz dist clients-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' Makefile | sed 's/:.*## /\t/'

generate: ## regenerate gen/, gen/admin/ and SUPPORT.md from openapi.yaml and admin.yaml
	go generate ./...

test: ## run the test suite (what CI runs)
	go test ./...

check: ## drift and lint gate (gen/, SUPPORT.md, go.mod, gofmt, vet, import rule, no ../ references, doc links); `make test` runs the tests
	scripts/check

build: ## build the static binary into ./bin (no cgo: nothing here needs it, and it saves ~2 MB of RSS)
	CGO_ENABLED=0 go build -o bin/hermes-emulator ./cmd/hermes-emulator

run: build ## build, then exec the emulator on 127.0.0.1:8827 (in-memory; ARGS="--db x.db" adds flags): the process is the server, Ctrl-C or SIGTERM stops it
	exec bin/hermes-emulator serve $(ARGS)

bench: ## benchmark harness (scripts/bench)
	scripts/bench

reliability: ## the long reliability suite (real processes, kill -9), then every fuzz target for 10 minutes
	go test -tags reliability -count=1 -v -timeout 60m ./reliability/... && scripts/fuzz

fuzz: ## every fuzz target for FUZZTIME (default 10m; FUZZTIME=30s for a short mode)
	scripts/fuzz

dist: ## release binaries for linux/darwin/windows × amd64/arm64 + SHA256SUMS into dist/ (scripts/dist)
	scripts/dist

clients-test: ## build the binary and run the Node and Python client suites against it (scripts/clients-test)
	scripts/clients-test
