# Latchkey: two commands on a fresh Debian 12 machine.
#   make run    install what is missing, build, start the app (sandbox provider by default)
#   make test   install what is missing, build, run every test
.PHONY: run test test-soak soak deps test-deps deb-deps build bench launch-order fuzz sandbox install uninstall deb clean soak-deps bench-deps

SWIFT ?= swift
ARGS ?=
PREFIX ?= $(HOME)/.local
DESTDIR ?=

run: deps build
	.build/debug/latchkey $(ARGS)

test: test-deps
	scripts/test.sh

# Proof that the suite holds: swift test 5 times, 2 more beside a CPU hog, the end-to-end scenarios
# twice (about 15 minutes on 2 cores; not part of make test). Quote its last line when you resolve test work.
test-soak: soak-deps
	scripts/soak-tests.sh

# A month of two-hour tokens in about ten minutes (issue 40 §4): 64 callers of four kinds, the agent
# and the keyring restarted under them; prints what held. SOAK_RENEWALS=20 for a quick look.
soak: bench-deps
	scripts/build-release.sh
	mkdir -p bench-output/baselines
	cc -O2 -shared -fPIC -o bench-output/baselines/cloexec-sockets.so Benchmarks/baselines/cloexec-sockets.c
	scripts/with-xvfb.sh /usr/bin/python3 Benchmarks/month_soak.py

deps:
	@scripts/install-deps.sh run

test-deps:
	@scripts/install-deps.sh test

build:
	$(SWIFT) build
	scripts/build-front.sh .build/debug

# The offline provider on its own, on a port of your choice: make sandbox ARGS="--port 8765"
sandbox: deps build
	.build/debug/latchkey-sandbox $(ARGS)

# Release build against C baselines, alternating pairs; prints a table, writes bench-results.json.
# One part only: make bench ARGS=launch (or sign-in, storm, growth).
bench: bench-deps
	Benchmarks/run.sh $(ARGS)

# Which functions a launch runs (callgrind), for the linker to place together: Sources/Latchkey/launch-order.txt.
launch-order: bench-deps
	scripts/launch-order.sh
	scripts/agent-order.sh

# libFuzzer over redirects, token answers, provider and token files: 1,000,000 inputs each.
# RUNS=… for another count; make test runs each for 5 s.
fuzz: test-deps
	scripts/fuzz.sh run $(RUNS)

# The release build into PREFIX (default ~/.local; DESTDIR honoured): the app in
# bin, its sign-in library and sandbox in lib/latchkey, presets, menu entry, icon,
# AppStream metadata. make uninstall removes exactly those files.
install: deps
	scripts/build-release.sh
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh install

uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh uninstall

# latchkey_<version>_amd64.deb from a release build: no Swift toolchain needed where it is installed
# (its runtime libraries are in /usr/lib/latchkey), man pages, completions. sudo apt install ./latchkey_….deb
deb: deb-deps
	scripts/deb.sh

deb-deps:
	@scripts/install-deps.sh deb

bench-deps:
	@scripts/install-deps.sh bench

soak-deps:
	@scripts/install-deps.sh soak

clean:
	rm -rf .build .build-fuzz test-output bench-output bench-results.json
