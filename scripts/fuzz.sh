#!/usr/bin/env bash
# libFuzzer over what Latchkey reads from others: redirects, token answers,
# provider files, token files (Fuzz/LatchkeyFuzz/Targets.swift says what each
# target promises).
#
#   scripts/fuzz.sh smoke [SECONDS]   each target for a few seconds (make test)
#   scripts/fuzz.sh run [RUNS]        each target for RUNS inputs, 1,000,000 by default (make fuzz)
#
# The fuzzing build is separate (.build-fuzz: debug, -sanitize=fuzzer,address),
# so it never touches the ordinary one. Seeds live in Fuzz/corpus/;
# what the fuzzer finds on its way is kept in .build-fuzz/corpus/ for the next run,
# and an input that breaks a promise is written to test-output/fuzz/ and named.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-smoke}
case $mode in
smoke) limit=(-max_total_time="${2:-5}") ;;
run) limit=(-runs="${2:-1000000}") ;;
*) echo "usage: scripts/fuzz.sh smoke [SECONDS] | run [RUNS]" >&2; exit 2 ;;
esac

# Swift has no -sanitize=undefined on Linux; its own checks (overflow, bounds,
# unwrapping) stay on and trap, which libFuzzer reports.
build_log=$(mktemp)
# SwiftPM hands swiftc -sanitize=fuzzer and -sanitize=address as two flags, and the
# last one wins: the Swift code got AddressSanitizer but no coverage, and libFuzzer
# ran blind. One combined flag, given last, keeps both (checked with readelf:
# __sancov_* sections in every Swift object).
if ! swift build -c debug --scratch-path .build-fuzz --product latchkey-fuzz \
    --sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer,address \
    -Xswiftc -DLATCHKEY_FUZZING >"$build_log" 2>&1; then
    grep -v -e "prohibited flag" -e "unhandled; explicitly declare" -e "CMakeLists.txt" "$build_log" >&2
    echo "fuzz: the fuzzing build failed" >&2
    exit 1
fi
rm -f "$build_log"
fuzzer=.build-fuzz/debug/latchkey-fuzz

out=test-output/fuzz
mkdir -p "$out"
# Swift's own crash reporter reads memory ASan has poisoned; libFuzzer reports instead.
export SWIFT_BACKTRACE=enable=no
status=0
printf '%-15s %12s %10s %8s %8s\n' target runs runs/s cov features
for target in redirect token-response provider-file token-file www-authenticate; do
    corpus=.build-fuzz/corpus/$target
    mkdir -p "$corpus"
    log=$out/$target.log
    if ! "$fuzzer" --target="$target" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$out/$target-" "$corpus" "Fuzz/corpus/$target" >"$log" 2>&1; then
        echo "fuzz: $target broke a promise or crashed; see $log and the input beside it:" >&2
        grep -E "broken promise|ERROR:|runtime error|Fatal error" "$log" | head -5 >&2 || true
        ls "$out/$target-"* 2>/dev/null >&2 || true
        status=1
        continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    cov=$( (grep -o 'cov: [0-9]*' "$log" || echo "cov: 0") | tail -1 | cut -d' ' -f2)
    ft=$( (grep -o 'ft: [0-9]*' "$log" || echo "ft: 0") | tail -1 | cut -d' ' -f2)
    if [ "$cov" -lt 50 ]; then
        echo "fuzz: $target reached only $cov edges: the Swift code is not instrumented" >&2
        status=1
    fi
    printf '%-15s %12s %10s %8s %8s\n' "$target" "$runs" "$rate" "$cov" "$ft"
done
exit $status
