#!/usr/bin/env bash
# make test-soak: proof that the suite holds on a loaded machine, not only that it passed once.
#   swift test, 5 full runs in a row, then 2 more beside a CPU hog (stress-ng --cpu <cores>);
#   then the end-to-end scenarios, twice in a row.
# Not part of make test (about 15 minutes on 2 cores). Run it before resolving anything that
# touches the tests or their support, and quote its last line.
#   scripts/soak-tests.sh [RUNS [HOGGED [E2E]]]   (defaults 5 2 2)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
hogged=${2:-2}
e2e_runs=${3:-2}
mkdir -p test-output/soak
log_dir=test-output/soak

swift build --build-tests
scripts/build-front.sh .build/debug

passed=0
failed=0
results=()
note() {
    results+=("$1")
    echo "soak: $1"
}

# One run of COMMAND…, named NAME in the summary; its log in test-output/soak/NAME.log. SUMMARY
# is the pattern of the line that sums the run up, FAILURES that of the lines shown when it fails.
#   soak_run NAME SUMMARY FAILURES COMMAND…
soak_run() {
    local name=$1 summary_line=$2 failure_lines=$3 log="$log_dir/$1.log" started status=0 summary
    shift 3
    started=$(date +%s)
    "$@" >"$log" 2>&1 || status=$?
    # A run that crashed has no summary line.
    summary=$(grep -E "$summary_line" "$log" | tail -n 1 | sed 's/^[^A-Za-z]*//' || true)
    [ -n "$summary" ] || summary="no summary: it ended early"
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        note "$name: passed in $(($(date +%s) - started)) s ($summary)"
    else
        failed=$((failed + 1))
        note "$name: FAILED (status $status) in $(($(date +%s) - started)) s ($summary); see $log"
        grep -E "$failure_lines" "$log" | head -n 10 | sed 's/^/      /' || true
    fi
}

swift_run() {
    soak_run "$1" "Test run with [0-9]+ tests" "^✘ Test .* recorded an issue|Fatal error" \
        timeout --kill-after=10 900 scripts/with-xvfb.sh swift test --skip-build
}

for i in $(seq 1 "$runs"); do swift_run "swift-test-$i"; done

hog=
stop_hog() { [ -z "$hog" ] || { kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true; hog=; }; }
trap stop_hog EXIT
for i in $(seq 1 "$hogged"); do
    # As many busy workers as there are cores, for as long as the run takes.
    stress-ng --cpu "$(nproc)" --timeout 0 >/dev/null 2>&1 &
    hog=$!
    swift_run "swift-test-hogged-$i"
    stop_hog
done

for i in $(seq 1 "$e2e_runs"); do
    soak_run "e2e-$i" "^end-to-end:" "^FAIL " Tests/EndToEnd/run.sh
    # The next run writes over test-output/e2e: a failed scenario's logs and screenshots are kept aside.
    rm -rf "$log_dir/e2e-$i"
    for name in $(sed -n 's/^FAIL \([A-Za-z0-9_]*\) .*/\1/p' "$log_dir/e2e-$i.log"); do
        mkdir -p "$log_dir/e2e-$i"
        cp -a "test-output/e2e/$name" "$log_dir/e2e-$i/" 2>/dev/null || true
    done
done

echo
echo "soak on $(nproc) cores, $(date -u +%F):"
printf '  %s\n' "${results[@]}"
echo "soak: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
