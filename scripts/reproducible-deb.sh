#!/usr/bin/env bash
# Two builds of one commit, in folders of different names, give the same package:
#   scripts/reproducible-deb.sh                 clones HEAD twice, runs make deb in each (two release
#                                               builds from nothing: ~10 minutes on 2 cores), compares
#   scripts/reproducible-deb.sh A.deb B.deb     compares two packages already built
# Compares every file the packages hold, byte for byte, and the control fields; prints what differs.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -eq 0 ]; then
    debs=()
    # One commit for both, taken now: commits made while the first builds change neither.
    commit=$(git rev-parse HEAD)
    for name in first-clone "second clone, elsewhere"; do
        git clone -q "$PWD" "$work/$name"
        git -C "$work/$name" checkout -q --detach "$commit"
        (cd "$work/$name" && make deb) | tail -n 1
        debs+=("$(ls "$work/$name"/latchkey_*.deb)")
    done
    set -- "${debs[@]}"
fi
[ $# -eq 2 ] || { echo "usage: scripts/reproducible-deb.sh [A.deb B.deb]" >&2; exit 2; }

unpacked=$work/unpacked
for side in a b; do
    deb=$1
    shift
    mkdir -p "$unpacked/$side"
    dpkg-deb --extract "$deb" "$unpacked/$side/files"
    dpkg-deb --field "$deb" >"$unpacked/$side/control"
done
differences=$(diff -r --brief "$unpacked/a" "$unpacked/b" || true)
files=$(find "$unpacked/a/files" -type f | wc -l)
if [ -n "$differences" ]; then
    echo "$differences" | sed "s|$unpacked/||g"
    echo "reproducible-deb: the packages differ ($files files in the first)"
    exit 1
fi
echo "reproducible-deb: the same $files files, byte for byte, and the same control fields"
