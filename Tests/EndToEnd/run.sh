#!/usr/bin/env bash
# The end-to-end scenarios under a private Xvfb display.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test-output/e2e
exec 3>&1
display_file=$(mktemp)
Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp 3>"$display_file" >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true; rm -f "$display_file"' EXIT
for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
export DISPLAY=":$(cat "$display_file")"
/usr/bin/python3 Tests/EndToEnd/e2e.py "$@"
