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

run() {  # run KIND [ARGUMENT…]: one launch under callgrind in a fresh home, signed out (KIND out) or in
    local home="$work/home-$1"
    mkdir -p "$home/.local/state/latchkey" "$home/.config/latchkey" "$home/run"
    chmod 700 "$home/run"
    if [[ $1 != out ]]; then
        local now
        now=$(date +%s)
        printf '{"access_token": "order", "refresh_token": "order", "token_type": "Bearer", "expires_at": %d, "received_at": %d, "issued_by": "latchkey-desktop at http://127.0.0.1/token"}\n' \
            $((now + 86400)) "$now" >"$home/.local/state/latchkey/sandbox.json"
        # And the list of its accounts, as the window writes it: a launch after a sign-in reads it.
        mkdir -m 700 "$home/.local/state/latchkey/accounts"
        (umask 077 && printf '{"accounts": [{"key": "sandbox"}]}\n' >"$home/.local/state/latchkey/accounts/sandbox.accounts.json")
    fi
    # make bench's D-Bus session (the end-to-end tests'), which starts no keyring. One that can keeps a
    # signed-in launch waiting for the keyring's password prompt, and the list then lacks what a
    # signed-in window runs once it shows (its token checked, its accounts read).
    local session
    mapfile -t session < <(/usr/bin/python3 -c 'import sys; sys.path.insert(0, "Tests/EndToEnd"); import harness
home = harness.Home(sys.argv[2], under=sys.argv[1]); print(harness.session_config(home)); print(home.runtime)' "$work" "session-$1")
    runtimes+=("${session[1]}")
    HOME=$home XDG_CONFIG_HOME=$home/.config XDG_STATE_HOME=$home/.local/state XDG_CACHE_HOME=$home/.cache \
        XDG_DATA_HOME=$home/.local/share XDG_RUNTIME_DIR=$home/run \
        scripts/with-xvfb.sh dbus-run-session --config-file="${session[0]}" -- bash -c '
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
