#!/usr/bin/env bash
# make bench: release build, C baselines, then bench.py under Xvfb in a private D-Bus session.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product latchkey
swift build -c release --product latchkey-sandbox
swift build -c release --product latchkey-refresh-storm
mkdir -p bench-output/baselines
cc -O2 -o bench-output/baselines/gtk-window Benchmarks/baselines/gtk-window.c $(pkg-config --cflags --libs gtk+-3.0)
cc -O2 -o bench-output/baselines/webkit-page Benchmarks/baselines/webkit-page.c $(pkg-config --cflags --libs webkit2gtk-4.1)

display_file=$(mktemp)
Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp 3>"$display_file" >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true; rm -f "$display_file"' EXIT
for _ in $(seq 50); do [ -s "$display_file" ] && break; sleep 0.1; done
export DISPLAY=":$(cat "$display_file")"

# The accessibility bus and nothing else can be activated, as in the end-to-end tests.
runtime=$(mktemp -d)
mkdir -p "$runtime/services"
cp /usr/share/dbus-1/services/org.a11y.*.service "$runtime/services/"
cat > "$runtime/session.conf" <<CONF
<busconfig>
  <type>session</type>
  <listen>unix:dir=$runtime</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$runtime/services</servicedir>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-run-session --config-file="$runtime/session.conf" -- /usr/bin/python3 Benchmarks/bench.py "$@"
