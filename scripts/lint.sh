#!/usr/bin/env bash
# House rules that the compiler does not check; make test runs this first.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

# 1. No plain Task in the targets that run on GTK's thread. A `Task { }` started
#    there inherits the main actor, whose executor never runs while GTK's loop
#    does: the work silently never starts. Leave GTK's thread with
#    MainLoop.work (or Task.detached), come back with MainLoop.perform.
gtk_targets=(Sources/Latchkey Sources/GtkKit Sources/WebSignIn Sources/DesktopOAuth)
plain_task='^[^/"]*(^|[=(,]|\breturn|\bawait|\btry)[[:space:]]*Task(<[^>]*>)?[[:space:]]*[({]'
# The pattern must catch what it is for, or this check could never fail.
for sample in '    Task { await x() }' '    let t = Task<Void, Never> {' 'signIn = Task(priority: .high) {' '        return Task {'; do
    grep -qE "$plain_task" <<<"$sample" || { echo "lint: the plain-Task pattern misses: $sample" >&2; exit 2; }
done
for sample in 'Task.detached { }' '/// a plain `Task { }` hangs' 'signInTask?.cancel()' '    ) -> Task<Void, Never> {'; do
    if grep -qE "$plain_task" <<<"$sample"; then echo "lint: the plain-Task pattern wrongly matches: $sample" >&2; exit 2; fi
done
if found=$(grep -rnE "$plain_task" --include='*.swift' "${gtk_targets[@]}"); then
    echo "lint: a plain Task on GTK's side never runs while GTK's loop does; use MainLoop.work:" >&2
    echo "$found" >&2
    status=1
fi

# 2. The formatting: swift-format (shipped with the toolchain), as .swift-format configures it.
if ! swift format lint --strict --recursive Sources Tests Package.swift; then
    echo "lint: run swift format --in-place --recursive Sources Tests Package.swift" >&2
    status=1
fi

exit $status
