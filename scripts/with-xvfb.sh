#!/usr/bin/env bash
# Runs a command on a private Xvfb display (a free display number, chosen by Xvfb).
# -noreset: by default Xvfb resets when its last client leaves, and a client
# connecting during the reset (between two test scenarios) finds no display.
#   scripts/with-xvfb.sh COMMAND [ARG…]
set -euo pipefail
display_file=$(mktemp)
exec 3>"$display_file"
Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp -noreset >"${XVFB_LOG:-/dev/null}" 2>&1 &
xvfb=$!
exec 3>&-
# Wait for Xvfb to be gone: it removes its socket as it exits, and a server
# not yet gone could delete the socket of the next run's server on the same display.
trap 'kill $xvfb 2>/dev/null || true; wait $xvfb 2>/dev/null || true; rm -f "$display_file"' EXIT
for _ in $(seq 100); do [ -s "$display_file" ] && break; sleep 0.1; done
[ -s "$display_file" ] || { echo "Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$(head -n1 "$display_file")"
status=0
"$@" || status=$?
exit $status
