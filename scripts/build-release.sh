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
# -disable-incremental-llvm-codegen: by default each Swift object holds a hash of its LLVM module
# (section .swift_modhash, to skip code generation when it is unchanged), and that module names the
# object's absolute path, so the hash, and the build ID computed over it, differed between folders.
map=(-Xswiftc -file-prefix-map -Xswiftc "$PWD=." -Xcc "-ffile-prefix-map=$PWD=."
    -Xswiftc -Xfrontend -Xswiftc -disable-incremental-llvm-codegen)
if [ $# -eq 0 ]; then
    swift build -c release "${map[@]}"
    # generate-manual (swift-argument-parser's, for make deb's man pages) is a dependency's product.
    swift build -c release "${map[@]}" --product generate-manual
fi
for product in "$@"; do
    swift build -c release "${map[@]}" --product "$product"
done
