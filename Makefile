# Latchkey: two commands on a fresh Debian 12 machine.
#   make run    install what is missing, build, start the app (sandbox provider by default)
#   make test   install what is missing, build, run every test
.PHONY: run test deps test-deps build bench sandbox clean

SWIFT ?= swift
ARGS ?=

run: deps build
	.build/debug/latchkey $(ARGS)

test: test-deps
	scripts/test.sh

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

build:
	$(SWIFT) build

# The offline provider on its own, on a port of your choice: make sandbox ARGS="--port 8765"
sandbox: deps build
	.build/debug/latchkey-sandbox $(ARGS)

bench: test-deps
	@echo "make bench: the benchmarks arrive with the benchmarks issue." >&2; exit 1

clean:
	rm -rf .build test-output
