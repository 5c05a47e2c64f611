#!/usr/bin/env bash
# The whole test suite, as CI runs it. Builds everything first: the tests start
# the real latchkey-sandbox and latchkey binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p test-output
# House rules first: a plain Task on GTK's side, and the formatting (scripts/lint.sh says why).
scripts/lint.sh
swift build --build-tests
# A hang must fail the run, not eat CI's whole budget: the suite takes ~15 s.
# On a private Xvfb display: GtkKit's tests make real windows.
timeout --kill-after=10 900 scripts/with-xvfb.sh swift test --skip-build
# The seed corpora through the ordinary build, then each fuzz target for a few
# seconds under libFuzzer and AddressSanitizer (its own build: ~3 min the first time).
for target in redirect token-response provider-file token-file www-authenticate; do
    .build/debug/latchkey-fuzz --target=$target Fuzz/corpus/$target
done
scripts/fuzz.sh smoke 5
# The real app under Xvfb, driven through the accessibility bus.
Tests/EndToEnd/run.sh
