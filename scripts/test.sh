#!/usr/bin/env bash
# The whole test suite, as CI runs it. Builds everything first: the tests start
# the real latchkey-sandbox and latchkey binaries.
#
# Run as root (CI) or as an ordinary user: then sudo is asked for exactly what needs root, the
# Swift tests named …AsRoot (run again as root, by name) and the debian_package scenario
# (which installs the package and hides the toolchain in a mount namespace). Nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
# DPoP keys in software unless a test names a TPM (swtpm, its own): a machine's own TPM is its
# person's, slower, and not on every machine the suite runs on.
export LATCHKEY_TPM=none
mkdir -p test-output
phases=()
started=$(date +%s)
phase_started=$started
current="lint"
phase() {
    local now
    now=$(date +%s)
    phases+=("$(printf '%-34s %4d s' "$1" $((now - phase_started)))")
    phase_started=$now
    current=${2:-}
}
# The time of each step, printed at the end however the run ends.
report() {
    local status=$?
    [ "$status" -eq 0 ] || phase "$current: FAILED"
    echo "make test took $(($(date +%s) - started)) s:"
    printf '  %s\n' "${phases[@]}"
    return "$status"
}
trap report EXIT

# House rules first: a plain Task on GTK's side, the formatting, the version (scripts/lint.sh says why).
scripts/lint.sh
phase "lint" "build (debug, with tests)"

# No compiler warning in the project's own code: what is compiled is read (a fresh clone compiles
# everything, so CI sees every file). The packages' own warnings are theirs.
build_log=test-output/build.log
swift build --build-tests 2>&1 | tee "$build_log"
scripts/build-front.sh .build/debug  # `latchkey`, the C front: warnings are errors there
# A warning inside a macro's expansion (#expect) names its origin on the next line.
ours="$PWD/(Sources|Tests|Fuzz|Benchmarks)/[^:]+:[0-9]+:[0-9]+"
warnings=$(awk -v ours="^$ours: warning:" -v origin="^.- $ours: note: expanded code originates here" '
    $0 ~ ours { print; next }
    /^macro expansion .*: warning:/ { expansion = $0; next }
    expansion != "" && $0 ~ origin { print substr($0, 4) " (" expansion ")" }
    { expansion = "" }' "$build_log" | sort -u)
if [ -n "$warnings" ]; then
    echo "test: the build warned in the project's own code; mend these:" >&2
    echo "$warnings" >&2
    exit 1
fi
phase "build (debug, with tests)" "swift test"

# A hang must fail the run, not eat CI's whole budget: the suite takes ~30 s.
# On a private Xvfb display: GtkKit's tests make real windows.
timeout --kill-after=10 900 scripts/with-xvfb.sh swift test --skip-build
if [ "$(id -u)" -ne 0 ]; then
    # The tests that need root said they were skipped; they run now, as root, by name.
    echo "test: the tests that need root (…AsRoot), through sudo:"
    timeout --kill-after=10 900 sudo --preserve-env env "PATH=$PATH" scripts/with-xvfb.sh \
        .build/debug/LatchkeyPackageTests.xctest --testing-library swift-testing --filter 'AsRoot\('
fi
phase "swift test" "fuzz"

# The seed corpora through the ordinary build, then each fuzz target for a few
# seconds under libFuzzer and AddressSanitizer (its own build: ~3 min the first time).
for target in redirect token-response provider-file token-file www-authenticate; do
    .build/debug/latchkey-fuzz --target=$target Fuzz/corpus/$target
done
scripts/fuzz.sh smoke 5
phase "fuzz" "end-to-end scenarios"

# The real app under Xvfb, driven through the accessibility bus, scenarios side by side.
Tests/EndToEnd/run.sh
phase "end-to-end scenarios"
