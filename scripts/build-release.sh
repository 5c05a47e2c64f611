#!/usr/bin/env bash
# The release build, made one way for everything that uses one (make install, make deb, make bench,
# make launch-order), so that none rebuilds another's modules:
#   scripts/build-release.sh [PRODUCT…]   default: the whole package (one swift build: more of it
#                                         side by side than product after product, and nothing left out)
# The clone's own path is mapped to "." in everything the compilers write (a C file's __FILE__ in
# an assertion, a Swift #file, debug information), so that nothing shipped names the folder it was
# built in.
set -euo pipefail
cd "$(dirname "$0")/.."

# Built at one path, whatever the clone's: the compilers map the clone's path to ".", but one thing
# slips through -file-prefix-map (in an optimized build, swiftc passes a closure check's file name as
# "" with the length of the unmapped path: HummingbirdCore's RequestBody has one), so two clones of
# different path lengths differed in a few instructions. In a mount namespace of its own (a user
# namespace: no privilege needed), the clone is bound at /mnt and built there; .build is the
# clone's own all the same.
fixed=/mnt
if [ "$PWD" != "$fixed" ] && [ -z "${LATCHKEY_BUILD_NAMESPACE:-}" ]; then
    if [ -d "$fixed" ] && unshare --user --map-root-user --mount true 2>/dev/null; then
        # Inside, files that are nobody's (another user's, the package mirror's) would look unsafe to git;
        # and temporary files go in the clone's own .build: SwiftPM names its lock in $TMPDIR after the
        # build's path, /mnt for everyone, and another user's lock there was in the way.
        exec unshare --user --map-root-user --mount env LATCHKEY_BUILD_NAMESPACE=1 \
            GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0='*' \
            bash -c 'mount --bind "$1" "$2" && cd "$2" && shift 2 && mkdir -p .build/tmp && TMPDIR=$PWD/.build/tmp exec scripts/build-release.sh "$@"' \
            sh "$PWD" "$fixed" "$@"
    fi
    echo "build-release.sh: no user namespace here, so built in $PWD: a clone elsewhere gives a few different bytes" >&2
fi

# -disable-incremental-llvm-codegen: each Swift object would hold a hash of its LLVM module (section
# .swift_modhash, to skip code generation when it is unchanged), which differed between two builds
# of the same sources, and the build ID with it.
# -gnone: no DWARF from Swift. What is shipped is stripped of it anyway, but the build ID is computed
# before, over it, and Swift's DWARF names each imported C module by the hash of its precompiled
# module (DW_AT_GNU_dwo_id), which takes in the sources' modification times: two clones differed.
# Each function in a section of its own (every module's, the packages' too), so that the linker can
# place the functions a launch runs side by side (Sources/Latchkey/launch-order.txt): asked for here,
# not in Package.swift, where an unsafe flag would keep OAuthCore from packages that depend on it by version.
map=(-Xswiftc -file-prefix-map -Xswiftc "$PWD=." -Xcc "-ffile-prefix-map=$PWD=."
    -Xswiftc -Xfrontend -Xswiftc -disable-incremental-llvm-codegen -Xswiftc -gnone
    -Xswiftc -Xfrontend -Xswiftc -function-sections)
if [ $# -eq 0 ]; then
    swift build -c release "${map[@]}"
    # generate-manual (swift-argument-parser's, for make deb's man pages) is a dependency's product.
    swift build -c release "${map[@]}" --product generate-manual
    scripts/build-front.sh .build/release
fi
for product in "$@"; do
    swift build -c release "${map[@]}" --product "$product"
done
# The C library first among the libraries the app and the agent name (scripts/libc-first.py says why).
for program in latchkey-app latchkey-agent; do
    if [ -e ".build/release/$program" ]; then /usr/bin/python3 scripts/libc-first.py ".build/release/$program"; fi
done
