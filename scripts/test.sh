#!/usr/bin/env bash
# The whole test suite, as CI runs it. Builds everything first: the tests start
# the real latchkey-sandbox (and later the real latchkey) binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-output
swift build --build-tests
swift test --skip-build "$@"
