#!/usr/bin/env bash
# The whole test suite, as CI runs it. Builds everything first: the tests start
# the real latchkey-sandbox and latchkey binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-output
swift build --build-tests
swift test --skip-build
# The real app under Xvfb, driven through the accessibility bus.
Tests/EndToEnd/run.sh
