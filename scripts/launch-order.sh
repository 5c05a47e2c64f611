#!/usr/bin/env bash
# make launch-order: writes Sources/Latchkey/launch-order.txt, the functions of the app that a
# launch runs (signed out, signed in, and signed in with options, which go through the command-line
# parser that `latchkey` alone skips), which the linker places side by side
# (--symbol-ordering-file in Package.swift). The kernel maps an executable's code 64 KiB around
# each page a launch touches; with those functions together, a launch touches a few such
# windows instead of a hundred (make bench: idle peak, see docs/performance.md).
#
# Runs the release build under callgrind (valgrind), on a private Xvfb display and D-Bus
# session, for a fixed time each: callgrind runs the app ~50 times slower, and the list
# needs only to hold what the window's start runs. Names that no longer exist are ignored by
# the linker, so a stale list costs memory, never correctness: rerun after large changes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${LAUNCH_ORDER_SECONDS:-30}
scripts/build-release.sh latchkey-app
work=$(mktemp -d)
runtimes=()
trap 'rm -rf "$work" "${runtimes[@]}"; rm -f .build/release/latchkey-callgrind' EXIT
# Valgrind 3.19 cannot read the toolchain's DWARF 5; symbols are all it needs. Beside the
# real one, so that it finds its data, sandbox and libraries as the real one would.
objcopy --strip-debug .build/release/latchkey-app .build/release/latchkey-callgrind

run() {  # run KIND [ARGUMENT…]: one launch under callgrind, signed out (KIND out) or in
    # make bench's own home (bench.py's signed_in_home) and D-Bus session (the end-to-end tests'),
    # which starts no keyring. One that can keeps a signed-in launch waiting for the keyring's
    # password prompt, and the list then lacks what a signed-in window runs once it shows (its
    # token checked, its accounts read). Lines: the session's configuration, its runtime folder,
    # then the home's environment.
    local setting
    mapfile -t setting < <(/usr/bin/python3 -c 'import sys; sys.path.insert(0, "Benchmarks"); import bench, harness
home = bench.signed_in_home(sys.argv[2], tokens=sys.argv[3] != "out", under=sys.argv[1])
print(harness.session_config(home)); print(home.runtime)
for name, value in home.env.items(): print(f"{name}={value}")' "$work" "order-$1" "$1")
    runtimes+=("${setting[1]}")
    env "${setting[@]:2}" scripts/with-xvfb.sh dbus-run-session --config-file="${setting[0]}" -- bash -c '
            valgrind --tool=callgrind --demangle=no --callgrind-out-file="$1" .build/release/latchkey-callgrind "${@:3}" >"$1.log" 2>&1 &
            app=$!
            sleep "$2"
            kill -TERM $app
            wait $app || true' _ "$work/callgrind-$1.out" "$seconds" "${@:2}"
    [[ -s "$work/callgrind-$1.out" ]] || { cat "$work/callgrind-$1.out.log" >&2; echo "callgrind wrote nothing" >&2; exit 1; }
}
run out
run in
run options --provider sandbox
/usr/bin/python3 scripts/launch-order.py latchkey-callgrind "$work/callgrind-out.out" "$work/callgrind-in.out" "$work/callgrind-options.out" \
    >Sources/Latchkey/launch-order.txt
# The list is no input SwiftPM tracks: touch a source of the app, so that the next build links anew.
touch Sources/Latchkey/main.swift
echo "Sources/Latchkey/launch-order.txt: $(wc -l <Sources/Latchkey/launch-order.txt) functions, placed by the next release build."
