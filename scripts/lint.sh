#!/usr/bin/env bash
# House rules that the compiler does not check; make test runs this first.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0

# 1. No plain Task in the targets that run on GLib's loop (GTK's, or the agent's plain one). A
#    `Task { }` started there inherits the main actor, whose executor never runs while the loop
#    does: the work silently never starts. Leave the loop's thread with MainLoop.work (or
#    Task.detached), come back with MainLoop.perform.
gtk_targets=(Sources/Latchkey Sources/GtkKit Sources/WebSignIn Sources/DesktopOAuth Sources/LatchkeyAgent Sources/GioKit)
plain_task='\bTask(<[^>]*>)?(\.init)?[[:space:]]*[({]'
# Not a plain Task: a type (-> Task<…> {, : Task<…>), a comment.
not_plain='(->|:)[[:space:]]*Task<|^[[:space:]]*//'
is_plain() { grep -E "$plain_task" | grep -vE "$not_plain"; }
# The pattern must catch what it is for, or this check could never fail.
for sample in '    Task { await x() }' '    let t = Task<Void, Never> {' 'signIn = Task(priority: .high) {' '        return Task {' \
    'button.onClicked { Task { await x() } }' '{ [weak self] in Task { await self?.y() } }' 'defer { Task.init { } }' 'c ? Task { } : nil'; do
    [[ -n "$(is_plain <<<"$sample")" ]] || { echo "lint: the plain-Task pattern misses: $sample" >&2; exit 2; }
done
for sample in 'Task.detached { }' '/// a plain `Task { }` hangs' 'signInTask?.cancel()' '    ) -> Task<Void, Never> {' \
    '    private var signInTask: Task<Void, Never>?'; do
    [[ -z "$(is_plain <<<"$sample")" ]] || { echo "lint: the plain-Task pattern wrongly matches: $sample" >&2; exit 2; }
done
for target in "${gtk_targets[@]}"; do [[ -d $target ]] || { echo "lint: $target is gone: update gtk_targets" >&2; exit 2; }; done
found=$(grep -rnE "$plain_task" --include='*.swift' "${gtk_targets[@]}" | grep -vE ":[0-9]+:[[:space:]]*//" | grep -vE "(->|:)[[:space:]]*Task<" || true)
if [[ -n "$found" ]]; then
    echo "lint: a plain Task on GTK's side never runs while GTK's loop does; use MainLoop.work:" >&2
    echo "$found" >&2
    status=1
fi

# 2. The formatting: swift-format (shipped with the toolchain), as .swift-format configures it.
if ! swift format lint --strict --recursive Sources Tests Package.swift; then
    echo "lint: run swift format --in-place --recursive Sources Tests Package.swift" >&2
    status=1
fi

# 3. OAuthCore's sentences name no program: the program gives its name (ZeroConfiguration.clientName,
#    ProviderCatalog.programName). A string literal there that says "Latchkey" is one the library would
#    put in another program's mouth.
if found=$(grep -rnE '^[^/]*"[^"]*Latchkey' --include='*.swift' Sources/OAuthCore); then
    echo "lint: OAuthCore names a program in a sentence; take the program's name from its caller:" >&2
    echo "$found" >&2
    status=1
fi

# 4. No module the app or the agent links imports Foundation: FoundationEssentials and the standard library
#    only. Foundation would bring CoreFoundation and ICU back into every launch (make bench: 4 MiB
#    of the idle peak); statically linked, it fails at the link with undefined symbols, so this says why.
#    (The sign-in and signature-check libraries, tests, the sandbox and the tools may use it.)
app_targets=(Sources/OAuthCore Sources/LatchkeyCore Sources/DesktopOAuth Sources/GtkKit Sources/GioKit Sources/Keyring Sources/InstallLayout
    Sources/Loopback Sources/Latchkey Sources/LatchkeyAgent Sources/LatchkeyServices Sources/AgentCore)
foundation='^[[:space:]]*(@[A-Za-z_]+[[:space:]]+)*((public|package|internal|private|fileprivate)[[:space:]]+)?import[[:space:]]+(struct[[:space:]]+|class[[:space:]]+|func[[:space:]]+|enum[[:space:]]+)?(Foundation|FoundationNetworking|FoundationXML|CoreFoundation)([[:space:]]|\.|$)'
for sample in 'import Foundation' '@preconcurrency import Foundation' 'public import Foundation' 'import FoundationNetworking' \
    'import struct Foundation.Data' 'import CoreFoundation'; do
    grep -qE "$foundation" <<<"$sample" || { echo "lint: the Foundation pattern misses: $sample" >&2; exit 2; }
done
for sample in 'import FoundationEssentials' '// import Foundation' 'import FoundationEssentialsExtra'; do
    ! grep -qE "$foundation" <<<"$sample" || { echo "lint: the Foundation pattern wrongly matches: $sample" >&2; exit 2; }
done
for target in "${app_targets[@]}"; do [[ -d $target ]] || { echo "lint: $target is gone: update app_targets" >&2; exit 2; }; done
if found=$(grep -rnE "$foundation" --include='*.swift' "${app_targets[@]}"); then
    echo "lint: the app links this module, which must not import Foundation; use FoundationEssentials:" >&2
    echo "$found" >&2
    status=1
fi

# 5. Sizes: no file over 400 lines, no function over 60 (40 in AppController), widget layout excepted;
#    and `///` only on declarations. The script must catch a misplaced `///`, or it could never fail.
sample=$(mktemp -d)
printf 'func f() {\n    /// not a doc\n    print(1)\n}\n' >"$sample/sample.swift"
if /usr/bin/python3 scripts/house-rules.py "$sample" 2>/dev/null; then
    echo "lint: scripts/house-rules.py misses a /// inside code" >&2
    exit 2
fi
rm -r "$sample"
if ! /usr/bin/python3 scripts/house-rules.py Sources Tests Fuzz; then
    echo "lint: split what is too long (scripts/house-rules.py says how it counts)" >&2
    status=1
fi

# 6. A test that runs only as root is named …AsRoot: make test, run by a person who is not root,
#    runs those again through sudo by that name, so none is skipped for good.
if found=$(awk '/@Test\(.*(getuid|geteuid)\(\) == 0/ { pending = FILENAME ":" FNR }
                pending != "" && /func [A-Za-z0-9_]+\(/ { if ($0 !~ /AsRoot\(/) print pending ": " $0; pending = "" }' \
        $(find Tests -name '*.swift')) && [[ -n "$found" ]]; then
    echo "lint: a test that needs root must be named …AsRoot (scripts/test.sh runs them through sudo by that name):" >&2
    echo "$found" >&2
    status=1
fi

# 7. One version: OAuthCoreInfo.version is where it is kept (latchkey --version, the User-Agent, and
#    make deb, which asks the built program). The AppStream metadata's newest release is its notes,
#    and must name the same version.
kept=$(sed -n 's/^ *public static let version = "\([^"]*\)".*/\1/p' Sources/OAuthCore/Support/OAuthCoreInfo.swift)
newest=$(sed -n 's/.*<release version="\([^"]*\)".*/\1/p' data/io.github.latchkey.Latchkey.metainfo.xml | head -n 1)
if [[ -z "$kept" || "$kept" != "$newest" ]]; then
    echo "lint: the version is \"$kept\" (Sources/OAuthCore/Support/OAuthCoreInfo.swift) but the newest release in" >&2
    echo "      data/io.github.latchkey.Latchkey.metainfo.xml is \"$newest\": say what the release brings there" >&2
    status=1
fi

# 8. No example in the docs puts a token on a command line: `ps` shows every process's arguments to
#    every user of the machine. A token is piped (`--format header | curl -H @- …`) or read from a
#    file, never spliced into another program's argument (-H "$(latchkey token …)", "Bearer $token").
on_command_line='((-H|--header)[[:space:]]+"?\$\(latchkey token|Bearer \$[A-Za-z_{(])'
for sample in 'curl -H "$(latchkey token --provider github --format header)" https://x' \
    'curl -H "Authorization: Bearer $(latchkey token --resource https://x)" https://x' '-H "Authorization: Bearer $token" "$url"'; do
    grep -qE "$on_command_line" <<<"$sample" || { echo "lint: the token-on-a-command-line pattern misses: $sample" >&2; exit 2; }
done
for sample in 'latchkey token --provider github --format header | curl -H @- https://x' 'token=$(latchkey token --resource "$url")'; do
    ! grep -qE "$on_command_line" <<<"$sample" || { echo "lint: the token-on-a-command-line pattern wrongly matches: $sample" >&2; exit 2; }
done
if found=$(grep -rnE "$on_command_line" README.md docs packaging data --include='*.md' --include='README.md' --include='*.1' 2>/dev/null); then
    echo "lint: an example puts a token on a command line, where ps shows it to every user; pipe it (| curl -H @-):" >&2
    echo "$found" >&2
    status=1
fi

# 9. No test changes this process's environment, except inside an exit test (its own process). Tests run
#    side by side in one process, and others start programs with its `environ`: a `setenv` that grows the
#    array frees the one a `posix_spawn` is reading ("latchkey-sandbox could not be started: Bad address",
#    once, in CI). A test hands a child its environment instead, or runs in #expect(processExitsWith:).
changes_env() {
    awk '/func [A-Za-z0-9_]+\(/ { exiting = 0 } /processExitsWith/ { exiting = 1 }
         /(^|[^A-Za-z0-9_.])(setenv|unsetenv|putenv|clearenv)\(/ && $0 !~ /^[[:space:]]*\/\// && !exiting { print FILENAME ":" FNR ": " $0 }' "$@"
}
sample=$(mktemp -d)
printf 'func a() {\n    setenv("X", "1", 1)\n}\n' >"$sample/changes.swift"
printf 'func b() async {\n    await #expect(processExitsWith: .success) {\n        setenv("X", "1", 1)\n    }\n}\n// unsetenv(x)\n' >"$sample/exits.swift"
[[ -n "$(changes_env "$sample/changes.swift")" ]] || { echo "lint: the environment pattern misses a setenv in a test" >&2; exit 2; }
[[ -z "$(changes_env "$sample/exits.swift")" ]] || { echo "lint: the environment pattern wrongly matches an exit test's setenv" >&2; exit 2; }
rm -r "$sample"
if found=$(changes_env $(find Tests -name '*.swift')) && [[ -n "$found" ]]; then
    echo "lint: a test changes the environment of the process every test shares; do it in an exit test or a child:" >&2
    echo "$found" >&2
    status=1
fi

# 10. make bench's launch order: within its rounds, each kind follows each other one equally often
#     (Benchmarks/orders.py says why a rotation does not). Its own check, which also shows that a rotation fails it.
if ! /usr/bin/python3 Benchmarks/orders.py >/dev/null; then
    echo "lint: Benchmarks/orders.py no longer balances what runs before each launch" >&2
    status=1
fi

# 11. scripts/libc-first.py, which a release build runs on the app and the agent: tried on a copy of a
#     program whose C library is not its first library (Python, which lint runs anyway), while that
#     copy runs (as the agent may while a release build relinks it: it cannot be written then). The
#     copy must name the C library first and the others in their order, keep its times, still run,
#     and be left as it is by a second pass.
sample=$(mktemp -d)
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
cp -L /usr/bin/python3 "$sample/program"
touch -d '2001-02-03 04:05:06' "$sample/program"
before=$(needed "$sample/program")
"$sample/program" -c 'import time; time.sleep(600)' &
running=$!
expected="libc.so.6 $(sed 's/\blibc\.so\.6 //' <<<"$before")"
if [[ "$before" == "libc.so.6 "* || "$before" != *"libc.so.6 "* ]]; then
    echo "lint: the sample for scripts/libc-first.py ($before) does not name the C library later than first: pick another" >&2
    status=1
elif ! /usr/bin/python3 scripts/libc-first.py "$sample/program" 2>/dev/null \
    || [[ "$(needed "$sample/program")" != "$expected" ]] \
    || [[ "$(stat -c %Y "$sample/program")" != "$(date -d '2001-02-03 04:05:06' +%s)" ]] \
    || ! "$sample/program" -c 'pass'; then
    echo "lint: scripts/libc-first.py did not make '$before' into '$expected' (times kept, the program still running)" >&2
    status=1
else
    cp -p "$sample/program" "$sample/once"
    if ! /usr/bin/python3 scripts/libc-first.py "$sample/program" 2>/dev/null || ! cmp -s "$sample/program" "$sample/once"; then
        echo "lint: scripts/libc-first.py changed a program it had already changed" >&2
        status=1
    fi
fi
kill "$running"
rm -r "$sample"

exit $status
