#!/usr/bin/env bash
# Runs a command on a private Xvfb display (a free display number, chosen by Xvfb).
#   scripts/with-xvfb.sh COMMAND [ARG…]
set -euo pipefail
display_file=$(mktemp)
exec 3>"$display_file"
Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp >"${XVFB_LOG:-/dev/null}" 2>&1 &
xvfb=$!
exec 3>&-
trap 'kill $xvfb 2>/dev/null || true; rm -f "$display_file"' EXIT
for _ in $(seq 100); do [ -s "$display_file" ] && break; sleep 0.1; done
[ -s "$display_file" ] || { echo "Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$(head -n1 "$display_file")"
"$@"
