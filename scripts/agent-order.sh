#!/usr/bin/env bash
# make launch-order (its second half): writes Sources/LatchkeyAgent/serving-order.txt, the functions
# of the agent that its start and serving tokens run, which the linker places side by side
# (--symbol-ordering-file in Package.swift), as launch-order.sh does for the app. The kernel maps an
# executable's code 64 KiB around each page touched: spread over the agent's 13 MiB of code, what
# serving touches kept ~10 MiB of it resident (make bench ARGS=token: the agent's idle memory).
#
# Runs the release agent under callgrind in a fresh home with a stored sign-in and no display,
# and asks it for tokens over its socket the ways programs do: Benchmarks/baselines/agent-ask.c
# (plain JSON, allowed beforehand), Debian's oidc-token (oidc-agent's encrypted exchange), and a
# program nobody allowed (refused: nobody to ask). Names that no longer exist are ignored by the
# linker, so a stale list costs memory, never correctness: rerun after large changes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build-release.sh latchkey-agent latchkey-app
scripts/build-front.sh .build/release
work=$(mktemp -d)
agent=""
trap 'if [ -n "$agent" ]; then kill "$agent" 2>/dev/null || true; fi; rm -rf "$work"; rm -f .build/release/latchkey-agent-callgrind' EXIT
# Valgrind 3.19 cannot read the toolchain's DWARF 5; symbols are all it needs. Beside the real one,
# so that it finds the app (and the front) as the real one would.
objcopy --strip-debug .build/release/latchkey-agent .build/release/latchkey-agent-callgrind
cc -O2 -o "$work/agent-ask" Benchmarks/baselines/agent-ask.c

home=$work/home
mkdir -p "$home/.local/state/latchkey" "$home/.config/latchkey" "$home/run"
chmod 700 "$home/run" "$home/.local/state/latchkey"
/usr/bin/python3 - "$home" <<'PY'
import hashlib, json, os, sys, time
home = sys.argv[1]
preset = json.load(open("data/providers/sandbox.json"))
preset.update({"id": "mine", "display_name": "My sandbox", "issuer": "http://127.0.0.1:9"})
json.dump(preset, open(f"{home}/.config/latchkey/mine.json", "w"))
now = int(time.time())
json.dump({"access_token": "order", "refresh_token": "order", "token_type": "Bearer", "expires_at": now + 86400,
           "received_at": now, "issued_by": "latchkey-desktop at http://127.0.0.1/token"},
          open(f"{home}/.local/state/latchkey/mine.json", "w"))
# The account list a sign-in leaves: a program is allowed for the person signed in.
os.makedirs(f"{home}/.local/state/latchkey/accounts", mode=0o700)
json.dump({"accounts": [{"key": "mine", "subject": hashlib.sha256(b"order").hexdigest(), "name": "Ada"}]},
          open(f"{home}/.local/state/latchkey/accounts/mine.accounts.json", "w"))
PY
chmod 600 "$home/.local/state/latchkey/mine.json"
export HOME=$home XDG_CONFIG_HOME=$home/.config XDG_STATE_HOME=$home/.local/state XDG_CACHE_HOME=$home/.cache \
    XDG_DATA_HOME=$home/.local/share XDG_RUNTIME_DIR=$home/run
unset DISPLAY WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS
socket=$home/run/latchkey/agent.sock
.build/release/latchkey agent allow "$work/agent-ask" mine >/dev/null
.build/release/latchkey agent allow /usr/bin/oidc-token mine >/dev/null
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
    .build/release/latchkey-agent-callgrind --log-level error >"$work/callgrind.log" 2>&1 &
agent=$!
for _ in $(seq 1500); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || { cat "$work/callgrind.log" >&2; echo "the agent did not serve its socket under callgrind" >&2; exit 1; }
for _ in $(seq 10); do
    "$work/agent-ask" mine >/dev/null
    OIDC_SOCK=$socket oidc-token mine >/dev/null 2>&1 || true
    OIDC_SOCK=$socket /usr/bin/python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"{\"request\":\"access_token\",\"account\":\"mine\"}"); s.recv(4096)' "$socket" || true
done
kill -TERM $agent
wait $agent || true
[[ -s "$work/callgrind.out" ]] || { cat "$work/callgrind.log" >&2; echo "callgrind wrote nothing" >&2; exit 1; }
/usr/bin/python3 scripts/launch-order.py latchkey-agent-callgrind "$work/callgrind.out" >Sources/LatchkeyAgent/serving-order.txt
# The list is no input SwiftPM tracks: touch a source of the agent, so that the next build links anew.
touch Sources/LatchkeyAgent/main.swift
echo "Sources/LatchkeyAgent/serving-order.txt: $(wc -l <Sources/LatchkeyAgent/serving-order.txt) functions, placed by the next release build."
