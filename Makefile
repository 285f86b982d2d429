# One-line wrappers; plain `go generate ./... && go test ./...` works without make.
.PHONY: help generate test check build run bench reliability

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' Makefile | sed 's/:.*## /\t/'

generate: ## regenerate gen/ and SUPPORT.md from openapi.yaml
	go generate ./...

test: ## run the test suite (what CI runs)
	go test ./...

check: ## drift check (gen/, SUPPORT.md, go.mod), gofmt, vet, import rule, tests
	scripts/check && go test ./...

build: ## build the binary into ./bin
	go build -o bin/hermes-emulator ./cmd/hermes-emulator

run: ## start the emulator on 127.0.0.1:8827 (in-memory)
	go run ./cmd/hermes-emulator serve

bench: ## benchmark harness (scripts/bench)
	scripts/bench

reliability: ## the long reliability suite (real processes, kill -9, fuzzing)
	go test -tags reliability -count=1 -v -timeout 60m ./reliability/...
