#!/usr/bin/env bash
# `latchkey`, the front (Sources/LatchkeyFront/*.c with Sources/CAgentAnswer), built by the C
# compiler alone into DIRECTORY (a build's bin directory: .build/debug or .build/release):
#   scripts/build-front.sh DIRECTORY
# Not a SwiftPM product: SwiftPM links every executable it makes against the Swift runtime, even a C
# one that calls none of it, and loading libswiftCore.so was half of what `latchkey token` through
# the agent cost (3.2 ms against 1.7 ms, make bench). Built with the toolchain's own clang, the one
# SwiftPM compiles C with, so nothing more need be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/build-front.sh DIRECTORY}
swift=$(command -v swift) || { echo "build-front.sh: the front is built with the Swift toolchain's clang: put its swift on PATH." >&2; exit 1; }
cc=${CC:-$(dirname "$(readlink -f "$swift")")/clang}
mkdir -p "$out"
# Debian's hardening (stack protector, fortified calls, a read-only GOT bound at load), the clone's
# path mapped to "." as for everything else built, and warnings as errors: the front is small enough
# to keep at none.
"$cc" -std=gnu11 -O2 -g -Wall -Wextra -Werror -Wformat-security \
    -fstack-protector-strong -D_FORTIFY_SOURCE=2 -fPIE -pie -Wl,-z,relro,-z,now -Wl,--as-needed -Wl,--build-id \
    "-ffile-prefix-map=$PWD=." \
    -I Sources/CAgentAnswer/include \
    -o "$out/latchkey.new" Sources/LatchkeyFront/main.c Sources/LatchkeyFront/curl.c Sources/LatchkeyFront/child.c Sources/CAgentAnswer/agent_answer.c
mv -f "$out/latchkey.new" "$out/latchkey"
