#!/usr/bin/env bash
# make bench: release build, C baselines, then bench.py under Xvfb (it makes its own D-Bus session).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-release.sh
mkdir -p bench-output/baselines
cc -O2 -o bench-output/baselines/gtk-window Benchmarks/baselines/gtk-window.c $(pkg-config --cflags --libs gtk+-3.0)
cc -O2 -o bench-output/baselines/gtk-window-plain Benchmarks/baselines/gtk-window-plain.c $(pkg-config --cflags --libs gtk+-3.0)
cc -O2 -o bench-output/baselines/webkit-page Benchmarks/baselines/webkit-page.c $(pkg-config --cflags --libs webkit2gtk-4.1)
cc -O2 -o bench-output/baselines/agent-ask Benchmarks/baselines/agent-ask.c
cc -O2 -o bench-output/baselines/agent-caller Benchmarks/baselines/agent-caller.c
cc -O2 -shared -fPIC -o bench-output/baselines/cloexec-sockets.so Benchmarks/baselines/cloexec-sockets.c

exec scripts/with-xvfb.sh /usr/bin/python3 Benchmarks/bench.py "$@"
